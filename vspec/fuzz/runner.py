"""``vspec fuzz``: Hypothesis over clusters x configurations, checking every invariant.

Each example draws a spec (:func:`vspec.fuzz.strategies.specs`) from a *space* (a YAML file,
or a built-in name: ``seed``, ``default``), runs it, and checks every invariant that
applies to its configuration. A violation, or an engine crash, is shrunk by Hypothesis
and written as a spec file that reproduces it. Each kind of failure (an invariant, or a
crash in one plugin) is reported once per run, so that one frequent failure does not
hide the others; Hypothesis' example database (kept between runs) replays earlier
failures first.

A finding is shrunk twice, within ``shrink_seconds`` of being found: by Hypothesis for
part of that time, then by :mod:`vspec.fuzz.shrink`, which drops whole jobs, nodes, pods,
queues, plugins and details while the same failure shows; the written spec is run back
through the loader and the runner, as ``vspec run`` would, and kept only if it fails
there too (else Hypothesis' spec is written).

Hypothesis has no time budget, so the run is split into batches sized from the measured
speed; after ``--seconds`` only the shrinking of findings goes on (a batch's unrun
examples pass), and it ends by ``--seconds`` plus ``shrink_seconds`` (the shrink
margin), so that is how long a run takes at most.

Hypothesis and the strategies are imported when a run starts, not with this module, so
that a run starts fast; the command line is :mod:`vspec.cli.fuzz`'s, so that building
``vspec``'s parser (for every command) imports neither this module nor the invariants.

Imports the harness, the invariants, the engines and the rest of :mod:`vspec.fuzz`.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from vspec.errors import ConfError, PluginError, SpecError, VspecError, culprit
from vspec.fuzz import BUILTIN_SPACES, DEFAULT_OUT, FUZZ_DATABASE
from vspec.fuzz.campaign import (
    Ledger,
    Part,
    campaign_name,
    open_database,
    process_label,
    run_parts,
    share,
    write_findings,
)
from vspec.fuzz.known import NIL_VGPU_POOL, NO_BEST_NODE, KnownPanic
from vspec.harness.attribution import cache_dir
from vspec.invariants import catalogue, judged_inputs, run_checks, selected, unknown_names
from vspec.util.collector import COLLECTOR_THRESHOLDS, tuned_collector

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

    from vspec.fuzz.strategies import ClusterBounds, ConfSpace, GeneratedSpec
    from vspec.fuzz.timelines import GeneratedTimelineSpec
    from vspec.harness.yamlload import At
    from vspec.model.engine import Engine
    from vspec.model.result import SimulationResult

EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2
DIFF_KIND = "diff-"  # the finding kinds of `vspec fuzz --diff`: diff-<aspect>
# The share of a finding's shrink time Hypothesis gets; vspec.fuzz.shrink has the rest. Its
# edits each remove an object, where Hypothesis' take many runs to remove one pod.
HYPOTHESIS_SHRINK_SHARE = 0.5
MAX_BATCH = 200

# The seed project's configuration (benchmarks/bench.py): what `--space seed` pins.
SEED_CONF: dict[str, Any] = {
    "actions": "print, enqueue, allocate, backfill",
    "tiers": [
        {"plugins": [{"name": n} for n in ("priority", "gang", "conformance", "logprint")]},
        {
            "plugins": [
                {"name": n} for n in ("drf", "predicates", "proportion", "nodeorder", "binpack")
            ]
        },
    ],
}


# -- the space ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FuzzSpace:
    """What ``vspec fuzz`` draws from, and which invariants it leaves out."""

    conf: ConfSpace | None = None  # None: every registered action and plugin
    bounds: ClusterBounds | None = None  # None: ClusterBounds()
    max_cycles: int = 2
    disabled: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()  # finding kinds not reported (known ones: crash-proportion)
    # Known Volcano panics not reported, recognised by their cause in each example; a
    # crash of the same kind without it is a finding.
    known: tuple[KnownPanic, ...] = ()
    timelines: bool = False  # draw timelines (vspec.fuzz.timelines) instead of cycles
    # A mixture: each example is drawn from one of these (their conf, bounds and cycles),
    # each part as often as its weight says.
    mix: tuple[FuzzSpace, ...] = ()
    # Drawn klog levels; some invariants read lines logged at level 3 only.
    verbosities: tuple[int, ...] = (1, 3)
    weight: int = 1  # as a part of a mixture: drawn this many times as often as a 1

    def reported(self, kind: str, messages: list[str], case: GeneratedSpec) -> bool:
        """Whether a failure of ``kind`` in ``case`` is a finding here: not an ignored
        kind, nor a known panic with its cause in the example."""
        if kind in self.ignored:
            return False
        return not any(
            panic.explains(kind, messages, case.conf, case.cluster) for panic in self.known
        )

    def builtin_only(self) -> FuzzSpace:
        """This space drawing vspec's own actions and plugins only (what both engines
        have: vspec diff), every part of a mixture too."""
        from vspec.fuzz.strategies import ConfSpace

        if self.mix:
            return replace(self, mix=tuple(part.builtin_only() for part in self.mix))
        return replace(self, conf=replace(self.conf or ConfSpace(), builtin_only=True))

    def strategy(self) -> Any:
        from vspec.fuzz.strategies import ClusterBounds, ConfSpace, specs

        if self.mix:
            from hypothesis import strategies as st

            from vspec.fuzz.strategies.dice import weighted_one_of

            if all(part.weight == 1 for part in self.mix):  # as drawn before weights existed
                return st.one_of([part.strategy() for part in self.mix])
            return weighted_one_of(tuple((p.weight, p.strategy()) for p in self.mix))
        if self.timelines:
            from vspec.fuzz.timelines import timeline_specs

            return timeline_specs(self.conf or ConfSpace(), self.bounds or ClusterBounds())
        return specs(
            self.conf or ConfSpace(),
            self.bounds or ClusterBounds(),
            self.max_cycles,
            self.verbosities,
        )


# The plugins whose rules the preempt and reclaim invariants restate, with the node
# filters and scorers a production conf puts next to them.
_CORE_PLUGINS = ("priority", "gang", "conformance", "drf", "predicates", "nodeorder", "binpack")


def _focused(
    actions: tuple[str, ...],
    required: tuple[str, ...],
    plugins: tuple[str, ...],
    last: tuple[str, ...] = (),
) -> Any:
    """A space pinning the ``required`` actions (and priority, gang and the ``required``
    plugins, the ``last`` ones at the tier's end), flags as a ConfigMap leaves them."""
    from vspec.fuzz.strategies import ConfSpace

    return ConfSpace(
        actions=actions,
        plugins=plugins,
        flags="default",
        default_plugin_flags=(True,),
        require_actions=tuple(a for a in required if a in actions),
        require_plugins=("priority", "gang", *(p for p in required if p in plugins)),
        ordered=True,
        # One tier: the last plugin's victim veto then binds (evictions.sole_decider).
        max_tiers=1,
        last_plugins=last,
    )


def _bounded(space: FuzzSpace, bounds: ClusterBounds) -> FuzzSpace:
    """``space`` (each part of a mixture) on ``bounds``, keeping its cluster shape."""
    if space.mix:
        return replace(space, mix=tuple(_bounded(part, bounds) for part in space.mix))
    return replace(space, bounds=replace(bounds, shape=(space.bounds or bounds).shape))


# The plugins beyond the core, by what they judge: victims, placement, rescheduling.
_EVICTING_PLUGINS = ("proportion", "cdp", "pdb", "tdm", "extender", "sla", "overcommit")
_PLACING_PLUGINS = (
    "proportion",
    "numa-aware",
    "task-topology",
    "nodegroup",
    "usage",
    "extender",
    "resourcequota",
    "tdm",
    "deviceshare",
)
_RESCHEDULING_PLUGINS = ("proportion", "rescheduling", "tdm", "pdb", "usage")
_EVICTING = ("enqueue", "allocate", "preempt", "reclaim", "backfill")
_PLACING = ("enqueue", "allocate", "backfill")
# The plugins space's parts: (actions, required actions and plugins, the plugin pool,
# cluster shape, most tiers). Each part pins a few plugins (swarm testing: a rare plugin
# is in every conf of its part instead of a fraction of all confs), the others drawn.
_PLUGIN_PARTS: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], str, int], ...] = (
    (_EVICTING, ("allocate", "preempt", "cdp", "pdb"), _EVICTING_PLUGINS, "preempt", 3),
    (_EVICTING, ("allocate", "reclaim", "tdm", "extender"), _EVICTING_PLUGINS, "reclaim", 3),
    (_EVICTING, ("allocate", "preempt", "sla", "overcommit"), _EVICTING_PLUGINS, "random", 3),
    # Few plugins beside numa-aware: its BatchNodeOrder scores only between nodes that
    # passed every filter.
    (_PLACING, ("allocate", "numa-aware", "predicates"), ("proportion", "usage"), "allocate", 2),
    (_PLACING, ("allocate", "task-topology", "nodeorder"), _PLACING_PLUGINS, "random", 3),
    (_PLACING, ("allocate", "nodegroup", "usage"), _PLACING_PLUGINS, "random", 3),
    # One tier: a tier whose plugin permits enqueueing ends JobEnqueueable before the
    # next tier's resourcequota is asked.
    (_PLACING, ("enqueue", "resourcequota", "deviceshare"), _PLACING_PLUGINS, "random", 1),
    (_PLACING, ("allocate", "extender", "tdm"), _PLACING_PLUGINS, "allocate", 3),
    # Shared GPUs and vGPUs where pods are placed (the part above asks enqueue), and
    # taken back by preempt.
    (
        (*_PLACING, "preempt"),
        ("allocate", "predicates", "deviceshare"),
        ("proportion", "deviceshare"),
        "allocate",
        2,
    ),
    # drf's hierarchy, with no proportion to turn it off
    (_EVICTING, ("allocate", "drf"), ("sla", "cdp"), "reclaim", 3),
    (
        ("enqueue", "allocate", "shuffle", "backfill"),
        ("shuffle", "rescheduling"),
        _RESCHEDULING_PLUGINS,
        "random",
        3,
    ),
)

# Parts drawn twice as often: their plugins' deep branches need several conditions at
# once (a device allocated, then released; two nodes passing numa-aware's predicate; a
# node below rescheduling's thresholds and a loaded one above its targets).
_PART_WEIGHTS: dict[tuple[str, ...], int] = {
    ("allocate", "predicates", "deviceshare"): 2,
    ("allocate", "numa-aware", "predicates"): 2,
    ("shuffle", "rescheduling"): 2,
}


def _plugins_space() -> FuzzSpace:
    """The ``plugins`` space: clusters with what the plugins beyond the core read
    (:func:`vspec.fuzz.strategies.features.featured`), in confs that pin a few of those
    plugins where they decide (:data:`_PLUGIN_PARTS`), or draw from every plugin; and
    large clusters, where allocate's columnar scoring runs."""
    from vspec.fuzz.strategies import ClusterBounds, ConfSpace

    def conf(
        actions: tuple[str, ...], required: tuple[str, ...], extra: tuple[str, ...], tiers: int = 3
    ) -> Any:
        # Flags drawn, an unset one on (as a ConfigMap leaves it): each plugin's
        # functions mostly take part.
        return ConfSpace(
            actions=actions,
            plugins=(*_CORE_PLUGINS, *extra),
            default_plugin_flags=(True,),
            require_actions=tuple(a for a in required if a in actions),
            require_plugins=tuple(p for p in required if p not in actions),
            ordered=True,
            structured_arguments=True,
            max_tiers=tiers,
        )

    small = ClusterBounds(max_nodes=3, max_jobs=4, max_replicas=2, features=True)
    parts = [
        FuzzSpace(
            conf(actions, required, pool, tiers),
            replace(small, shape=shape, numa_everywhere="numa-aware" in required),
            weight=_PART_WEIGHTS.get(required, 1),
        )
        for actions, required, pool, shape, tiers in _PLUGIN_PARTS
    ]
    every = ConfSpace(structured_arguments=True)  # every action and plugin
    # Also klog levels 0 and 5, where print and logprint say nothing or say more.
    parts.append(FuzzSpace(every, replace(small, hierarchy="always"), verbosities=(0, 1, 3, 5)))
    # At klog level 5, where the core's filters, scorers and orders log per node, pair
    # and victim: the node-group rules between priorities that preempt; logprint prints
    # its arguments. Flags left on: nodeorder's scores keep a node above nodegroup's -1,
    # where Volcano's allocate would find no best node and panic
    # (specs/findings/nodegroup-preferred-anti-affinity-panics.yaml).
    verbose = ("allocate", "preempt", "priority", "predicates", "nodeorder", "nodegroup")
    parts.append(
        FuzzSpace(
            replace(
                conf(_EVICTING, (*verbose, "logprint"), ("nodegroup", "logprint")),
                flags="default",
            ),
            replace(small, shape="preempt"),
            verbosities=(5,),
        )
    )
    # Past the columnar threshold (slow examples; weight 2: one in nine or ten), with the
    # filters and scorers that have a columnar form, and what they decline or narrow to
    # a row (features.large_featured): allocate's columnar choice is reached only here.
    # Its scorer weights are drawn below zero too: where every node scores -1 or less
    # the columnar choice finds no best node, as SelectBestNode does.
    columnar = ("allocate", "predicates", "nodeorder", "binpack")
    parts.append(
        FuzzSpace(
            replace(conf(_PLACING, columnar, ("proportion",)), signed_weights=True),
            replace(small, shape="large"),
            max_cycles=1,
            weight=2,
        )
    )
    # Known: shuffle panics evicting tdm's victims on a closed revocable zone
    # (specs/findings/tdm-shuffle-evicts-a-node-copy-panics.yaml); allocate (and
    # backfill) panic on a nil best node when every feasible node scores -1 or less:
    # nodegroup's score of a node of a group the queue prefers to avoid, with nothing
    # adding to it (the node-group part, whose flags and scorers are drawn, reaches it),
    # or a negative scorer weight (the large part); deviceshare panics scoring a node
    # without vGPUs for a pod asking for them, in preempt
    # (specs/findings/deviceshare-vgpu-score-without-vgpu-panics.yaml). Any other crash
    # of allocate or deviceshare is a finding.
    known = (NO_BEST_NODE, NIL_VGPU_POOL)
    return FuzzSpace(mix=tuple(parts), ignored=("crash-shuffle",), known=known)


def builtin_space(name: str) -> FuzzSpace:
    """The built-in spaces (docs/invariants.md, "Fuzzing")."""
    from vspec.fuzz.strategies import ClusterBounds, ConfSpace

    # The capacity space's queue trees are up to three levels deep, jobs in the leaves.
    # No guarantees: a guarantee above what the cluster has makes capacity's hierarchy
    # check panic (an asserting Sub), as it makes proportion's.
    rooted = ClusterBounds(hierarchy="deep")
    spaces = {
        "default": FuzzSpace(),
        # Half the clusters allocate-shaped: the seed conf's JobOrder (priority, gang, drf)
        # and gang's rules then decide between jobs of one queue.
        "seed": FuzzSpace(conf=ConfSpace(fixed=SEED_CONF), bounds=ClusterBounds(shape="allocate")),
        # Half the examples with drf last of the tier, at verbosity 3: its victim rule
        # then bounds the victims and `drf-victims-fair` reads whom they were for.
        "preempt": FuzzSpace(
            mix=tuple(
                FuzzSpace(
                    _focused(
                        ("enqueue", "allocate", "preempt", "backfill"),
                        ("allocate", "preempt"),
                        (*_CORE_PLUGINS, "proportion"),
                        last,
                    ),
                    ClusterBounds(shape="preempt"),
                    verbosities=verbosities,
                )
                for last, verbosities in (((), (1, 3)), (("drf",), (3,)))
            )
        ),
        # Half the examples with proportion last of the tier (its shares then bound whom
        # reclaim may take from), a quarter with it anywhere, a quarter with it drawn:
        # without it no queue is overused and reclaim takes from any reclaimable queue
        # but the reclaimer's own.
        "reclaim": FuzzSpace(
            mix=tuple(
                FuzzSpace(
                    _focused(
                        ("enqueue", "allocate", "reclaim", "backfill"),
                        ("allocate", "reclaim", *required),
                        (*_CORE_PLUGINS, "proportion"),
                        last,
                    ),
                    ClusterBounds(shape="reclaim"),
                )
                for required, last in (
                    (("proportion",), ("proportion",)),
                    (("proportion",), ("proportion",)),
                    (("proportion",), ()),
                    ((), ()),
                )
            )
        ),
        "capacity": FuzzSpace(
            ConfSpace(
                actions=("enqueue", "allocate", "preempt", "reclaim", "backfill"),
                plugins=(*_CORE_PLUGINS, "capacity"),
                require_actions=("allocate",),
                require_plugins=("capacity",),
                ordered=True,
            ),
            rooted,
        ),
        "shuffle": FuzzSpace(
            _focused(
                ("enqueue", "allocate", "shuffle", "backfill"),
                ("shuffle",),
                (*_CORE_PLUGINS, "proportion", "pdb", "tdm", "rescheduling"),
            )
        ),
        # Where binds go: predicates, nodeorder and binpack always on, their weights
        # drawn, nothing evicting, so that `best-score` and the filter and order
        # invariants judge most examples.
        "placement": FuzzSpace(
            ConfSpace(
                actions=("enqueue", "allocate", "backfill"),
                plugins=(*_CORE_PLUGINS, "proportion"),
                flags="default",
                default_plugin_flags=(True,),
                require_actions=("allocate",),
                require_plugins=("predicates", "nodeorder", "binpack"),
                ordered=True,
            ),
            # Contention, small; half the clusters allocate-shaped.
            ClusterBounds(max_nodes=3, max_jobs=4, max_replicas=2, shape="allocate"),
            max_cycles=1,  # best-score judges the last cycle: one cycle judges every bind
        ),
    }
    if name == "plugins":
        return _plugins_space()
    if name == "mixed":
        # Smaller clusters: more examples per second, and findings shrink further.
        small = ClusterBounds(max_nodes=3, max_jobs=4, max_replicas=2, hierarchy="always")
        parts = ("seed", "preempt", "reclaim", "capacity", "shuffle", "placement")
        mix = [_bounded(spaces[p], small) for p in parts]
        mix.append(FuzzSpace(bounds=small))  # every plugin; capacity's hierarchy needs a root
        # Known: proportion panics in enqueue after an eviction earlier in the session.
        # `deterministic` (which doubles the cost) is left to the other spaces. The
        # plugins space is not a part: a space file weights the two (docs/invariants.md).
        return FuzzSpace(mix=tuple(mix), ignored=("crash-proportion",), disabled=("deterministic",))
    return spaces[name]


_SPACE_KEYS = {
    "scheduler",
    "actions",
    "repeatActions",
    "plugins",
    "maxTiers",
    "flags",
    "arguments",
    "defaultPluginFlags",
    "cluster",
    "maxCycles",
    "invariants",
    "ignore",
    "requireActions",
    "requirePlugins",
    "structuredArguments",
    "weight",
}
# A mixture's keys: its parts, and what applies to all of them.
_MIX_KEYS = {"mix", "invariants", "ignore", "weight"}
_BOUND_KEYS = {
    "maxNodes": "max_nodes",
    "maxQueues": "max_queues",
    "maxJobs": "max_jobs",
    "maxRoles": "max_roles",
    "maxReplicas": "max_replicas",
    "guarantees": "guarantees",
    "hierarchy": "hierarchy",
    "shape": "shape",
    "features": "features",
}


def parse_space(raw: Mapping[str, Any], where: str, at: At | None = None) -> FuzzSpace:
    """A space from its YAML mapping (docs/invariants.md, "Fuzzing"); ``at``: where a
    space file holds it, so that its pinned conf reads as Volcano reads it."""
    from vspec.fuzz.strategies import ClusterBounds, ConfSpace

    if "mix" in raw:
        return _parse_mix(raw, where, at)
    unknown = set(raw) - _SPACE_KEYS
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {sorted(unknown)} (known: {sorted(_SPACE_KEYS)})")
    flags = raw.get("flags", "random")
    if flags not in ("random", "default"):
        raise SpecError(f"{where}: flags must be 'random' or 'default', got {flags!r}")
    default_flags = raw.get("defaultPluginFlags", [True, False])
    if isinstance(default_flags, bool):
        default_flags = [default_flags]
    conf = ConfSpace(
        fixed=_pinned_conf(raw.get("scheduler"), where, None if at is None else at / "scheduler"),
        actions=tuple(raw.get("actions") or ()),
        plugins=tuple(raw.get("plugins") or ()),
        max_tiers=int(raw.get("maxTiers", 3)),
        flags=flags,
        arguments=bool(raw.get("arguments", True)),
        repeat_actions=bool(raw.get("repeatActions", False)),
        default_plugin_flags=tuple(bool(v) for v in default_flags),
        require_actions=tuple(raw.get("requireActions") or ()),
        require_plugins=tuple(raw.get("requirePlugins") or ()),
        structured_arguments=bool(raw.get("structuredArguments", False)),
    )
    cluster = raw.get("cluster") or {}
    bad = set(cluster) - set(_BOUND_KEYS)
    if bad:
        raise SpecError(
            f"{where}: cluster: unknown key(s) {sorted(bad)} (known: {sorted(_BOUND_KEYS)})"
        )
    bounds = ClusterBounds(**{_BOUND_KEYS[k]: v for k, v in cluster.items()})
    disabled = tuple((raw.get("invariants") or {}).get("disable") or ())
    if unknown_names(disabled):
        raise SpecError(f"{where}: invariants.disable: unknown {unknown_names(disabled)}")
    ignored = tuple(str(kind) for kind in raw.get("ignore") or ())
    cycles = int(raw.get("maxCycles", 2))
    return FuzzSpace(conf, bounds, cycles, disabled, ignored, weight=_weight(raw, where))


def _parse_mix(raw: Mapping[str, Any], where: str, at: At | None) -> FuzzSpace:
    """A mixture: each part a space mapping, or ``{space: NAME|FILE}`` (a built-in space
    or a space file relative to this one), drawn as often as its ``weight`` (default 1)
    says; ``invariants`` and ``ignore`` (and those of every part) apply to all."""
    unknown = set(raw) - _MIX_KEYS
    if unknown:
        raise SpecError(
            f"{where}: unknown key(s) {sorted(unknown)} beside mix (known: {sorted(_MIX_KEYS)})"
        )
    entries = raw["mix"]
    if not isinstance(entries, list) or not entries:
        raise SpecError(f"{where}: mix: a non-empty list of spaces")
    parts = []
    for i, entry in enumerate(entries):
        here = f"{where}: mix[{i}]"
        if not isinstance(entry, Mapping):
            raise SpecError(f"{here}: a space mapping, or {{space: NAME, weight: N}}")
        if "space" in entry:
            extra = set(entry) - {"space", "weight"}
            if extra:
                raise SpecError(f"{here}: unknown key(s) {sorted(extra)} beside space")
            name = str(entry["space"])
            known = name in BUILTIN_SPACES
            part = load_space(name if known else str(Path(where).parent / name))
            parts.append(replace(part, weight=_weight(entry, here)))
        else:
            parts.append(parse_space(entry, here, None if at is None else at / "mix" / i))
    shared = parse_space({k: raw[k] for k in ("invariants", "ignore") if k in raw}, where)
    # What a part leaves out (a built-in space's known findings) the mixture leaves out:
    # the run judges every example by the mixture's lists.
    every = [shared, *parts]
    return FuzzSpace(
        mix=tuple(parts),
        disabled=tuple(dict.fromkeys(n for p in every for n in p.disabled)),
        ignored=tuple(dict.fromkeys(k for p in every for k in p.ignored)),
        known=tuple(dict.fromkeys(k for p in every for k in p.known)),
        weight=_weight(raw, where),
    )


def _weight(raw: Mapping[str, Any], where: str) -> int:
    weight = raw.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
        raise SpecError(f"{where}: weight must be a positive integer, got {weight!r}")
    return weight


def _pinned_conf(raw: Any, where: str, at: At | None = None) -> dict[str, Any] | None:
    """A space's ``scheduler``, in any form a spec takes it (a conf mapping, or the path
    of a ConfigMap manifest or a plain conf file, relative to the space file), as the
    conf mapping the drawn specs carry, read as Volcano reads it (``at``: where the
    space file holds it); an error names the space file or the conf's."""
    if raw is None:
        return None
    from vspec.harness.loader import scheduler_conf_mapping

    if isinstance(raw, str):
        path = Path(where).parent / raw
        if not path.is_file():
            raise SpecError(f"{where}: scheduler: {raw}: no such file (relative to the space file)")
        return scheduler_conf_mapping(path)
    if not isinstance(raw, Mapping):
        raise SpecError(f"{where}: scheduler: a conf mapping or the path of a conf file")
    try:
        return scheduler_conf_mapping(raw if at is None else at)
    except VspecError as exc:
        raise SpecError(f"{where}: scheduler: {exc.message}") from None


def load_space(name_or_path: str) -> FuzzSpace:
    if name_or_path in BUILTIN_SPACES:
        return builtin_space(name_or_path)
    from vspec.harness.yamlload import At, read_documents

    path = Path(name_or_path)
    if not path.is_file():
        known = ", ".join(BUILTIN_SPACES)
        raise SpecError(f"{path}: no such space file (built-in spaces: {known})")
    documents = read_documents(path)
    if len(documents) > 1:
        raise documents[1].error((), "a space file holds one YAML document, not several")
    raw = (documents[0].data if documents else None) or {}
    if not isinstance(raw, Mapping):
        raise SpecError(f"{path}: a space file holds a mapping")
    return parse_space(raw, str(path), At(documents[0]) if documents else None)


# -- one example -----------------------------------------------------------------------------------


class Finding(Exception):
    """One failing example; a subclass per kind keeps Hypothesis' bugs apart."""

    kind = "finding"

    def __init__(self, case: GeneratedSpec, messages: list[str]) -> None:
        super().__init__(f"{self.kind}: {messages[0]}")
        self.case = case
        self.messages = messages


_FINDING_TYPES: dict[str, type[Finding]] = {}


def finding_type(kind: str) -> type[Finding]:
    """The exception class of one kind of failure (an invariant, or ``crash-<plugin>``)."""
    cls = _FINDING_TYPES.get(kind)
    if cls is None:
        name = "Finding_" + "".join(c if c.isalnum() else "_" for c in kind)
        cls = _FINDING_TYPES[kind] = type(name, (Finding,), {"kind": kind})
    return cls


def examine(
    case: GeneratedSpec,
    engine: Engine,
    disabled: tuple[str, ...] = (),
    coverage: Coverage | None = None,
) -> dict[str, list[str]]:
    """Run one spec on ``engine``: its violated invariants, or ``crash-<plugin>`` when the
    engine raised; ``coverage`` counts what it exercised and which invariants it checked.

    Raises :class:`~vspec.errors.ConfError` for a conf Volcano would reject.
    """
    timeline = _timeline_case(case)
    if timeline is not None:
        from vspec.fuzz.timelines import examine_timeline

        return examine_timeline(timeline, engine, disabled)
    try:
        result = engine.simulate(
            case.conf, case.cluster, seed=case.seed, cycles=case.cycles, verbosity=case.verbosity
        )
    except ConfError:
        raise
    except VspecError as exc:
        return {f"crash-{_culprit(exc)}": [str(exc)]}
    inputs = judged_inputs(
        case.conf,
        case.cluster,
        case.seed,
        None,
        case.cycles,
        case.verbosity,
        engine=engine,
        thorough=True,
    )
    try:
        among = selected(inputs, disabled=disabled)
        if coverage is not None:
            coverage.add(result, [inv.name for inv in among])
        return run_checks(inputs, result, disabled=disabled, among=among)
    finally:
        inputs.forget()  # else each example's objects wait for the cyclic collector


def _timeline_case(case: GeneratedSpec) -> GeneratedTimelineSpec | None:
    """``case`` if it has a timeline. Only a timeline space imports
    :mod:`vspec.fuzz.timelines` (with the timeline checks it imports, about 30 ms of a
    run's start-up), so a case can be one of its specs only once it is imported."""
    module = sys.modules.get("vspec.fuzz.timelines")
    if module is not None and isinstance(case, module.GeneratedTimelineSpec):
        return cast("GeneratedTimelineSpec", case)
    return None


def _culprit(exc: VspecError) -> str:
    """The plugin or action that raised: named by a PluginError, else the one whose code
    raised an EngineError (where Volcano panics), else "engine"."""
    if isinstance(exc, PluginError):
        return exc.plugin
    found = culprit(exc)
    return found.name if found is not None else "engine"


# -- the run ---------------------------------------------------------------------------------------


@dataclass
class Coverage:
    """What a run's examples exercised, so that "0 findings" says what was tried: how
    many bound, pipelined (in their last session) and evicted a pod, and how many
    were checked against each invariant."""

    examples: int = 0
    binding: int = 0
    pipelining: int = 0
    evicting: int = 0
    invariants: dict[str, int] = field(default_factory=dict)

    def add(self, result: SimulationResult, checked: list[str]) -> None:
        self.examples += 1
        self.binding += bool(result.binds)
        self.pipelining += any(result.pipelined.values())
        self.evicting += bool(result.evictions)
        for name in checked:
            self.invariants[name] = self.invariants.get(name, 0) + 1

    def merge(self, other: Coverage) -> None:
        """Add another process's counts (a campaign's, vspec.fuzz.campaign)."""
        self.examples += other.examples
        self.binding += other.binding
        self.pipelining += other.pipelining
        self.evicting += other.evicting
        for name, n in other.invariants.items():
            self.invariants[name] = self.invariants.get(name, 0) + n

    def lines(self) -> list[str]:
        if not self.examples:
            return []
        checked = ", ".join(f"{name} {n}" for name, n in sorted(self.invariants.items()))
        return [
            f"  examples that bound a pod: {self.binding}, pipelined one: {self.pipelining}, "
            f"evicted one: {self.evicting} (of {self.examples} run on clusters)",
            f"  invariants checked (examples): {checked or 'none'}",
        ]


@dataclass
class FuzzReport:
    examples: int = 0
    seconds: float = 0.0
    findings: dict[str, Path] = field(default_factory=dict)  # kind -> spec file written
    shrinks: dict[str, Shrunk] = field(default_factory=dict)  # kind -> how it was shrunk
    coverage: Coverage = field(default_factory=Coverage)
    # Kinds another process of the campaign owns (vspec.fuzz.campaign.Ledger), seen
    # failing here too (most often replayed from the shared example database): kind ->
    # the owner. Not shrunk, written or counted here again.
    replayed: dict[str, str] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.examples / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class Shrunk:
    """How a finding was shrunk: its size as Hypothesis left it and as written."""

    before: tuple[int, int]  # (nodes, pods)
    after: tuple[int, int]
    seconds: float  # from the first failing example to the file written
    edits: int = 0  # vspec.fuzz.shrink's edits kept
    note: str = ""  # why vspec.fuzz.shrink's result is not the last word, if it is not

    def describe(self) -> str:
        def sized(nodes_pods: tuple[int, int]) -> str:
            return f"{nodes_pods[0]} node(s), {nodes_pods[1]} pod(s)"

        note = f", {self.note}" if self.note else ""
        return (
            f"shrunk to {sized(self.after)} (Hypothesis: {sized(self.before)}) "
            f"in {self.seconds:.1f}s{note}"
        )


@dataclass
class Fuzzer:
    space: FuzzSpace
    engine: Engine
    out: Path = DEFAULT_OUT
    # Hypothesis' example database: a directory or a Redis URL (vspec.fuzz.campaign);
    # None: none kept.
    database: Path | str | None = None
    # Looked up when the run starts, not at import (pytest's capture swaps sys.stderr).
    progress: TextIO | None = field(default_factory=lambda: sys.stderr)
    # The per-batch progress line, redrawn in place: only on a terminal (a log would get
    # a line per batch); findings are said either way.
    live: bool = False
    shrink_seconds: float = 30.0  # per finding, from its first failing example
    first: bool = False  # stop after the batch that found the first finding
    # Another judge of each example (``vspec fuzz --diff``: the real Volcano's decisions,
    # :func:`vspec.diff.judge.oracle`): its finding kinds join the invariants'.
    oracle: Callable[[GeneratedSpec], dict[str, list[str]]] | None = None
    report: FuzzReport = field(default_factory=FuzzReport)
    # One process of a campaign (vspec.fuzz.campaign): its share of the batch seeds (the
    # residue slot.index - 1 of slot.count), its name and the ledger through which it
    # claims findings. None: a run of its own, every seed.
    part: Part | None = None
    _opened: ExampleDatabase | None = field(default=None, init=False, repr=False)

    def run(self, *, seconds: float | None, examples: int | None, seed_value: int) -> FuzzReport:
        """Batches of examples until ``examples`` ran or ``seconds`` passed (the first);
        shrinking ends by ``seconds + shrink_seconds``."""
        with tuned_collector(FUZZ_COLLECTOR_THRESHOLDS, freeze_first=True):
            return self._run(seconds=seconds, examples=examples, seed_value=seed_value)

    def _run(self, *, seconds: float | None, examples: int | None, seed_value: int) -> FuzzReport:
        start = time.perf_counter()
        deadline = start + seconds if seconds is not None else float("inf")
        budget = examples if examples is not None else sys.maxsize
        batch, size = 0, 10
        while budget > 0 and time.perf_counter() < deadline:
            before, t0 = self.report.examples, time.perf_counter()
            self._batch(
                min(size, budget), self._seed(seed_value, batch), deadline, reuse=batch == 0
            )
            done = max(self.report.examples - before, 1)
            batch += 1
            budget -= done
            self.report.seconds = time.perf_counter() - start
            if self.part is not None:
                self.part.count(self.report.examples, len(self.report.findings))
            self._draw(
                f"fuzz: {self.report.examples} examples in {self.report.seconds:.1f}s "
                f"({self.report.rate:.1f}/s), {len(self.report.findings)} finding(s)"
            )
            if self.first and self.report.findings:
                break
            per_example = (time.perf_counter() - t0) / done
            left = deadline - time.perf_counter()
            if left < per_example:
                break
            size = max(1, min(MAX_BATCH, int(min(left / per_example / 2, MAX_BATCH))))
        self.report.seconds = time.perf_counter() - start
        self._draw("")
        return self.report

    def _seed(self, seed_value: int, batch: int) -> int:
        """The seed of a batch: this process's share of the campaign's run of seeds."""
        if self.part is None:
            return seed_value + batch
        slot = self.part.slot
        return seed_value + slot.index - 1 + slot.count * batch

    def _database(self) -> ExampleDatabase | None:
        if self.database is None:
            return None
        if self._opened is None:
            self._opened = open_database(self.database)
        return self._opened

    def _draw(self, text: str) -> None:
        """The progress line, over the previous one (an empty text clears it)."""
        if self.live and self.progress is not None:
            print(f"\r\x1b[K{text}", end="", file=self.progress, flush=True)

    def _say(self, text: str) -> None:
        if self.progress is not None:
            self._draw("")
            print(text, file=self.progress, flush=True)

    def _batch(self, size: int, seed_value: int, deadline: float, *, reuse: bool) -> None:
        from hypothesis import HealthCheck, Phase, Verbosity, assume, given, seed, settings
        from hypothesis.internal.reflection import function_digest

        phases = [Phase.generate, Phase.shrink]
        if reuse:
            phases.insert(0, Phase.reuse)
        db = self._database()
        found, replayed = self.report.findings, self.report.replayed
        disabled = self.space.disabled
        reported = self.space.reported
        # Every failing case seen, by its spec, and the smallest of each kind: when
        # Hypothesis' share of the shrink margin is spent it is stopped (it has no time
        # limit of its own but five minutes), and the smallest so far is the finding.
        failing: dict[str, Finding] = {}
        smallest: dict[str, Finding] = {}
        first_seen: dict[str, float] = {}  # kind -> when its first example failed
        elsewhere: set[str] = set()  # kinds another process owns: not shrunk here
        end = deadline + self.shrink_seconds
        hypothesis_share = self.shrink_seconds * HYPOTHESIS_SHRINK_SHARE

        @settings(
            max_examples=size,
            database=db,
            deadline=None,
            phases=phases,
            derandomize=False,
            verbosity=Verbosity.quiet,
            # With --first the generation phase ends at the first failure (Hypothesis
            # would go on for up to 10 s looking for others, inside the shrink time).
            report_multiple_bugs=not self.first,
            suppress_health_check=list(HealthCheck),
        )
        @given(self.space.strategy())
        def example(case: GeneratedSpec) -> None:
            failure = judge(case)
            if failure is not None:
                # One raise site: Hypothesis tells bugs apart by exception type and the
                # line that raised, and shrinks a failure only while it is raised from
                # the same place.
                raise failure

        def judge(case: GeneratedSpec) -> Finding | None:
            now = time.perf_counter()
            if first_seen and (
                now > min(min(first_seen.values()) + hypothesis_share, end)
                or first_seen.keys() <= elsewhere
            ):
                raise _ShrinkTimeUp
            if not first_seen and now > deadline:
                return None  # the run's time is up: the batch's other examples pass
            # Until a case fails there is none to recognise: its key (the repr of the
            # whole spec, a sixth of a small simulation's cost) is not built.
            key = _case_key(case) if failing else ""
            known = failing.get(key)
            if known is not None:
                return type(known)(case, known.messages)
            try:
                failures = examine(case, self.engine, disabled, self.report.coverage)
                if self.oracle is not None and _timeline_case(case) is None:
                    failures = {**failures, **self.oracle(case)}
            except ConfError:
                assume(False)
                return None
            self.report.examples += 1
            for kind, messages in failures.items():
                if kind not in found and kind not in replayed and reported(kind, messages, case):
                    key = key or _case_key(case)
                    failing[key] = finding_type(kind)(case, messages)
                    if kind not in first_seen:
                        first_seen[kind] = now
                        if not self._claim(kind):
                            elsewhere.add(kind)
                    if kind not in smallest or _smaller(case, smallest[kind].case):
                        smallest[kind] = failing[key]
                    return failing[key]
            return None

        # ``@seed`` switches the example database off; a fuzz run wants both (a fresh
        # exploration per batch, earlier failures replayed across runs). So does a seed
        # forced on the whole process (pytest's --hypothesis-seed), unless the test names
        # its database key: the one Hypothesis would derive, so earlier runs still replay.
        example._hypothesis_internal_database_key = function_digest(example.hypothesis.inner_test)
        example = seed(seed_value)(example)
        example._hypothesis_internal_use_settings = settings(
            example._hypothesis_internal_use_settings,
            database=db,
        )
        try:
            example()
        except (Finding, _ShrinkTimeUp):
            pass
        except BaseExceptionGroup as group:
            if not all(isinstance(inner, Finding) for inner in _flatten(group)):
                raise
        for kind in first_seen:
            if kind in elsewhere:
                self._replayed(kind)
            else:
                self._record(smallest[kind], first_seen[kind], end)

    def _claim(self, kind: str) -> bool:
        """Whether this process owns the finding ``kind`` (its campaign's first to claim
        it; always, outside a campaign)."""
        part = self.part
        return part is None or part.ledger().claim(kind, part.name) == part.name

    def _replayed(self, kind: str) -> None:
        owner = (self.part.ledger().owner(kind) if self.part else None) or "another process"
        self.report.replayed[kind] = owner
        self._say(f"  {kind}: fails here too; found by {owner}, not reported again")

    def _record(self, finding: Finding, found_at: float, end: float) -> None:
        if finding.kind in self.report.findings:
            return
        case, messages, edits, note = self._shrink(
            finding, min(found_at + self.shrink_seconds, end)
        )
        path = write_finding(self.out, finding.kind, case, messages)
        # A disagreement with the real engine is not what `vspec run` checks: it is kept.
        diff = finding.kind.startswith(DIFF_KIND)
        if case is not finding.case and not diff and not reproduces(path, self.engine):
            # The file is what users run: should the loader read a shrunk spec otherwise
            # than the fuzzer built it, the finding is kept as Hypothesis left it.
            path.unlink()
            case, messages, edits = finding.case, finding.messages, 0
            note = "as Hypothesis left it: the smaller spec passed under vspec run"
            path = write_finding(self.out, finding.kind, case, messages)
        from vspec.fuzz.shrink import size

        shrunk = Shrunk(size(finding.case), size(case), time.perf_counter() - found_at, edits, note)
        self.report.findings[finding.kind] = path
        self.report.shrinks[finding.kind] = shrunk
        if self.part is not None:
            self.part.ledger().publish(finding.kind, path, self.part.name)
        self._say(f"  {finding.kind}: {messages[0]}\n    -> {path}\n    {shrunk.describe()}")

    def _shrink(
        self, finding: Finding, deadline: float
    ) -> tuple[GeneratedSpec, list[str], int, str]:
        """Hypothesis' shrunk case, shrunk further by :mod:`vspec.fuzz.shrink` (the same
        failure kind on the same engine and invariants), with its messages, the edits
        kept and a note when time ran out."""
        from vspec.fuzz.shrink import ShrinkStats, shrink

        if _timeline_case(finding.case) is not None:
            return finding.case, finding.messages, 0, ""  # timelines: Hypothesis only
        disabled, kind = self.space.disabled, finding.kind
        last: dict[str, list[str]] = {}

        def fails(candidate: GeneratedSpec) -> bool:
            try:
                failures = examine(candidate, self.engine, disabled)
                if self.oracle is not None:
                    failures = {**failures, **self.oracle(candidate)}
            except Exception:  # a conf Volcano rejects, an engine bug: not this finding
                return False
            if kind not in failures:
                return False
            last["messages"] = failures[kind]
            return True

        stats = ShrinkStats()
        case = shrink(finding.case, fails, deadline=deadline, stats=stats)
        note = "" if stats.complete else "stopped by the shrink margin"
        if case is finding.case:
            return case, finding.messages, 0, note
        return case, last["messages"], stats.kept, note


# A young generation that stays in the CPU's caches: an example's objects are few and
# short-lived, and collecting them a tenth as many at a time as vspec run does (its
# thresholds are sized for big specs) halves the fuzzer's collector time. What is alive
# when the run starts (modules, strategies) outlives it and is kept out of the full
# passes (Hypothesis forces one at the first example: 20-40 ms). Derived, not a
# literal: Hypothesis draws the integer literals of vspec's source now and then, so a
# new one would change which examples a seed explores.
FUZZ_COLLECTOR_THRESHOLDS = (COLLECTOR_THRESHOLDS[0] // 10, 10, 10)


def reproduces(path: Path, engine: Engine) -> bool:
    """Whether the spec file at ``path`` fails when run as ``vspec run`` runs it."""
    from vspec.harness.loader import load_file
    from vspec.harness.runner import run_spec

    load = load_file(path)
    if load.errors or len(load.specs) != 1:
        return False
    outcome = run_spec(load.specs[0], engine=engine)
    return outcome.failing and not outcome.invalid


def _case_key(case: GeneratedSpec) -> str:
    """What tells drawn cases apart (Hypothesis replays a failing one while shrinking)."""
    return repr((case.scheduler, case.cluster, case.seed, case.cycles, case.verbosity))


class _ShrinkTimeUp(BaseException):
    """Ends Hypothesis' run from inside a test case: a BaseException, so that Hypothesis
    takes it for an interrupt, not for a failure to shrink."""


def _smaller(case: GeneratedSpec, than: GeneratedSpec) -> bool:
    """Fewer nodes and pods, then a shorter spec: how Hypothesis' shrinker progresses,
    roughly (each failure it finds while shrinking is smaller by its own order)."""
    from vspec.fuzz.shrink import size

    return (sum(size(case)), len(repr(case))) < (sum(size(than)), len(repr(than)))


def _flatten(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_flatten(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


def finding_document(kind: str, case: GeneratedSpec, messages: list[str]) -> dict[str, Any]:
    """The spec that reproduces a finding: running it fails the same way."""
    described = "\n".join(messages[:10])
    extra: dict[str, Any] = {
        "description": f"Found by vspec fuzz ({kind}).\n{described}",
        "tags": ["fuzz", kind],
    }
    doc = case.document(**extra)
    doc["name"] = f"fuzz finding: {kind}"
    if not kind.startswith(("crash-", DIFF_KIND)):
        doc["expect"] = {"invariants": [kind]}
    return doc


def write_finding(out: Path, kind: str, case: GeneratedSpec, messages: list[str]) -> Path:
    import hashlib  # here: its OpenSSL start-up would cost every vspec command

    from vspec.harness.yamlwrite import dump

    doc = finding_document(kind, case, messages)
    text = dump(doc, default_flow_style=None, width=100)
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{kind}-{digest}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# -- the command line ------------------------------------------------------------------------------


def fuzz_command(args: argparse.Namespace) -> int:
    """``vspec fuzz``'s handler (its command line is :mod:`vspec.cli.fuzz`'s)."""
    if args.shard is not None and args.seed is None:
        print("vspec: error: --shard needs --seed, the same on every machine", file=sys.stderr)
        return EXIT_USAGE
    cache = cache_dir(Path.cwd())
    if args.database is None:
        args.database = cache / FUZZ_DATABASE
    try:
        space = _space(args)
        if args.collect:
            return _collect(args)
        engine, oracle = _engines(args)
    except VspecError as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    seconds = args.seconds if args.seconds is not None or args.examples is not None else 60.0
    seed_value = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(
        f"vspec fuzz: space {args.space}, seed {seed_value}, example database {args.database}",
        file=sys.stderr,
    )
    shrink = shrink_margin(seconds)
    if args.workers > 1 or args.shard is not None:
        try:
            report = campaign_fuzz(args, seconds=seconds, seed_value=seed_value, shrink=shrink)
        except VspecError as exc:
            print(f"vspec: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    else:
        fuzzer = Fuzzer(
            space,
            engine,
            args.out,
            args.database,
            shrink_seconds=shrink,
            first=args.first,
            live=sys.stderr.isatty(),
            oracle=oracle,
        )
        try:
            with hypothesis_home(cache / "hypothesis"):
                report = fuzzer.run(seconds=seconds, examples=args.examples, seed_value=seed_value)
        except VspecError as exc:  # the database's Redis server does not answer
            print(f"vspec: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    print_report(report)
    return EXIT_FOUND if report.findings or report.replayed else EXIT_OK


def _space(args: argparse.Namespace) -> FuzzSpace:
    space = load_space(args.space)
    if args.diff:  # the real Volcano runs its own actions and plugins only
        space = space.builtin_only()
    return replace(space, timelines=True) if args.timelines else space


def _engines(
    args: argparse.Namespace,
) -> tuple[Engine, Callable[[GeneratedSpec], dict[str, list[str]]] | None]:
    """The engine the examples run on, and with ``--diff`` the real Volcano's judge."""
    from vspec.engines import EngineChoice, get_engine

    if not args.diff:
        return get_engine(), None
    from vspec.diff.judge import Judge
    from vspec.diff.judge import oracle as diff_oracle

    engine = get_engine(choice=EngineChoice("python", args.volcano_version))
    choice = EngineChoice("volcano", args.volcano_version, args.volcano_source)
    return engine, diff_oracle(Judge(get_engine(choice=choice), args.volcano_version))


def print_report(report: FuzzReport) -> None:
    """The run's summary on stdout; its first line's form is what tools parse."""
    print(
        f"{report.examples} examples in {report.seconds:.1f}s ({report.rate:.1f}/s); "
        f"{len(report.findings)} finding(s)"
    )
    for line in report.coverage.lines():
        print(line)
    for kind, path in report.findings.items():
        shrunk = report.shrinks.get(kind)
        print(f"  {kind}: {path}" + (f" ({shrunk.describe()})" if shrunk else ""))
    for kind, owner in report.replayed.items():
        print(f"  {kind}: fails here too; found by {owner}")


def _collect(args: argparse.Namespace) -> int:
    """``--collect``: a sharded campaign's finding files, written to ``--out``, and its
    summary merged from every shard's."""
    if args.seed is None:
        print("vspec: error: --collect needs the campaign's --seed", file=sys.stderr)
        return EXIT_USAGE
    report, shards = collect(args)
    print(f"vspec fuzz: collected {shards} shard summaries into {args.out}", file=sys.stderr)
    print_report(report)
    return EXIT_FOUND if report.findings else EXIT_OK


@contextmanager
def hypothesis_home(directory: Path) -> Iterator[None]:
    """Hypothesis' own files (its constants cache, the default database) in ``directory``
    for the run, not in a ``.hypothesis/`` of the working directory; a user's
    ``HYPOTHESIS_STORAGE_DIRECTORY`` is kept."""
    from hypothesis import configuration

    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    configuration.set_hypothesis_home_dir(str(directory))
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(None)


def shrink_margin(seconds: float | None) -> float:
    """How long past ``seconds`` a run may shrink its findings: a quarter of it, 5 to 30 s."""
    return min(30.0, max(5.0, seconds / 4)) if seconds is not None else 30.0


def invariants_command(args: argparse.Namespace) -> int:
    write: Callable[[str], None] = print
    for inv in catalogue():
        write(f"{inv.name:22s} {inv.summary}")
        if args.verbose:
            write(f"    {inv.definition}")
            write(f"    Applies to: {inv.applies}")
    return EXIT_OK


# -- campaigns (vspec.fuzz.campaign) --------------------------------------------------------


def fuzz_campaign_name(args: argparse.Namespace, seed: int, *, sharded: bool) -> str:
    """A ``vspec fuzz`` campaign's name: its space, the options that change its
    findings, its seed."""
    options = "".join(f":{flag}" for flag in ("timelines", "diff") if getattr(args, flag))
    return campaign_name("fuzz", f"{args.space}{options}:{seed}", sharded=sharded)


def campaign_fuzz(
    args: argparse.Namespace, *, seconds: float | None, seed_value: int, shrink: float
) -> FuzzReport:
    """This machine's share of a campaign, in ``--workers`` processes; their reports
    merged, and kept in the ledger as this shard's summary."""
    sharded = args.shard is not None
    name = fuzz_campaign_name(args, seed_value, sharded=sharded)
    ledger = Ledger(open_database(args.database), name)  # one error, not every process's
    # Hypothesis and the strategies imported once, before the workers are forked.
    _space(args).strategy()
    resolved = {"seconds": seconds, "seed": seed_value, "shrink": shrink}
    reports, wall = run_parts(_fuzz_process, args, name, "examples", **resolved)
    report = merge_fuzz_reports(reports, wall)
    summary = {"examples": report.examples, "seconds": report.seconds}
    ledger.end(process_label(args.shard, 0, 1), summary, sharded=sharded)
    return report


def _fuzz_process(part: Part) -> FuzzReport:
    args = part.args
    engine, oracle = _engines(args)
    fuzzer = Fuzzer(
        _space(args),
        engine,
        args.out,
        args.database,
        part.output(),
        shrink_seconds=args.shrink,
        first=args.first,
        oracle=oracle,
        part=part,
    )
    start = time.process_time()
    with hypothesis_home(cache_dir(Path.cwd()) / "hypothesis"):
        examples = share(args.examples, part.slot)
        report = fuzzer.run(seconds=args.seconds, examples=examples, seed_value=args.seed)
    # What each process did, for a campaign whose processes take unequal shares of CPU.
    cpu = time.process_time() - start
    fuzzer._say(f"done: {report.examples} examples in {report.seconds:.1f}s, {cpu:.2f} CPU-s")
    return report


def merge_fuzz_reports(reports: Iterable[FuzzReport], seconds: float) -> FuzzReport:
    """One report of a campaign's processes: examples and coverage summed, each finding
    once (its owner's), and the findings another machine owns."""
    merged = FuzzReport(seconds=seconds)
    reports = list(reports)
    for report in reports:
        merged.examples += report.examples
        merged.coverage.merge(report.coverage)
        for kind, path in report.findings.items():
            if kind not in merged.findings:
                merged.findings[kind] = path
                merged.shrinks[kind] = report.shrinks[kind]
    for report in reports:
        for kind, owner in report.replayed.items():
            if kind not in merged.findings:
                merged.replayed.setdefault(kind, owner)
    return merged


def collect(args: argparse.Namespace) -> tuple[FuzzReport, int]:
    """A sharded campaign's findings written to ``args.out``, and its summary: the
    shards' examples summed over the longest shard's time (they ran side by side)."""
    ledger = Ledger(open_database(args.database), fuzz_campaign_name(args, args.seed, sharded=True))
    summaries = ledger.summaries()
    report = FuzzReport(
        examples=sum(int(s["examples"]) for s in summaries),
        seconds=max((float(s["seconds"]) for s in summaries), default=0.0),
    )
    report.findings = write_findings(ledger, args.out)
    return report, len(summaries)
