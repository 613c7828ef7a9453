"""Volcano panics a built-in space leaves unreported, recognised by their cause.

A space that ignored a whole finding kind (every ``crash-allocate``) for one known panic
would hide any other crash of that action. A :class:`KnownPanic` names the panic by the
engine's words for it and by what in the example leads Volcano there (a plugin entry
and the objects it reads): a crash of those words without such a cause is a finding.

Imports the model and the API only (the fuzz strategies read :data:`SCORER_WEIGHTS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from vspec.api.devices.vgpu import has_vgpu_request
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster

# The plugin arguments that scale a node's score: nodeorder's per scorer weights and
# binpack's plugin weight. Volcano reads each with GetInt and no floor, so a negative one
# takes a node's score below zero (binpack.cpu and binpack.memory are resource weights,
# which binpack turns into 1 when negative).
NODEORDER_WEIGHTS = (
    "nodeaffinity.weight",
    "podaffinity.weight",
    "leastrequested.weight",
    "mostrequested.weight",
    "balancedresource.weight",
    "tainttoleration.weight",
    "imagelocality.weight",
    "podtopologyspread.weight",
)
BINPACK_WEIGHT = "binpack.weight"
SCORER_WEIGHTS = frozenset((*NODEORDER_WEIGHTS, BINPACK_WEIGHT))

Cause = Callable[[SchedulerConf, Cluster], bool]


@dataclass(frozen=True)
class KnownPanic:
    """A Volcano panic the engine reproduces: the finding kinds it shows as, the words
    of the engine's message, and the causes (any one of them) in the example's conf and
    cluster."""

    kinds: frozenset[str]
    words: str
    causes: tuple[Cause, ...]

    def explains(
        self, kind: str, messages: Sequence[str], conf: SchedulerConf, cluster: Cluster
    ) -> bool:
        return (
            kind in self.kinds
            and any(self.words in message for message in messages)
            and any(cause(conf, cluster) for cause in self.causes)
        )


def _scoring_entries(conf: SchedulerConf, name: str) -> list[Mapping[str, object]]:
    """The arguments of each ``name`` entry whose node order functions are on."""
    return [
        option.arguments
        for tier in conf.tiers
        for option in tier.plugins
        if option.name == name and option.enabled("node_order")
    ]


def _negative(arguments: Mapping[str, object], keys: Sequence[str]) -> bool:
    return any(
        isinstance(value, int) and not isinstance(value, bool) and value < 0
        for value in (arguments.get(key) for key in keys)
    )


def negative_scorer_weight(conf: SchedulerConf, cluster: Cluster) -> bool:
    """A scoring nodeorder or binpack entry with a weight below zero."""
    return any(
        _negative(args, NODEORDER_WEIGHTS) for args in _scoring_entries(conf, "nodeorder")
    ) or any(_negative(args, (BINPACK_WEIGHT,)) for args in _scoring_entries(conf, "binpack"))


def preferred_group_avoided(conf: SchedulerConf, cluster: Cluster) -> bool:
    """A scoring nodegroup entry, and a queue that prefers to avoid a node group (whose
    nodes nodegroup admits and scores -1)."""
    if not _scoring_entries(conf, "nodegroup"):
        return False
    for queue in cluster.queues:
        anti = (queue.affinity or {}).get("nodeGroupAntiAffinity")
        if isinstance(anti, Mapping) and anti.get(
            "preferredDuringSchedulingIgnoredDuringExecution"
        ):
            return True
    return False


# allocate's and backfill's nil best node: with two or more feasible nodes, SelectBestNode
# keeps only a score above -1; when none has one it returns nil, and allocate reads the
# nil node's Idle (backfill its Name). specs/findings/nodegroup-preferred-anti-affinity-
# panics.yaml and negative-score-weight-panics.yaml record it.
NO_BEST_NODE = KnownPanic(
    kinds=frozenset({"crash-allocate", "crash-backfill"}),
    words="no best node for task",
    causes=(preferred_group_avoided, negative_scorer_weight),
)


def vgpu_pod_scored_by_deviceshare(conf: SchedulerConf, cluster: Cluster) -> bool:
    """A scoring deviceshare entry with vGPUs on and a schedule policy, and a pod whose
    limits ask for vGPUs (a node without them then has a nil pool, which the score
    dereferences)."""
    scoring = [
        args
        for args in _scoring_entries(conf, "deviceshare")
        if args.get("deviceshare.VGPUEnable") is True and args.get("deviceshare.SchedulePolicy")
    ]
    return bool(scoring) and any(has_vgpu_request(pod) for pod in cluster.pods)


# deviceshare's score walks every device pool of a node, the nil vgpu pool of a node
# without vGPUs too, and vgpu's ScoreNode reads a field of it; preempt scores such
# nodes (allocate's predicate removes them).
NIL_VGPU_POOL = KnownPanic(
    kinds=frozenset({"crash-deviceshare"}),
    words="dereferences the node's nil device pool",
    causes=(vgpu_pod_scored_by_deviceshare,),
)
