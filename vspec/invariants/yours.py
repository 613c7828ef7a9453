"""Invariants and the user's own code: what they judge when a plugin or action is yours.

An invariant restates the rules of Volcano's built-in plugins and actions; a plugin of
yours (a custom predicate, say) may refuse what the restated rules allow, and so would
make such an invariant cry wolf on an outcome Volcano itself would produce. So the
invariants judge a run under its *judged* conf, where each entry that runs your code is
renamed ``<name> (yours)``, even one replacing a built-in of its name (``replaceBuiltins``):
an invariant that only trusts the plugins it restates then stands aside, and one that
needs a built-in's rule does not find it. The seed's ``print`` and ``logprint`` are the
exception: the invariants state what they must do, and judge a user's version by it.
Those that stand aside for your code are named (``vspec run -v``), so a quiet run never
hides a check that was not made.
"""

from __future__ import annotations

from dataclasses import replace

from vspec.model.conf import SchedulerConf

# vspec's own actions and plugins; anything else a conf names is the user's code.
OWN_CODE_PACKAGES = ("vspec.actions.", "vspec.plugins.")
YOURS = " (yours)"
# The seed's own action and plugin: what they must do is stated by the invariants
# themselves (logprint-correct), so a user's version of them (their port of the Go
# code, under these names) is judged by that statement, not stood aside for.
SPECIFIED = frozenset({"print", "logprint"})


def your_names(conf: SchedulerConf) -> list[str]:
    """The conf's actions and plugins that run code vspec does not ship (a plugins dir's,
    an installed extension's, one replacing a built-in), looked up as the run looked them
    up: in the spec's scope, so call it there."""
    from vspec.framework.registry import get_action, get_plugin

    found = [a for a in conf.actions if _yours(get_action(a))]
    found += [p for p in conf.plugin_names() if _yours(get_plugin(p))]
    return list(dict.fromkeys(found))


def _yours(cls: type | None) -> bool:
    return cls is None or not cls.__module__.startswith(OWN_CODE_PACKAGES)


def unjudged(yours: list[str]) -> list[str]:
    """Those of ``yours`` the invariants do not judge (all but :data:`SPECIFIED`)."""
    return [name for name in yours if name not in SPECIFIED]


def judged_conf(conf: SchedulerConf, yours: list[str]) -> SchedulerConf:
    """``conf`` with each of ``yours`` renamed ``<name> (yours)``: no restated rule is
    taken for it."""
    return _edited(conf, yours, drop=False)


def without_yours(conf: SchedulerConf, yours: list[str]) -> SchedulerConf:
    """``conf`` without ``yours``: what the invariants would check were it not for them."""
    return _edited(conf, yours, drop=True)


def _edited(conf: SchedulerConf, yours: list[str], *, drop: bool) -> SchedulerConf:
    mine = set(yours)
    actions = [a + YOURS if a in mine else a for a in conf.actions if not (drop and a in mine)]
    tiers = [
        replace(
            tier,
            plugins=[
                replace(o, name=o.name + YOURS) if o.name in mine else o
                for o in tier.plugins
                if not (drop and o.name in mine)
            ],
        )
        for tier in conf.tiers
    ]
    return replace(conf, actions=actions, tiers=[t for t in tiers if t.plugins or not drop])


def stood_aside_message(names: list[str], yours: list[str]) -> str:
    return (
        f"invariants that stood aside for your code ({', '.join(yours)}), whose verdicts "
        f"they do not restate: {', '.join(names)}"
    )
