"""Small random clusters drawn object by object (:func:`clusters`), their bounds
(:class:`ClusterBounds`, the config space file's ``cluster`` key) and the vocabulary every
drawn cluster shares (zones, namespaces, priority classes, quantities near the edges).

Clusters are drawn as explicit, small objects so that Hypothesis shrinks them object by
object and a failure reads as a spec file. Imports :mod:`~vspec.fuzz.strategies.dice`
and the model (:mod:`vspec.model`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from hypothesis import strategies as st

from vspec.fuzz.strategies.dice import Dice, weighted_pool
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
    # specs/findings/), "deep" (always, and a queue one time in three under the next
    # one: a tree two or three levels deep, children listed before their parents) or
    # "never".
    hierarchy: str = "sometimes"
    # "random" (:func:`clusters`), or "preempt" / "reclaim": mostly the full clusters
    # with starving work of :func:`eviction_clusters`, where Volcano evicts; "allocate"
    # (half :func:`allocate_clusters`); "large" (:func:`large_clusters`: 128 nodes or
    # more, where allocate scores and filters whole node columns).
    shape: str = "random"
    # What the plugins beyond the core read, drawn onto each cluster
    # (:func:`vspec.fuzz.strategies.features.featured`): NUMA topologies, zones, usage,
    # budgets, quotas, node groups, hierarchies, queue states, extender answers; on a
    # large cluster, what allocate's columnar path declines or narrows to one row
    # (:func:`~vspec.fuzz.strategies.features.large_featured`).
    features: bool = False
    # With features: every node a NUMA node of the house topology policy under the
    # static CPU manager (else two in three, each policy drawn), so that a Guaranteed
    # pod of that policy passes numa-aware's predicate on several nodes, which its
    # BatchNodeOrder then scores.
    numa_everywhere: bool = False


# Pools and strategies are built once: Hypothesis labels each strategy object, and
# building fresh ones inside every draw dominates the cost of a small example. Quantities
# lean towards the edges: zero, one milli-unit, values one step off a node's size, odd
# byte counts.
_CPU = weighted_pool(
    (3, parse_quantity("0")),
    (1, parse_quantity("1m")),
    (1, parse_quantity("999m")),
    (3, parse_quantity("1")),
    (1, parse_quantity("1001m")),
    (2, parse_quantity("500m")),
    (1, parse_quantity("1500m")),
    (3, parse_quantity("2")),
    (1, parse_quantity("3")),
    (1, parse_quantity("4")),
)
_MEMORY = weighted_pool(
    (3, parse_quantity("0")),
    (1, parse_quantity("1")),
    (1, parse_quantity("100M")),
    (1, Fraction(GI // 2 + 1)),
    (2, Fraction(GI // 2)),
    (3, Fraction(GI)),
    (1, Fraction(3 * GI // 2)),
    (2, Fraction(2 * GI)),
)
_NODE_CPU = weighted_pool(
    (3, parse_quantity("2")),
    (4, parse_quantity("4")),
    (2, parse_quantity("1")),
    (2, parse_quantity("3500m")),
    (2, parse_quantity("8")),
)
_NODE_MEMORY = weighted_pool(
    (3, Fraction(4 * GI)), (2, Fraction(2 * GI)), (1, Fraction(8 * GI)), (1, Fraction(3 * GI + MI))
)
_NODE_PODS = weighted_pool((3, Fraction(110)), (3, Fraction(2)), (2, Fraction(1)), (3, Fraction(4)))
_GPUS = (Fraction(1), Fraction(2))
TAINTS = (
    Taint("dedicated", "x", "NoSchedule"),
    Taint("dedicated", "x", "NoExecute"),
    Taint("dedicated", "y", "PreferNoSchedule"),
    Taint(GPU, "", "NoSchedule"),
    Taint("spot", "true", "NoExecute"),
)
TOLERATIONS = (
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
_NODE_REQUIREMENTS = weighted_pool(
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
_TASK_PRIORITY = weighted_pool((3, None), (2, 1), (1, 0), (1, 3))
_NAMESPACE = weighted_pool((4, "ns0"), (2, "ns1"), (1, "kube-system"))
GROUP_CLASS = weighted_pool((2, ""), (2, "high"), (2, "low"))
_POD_CLASS = weighted_pool((8, ""), (1, "system-cluster-critical"), (1, "system-node-critical"))
_WAITING_PHASE = ("Pending", "Inqueue")
_RECLAIMABLE = weighted_pool((3, None), (1, True), (1, False))
CREATED = weighted_pool((4, ZERO_TIME), (1, DEFAULT_NOW), (1, DEFAULT_NOW.replace(year=2024)))
# minMember: all pods (a full gang) or one (no gang) most often, else any.
_MIN_MEMBER = weighted_pool((2, "all"), (1, "one"), (1, "none"), (3, "any"))


_NODE_BYTES = 12


@st.composite
def nodes(draw: st.DrawFn, index: int = 0) -> Node:
    with Dice(draw, _NODE_BYTES) as dice:
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
        tainted, taints = dice.one_in(3), dice.some(TAINTS, 1, 2)
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


def _queue_resources(dice: Dice, dims: Sequence[str] | None = None) -> dict[str, Fraction]:
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
    with Dice(draw, _QUEUE_BYTES) as dice:
        created, weight = dice.pick(CREATED), 1 + dice.below(4)
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


def _requests(dice: Dice) -> dict[str, Fraction]:
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
TERMS_BYTES = 1 + 2 * _TERM_BYTES


def _drawn_term(dice: Dice) -> NodeSelectorTerm:
    """One or two requirements, ANDed."""
    return NodeSelectorTerm(tuple(dice.some(_NODE_REQUIREMENTS, 1, 2)))


def drawn_terms(dice: Dice) -> tuple[NodeSelectorTerm, ...]:
    """One or two terms, ORed (``TERMS_BYTES``)."""
    count, terms = 1 + dice.below(2), [_drawn_term(dice) for _ in range(2)]
    return tuple(terms[:count])


_AFFINITY_BYTES = 7 + TERMS_BYTES + _TERM_BYTES


def _affinity(dice: Dice, job: str) -> Affinity | None:
    """Required and preferred node affinity, and pod (anti-)affinity to the job's pods."""
    # One role in three: the filters and the node affinity score read it on every node.
    selects, requires, required = dice.one_in(3), dice.one_in(2), drawn_terms(dice)
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
    dice: Dice,
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
    tolerant, tolerations = dice.one_in(3), dice.some(TOLERATIONS, 1, 2)
    affinity = _affinity(dice, job)
    ports = [ContainerPort(8080, 8080)] if dice.one_in(8) else []
    priority = dice.pick(_TASK_PRIORITY)
    class_name = dice.pick(_POD_CLASS)
    if class_name:
        priority = dict(PRIORITY_CLASSES)[class_name]
    created = dice.pick(CREATED)
    replicas = 1 + dice.below(bounds.max_replicas)
    where = _placement(tuple(node_names))
    pods = []
    with Dice(draw, _POD_BYTES * replicas) as each:
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


def _min_member(dice: Dice, pods: int) -> int:
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
    with Dice(draw, _JOB_BYTES) as dice:
        namespace = dice.pick(_NAMESPACE)
        missing, queue = dice.one_in(6), dice.pick(queue_names)
        roles = 1 + dice.below(bounds.max_roles)
        pods: list[Pod] = []
        min_task_member: dict[str, int] = {}
        for r in range(roles):
            with Dice(draw, _ROLE_BYTES) as role:
                role_pods = _pods(draw, role, name, namespace, f"r{r}", node_names, bounds)
                gate, floor = role.one_in(3), role.below(len(role_pods) + 1)
                if gate:
                    min_task_member[f"r{r}"] = floor
            pods.extend(role_pods)
        running = any(p.node_name for p in pods)
        min_member = _min_member(dice, len(pods))
        created, group_class = dice.pick(CREATED), dice.pick(GROUP_CLASS)
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


def _deepen(draw: st.DrawFn, queue_list: list[Queue]) -> None:
    """Put a queue one time in three under the next one: a chain never loops, and the
    first queue is always a leaf."""
    with Dice(draw, len(queue_list)) as dice:
        for queue, above in zip(queue_list, [*queue_list[1:], None], strict=True):
            if dice.one_in(3) and above is not None:
                queue.parent = above.meta.name


@st.composite
def clusters(draw: st.DrawFn, bounds: ClusterBounds = ClusterBounds()) -> Cluster:
    """Small explicit clusters: nodes with labels, taints and pod limits; weighted queues
    with capabilities, deserved shares and (optionally) guarantees, sometimes under a
    `root` queue; gang jobs with roles, priorities, affinities, host ports, best-effort,
    running and terminating pods."""
    with Dice(draw, 4) as dice:
        node_count, queue_count = (
            1 + dice.below(bounds.max_nodes),
            1 + dice.below(bounds.max_queues),
        )
        sometimes, job_count = dice.one_in(3), dice.below(bounds.max_jobs + 1)
    node_list = [draw(_node_at(i)) for i in range(node_count)]
    rooted = bounds.hierarchy in ("always", "deep") or (
        bounds.hierarchy == "sometimes" and sometimes
    )
    parent = "root" if rooted else ""
    queue_list = [draw(_queue_at(i, parent)) for i in range(queue_count)]
    if bounds.hierarchy == "deep":
        _deepen(draw, queue_list)
    if not bounds.guarantees:
        for q in queue_list:
            q.guarantee = {}
    if parent:
        queue_list.insert(0, Queue(ObjectMeta("root"), weight=1))
    names = [n.meta.name for n in node_list]
    # Jobs go to leaf queues: capacity's hierarchy stops being built at a job in an inner
    # queue, and the attributes it left without their jobs' allocations make Volcano
    # panic on the next eviction (specs/findings/capacity-hierarchy-*).
    inner = {q.parent for q in queue_list}
    qnames = [q.meta.name for q in queue_list if q.meta.name != "root" and q.meta.name not in inner]
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
