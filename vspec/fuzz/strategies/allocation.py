"""Allocate-shaped clusters (:func:`allocate_clusters`), for the allocate space.

What allocate's order and its gang rules show: one queue (mostly) whose jobs compete for
room the cluster has, of one priority (mostly) so that the next JobOrder decides: gangs
already ready (running at minMember, with replicas pending) next to gangs that are not,
held shares that differ, and jobs with one pod no node takes (larger than every node, or
selecting a zone no node is in) next to a role that fits. Half the clusters are at the
edges of the node filters and of allocate's accounting: nodes at their pod limit or one
pod short of it, cordoned and tainted nodes, tolerations, a running pod that is
terminating (its room is future idle: allocate may pipeline onto it, never bind), pods
of one job with different priorities (TaskOrder decides). And any may hold a job kept
Pending (its minResources beyond the cluster: enqueue's voters refuse it) with a
best-effort pod that backfill must leave alone. Imports the cluster vocabulary, the
eviction module's pod builder and the model.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from vspec.fuzz.strategies.cluster import (
    CREATED,
    GI,
    GROUP_CLASS,
    HOSTNAME,
    PRIORITY_CLASSES,
    TAINTS,
    TERMS_BYTES,
    TOLERATIONS,
    ZONES,
    ClusterBounds,
    drawn_terms,
)
from vspec.fuzz.strategies.dice import Dice, weighted_pool
from vspec.fuzz.strategies.eviction import shaped_pod
from vspec.model.corev1 import (
    Affinity,
    NodeAffinity,
)
from vspec.model.objects import (
    DEFAULT_NOW,
    Cluster,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)
from vspec.model.quantity import parse_quantity

_ALLOC_NODE_CPU = weighted_pool(
    (3, parse_quantity("4")), (2, parse_quantity("2")), (2, parse_quantity("3"))
)
_ALLOC_NODE_MEMORY = weighted_pool((3, Fraction(4 * GI)), (1, Fraction(8 * GI)))
_ALLOC_CPU = weighted_pool(
    (3, parse_quantity("1")), (2, parse_quantity("500m")), (1, parse_quantity("2"))
)
_ALLOC_MEMORY = weighted_pool((3, Fraction(0)), (2, Fraction(GI)))
_JOB_KINDS = weighted_pool((3, "ready"), (3, "gang"), (3, "partial"), (1, "single"), (1, "waiting"))
# minMember by kind: for a partial job, one, its fitting replicas or none; for a ready
# gang, its running pods, none or one fewer; else all, one or none.
_PARTIAL_MIN = weighted_pool((3, "one"), (1, "fits"), (1, "none"))
_READY_MIN = weighted_pool((3, "running"), (1, "none"), (1, "fewer"))
_GANG_MIN = weighted_pool((2, "all"), (1, "one"), (1, "none"))
_NOWHERE = {"zone": "none"}  # no node is in that zone
# Task priorities of a job whose pods differ (unset is 1 to priority's TaskOrder).
_TASK_PRIORITIES = weighted_pool((2, None), (1, 0), (2, 3), (1, 5))
_NODE_BYTES = 7
_SPARE_SLOTS = weighted_pool((2, 0), (1, 1))


def _allocate_node(dice: Dice, index: int, edgy: bool) -> tuple[Node, int | None]:
    """A node with room (``_NODE_BYTES``); on an ``edgy`` cluster one in six cordoned,
    one in four tainted, and one in three with a tight pod limit: the pod slots it keeps
    free are returned (none or one beyond its running pods, set once they are placed;
    else None)."""
    cpu, memory = dice.pick(_ALLOC_NODE_CPU), dice.pick(_ALLOC_NODE_MEMORY)
    tight, spare = dice.one_in(3), dice.pick(_SPARE_SLOTS)
    cordoned, taint = dice.one_in(6), dice.maybe(4, TAINTS)
    if not edgy:
        tight, cordoned, taint = False, False, None
    allocatable = {"cpu": cpu, "memory": memory, "pods": Fraction(110)}
    node = Node(
        ObjectMeta(f"n{index}", labels={"zone": ZONES[index % 2], HOSTNAME: f"n{index}"}),
        allocatable=allocatable,
        capacity=dict(allocatable),
        taints=[taint] if taint is not None else [],
        unschedulable=cordoned,
    )
    return node, spare if tight else None


def _limit_pods(node: Node, spare: int, pods: list[Pod]) -> None:
    """The node's pod limit: the pods running on it plus ``spare`` (at least one)."""
    running = sum(1 for p in pods if p.node_name == node.meta.name)
    node.allocatable["pods"] = node.capacity["pods"] = Fraction(max(1, running + spare))


def _allocate_job_bytes(bounds: ClusterBounds) -> int:
    return 7 + TERMS_BYTES + max(2, bounds.max_replicas)


def _edge_bytes(bounds: ClusterBounds) -> int:
    """:func:`_edges`' bytes: tolerations (4), a terminating pod (1), priorities (1 and
    one per pod: a partial job has one more than its replicas)."""
    return 6 + max(2, bounds.max_replicas) + 1


def _edges(dice: Dice, pods: list[Pod], bounds: ClusterBounds, edgy: bool) -> None:
    """A job's pods at the filters' and accounting's edges (:func:`_edge_bytes`), on an
    ``edgy`` cluster: one job in three tolerates a taint or two, one in two has its first
    running pod terminating, one in three has pods of different priorities."""
    tolerant, tolerations = dice.one_in(3), dice.some(TOLERATIONS, 1, 2)
    releasing = dice.one_in(2)
    ranked = dice.one_in(3)
    priorities = [dice.pick(_TASK_PRIORITIES) for _ in range(max(2, bounds.max_replicas) + 1)]
    if not edgy:
        return
    running = [p for p in pods if p.node_name]
    if releasing and running:
        running[0].meta.deletion_timestamp = DEFAULT_NOW
    for pod, priority in zip(pods, priorities, strict=False):
        if tolerant:
            pod.tolerations = list(tolerations)
        if ranked:
            pod.priority = priority


def _allocate_job(
    dice: Dice,
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
        return [shaped_pod(job, "r0", 0, "ns0", requests, "")], 1
    if kind == "waiting":
        # Kept Pending by the caller (minResources beyond the cluster); a best-effort
        # pod beside pods that request resources.
        asking = [shaped_pod(job, "r0", i, "ns0", requests, "") for i in range(replicas)]
        return [*asking, shaped_pod(job, "r1", 0, "ns0", {}, "")], 1
    if kind == "partial":
        # r0's pod fits no node and comes first in TaskOrder; r1's pods fit.
        widest = max(Fraction(n.allocatable["cpu"]) for n in nodes_)
        lost = shaped_pod(job, "r0", 0, "ns0", {**requests, "cpu": widest + 1}, "")
        if not huge:
            lost = shaped_pod(job, "r0", 0, "ns0", requests, "")
            lost.node_selector = dict(_NOWHERE)
        fits = [shaped_pod(job, "r1", i, "ns0", requests, "") for i in range(replicas)]
        _select_nodes(affinity, fits)
        return [lost, *fits], {"one": 1, "fits": replicas, "none": 0}[minimum]
    count = max(2, replicas) if kind == "ready" else replicas
    pods = []
    for i in range(count):
        node = ""
        # A ready gang runs its first pod, maybe more, and keeps one pending.
        if kind == "ready" and i < count - 1 and (i == 0 or more[i]):
            node = _room(nodes_, used, requests)
        pods.append(shaped_pod(job, "r0", i, "ns0", requests, node))
    running = sum(1 for p in pods if p.node_name)
    _select_nodes(affinity, pods)
    if kind == "ready":
        return pods, {"running": running, "none": 0, "fewer": max(0, running - 1)}[minimum]
    return pods, {"all": count, "one": 1, "none": 0}[gang_minimum]


def _node_selection(dice: Dice) -> Affinity | None:
    """One role in three selects nodes by required node affinity (NotIn on labels these
    nodes lack, most often): the filters then decide where, or whether, it fits."""
    selects, terms = dice.one_in(3), drawn_terms(dice)
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


_INQUEUE_MOSTLY = weighted_pool((4, "Inqueue"), (1, "Pending"))


@st.composite
def allocate_clusters(draw: st.DrawFn, bounds: ClusterBounds = ClusterBounds()) -> Cluster:
    """Nodes with room and 2-4 jobs, mostly in one queue and of one priority, that
    allocate must order and place: ready gangs with pods pending, gangs that are not
    ready, single pods, and jobs with a pod no node takes."""
    with Dice(draw, 6) as dice:
        # Half the clusters at the edges (_allocate_node, _edges), half plain: the order
        # invariants judge a job that fits whole, which the edges make rarer.
        edgy = dice.one_in(2)
        count = 1 + dice.below(max(1, min(3, bounds.max_nodes)))
        second_queue, weight = dice.one_in(4), 1 + dice.below(2)
        shared_class = dice.pick(GROUP_CLASS)
        jobs = 2 + dice.below(max(2, min(4, bounds.max_jobs)) - 1)
    with Dice(draw, _NODE_BYTES * count) as dice:
        drawn = [_allocate_node(dice, i, edgy) for i in range(count)]
    node_list = [node for node, _ in drawn]
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
    total_cpu = sum((Fraction(n.allocatable["cpu"]) for n in node_list), Fraction(0))
    for j in range(jobs):
        with Dice(draw, 6 + _allocate_job_bytes(bounds) + _edge_bytes(bounds)) as dice:
            kind = dice.pick(_JOB_KINDS)
            members, min_member = _allocate_job(dice, j, kind, node_list, bounds, used)
            created, in_q1 = dice.pick(CREATED), dice.one_in(4)
            own, own_class = dice.one_in(8), dice.pick(GROUP_CLASS)
            phase = dice.pick(_INQUEUE_MOSTLY)
            _edges(dice, members, bounds, edgy)
        running = any(p.node_name for p in members)
        group = PodGroup(
            ObjectMeta(f"j{j}", "ns0", creation_timestamp=created),
            queue="q1" if len(queue_list) > 1 and in_q1 else "q0",
            min_member=min_member,
            priority_class_name=own_class if own else shared_class,
            phase="Running" if running else phase,
        )
        if kind == "waiting":
            group.phase, group.min_resources = "Pending", {"cpu": total_cpu + 1}
        groups.append(group)
        pods.extend(members)
    for node, spare in drawn:
        if spare is not None:
            _limit_pods(node, spare, pods)
    return Cluster(
        nodes=node_list,
        queues=queue_list,
        priority_classes=[PriorityClass(ObjectMeta(n), v) for n, v in PRIORITY_CLASSES],
        pod_groups=groups,
        pods=pods,
    )
