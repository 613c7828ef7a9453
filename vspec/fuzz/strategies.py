"""Hypothesis strategies for clusters, scheduler configurations and whole specs.

For property tests of plugins and actions (``@given(strategies.specs())``) and for
``vspec fuzz``. Clusters are drawn as explicit, small objects so that Hypothesis shrinks
them object by object and a failure can be written back as a readable spec file
(:meth:`GeneratedSpec.document`). Configurations are drawn from the action and plugin
registries: random action lists, tiers, enable flags, and plugin arguments within the
ranges of :data:`ARGUMENT_RANGES` (else a small range per documented type).

:func:`register_profiles` registers the Hypothesis profiles ``dev``, ``ci`` and ``fuzz``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from vspec.errors import Location
from vspec.framework.registry import registered_actions, registered_plugins
from vspec.harness.generate import generate_cluster
from vspec.model.conf import FLAG_KEYS, SchedulerConf, load_conf
from vspec.model.corev1 import (
    Affinity,
    Container,
    ContainerPort,
    LabelSelector,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from vspec.model.objects import (
    DEFAULT_NOW,
    GROUP_NAME_ANNOTATION,
    TASK_SPEC_KEY,
    ZERO_TIME,
    Cluster,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)
from vspec.model.quantity import parse_quantity
from vspec.model.spec import Spec

T = TypeVar("T")
GI = 2**30
MI = 2**20
ZONES = ("a", "b")
HOSTNAME = "kubernetes.io/hostname"
# Priority classes every drawn cluster declares: two ordinary ones (equal values come up
# through the pods' own priorities) and Kubernetes' two system-critical classes, which
# conformance protects.
PRIORITY_CLASSES = (
    ("high", 100),
    ("low", 10),
    ("system-cluster-critical", 2000000000),
    ("system-node-critical", 2000001000),
)
NAMESPACES = ("ns0", "ns1", "kube-system")
GPU = "nvidia.com/gpu"

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


# -- clusters ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterBounds:
    """How big drawn clusters get (the config space file's ``cluster`` key)."""

    max_nodes: int = 4
    max_queues: int = 3
    max_jobs: int = 5
    max_roles: int = 2
    max_replicas: int = 3
    # Queue guarantees easily make Volcano's proportion panic
    # (specs/findings/proportion-guarantee-panics.yaml): drawn only when asked.
    guarantees: bool = False
    # A `root` queue the others name as parent (capacity's enableHierarchy reads it):
    # "sometimes", "always" (capacity with hierarchy panics without one, see
    # specs/findings/) or "never".
    hierarchy: str = "sometimes"
    # "random" (:func:`clusters`), or "preempt" / "reclaim": mostly the full clusters
    # with starving work of :func:`eviction_clusters`, where Volcano evicts.
    shape: str = "random"


def _pool(*choices: tuple[int, T]) -> tuple[T, ...]:
    """Each value repeated by its weight (edge values get large weights); the first is
    the simplest, what a zero byte or index picks and shrinking leads to."""
    return tuple(value for weight, value in choices for _ in range(weight))


@functools.cache
def _weighted(*choices: tuple[int, Any]) -> st.SearchStrategy[Any]:
    """Values drawn in proportion to their weights, as one strategy built once per
    choice list (see below why strategies are built once)."""
    return st.sampled_from(_pool(*choices))


@functools.cache
def _byte_string(size: int) -> st.SearchStrategy[bytes]:
    return st.binary(min_size=size, max_size=size)


class _Dice:
    """One object's leaf decisions (its quantities, labels, gates), drawn as a single
    Hypothesis choice: a byte string of ``size`` bytes, one byte per decision.

    Hypothesis' engine costs about 25-30 us for each choice it records (and more for
    each strategy drawn), however little the choice holds; one byte string costs about
    that for all of an object's decisions. Shrinking keeps working decision by decision:
    Hypothesis shrinks a byte string byte by byte towards zero, and a zero byte picks
    each decision's first, simplest option (no gate, the pool's first value). Every
    decision takes the byte at its own position whatever the earlier ones decided (a
    gate's payload is rolled even when the gate is shut), so that a byte shrunk leaves
    the meaning of the others alone. Used as a context manager, which checks that the
    object took exactly its ``size`` bytes.
    """

    __slots__ = ("_bytes", "_next")

    def __init__(self, draw: st.DrawFn, size: int) -> None:
        self._bytes = draw(_byte_string(size))
        self._next = 0

    def __enter__(self) -> _Dice:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None and self._next != len(self._bytes):
            raise AssertionError(f"drew {len(self._bytes)} bytes, took {self._next}")

    def below(self, n: int) -> int:
        """0 to ``n - 1``, each about equally often."""
        byte = self._bytes[self._next]
        self._next += 1
        return byte * n >> 8

    def pick(self, pool: Sequence[T]) -> T:
        return pool[self.below(len(pool))]

    def one_in(self, n: int) -> bool:
        """True one time in ``n`` (a zero byte, the simplest, is false)."""
        return self.below(n) == n - 1

    def maybe(self, n: int, pool: Sequence[T]) -> T | None:
        """One time in ``n`` a value of ``pool``, else None (two bytes)."""
        gate, value = self.one_in(n), self.pick(pool)
        return value if gate else None

    def some(self, pool: Sequence[T], lo: int, hi: int) -> list[T]:
        """``lo`` to ``hi`` values of ``pool``, without repeats (``1 + hi`` bytes): a
        repeated pick is dropped, so fewer come up now and then, as in a unique list."""
        count, picked = lo + self.below(hi - lo + 1), [self.pick(pool) for _ in range(hi)]
        out: list[T] = []
        for value in picked[:count]:
            if value not in out:
                out.append(value)
        return out


def _q(text: str) -> Fraction:
    return parse_quantity(text)


# Pools and strategies are built once: Hypothesis labels each strategy object, and
# building fresh ones inside every draw dominates the cost of a small example. Quantities
# lean towards the edges: zero, one milli-unit, values one step off a node's size, odd
# byte counts.
_CPU = _pool(
    (3, _q("0")),
    (1, _q("1m")),
    (1, _q("999m")),
    (3, _q("1")),
    (1, _q("1001m")),
    (2, _q("500m")),
    (1, _q("1500m")),
    (3, _q("2")),
    (1, _q("3")),
    (1, _q("4")),
)
_MEMORY = _pool(
    (3, _q("0")),
    (1, _q("1")),
    (1, _q("100M")),
    (1, Fraction(GI // 2 + 1)),
    (2, Fraction(GI // 2)),
    (3, Fraction(GI)),
    (1, Fraction(3 * GI // 2)),
    (2, Fraction(2 * GI)),
)
_NODE_CPU = _pool((3, _q("2")), (4, _q("4")), (2, _q("1")), (2, _q("3500m")), (2, _q("8")))
_NODE_MEMORY = _pool(
    (3, Fraction(4 * GI)), (2, Fraction(2 * GI)), (1, Fraction(8 * GI)), (1, Fraction(3 * GI + MI))
)
_NODE_PODS = _pool((3, Fraction(110)), (3, Fraction(2)), (2, Fraction(1)), (3, Fraction(4)))
_GPUS = (Fraction(1), Fraction(2))
_TAINTS = (
    Taint("dedicated", "x", "NoSchedule"),
    Taint("dedicated", "x", "NoExecute"),
    Taint("dedicated", "y", "PreferNoSchedule"),
    Taint(GPU, "", "NoSchedule"),
    Taint("spot", "true", "NoExecute"),
)
_TOLERATIONS = (
    Toleration("dedicated", "Equal", "x", "NoSchedule"),
    Toleration("dedicated", "Equal", "x", ""),
    Toleration("dedicated", "Exists", "", "NoExecute"),
    Toleration("dedicated", "Equal", "y", "NoSchedule"),
    Toleration(GPU, "Exists", "", "NoSchedule"),
    Toleration("spot", "Exists", "", ""),
    Toleration("", "Exists", "", ""),
    Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),
)
# NotIn on a label most nodes lack ("keep off GPU nodes") is weighted up: a node without
# the label matches it, the edge a NotIn implementation gets wrong.
_NODE_REQUIREMENTS = _pool(
    (1, NodeSelectorRequirement("zone", "In", ("a",))),
    (1, NodeSelectorRequirement("zone", "In", ("a", "b"))),
    (1, NodeSelectorRequirement("zone", "NotIn", ("a",))),
    (1, NodeSelectorRequirement("gpu", "Exists")),
    (1, NodeSelectorRequirement("gpu", "DoesNotExist")),
    (3, NodeSelectorRequirement("gpu", "NotIn", ("true",))),
    (1, NodeSelectorRequirement("rank", "Gt", ("1",))),
    (1, NodeSelectorRequirement("rank", "Lt", ("2",))),
    (2, NodeSelectorRequirement("rank", "NotIn", ("1",))),
)
_RANK = ("", "0", "1", "2", "3")
_BOOL = st.booleans()
_TASK_PRIORITY = _pool((3, None), (2, 1), (1, 0), (1, 3))
_NAMESPACE = _pool((4, "ns0"), (2, "ns1"), (1, "kube-system"))
_GROUP_CLASS = _pool((2, ""), (2, "high"), (2, "low"))
_POD_CLASS = _pool((8, ""), (1, "system-cluster-critical"), (1, "system-node-critical"))
_WAITING_PHASE = ("Pending", "Inqueue")
_RECLAIMABLE = _pool((3, None), (1, True), (1, False))
_SEED = st.integers(0, 2**16)
_CREATED = _pool((4, ZERO_TIME), (1, DEFAULT_NOW), (1, DEFAULT_NOW.replace(year=2024)))
# minMember: all pods (a full gang) or one (no gang) most often, else any.
_MIN_MEMBER = _pool((2, "all"), (1, "one"), (1, "none"), (3, "any"))


@functools.cache
def _int(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


@functools.cache
def _one_of(values: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    return st.sampled_from(values)


def _clamped(draw: st.DrawFn, base: st.SearchStrategy[int], lo: int, hi: int) -> int:
    return max(lo, min(draw(base), hi))


_NODE_BYTES = 12


@st.composite
def nodes(draw: st.DrawFn, index: int = 0) -> Node:
    with _Dice(draw, _NODE_BYTES) as dice:
        cpu, memory, pods = dice.pick(_NODE_CPU), dice.pick(_NODE_MEMORY), dice.pick(_NODE_PODS)
        allocatable = {"cpu": cpu, "memory": memory, "pods": pods}
        labels = {"zone": dice.pick(ZONES), HOSTNAME: f"n{index}"}
        gpus = dice.maybe(2, _GPUS)
        if gpus is not None:
            allocatable[GPU] = gpus
            labels["gpu"] = "true"
        rank = dice.pick(_RANK)
        if rank:
            labels["rank"] = rank
        tainted, taints = dice.one_in(3), dice.some(_TAINTS, 1, 2)
        unschedulable = dice.one_in(5)
    return Node(
        ObjectMeta(f"n{index}", labels=labels),
        allocatable=allocatable,
        capacity=dict(allocatable),
        taints=taints if tainted else [],
        unschedulable=unschedulable,
    )


# Drawn as the same strategy objects each time (see above).
_node_at = functools.cache(nodes)

_QUEUE_DIMS = ("cpu", "memory", GPU)
_QUEUE_RESOURCE_BYTES = 7


def _queue_resources(dice: _Dice, dims: Sequence[str] | None = None) -> dict[str, Fraction]:
    """Some of cpu, memory and GPUs (``dims``: these), each with its value."""
    drawn = dice.some(_QUEUE_DIMS, 0, 3)
    values = {
        "cpu": Fraction(1 + dice.below(8)),
        "memory": Fraction((1 + dice.below(8)) * GI),
        GPU: Fraction(dice.below(3)),
    }
    return {name: values[name] for name in (drawn if dims is None else dims)}


_QUEUE_BYTES = 4 + 3 * (1 + _QUEUE_RESOURCE_BYTES)


@st.composite
def queues(draw: st.DrawFn, index: int = 0, parent: str = "") -> Queue:
    with _Dice(draw, _QUEUE_BYTES) as dice:
        created, weight = dice.pick(_CREATED), 1 + dice.below(4)
        capped, capability = dice.one_in(2), _queue_resources(dice)
        deserving, deserved = dice.one_in(3), _queue_resources(dice)
        guaranteed, guarantee = dice.one_in(5), _queue_resources(dice, ["cpu"])
        priority, reclaimable = dice.below(2), dice.pick(_RECLAIMABLE)
    return Queue(
        ObjectMeta(f"q{index}", creation_timestamp=created),
        weight=weight,
        capability=capability if capped else {},
        deserved=deserved if deserving else {},
        guarantee=guarantee if guaranteed else {},
        priority=priority,
        parent=parent,
        reclaimable=reclaimable,
    )


_queue_at = functools.cache(queues)


def _requests(dice: _Dice) -> dict[str, Fraction]:
    """One role's requests (5 bytes); all zero makes its pods best-effort (about one
    role in 25, and every role of an object Hypothesis drew as its simplest)."""
    requests = {"cpu": dice.pick(_CPU), "memory": dice.pick(_MEMORY)}
    gpus = dice.maybe(4, _GPUS)
    if gpus is not None:
        requests[GPU] = gpus
    if dice.one_in(4):
        requests["pods"] = Fraction(1)  # as a user may write it; Volcano counts pods itself
    return {k: v for k, v in requests.items() if v}


_TERM_BYTES = 3
_TERMS_BYTES = 1 + 2 * _TERM_BYTES


def _drawn_term(dice: _Dice) -> NodeSelectorTerm:
    """One or two requirements, ANDed."""
    return NodeSelectorTerm(tuple(dice.some(_NODE_REQUIREMENTS, 1, 2)))


def _drawn_terms(dice: _Dice) -> tuple[NodeSelectorTerm, ...]:
    """One or two terms, ORed (``_TERMS_BYTES``)."""
    count, terms = 1 + dice.below(2), [_drawn_term(dice) for _ in range(2)]
    return tuple(terms[:count])


_AFFINITY_BYTES = 7 + _TERMS_BYTES + _TERM_BYTES


def _affinity(dice: _Dice, job: str) -> Affinity | None:
    """Required and preferred node affinity, and pod (anti-)affinity to the job's pods."""
    # One role in three: the filters and the node affinity score read it on every node.
    selects, requires, required = dice.one_in(3), dice.one_in(2), _drawn_terms(dice)
    prefers, weight, preferred = dice.one_in(2), 1 + dice.below(8), _drawn_term(dice)
    node_affinity = None
    if selects:
        node_affinity = NodeAffinity(
            required=required if requires else None,
            preferred=(PreferredSchedulingTerm(weight, preferred),) if prefers else (),
        )
    term = PodAffinityTerm(
        topology_key=HOSTNAME if dice.one_in(2) else "zone",
        label_selector=LabelSelector(match_labels=(("job", job),)),
    )
    pod_affinity = PodAffinity(required=(term,)) if dice.one_in(12) else None
    anti = PodAffinity(required=(term,)) if dice.one_in(10) else None
    if node_affinity is None and pod_affinity is None and anti is None:
        return None
    return Affinity(node_affinity, pod_affinity, anti)


_ROLE_BYTES = 18 + _AFFINITY_BYTES  # _pods' role-wide decisions (16), minTaskMember's (2)
_POD_BYTES = 2


def _pods(
    draw: st.DrawFn,
    dice: _Dice,
    job: str,
    namespace: str,
    role: str,
    node_names: Sequence[str],
    bounds: ClusterBounds,
) -> list[Pod]:
    """One role's replicas: same requests, selector, tolerations, affinity and priority
    (``dice``'s bytes but 2); where each runs, drawn per pod."""
    requests = _requests(dice)
    selector = dice.maybe(4, ZONES)
    tolerant, tolerations = dice.one_in(3), dice.some(_TOLERATIONS, 1, 2)
    affinity = _affinity(dice, job)
    ports = [ContainerPort(8080, 8080)] if dice.one_in(8) else []
    priority = dice.pick(_TASK_PRIORITY)
    class_name = dice.pick(_POD_CLASS)
    if class_name:
        priority = dict(PRIORITY_CLASSES)[class_name]
    created = dice.pick(_CREATED)
    replicas = 1 + dice.below(bounds.max_replicas)
    where = _placement(tuple(node_names))
    pods = []
    with _Dice(draw, _POD_BYTES * replicas) as each:
        for i in range(replicas):
            name = f"{job}-{role}-{i}"
            node, releasing = each.pick(where), each.one_in(4)
            pods.append(
                Pod(
                    ObjectMeta(
                        name,
                        namespace,
                        uid=f"{namespace}-{name}",
                        labels={TASK_SPEC_KEY: role, "job": job},
                        annotations={GROUP_NAME_ANNOTATION: job},
                        creation_timestamp=created,
                        deletion_timestamp=DEFAULT_NOW if releasing and node else None,
                    ),
                    phase="Running" if node else "Pending",
                    node_name=node or "",
                    priority=priority,
                    priority_class_name=class_name,
                    node_selector={"zone": selector} if selector else {},
                    tolerations=list(tolerations) if tolerant else [],
                    affinity=affinity,
                    containers=[Container(requests=requests, ports=list(ports))],
                )
            )
    return pods


@functools.cache
def _placement(node_names: tuple[str, ...]) -> tuple[str | None, ...]:
    """Where a drawn pod runs: nowhere (pending) half the time, else on one of the nodes."""
    return (*[None] * len(node_names), *node_names) if node_names else (None,)


def _min_member(dice: _Dice, pods: int) -> int:
    """minMember (2 bytes)."""
    kind, any_value = dice.pick(_MIN_MEMBER), dice.below(pods + 1)
    return {"all": pods, "one": 1, "none": 0, "any": any_value}[kind]


_JOB_BYTES = 10


@st.composite
def _job(
    draw: st.DrawFn,
    index: int,
    queue_names: Sequence[str],
    node_names: Sequence[str],
    bounds: ClusterBounds,
) -> tuple[PodGroup, list[Pod]]:
    name = f"j{index}"
    with _Dice(draw, _JOB_BYTES) as dice:
        namespace = dice.pick(_NAMESPACE)
        missing, queue = dice.one_in(6), dice.pick(queue_names)
        roles = 1 + dice.below(bounds.max_roles)
        pods: list[Pod] = []
        min_task_member: dict[str, int] = {}
        for r in range(roles):
            with _Dice(draw, _ROLE_BYTES) as role:
                role_pods = _pods(draw, role, name, namespace, f"r{r}", node_names, bounds)
                gate, floor = role.one_in(3), role.below(len(role_pods) + 1)
                if gate:
                    min_task_member[f"r{r}"] = floor
            pods.extend(role_pods)
        running = any(p.node_name for p in pods)
        min_member = _min_member(dice, len(pods))
        created, group_class = dice.pick(_CREATED), dice.pick(_GROUP_CLASS)
        phase, floor = dice.pick(_WAITING_PHASE), dice.one_in(4)
    pg = PodGroup(
        ObjectMeta(name, namespace, creation_timestamp=created),
        queue="missing" if missing else queue,
        min_member=min_member,
        min_task_member=min_task_member,
        priority_class_name=group_class,
        phase="Running" if running else phase,
    )
    if floor:
        total: dict[str, Fraction] = {}
        for pod in pods[: max(pg.min_member, 1)]:
            for k, v in pod.containers[0].requests.items():
                total[k] = total.get(k, Fraction(0)) + v
        pg.min_resources = total
    return pg, pods


_job_at = functools.cache(_job)


@st.composite
def clusters(draw: st.DrawFn, bounds: ClusterBounds = ClusterBounds()) -> Cluster:
    """Small explicit clusters: nodes with labels, taints and pod limits; weighted queues
    with capabilities, deserved shares and (optionally) guarantees, sometimes under a
    `root` queue; gang jobs with roles, priorities, affinities, host ports, best-effort,
    running and terminating pods."""
    with _Dice(draw, 4) as dice:
        node_count, queue_count = (
            1 + dice.below(bounds.max_nodes),
            1 + dice.below(bounds.max_queues),
        )
        sometimes, job_count = dice.one_in(3), dice.below(bounds.max_jobs + 1)
    node_list = [draw(_node_at(i)) for i in range(node_count)]
    rooted = bounds.hierarchy == "always" or (bounds.hierarchy == "sometimes" and sometimes)
    parent = "root" if rooted else ""
    queue_list = [draw(_queue_at(i, parent)) for i in range(queue_count)]
    if not bounds.guarantees:
        for q in queue_list:
            q.guarantee = {}
    if parent:
        queue_list.insert(0, Queue(ObjectMeta("root"), weight=1))
    names = [n.meta.name for n in node_list]
    qnames = [q.meta.name for q in queue_list if q.meta.name != "root"]
    cluster = Cluster(
        nodes=node_list,
        queues=queue_list,
        priority_classes=[PriorityClass(ObjectMeta(n), v) for n, v in PRIORITY_CLASSES],
    )
    for j in range(job_count):
        pg, pods = draw(_job_at(j, tuple(qnames), tuple(names), bounds))
        cluster.pod_groups.append(pg)
        cluster.pods.extend(pods)
    return cluster


# -- eviction-shaped clusters ------------------------------------------------------------------
#
# Random clusters almost never make Volcano evict: preempt and reclaim need a cluster that
# is full of running pods the plugins let go, next to starving work that fits only once
# they go. These builders draw exactly that, with the edges of each rule close by:
# priorities that differ or are equal, victims' jobs just above or at minMember, queues
# above or at their deserved share, reclaimable or not, best-effort preemptors, critical
# and unpreemptable pods, exact fits and one-step misses.

_SHAPES = ("preempt", "reclaim")
_EVICT_NODE_CPU = _weighted((3, _q("2")), (2, _q("4")), (1, _q("3")))
_EVICT_NODE_MEMORY = _weighted((3, Fraction(4 * GI)), (1, Fraction(8 * GI)))
_VICTIM_CPU = _weighted((4, _q("1")), (2, _q("2")), (1, _q("500m")))
_VICTIM_MEMORY = _weighted((3, Fraction(GI)), (1, Fraction(2 * GI)), (1, Fraction(0)))
_STARVING_CPU = _weighted((4, _q("1")), (3, _q("2")), (1, _q("1001m")), (1, _q("3")))
_STARVING_MEMORY = _weighted((3, Fraction(GI)), (1, Fraction(2 * GI)), (1, Fraction(0)))
# The victims' job priority class against the starving job's "high": lower most often.
_VICTIM_CLASS = _weighted((6, "low"), (2, "high"), (1, ""))
_STARVING_CLASS = _weighted((5, "high"), (1, "low"))
_VICTIM_NAMESPACE = _weighted((8, "ns0"), (1, "kube-system"))
_VICTIM_POD_CLASS = _weighted((10, ""), (1, "system-cluster-critical"))
# True one time in n: Hypothesis draws the ends of an integer range far more often than
# their share (``_ONE_IN[10]`` is true about a third of the time), a weighted list does not.
_RARELY = {n: _weighted((n - 1, False), (1, True)) for n in (4, 5, 8, 10)}
# Usually true, but false is what the shrinker tries first (fewer pods).
_MOSTLY = _weighted((1, False), (7, True))


def cluster_strategy(bounds: ClusterBounds) -> st.SearchStrategy[Cluster]:
    """The clusters ``bounds.shape`` asks for: eviction-shaped ones three times in four
    (the rest random, so that the preempt and reclaim spaces still see everything), or
    allocate-shaped ones half the time (the rest random: the node filters need them)."""
    if bounds.shape == "allocate":
        return _either(_BOOL, allocate_clusters(bounds), clusters(bounds))
    if bounds.shape not in _SHAPES:
        return clusters(bounds)
    return _either(
        _weighted((1, False), (3, True)), eviction_clusters(bounds, bounds.shape), clusters(bounds)
    )


@st.composite
def _either(
    draw: st.DrawFn,
    choose: st.SearchStrategy[bool],
    shaped: st.SearchStrategy[Cluster],
    plain: st.SearchStrategy[Cluster],
) -> Cluster:
    """``shaped`` when ``choose`` draws true, else ``plain``: each strategy built once
    (a flatmap would build the one it picks on every draw, or draw through another layer)."""
    return draw(shaped if draw(choose) else plain)


def _eviction_node(draw: st.DrawFn, index: int) -> Node:
    """Plain nodes (the filters have their own generators)."""
    allocatable = {
        "cpu": draw(_EVICT_NODE_CPU),
        "memory": draw(_EVICT_NODE_MEMORY),
        "pods": Fraction(110),
    }
    return Node(
        ObjectMeta(f"n{index}", labels={"zone": ZONES[index % 2], HOSTNAME: f"n{index}"}),
        allocatable=allocatable,
        capacity=dict(allocatable),
    )


def _eviction_queues(draw: st.DrawFn, bounds: ClusterBounds, shape: str) -> list[Queue]:
    """q0 holds the starving work; reclaim always has another queue to take from."""
    low = 2 if shape == "reclaim" else 1
    count = _clamped(draw, _weighted((2, low), (1, 2), (1, 3)), low, bounds.max_queues)
    rooted = bounds.hierarchy == "always" or (bounds.hierarchy == "sometimes" and draw(_RARELY[4]))
    parent = "root" if rooted else ""
    # proportion lets a queue reclaim only up to its weighted share: q0 weighs most often.
    first = _weighted((2, 3), (1, 2), (1, 1)) if shape == "reclaim" else _weighted((1, 1))
    out = [
        Queue(
            ObjectMeta(f"q{i}"),
            weight=draw(first if i == 0 else _weighted((3, 1), (1, 2))),
            reclaimable=draw(_weighted((3, None), (1, True), (2, False))) if i else None,
        )
        for i in range(count)
    ]
    if parent:
        for q in out:
            q.parent = parent
        out.insert(0, Queue(ObjectMeta("root"), weight=1))
    return out


def _shaped_pod(
    job: str, role: str, i: int, namespace: str, requests: dict[str, Fraction], node: str
) -> Pod:
    return Pod(
        ObjectMeta(
            f"{job}-{role}-{i}",
            namespace,
            uid=f"{namespace}-{job}-{role}-{i}",
            labels={TASK_SPEC_KEY: role, "job": job},
            annotations={GROUP_NAME_ANNOTATION: job},
        ),
        phase="Running" if node else "Pending",
        node_name=node,
        containers=[Container(requests={k: v for k, v in requests.items() if v})],
    )


def _victim_jobs(
    draw: st.DrawFn, nodes_: list[Node], queue_names: list[str], shape: str, jobs: int
) -> tuple[list[PodGroup], list[Pod]]:
    """Running jobs that fill the nodes, each node to its cpu exactly unless a draw stops
    early; minMember at, one below or well below the running count."""
    sizes = [
        {"cpu": draw(_VICTIM_CPU), "memory": draw(_VICTIM_MEMORY)} for _ in range(max(1, jobs))
    ]
    # reclaim takes (mostly) from other queues, preempt (mostly) from the starving job's.
    others = queue_names[1:] or queue_names
    queue_of = [
        draw(_one_of(tuple(others))) if draw(_RARELY[5]) != (shape == "reclaim") else queue_names[0]
        for _ in sizes
    ]
    placed: list[list[Pod]] = [[] for _ in sizes]
    namespace = [draw(_VICTIM_NAMESPACE) for _ in sizes]
    for node in nodes_:
        free = [Fraction(node.allocatable["cpu"]), Fraction(node.allocatable["memory"])]
        count = 0
        # The first pod always goes; then until the cpu is used up (or a draw stops).
        # Overcommitted nodes are the random clusters' business.
        while count < 4 and (count == 0 or draw(_MOSTLY)):
            j = draw(_int(0, len(sizes) - 1))
            cpu, memory = sizes[j]["cpu"], sizes[j]["memory"]
            if cpu > free[0] or memory > free[1]:
                break
            pod = _shaped_pod(f"v{j}", "r0", len(placed[j]), namespace[j], sizes[j], node.meta.name)
            placed[j].append(pod)
            free = [free[0] - cpu, free[1] - memory]
            count += 1
        # The pod slots full too: even a best-effort preemptor then needs a victim's slot.
        if count and draw(_RARELY[5]):
            node.allocatable["pods"] = node.capacity["pods"] = Fraction(count)
    groups: list[PodGroup] = []
    pods: list[Pod] = []
    for j, members in enumerate(placed):
        if not members:
            continue
        running = len(members)
        min_member = draw(_weighted((5, 1), (1, 0), (2, running), (2, max(0, running - 1))))
        pod_class = draw(_VICTIM_POD_CLASS)
        for pod in members:
            pod.priority_class_name = pod_class
            pod.priority = dict(PRIORITY_CLASSES).get(pod_class)
        if draw(_RARELY[10]):
            members[0].meta.annotations["volcano.sh/preemptable"] = "false"
        groups.append(
            PodGroup(
                ObjectMeta(f"v{j}", namespace[j]),
                queue=queue_of[j],
                min_member=min_member,
                priority_class_name=draw(_VICTIM_CLASS),
                phase="Running",
            )
        )
        pods.extend(members)
    return groups, pods


def _starving_jobs(
    draw: st.DrawFn, queue_names: list[str], shape: str, bounds: ClusterBounds, jobs: int
) -> tuple[list[PodGroup], list[Pod]]:
    """Pending gangs (or single pods) of higher priority, Inqueue mostly, some of them
    best-effort; sometimes of another queue than q0."""
    groups: list[PodGroup] = []
    pods: list[Pod] = []
    for j in range(jobs):
        # The first in q0 mostly; a second one often competes from another queue (then
        # proportion's deserved share, not the node, may be what stops a preemptor).
        queue = (
            queue_names[0] if (j == 0) != draw(_RARELY[5]) else draw(_one_of(tuple(queue_names)))
        )
        # A best-effort preemptor fits wherever a pod slot is free, so it evicts nothing.
        best = draw(_RARELY[10])
        requests = {} if best else {"cpu": draw(_STARVING_CPU), "memory": draw(_STARVING_MEMORY)}
        replicas = _clamped(draw, _weighted((3, 1), (2, 2), (1, 3)), 0, bounds.max_replicas)
        members = [_shaped_pod(f"s{j}", "r0", i, "ns0", requests, "") for i in range(replicas)]
        task_priority = draw(_weighted((3, None), (1, 1)))
        for pod in members:
            pod.priority = task_priority
        pods.extend(members)
        groups.append(
            PodGroup(
                ObjectMeta(f"s{j}", "ns0"),
                queue=queue,
                min_member=draw(_weighted((2, replicas), (3, 1))),
                priority_class_name=draw(_STARVING_CLASS),
                phase=draw(_weighted((4, "Inqueue"), (1, "Pending"))),
            )
        )
    return groups, pods


@st.composite
def eviction_clusters(
    draw: st.DrawFn, bounds: ClusterBounds = ClusterBounds(), shape: str = "preempt"
) -> Cluster:
    """A full cluster (1-3 nodes of running victims' jobs) and starving jobs that fit only
    once some victims go: what makes ``preempt`` (``shape="preempt"``: same queue, higher
    priority) or ``reclaim`` (``"reclaim"``: queues above their share) evict."""
    count = _clamped(draw, _weighted((3, 1), (2, 2), (1, 3)), 0, bounds.max_nodes)
    node_list = [_eviction_node(draw, i) for i in range(count)]
    queue_list = _eviction_queues(draw, bounds, shape)
    names = [q.meta.name for q in queue_list if q.meta.name != "root"]
    victims = draw(_int(1, max(1, min(2, bounds.max_jobs - 1))))
    starving = draw(_int(1, max(1, min(2, bounds.max_jobs - victims))))
    groups, pods = _victim_jobs(draw, node_list, names, shape, victims)
    more_groups, more_pods = _starving_jobs(draw, names, shape, bounds, starving)
    return Cluster(
        nodes=node_list,
        queues=queue_list,
        priority_classes=[PriorityClass(ObjectMeta(n), v) for n, v in PRIORITY_CLASSES],
        pod_groups=groups + more_groups,
        pods=pods + more_pods,
    )


# -- allocate-shaped clusters ------------------------------------------------------------------
#
# What allocate's order and its gang rules show: one queue (mostly) whose jobs compete
# for room the cluster has, of one priority (mostly) so that the next JobOrder decides:
# gangs already ready (running at minMember, with replicas pending) next to gangs that
# are not, held shares that differ, and jobs with one pod no node takes (larger than
# every node, or selecting a zone no node is in) next to a role that fits.

_ALLOC_NODE_CPU = _pool((3, _q("4")), (2, _q("2")), (2, _q("3")))
_ALLOC_NODE_MEMORY = _pool((3, Fraction(4 * GI)), (1, Fraction(8 * GI)))
_ALLOC_CPU = _pool((3, _q("1")), (2, _q("500m")), (1, _q("2")))
_ALLOC_MEMORY = _pool((3, Fraction(0)), (2, Fraction(GI)))
_JOB_KINDS = _pool((3, "ready"), (3, "gang"), (3, "partial"), (1, "single"))
# minMember by kind: for a partial job, one, its fitting replicas or none; for a ready
# gang, its running pods, none or one fewer; else all, one or none.
_PARTIAL_MIN = _pool((3, "one"), (1, "fits"), (1, "none"))
_READY_MIN = _pool((3, "running"), (1, "none"), (1, "fewer"))
_GANG_MIN = _pool((2, "all"), (1, "one"), (1, "none"))
_NOWHERE = {"zone": "none"}  # no node is in that zone


def _allocate_node(dice: _Dice, index: int) -> Node:
    """Plain nodes with room (2 bytes)."""
    cpu, memory = dice.pick(_ALLOC_NODE_CPU), dice.pick(_ALLOC_NODE_MEMORY)
    allocatable = {"cpu": cpu, "memory": memory, "pods": Fraction(110)}
    return Node(
        ObjectMeta(f"n{index}", labels={"zone": ZONES[index % 2], HOSTNAME: f"n{index}"}),
        allocatable=allocatable,
        capacity=dict(allocatable),
    )


def _allocate_job_bytes(bounds: ClusterBounds) -> int:
    return 7 + _TERMS_BYTES + max(2, bounds.max_replicas)


def _allocate_job(
    dice: _Dice,
    index: int,
    kind: str,
    nodes_: list[Node],
    bounds: ClusterBounds,
    used: dict[str, list[Fraction]],
) -> tuple[list[Pod], int]:
    """The pods of one job of ``kind`` and its minMember (``_allocate_job_bytes``).
    Running pods go on the first node with room for them (``used``: each node's cpu and
    memory taken so far)."""
    job = f"j{index}"
    requests = {"cpu": dice.pick(_ALLOC_CPU), "memory": dice.pick(_ALLOC_MEMORY)}
    replicas = 1 + dice.below(max(1, bounds.max_replicas))
    halves = dice.one_in(2)
    huge = len(nodes_) > 1 and halves  # within the cluster's total, not a node's
    minimum = dice.pick(_PARTIAL_MIN if kind == "partial" else _READY_MIN)
    gang_minimum = dice.pick(_GANG_MIN)
    affinity = _node_selection(dice)
    more = [dice.one_in(2) for _ in range(max(2, bounds.max_replicas))]
    if kind == "single":
        return [_shaped_pod(job, "r0", 0, "ns0", requests, "")], 1
    if kind == "partial":
        # r0's pod fits no node and comes first in TaskOrder; r1's pods fit.
        widest = max(Fraction(n.allocatable["cpu"]) for n in nodes_)
        lost = _shaped_pod(job, "r0", 0, "ns0", {**requests, "cpu": widest + 1}, "")
        if not huge:
            lost = _shaped_pod(job, "r0", 0, "ns0", requests, "")
            lost.node_selector = dict(_NOWHERE)
        fits = [_shaped_pod(job, "r1", i, "ns0", requests, "") for i in range(replicas)]
        _select_nodes(affinity, fits)
        return [lost, *fits], {"one": 1, "fits": replicas, "none": 0}[minimum]
    count = max(2, replicas) if kind == "ready" else replicas
    pods = []
    for i in range(count):
        node = ""
        # A ready gang runs its first pod, maybe more, and keeps one pending.
        if kind == "ready" and i < count - 1 and (i == 0 or more[i]):
            node = _room(nodes_, used, requests)
        pods.append(_shaped_pod(job, "r0", i, "ns0", requests, node))
    running = sum(1 for p in pods if p.node_name)
    _select_nodes(affinity, pods)
    if kind == "ready":
        return pods, {"running": running, "none": 0, "fewer": max(0, running - 1)}[minimum]
    return pods, {"all": count, "one": 1, "none": 0}[gang_minimum]


def _node_selection(dice: _Dice) -> Affinity | None:
    """One role in three selects nodes by required node affinity (NotIn on labels these
    nodes lack, most often): the filters then decide where, or whether, it fits."""
    selects, terms = dice.one_in(3), _drawn_terms(dice)
    return Affinity(NodeAffinity(required=terms)) if selects else None


def _select_nodes(affinity: Affinity | None, pods: list[Pod]) -> None:
    if affinity is not None:
        for pod in pods:
            if not pod.node_name:
                pod.affinity = affinity


def _room(
    nodes_: list[Node], used: dict[str, list[Fraction]], requests: dict[str, Fraction]
) -> str:
    """The first node whose cpu and memory still take ``requests`` (taken from it), or ""."""
    for n in nodes_:
        taken = used[n.meta.name]
        cpu, memory = taken[0] + requests["cpu"], taken[1] + requests["memory"]
        if cpu <= n.allocatable["cpu"] and memory <= n.allocatable["memory"]:
            used[n.meta.name] = [cpu, memory]
            return n.meta.name
    return ""


_INQUEUE_MOSTLY = _pool((4, "Inqueue"), (1, "Pending"))


@st.composite
def allocate_clusters(draw: st.DrawFn, bounds: ClusterBounds = ClusterBounds()) -> Cluster:
    """Nodes with room and 2-4 jobs, mostly in one queue and of one priority, that
    allocate must order and place: ready gangs with pods pending, gangs that are not
    ready, single pods, and jobs with a pod no node takes."""
    with _Dice(draw, 5) as dice:
        count = 1 + dice.below(max(1, min(3, bounds.max_nodes)))
        second_queue, weight = dice.one_in(4), 1 + dice.below(2)
        shared_class = dice.pick(_GROUP_CLASS)
        jobs = 2 + dice.below(max(2, min(4, bounds.max_jobs)) - 1)
    with _Dice(draw, 2 * count) as dice:
        node_list = [_allocate_node(dice, i) for i in range(count)]
    queue_list = [Queue(ObjectMeta("q0"))]
    if second_queue:
        queue_list.append(Queue(ObjectMeta("q1"), weight=weight))
    if bounds.hierarchy == "always":
        for q in queue_list:
            q.parent = "root"
        queue_list.insert(0, Queue(ObjectMeta("root"), weight=1))
    used = {n.meta.name: [Fraction(0), Fraction(0)] for n in node_list}
    groups: list[PodGroup] = []
    pods: list[Pod] = []
    for j in range(jobs):
        with _Dice(draw, 6 + _allocate_job_bytes(bounds)) as dice:
            kind = dice.pick(_JOB_KINDS)
            members, min_member = _allocate_job(dice, j, kind, node_list, bounds, used)
            created, in_q1 = dice.pick(_CREATED), dice.one_in(4)
            own, own_class = dice.one_in(8), dice.pick(_GROUP_CLASS)
            phase = dice.pick(_INQUEUE_MOSTLY)
        running = any(p.node_name for p in members)
        groups.append(
            PodGroup(
                ObjectMeta(f"j{j}", "ns0", creation_timestamp=created),
                queue="q1" if len(queue_list) > 1 and in_q1 else "q0",
                min_member=min_member,
                priority_class_name=own_class if own else shared_class,
                phase="Running" if running else phase,
            )
        )
        pods.extend(members)
    return Cluster(
        nodes=node_list,
        queues=queue_list,
        priority_classes=[PriorityClass(ObjectMeta(n), v) for n, v in PRIORITY_CLASSES],
        pod_groups=groups,
        pods=pods,
    )


def generate_params(max_nodes: int = 50, max_jobs: int = 50) -> st.SearchStrategy[dict[str, Any]]:
    """Parameters in the ``cluster.generate`` vocabulary (docs/generate.md)."""
    node_shape = st.fixed_dictionaries(
        {
            "count": st.integers(1, max_nodes),
            "allocatable": st.fixed_dictionaries(
                {"cpu": st.sampled_from([2, 4, 16]), "memory": st.sampled_from(["4Gi", "64Gi"])}
            ),
            "labels": st.just({"zone": {"cycle": list(ZONES)}}),
        }
    )
    job = st.fixed_dictionaries(
        {
            "count": st.integers(0, max_jobs),
            "running": st.sampled_from([0.0, 0.2, 0.5]),
            "minAvailable": st.sampled_from(["all", 1, {"choice": ["all", 1]}]),
            "priorityClassName": st.just({"choice": ["high", "low"]}),
            "tasks": st.lists(
                st.fixed_dictionaries(
                    {
                        "name": st.sampled_from(["ps", "worker", "chief"]),
                        "replicas": st.integers(1, 4),
                        "requests": st.fixed_dictionaries(
                            {"cpu": st.sampled_from([1, "500m", {"choice": [1, 2]}])}
                        ),
                        "bestEffort": st.sampled_from([0.0, 0.3]),
                    }
                ),
                min_size=1,
                max_size=2,
                unique_by=lambda t: t["name"],
            ),
        }
    )
    return st.fixed_dictionaries(
        {
            "priorityClasses": st.just([{"name": n, "value": v} for n, v in PRIORITY_CLASSES]),
            "queues": st.lists(
                st.fixed_dictionaries({"count": st.integers(1, 3), "weight": st.integers(1, 4)}),
                min_size=1,
                max_size=1,
            ),
            "nodes": st.lists(node_shape, min_size=1, max_size=2),
            "jobs": st.lists(job, max_size=2),
        }
    )


def generated_clusters(max_nodes: int = 50, max_jobs: int = 50) -> st.SearchStrategy[Cluster]:
    """Clusters from the generator, for properties that need size more than shrinkability."""
    return st.builds(generate_cluster, generate_params(max_nodes, max_jobs), st.integers(0, 2**16))


# -- scheduler configurations ------------------------------------------------------------------


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

    def action_pool(self) -> list[str]:
        return list(self.actions) or sorted(e.name for e in registered_actions())

    def plugin_pool(self) -> list[str]:
        return list(self.plugins) or sorted(e.name for e in registered_plugins())


@functools.cache
def _argument_value(name: str, kind: str) -> st.SearchStrategy[Any] | None:
    """Values in an argument's documented range, built once per argument (strings,
    lists and maps have no documented range to draw from). Drawn as their own choices,
    not a :class:`_Dice`'s bytes: a conf's length varies with its plugins, and integers
    that fall out of line with the choices recorded (when a mutation changes the cluster
    drawn before them) mostly keep their values, where a byte string is drawn as zeros."""
    lo, hi = ARGUMENT_RANGES.get(name, _TYPE_RANGES.get(kind, (0, 0)))
    if kind == "bool":
        return _BOOL
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
_FLAG = st.sampled_from([None, True, False])


@st.composite
def _plugin_entry(
    draw: st.DrawFn, name: str, space: ConfSpace, specs: tuple[Any, ...]
) -> dict[str, Any]:
    """One plugin's entry: its flags (when drawn) and each of its documented arguments
    (``specs``) with probability 1/2."""
    entry: dict[str, Any] = {"name": name}
    if space.flags == "random":
        for key in FLAG_KEYS:
            flag = draw(_FLAG)
            if flag is not None:
                entry[key] = flag
    if space.arguments:
        arguments: dict[str, Any] = {}
        for spec in specs:
            values = _argument_value(spec.name, spec.type)
            if values is not None and "<" not in spec.name and draw(_BOOL):
                arguments[spec.name] = draw(values)
        for group in EXCLUSIVE_ARGUMENTS:
            for extra in [k for k in arguments if k in group and arguments[k] is True][1:]:
                arguments[extra] = False
        if arguments:
            entry["arguments"] = arguments
    return entry


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
    tier_count = draw(_int(1, max(1, min(space.max_tiers, len(plugins)))))
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
    if draw(_BOOL):
        conf["configurations"] = [
            {"name": a, "arguments": {"predicateErrorCacheEnable": draw(_BOOL)}}
            for a in sorted(set(actions) & {"allocate", "backfill", "preempt"})
        ]
    if len(space.default_plugin_flags) > 1:
        conf["defaultPluginFlags"] = draw(_one_of(space.default_plugin_flags))
    elif space.default_plugin_flags != (True,):
        conf["defaultPluginFlags"] = space.default_plugin_flags[0]
    return conf


def conf_from_document(raw: Mapping[str, Any]) -> SchedulerConf:
    """The conf a spec's ``scheduler`` mapping means (``defaultPluginFlags`` honoured)."""
    body = {k: v for k, v in raw.items() if k != "defaultPluginFlags"}
    return load_conf(body, default_plugin_flags=bool(raw.get("defaultPluginFlags", True)))


# -- whole specs ---------------------------------------------------------------------------------


@dataclass
class GeneratedSpec:
    """A drawn spec: the conf as written, the cluster, the run parameters."""

    scheduler: dict[str, Any]
    cluster: Cluster
    seed: int = 0
    cycles: int = 1
    verbosity: int = 3
    name: str = "generated"
    conf: SchedulerConf = field(init=False)

    def __post_init__(self) -> None:
        self.conf = conf_from_document(self.scheduler)

    def spec(self) -> Spec:
        return Spec(
            self.name,
            Location("<generated>"),
            self.conf,
            self.cluster,
            seed=self.seed,
            cycles=self.cycles,
            verbosity=self.verbosity,
        )

    def document(self, **extra: Any) -> dict[str, Any]:
        """The spec as a YAML-ready mapping in the spec format (compact objects). In
        ``bare`` cluster mode: the generated cluster is what the engine ran, nothing added."""
        doc: dict[str, Any] = {"name": self.name, **extra}
        doc.update(
            clusterMode="bare",
            seed=self.seed,
            cycles=self.cycles,
            verbosity=self.verbosity,
            scheduler=self.scheduler,
            cluster=cluster_document(self.cluster),
        )
        return doc


def specs(
    space: ConfSpace = ConfSpace(),
    bounds: ClusterBounds = ClusterBounds(),
    max_cycles: int = 2,
    verbosities: tuple[int, ...] = (1, 3),
) -> st.SearchStrategy[GeneratedSpec]:
    return _generated_specs(
        scheduler_confs(space),
        cluster_strategy(bounds),
        _int(1, max_cycles),
        _one_of(tuple(verbosities)),
    )


@st.composite
def _generated_specs(
    draw: st.DrawFn,
    confs: st.SearchStrategy[dict[str, Any]],
    clusters_: st.SearchStrategy[Cluster],
    cycles: st.SearchStrategy[int],
    verbosities: st.SearchStrategy[int],
) -> GeneratedSpec:
    """A spec, drawn as ``st.builds(GeneratedSpec, ...)`` would but without its record of
    each call (kept for Hypothesis' explanations, which ``vspec fuzz`` does not print).

    The cluster is drawn before the conf: a drawn conf's length varies with its plugins,
    and when Hypothesis' mutations change it, what is drawn after it falls out of line
    with the choices recorded and is drawn as its simplest (an object's byte string of
    :class:`_Dice` then as zeros), so a cluster drawn last would come out empty too often.
    """
    cluster, scheduler = draw(clusters_), draw(confs)
    seed = draw(_SEED)
    return GeneratedSpec(scheduler, cluster, seed, draw(cycles), draw(verbosities))


# -- writing a cluster back in the spec format ------------------------------------------------


def quantity(q: Fraction) -> int | str:
    """The shortest exact Kubernetes spelling (``8Gi``, ``500m``, ``3``)."""
    if q.denominator == 1:
        for suffix, unit in (("Gi", 2**30), ("Mi", 2**20)):
            if q >= unit and q % unit == 0:
                return f"{int(q // unit)}{suffix}"
        return int(q)
    milli = q * 1000
    if milli.denominator == 1:
        return f"{int(milli)}m"
    return str(float(q))


def _resources(r: Mapping[str, Fraction]) -> dict[str, int | str]:
    return {k: quantity(v) for k, v in r.items()}


def _time(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node(n: Node) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": n.meta.name, "allocatable": _resources(n.allocatable)}
    if n.capacity and n.capacity != n.allocatable:
        doc["capacity"] = _resources(n.capacity)
    if n.meta.labels:
        doc["labels"] = dict(n.meta.labels)
    if n.taints:
        doc["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.taints]
    if n.unschedulable:
        doc["unschedulable"] = True
    return doc


def _queue(q: Queue) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": q.meta.name, "weight": q.weight}
    for key, value in (
        ("capability", q.capability),
        ("deserved", q.deserved),
        ("guarantee", q.guarantee),
    ):
        if value:
            doc[key] = _resources(value)
    if q.priority:
        doc["priority"] = q.priority
    if q.parent:
        doc["parent"] = q.parent
    if q.reclaimable is not None:
        doc["reclaimable"] = q.reclaimable
    if q.meta.creation_timestamp != ZERO_TIME:
        doc["creationTimestamp"] = _time(q.meta.creation_timestamp)
    return doc


def _pod_group(pg: PodGroup) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": pg.meta.name, "namespace": pg.meta.namespace, "queue": pg.queue}
    doc["minMember"] = pg.min_member
    if pg.min_task_member:
        doc["minTaskMember"] = dict(pg.min_task_member)
    if pg.min_resources is not None:
        doc["minResources"] = _resources(pg.min_resources)
    if pg.priority_class_name:
        doc["priorityClassName"] = pg.priority_class_name
    doc["phase"] = pg.phase
    if pg.meta.creation_timestamp != ZERO_TIME:
        doc["creationTimestamp"] = _time(pg.meta.creation_timestamp)
    return doc


def _toleration(t: Toleration) -> dict[str, Any]:
    doc = {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}
    return {k: v for k, v in doc.items() if v}


def _requirements(reqs: Sequence[NodeSelectorRequirement]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for r in reqs:
        doc: dict[str, Any] = {"key": r.key, "operator": r.operator}
        if r.values:
            doc["values"] = list(r.values)
        out.append(doc)
    return out


def _node_term(term: NodeSelectorTerm) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    if term.match_expressions:
        doc["matchExpressions"] = _requirements(term.match_expressions)
    if term.match_fields:
        doc["matchFields"] = _requirements(term.match_fields)
    return doc


def _pod_terms(affinity: PodAffinity) -> dict[str, Any]:
    """Required terms with matchLabels selectors (what :func:`clusters` draws)."""
    terms = []
    for t in affinity.required:
        term: dict[str, Any] = {"topologyKey": t.topology_key}
        if t.label_selector is not None:
            term["labelSelector"] = {"matchLabels": dict(t.label_selector.match_labels)}
        terms.append(term)
    return {"requiredDuringSchedulingIgnoredDuringExecution": terms}


def _affinity_document(a: Affinity) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    na = a.node_affinity
    if na is not None:
        body: dict[str, Any] = {}
        if na.required is not None:
            body["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [_node_term(t) for t in na.required]
            }
        if na.preferred:
            body["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": t.weight, "preference": _node_term(t.preference)} for t in na.preferred
            ]
        doc["nodeAffinity"] = body
    if a.pod_affinity is not None:
        doc["podAffinity"] = _pod_terms(a.pod_affinity)
    if a.pod_anti_affinity is not None:
        doc["podAntiAffinity"] = _pod_terms(a.pod_anti_affinity)
    return doc


def _requests_of(p: Pod) -> dict[str, Fraction]:
    requests: dict[str, Fraction] = {}
    for c in p.containers:
        for k, v in c.requests.items():
            requests[k] = requests.get(k, Fraction(0)) + v
    return requests


def _pod(p: Pod) -> dict[str, Any]:
    if any(c.ports for c in p.containers):
        return _pod_manifest(p)
    doc: dict[str, Any] = {"name": p.meta.name, "namespace": p.meta.namespace}
    if p.group_name:
        doc["podGroup"] = p.group_name
    labels = dict(p.meta.labels)
    role = labels.pop(TASK_SPEC_KEY, None)
    if role is not None:
        doc["taskSpec"] = role
    if labels:
        doc["labels"] = labels
    doc["phase"] = p.phase
    if p.node_name:
        doc["nodeName"] = p.node_name
    requests = _requests_of(p)
    if requests:
        doc["requests"] = _resources(requests)
    doc.update(_pod_scheduling(p))
    if p.meta.deletion_timestamp is not None:
        doc["deletionTimestamp"] = _time(p.meta.deletion_timestamp)
    if p.meta.creation_timestamp != ZERO_TIME:
        doc["creationTimestamp"] = _time(p.meta.creation_timestamp)
    return doc


def _pod_scheduling(p: Pod) -> dict[str, Any]:
    """The keys the compact form and a Pod manifest's spec share."""
    doc: dict[str, Any] = {}
    if p.priority is not None:
        doc["priority"] = p.priority
    if p.priority_class_name:
        doc["priorityClassName"] = p.priority_class_name
    if p.node_selector:
        doc["nodeSelector"] = dict(p.node_selector)
    if p.tolerations:
        doc["tolerations"] = [_toleration(t) for t in p.tolerations]
    if p.affinity is not None:
        doc["affinity"] = _affinity_document(p.affinity)
    return doc


def _pod_manifest(p: Pod) -> dict[str, Any]:
    """A Pod manifest: the compact form has no containers, so no host ports."""
    meta: dict[str, Any] = {"name": p.meta.name, "namespace": p.meta.namespace}
    if p.meta.labels:
        meta["labels"] = dict(p.meta.labels)
    if p.meta.annotations:
        meta["annotations"] = dict(p.meta.annotations)
    if p.meta.creation_timestamp != ZERO_TIME:
        meta["creationTimestamp"] = _time(p.meta.creation_timestamp)
    if p.meta.deletion_timestamp is not None:
        meta["deletionTimestamp"] = _time(p.meta.deletion_timestamp)
    containers = []
    for i, c in enumerate(p.containers):
        container: dict[str, Any] = {"name": c.name or f"c{i}"}
        if c.requests:
            container["resources"] = {"requests": _resources(c.requests)}
        if c.ports:
            container["ports"] = [
                {"containerPort": port.container_port, "hostPort": port.host_port}
                for port in c.ports
            ]
        containers.append(container)
    spec: dict[str, Any] = {"containers": containers, **_pod_scheduling(p)}
    if p.node_name:
        spec["nodeName"] = p.node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": p.phase},
    }


def cluster_document(cluster: Cluster) -> dict[str, Any]:
    """The ``cluster`` key of a spec that the loader turns back into ``cluster``.

    Covers what the strategies and the generator produce (compact nodes, queues, pod
    groups and single-container pods); other fields are not written.
    """
    doc: dict[str, Any] = {
        "priorityClasses": [
            {"name": pc.meta.name, "value": pc.value} for pc in cluster.priority_classes
        ],
        "queues": [_queue(q) for q in cluster.queues],
        "nodes": [_node(n) for n in cluster.nodes],
        "podGroups": [_pod_group(pg) for pg in cluster.pod_groups],
        "pods": [_pod(p) for p in cluster.pods],
    }
    return doc


# -- Hypothesis profiles ---------------------------------------------------------------------------


def register_profiles() -> None:
    """``dev`` (quick, the local default), ``ci`` (Hypothesis' own CI profile with few
    examples, loaded by Hypothesis itself when ``CI`` is set) and ``fuzz`` (long runs).

    Loads ``dev`` unless a profile was chosen explicitly (``HYPOTHESIS_PROFILE`` or
    ``--hypothesis-profile``, which the pytest plugin applies after this) or ``CI`` is set.
    """
    slow = [HealthCheck.too_slow, HealthCheck.data_too_large]
    settings.register_profile("dev", max_examples=15, deadline=None, suppress_health_check=slow)
    settings.register_profile(
        "ci", settings.get_profile("ci"), max_examples=25, suppress_health_check=slow
    )
    settings.register_profile(
        "fuzz", max_examples=2000, deadline=None, suppress_health_check=slow, print_blob=True
    )
    explicit = os.environ.get("HYPOTHESIS_PROFILE")
    if explicit:
        settings.load_profile(explicit)
    elif settings.get_current_profile_name() == "ci":
        settings.load_profile("ci")  # Hypothesis chose it (CI is set): re-load ours
    else:
        settings.load_profile("dev")
