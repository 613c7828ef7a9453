"""Scheduler configurations drawn from the action and plugin registries
(:func:`scheduler_confs`, within a :class:`ConfSpace`, the config space file's
``scheduler`` part): random action lists, tiers, enable flags, and plugin arguments within
the ranges of :data:`ARGUMENT_RANGES` (else a small range per documented type).

Imports the framework's registries (to know the names) and the model's conf loader.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from vspec.framework.registry import Registered, registered_actions, registered_plugins
from vspec.fuzz.known import SCORER_WEIGHTS
from vspec.fuzz.strategies.dice import BOOLEANS, int_range, sampled
from vspec.fuzz.strategies.features import structured_arguments
from vspec.model.conf import FLAG_KEYS, SchedulerConf, load_conf

# Documented ranges of plugin arguments (inclusive); others get a small range per type.
ARGUMENT_RANGES: dict[str, tuple[float, float]] = {
    "overcommit-factor": (1.0, 3.0),
    "binpack.weight": (0, 10),
    "binpack.cpu": (0, 5),
    "binpack.memory": (0, 5),
    "usage.weight": (0, 10),
    "cpu.weight": (0, 5),
    "memory.weight": (0, 5),
    "leastrequested.weight": (0, 5),
    "mostrequested.weight": (0, 5),
    "nodeaffinity.weight": (0, 5),
    "podaffinity.weight": (0, 5),
    "balancedresource.weight": (0, 5),
    "tainttoleration.weight": (0, 5),
    "imagelocality.weight": (0, 5),
    "podtopologyspread.weight": (0, 5),
}
_TYPE_RANGES: dict[str, tuple[float, float]] = {"int": (0, 10), "float": (0.0, 3.0)}
# Arguments a plugin rejects together (its documented "can not define both"): at most
# one of each group is drawn true.
EXCLUSIVE_ARGUMENTS: tuple[frozenset[str], ...] = (
    frozenset(
        {"deviceshare.GPUSharingEnable", "deviceshare.GPUNumberEnable", "deviceshare.VGPUEnable"}
    ),
)


@dataclass(frozen=True)
class ConfSpace:
    """Which configurations to draw (the config space file's ``scheduler`` part).

    ``fixed`` pins the whole conf. Otherwise actions are drawn from ``actions`` (an
    ordered selection; repeats only with ``repeat_actions``), plugins from ``plugins``
    spread over 1..``max_tiers`` tiers, each flag unset/true/false when ``flags`` is
    ``"random"`` (unset when ``"default"``), each documented argument set with
    probability 1/2 when ``arguments`` is true.
    """

    fixed: Mapping[str, Any] | None = None
    actions: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    max_tiers: int = 3
    flags: str = "random"
    arguments: bool = True
    repeat_actions: bool = False
    default_plugin_flags: tuple[bool, ...] = (True, False)
    # Always drawn (in the pool's order for actions, first tier's end for plugins).
    require_actions: tuple[str, ...] = ()
    require_plugins: tuple[str, ...] = ()
    # Actions in the pool's order (as production confs list them: enqueue first).
    ordered: bool = False
    # Always drawn, and last of the last tier in this order: where v1.11's tiers let the
    # last deciding plugin bound the victims (invariants.history.sole_decider).
    last_plugins: tuple[str, ...] = ()
    # Also draw the string, map and list arguments of the plugins that read them
    # (features.structured_arguments: revocable zones, thresholds, strategies, an
    # extender): the plugins space does; the others keep their draws as they were.
    structured_arguments: bool = False
    # Draw only vspec's own actions and plugins, which the real Volcano has too, not
    # those of plugins dirs or entry points (vspec diff compares the two engines).
    builtin_only: bool = False
    # Also draw the scorer weights (known.SCORER_WEIGHTS) below zero, down to minus
    # their documented top: Volcano's GetInt takes any integer, and a negative weight
    # scores nodes below SelectBestNode's floor of -1 (the plugins space's large part).
    signed_weights: bool = False

    def action_pool(self) -> list[str]:
        return list(self.actions) or self._names(registered_actions())

    def plugin_pool(self) -> list[str]:
        return list(self.plugins) or self._names(registered_plugins())

    def _names(self, entries: list[Registered]) -> list[str]:
        return sorted(
            e.name for e in entries if not self.builtin_only or e.module.startswith("vspec.")
        )


@functools.cache
def _argument_value(name: str, kind: str, signed: bool = False) -> st.SearchStrategy[Any] | None:
    """Values in an argument's documented range (a scorer weight's mirrored below zero
    too when ``signed``), built once per argument (strings, lists and maps have no
    documented range to draw from). Drawn as their own choices,
    not a :class:`Dice`'s bytes: a conf's length varies with its plugins, and integers
    that fall out of line with the choices recorded (when a mutation changes the cluster
    drawn before them) mostly keep their values, where a byte string is drawn as zeros."""
    lo, hi = ARGUMENT_RANGES.get(name, _TYPE_RANGES.get(kind, (0, 0)))
    if signed and name in SCORER_WEIGHTS:
        lo = -hi
    if kind == "bool":
        return BOOLEANS
    if kind == "int":
        return st.integers(int(lo), int(hi))
    if kind == "float":
        return st.floats(float(lo), float(hi)).map(_two_decimals)
    if kind == "duration":
        return _DURATIONS
    return None


def _two_decimals(value: float) -> float:
    return round(value, 2)


_DURATIONS = st.sampled_from(["0s", "30s", "5m"])
# Structured arguments are drawn three times in four: without them most of those
# plugins take their defaults (no zone window, a 5-minute rescheduling interval).
_MOSTLY = st.sampled_from([True, True, True, False])
_FLAG = st.sampled_from([None, True, False])


@st.composite
def _plugin_entry(
    draw: st.DrawFn, name: str, space: ConfSpace, specs: tuple[Any, ...]
) -> dict[str, Any]:
    """One plugin's entry: its flags (when drawn), each of its documented arguments
    (``specs``) with probability 1/2, and with ``space.structured_arguments`` (with
    probability 3/4) its structured ones (revocable zones, thresholds, strategies, an
    extender's URL and verbs)."""
    entry: dict[str, Any] = {"name": name}
    if space.flags == "random":
        for key in FLAG_KEYS:
            flag = draw(_FLAG)
            if flag is not None:
                entry[key] = flag
    if space.arguments:
        arguments: dict[str, Any] = {}
        for spec in specs:
            values = _argument_value(spec.name, spec.type, space.signed_weights)
            if values is not None and "<" not in spec.name and draw(BOOLEANS):
                arguments[spec.name] = draw(values)
        structured = _structured(name) if space.structured_arguments else None
        if structured is not None and draw(_MOSTLY):
            arguments.update(draw(structured))
        for group in EXCLUSIVE_ARGUMENTS:
            for extra in [k for k in arguments if k in group and arguments[k] is True][1:]:
                arguments[extra] = False
        if arguments:
            entry["arguments"] = arguments
    return entry


def _structured(plugin: str) -> st.SearchStrategy[dict[str, Any]] | None:
    """A plugin's structured arguments; the extender's name the fake extender, started
    here (only a space that draws them imports it)."""
    if plugin == "extender":
        from vspec.fuzz.extender import extender_arguments

        return extender_arguments()
    return structured_arguments(plugin)


def scheduler_confs(space: ConfSpace = ConfSpace()) -> st.SearchStrategy[dict[str, Any]]:
    """``volcano-scheduler.conf`` mappings that Volcano accepts, from the actions and
    plugins registered when the strategy is built (each draw looking them up again would
    describe every registered plugin, about a tenth of a small example's drawing)."""
    if space.fixed is not None:
        return st.just(dict(space.fixed)).map(dict)  # a fresh copy per draw, nothing drawn
    pool, plugin_pool = tuple(space.action_pool()), tuple(space.plugin_pool())
    actions = (
        st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool) + 1)
        if space.repeat_actions
        else st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True)
    )
    plugins = st.lists(st.sampled_from(plugin_pool), min_size=1, unique=True)
    arguments_of = {e.name: tuple(e.arguments) for e in registered_plugins()}
    return _drawn_conf(space, pool, actions, plugins, arguments_of)


@functools.cache
def _cuts(plugins: int, tiers: int) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(1, plugins - 1), max_size=tiers - 1, unique=True)


# Each plugin's entry strategy and each plugin list's permutations are built once.
_entry_at = functools.cache(_plugin_entry)


@functools.lru_cache(maxsize=1024)
def _permutations(plugins: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.permutations(plugins)


@st.composite
def _drawn_conf(
    draw: st.DrawFn,
    space: ConfSpace,
    pool: tuple[str, ...],
    action_lists: st.SearchStrategy[list[str]],
    plugin_lists: st.SearchStrategy[list[str]],
    arguments_of: Mapping[str, tuple[Any, ...]],
) -> dict[str, Any]:
    actions = draw(action_lists)
    missing = [a for a in space.require_actions if a not in actions]
    for name in missing:  # where the pool puts it relative to the drawn ones
        at = sum(1 for a in actions if pool.index(a) < pool.index(name)) if name in pool else 0
        actions.insert(at, name)
    if space.ordered:
        actions.sort(key=lambda a: pool.index(a) if a in pool else len(pool))
    plugins = draw(plugin_lists)
    plugins += [p for p in space.require_plugins if p not in plugins]
    plugins = draw(_permutations(tuple(plugins))) if space.require_plugins else plugins
    plugins = [p for p in plugins if p not in space.last_plugins] + list(space.last_plugins)
    tier_count = draw(int_range(1, max(1, min(space.max_tiers, len(plugins)))))
    cuts = sorted(draw(_cuts(len(plugins), tier_count))) if len(plugins) > 1 else []
    tiers = []
    for start, end in zip([0, *cuts], [*cuts, len(plugins)], strict=True):
        entries = [
            draw(_entry_at(name, space, arguments_of.get(name, ()))) for name in plugins[start:end]
        ]
        if any(e["name"] == "proportion" for e in entries):
            for e in entries:  # Volcano rejects drf hierarchy next to proportion in one tier
                if e["name"] == "drf":
                    e["enableHierarchy"] = False
        tiers.append({"plugins": entries})
    conf: dict[str, Any] = {"actions": ", ".join(actions), "tiers": tiers}
    if draw(BOOLEANS):
        conf["configurations"] = [
            {"name": a, "arguments": {"predicateErrorCacheEnable": draw(BOOLEANS)}}
            for a in sorted(set(actions) & {"allocate", "backfill", "preempt"})
        ]
    if len(space.default_plugin_flags) > 1:
        conf["defaultPluginFlags"] = draw(sampled(space.default_plugin_flags))
    elif space.default_plugin_flags != (True,):
        conf["defaultPluginFlags"] = space.default_plugin_flags[0]
    return conf


def conf_from_document(raw: Mapping[str, Any]) -> SchedulerConf:
    """The conf a spec's ``scheduler`` mapping means (``defaultPluginFlags`` honoured)."""
    body = {k: v for k, v in raw.items() if k != "defaultPluginFlags"}
    return load_conf(body, default_plugin_flags=bool(raw.get("defaultPluginFlags", True)))
