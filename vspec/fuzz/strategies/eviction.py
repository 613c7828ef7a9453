"""Eviction-shaped clusters (:func:`eviction_clusters`), for the preempt and
reclaim spaces.

Random clusters almost never make Volcano evict: preempt and reclaim need a cluster that
is full of running pods the plugins let go, next to starving work that fits only once
they go. These builders draw exactly that, with the edges of each rule close by:
priorities that differ or are equal, victims' jobs just above or at minMember, queues
above or at their deserved share, reclaimable or not, best-effort preemptors, critical
and unpreemptable pods, exact fits and one-step misses. Imports the cluster vocabulary
(:mod:`~vspec.fuzz.strategies.cluster`) and the model.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from vspec.fuzz.strategies.cluster import GI, HOSTNAME, PRIORITY_CLASSES, ZONES, ClusterBounds
from vspec.fuzz.strategies.dice import clamped, int_range, sampled, weighted
from vspec.model.corev1 import (
    Container,
)
from vspec.model.objects import (
    GROUP_NAME_ANNOTATION,
    TASK_SPEC_KEY,
    Cluster,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)
from vspec.model.quantity import parse_quantity

_EVICT_NODE_CPU = weighted(
    (3, parse_quantity("2")), (2, parse_quantity("4")), (1, parse_quantity("3"))
)
_EVICT_NODE_MEMORY = weighted((3, Fraction(4 * GI)), (1, Fraction(8 * GI)))
_VICTIM_CPU = weighted(
    (4, parse_quantity("1")), (2, parse_quantity("2")), (1, parse_quantity("500m"))
)
_VICTIM_MEMORY = weighted((3, Fraction(GI)), (1, Fraction(2 * GI)), (1, Fraction(0)))
_STARVING_CPU = weighted(
    (4, parse_quantity("1")),
    (3, parse_quantity("2")),
    (1, parse_quantity("1001m")),
    (1, parse_quantity("3")),
)
_STARVING_MEMORY = weighted((3, Fraction(GI)), (1, Fraction(2 * GI)), (1, Fraction(0)))
# The victims' job priority class against the starving job's "high": lower most often.
_VICTIM_CLASS = weighted((6, "low"), (2, "high"), (1, ""))
_STARVING_CLASS = weighted((5, "high"), (1, "low"))
_VICTIM_NAMESPACE = weighted((8, "ns0"), (1, "kube-system"))
_VICTIM_POD_CLASS = weighted((10, ""), (1, "system-cluster-critical"))
# True one time in n: Hypothesis draws the ends of an integer range far more often than
# their share (``_ONE_IN[10]`` is true about a third of the time), a weighted list does not.
_RARELY = {n: weighted((n - 1, False), (1, True)) for n in (4, 5, 8, 10)}
_THIRD = weighted((2, False), (1, True))
# Usually true, but false is what the shrinker tries first (fewer pods).
_MOSTLY = weighted((1, False), (7, True))


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
    count = clamped(draw, weighted((2, low), (1, 2), (1, 3)), low, bounds.max_queues)
    rooted = bounds.hierarchy == "always" or (bounds.hierarchy == "sometimes" and draw(_RARELY[4]))
    parent = "root" if rooted else ""
    # proportion lets a queue reclaim only up to its weighted share: q0 weighs most often.
    first = weighted((2, 3), (1, 2), (1, 1)) if shape == "reclaim" else weighted((1, 1))
    out = [
        Queue(
            ObjectMeta(f"q{i}"),
            weight=draw(first if i == 0 else weighted((3, 1), (1, 2))),
            reclaimable=draw(weighted((3, None), (1, True), (2, False))) if i else None,
        )
        for i in range(count)
    ]
    if parent:
        for q in out:
            q.parent = parent
        out.insert(0, Queue(ObjectMeta("root"), weight=1))
    return out


def shaped_pod(
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
    # reclaim takes (mostly) from other queues, preempt (mostly) from the starving job's;
    # one preempt victim job in three is of another queue (when there is one), which
    # preempt must leave alone.
    others = queue_names[1:] or queue_names
    elsewhere = _RARELY[5] if shape == "reclaim" else _THIRD
    queue_of = [
        draw(sampled(tuple(others))) if draw(elsewhere) != (shape == "reclaim") else queue_names[0]
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
            j = draw(int_range(0, len(sizes) - 1))
            cpu, memory = sizes[j]["cpu"], sizes[j]["memory"]
            if cpu > free[0] or memory > free[1]:
                break
            pod = shaped_pod(f"v{j}", "r0", len(placed[j]), namespace[j], sizes[j], node.meta.name)
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
        min_member = draw(weighted((5, 1), (1, 0), (2, running), (2, max(0, running - 1))))
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
            queue_names[0] if (j == 0) != draw(_RARELY[5]) else draw(sampled(tuple(queue_names)))
        )
        # A best-effort preemptor fits wherever a pod slot is free, so it evicts nothing.
        best = draw(_RARELY[10])
        requests = {} if best else {"cpu": draw(_STARVING_CPU), "memory": draw(_STARVING_MEMORY)}
        replicas = clamped(draw, weighted((3, 1), (2, 2), (1, 3)), 0, bounds.max_replicas)
        members = [shaped_pod(f"s{j}", "r0", i, "ns0", requests, "") for i in range(replicas)]
        task_priority = draw(weighted((3, None), (1, 1)))
        for pod in members:
            pod.priority = task_priority
        pods.extend(members)
        groups.append(
            PodGroup(
                ObjectMeta(f"s{j}", "ns0"),
                queue=queue,
                min_member=draw(weighted((2, replicas), (3, 1))),
                priority_class_name=draw(_STARVING_CLASS),
                phase=draw(weighted((4, "Inqueue"), (1, "Pending"))),
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
    count = clamped(draw, weighted((3, 1), (2, 2), (1, 3)), 0, bounds.max_nodes)
    node_list = [_eviction_node(draw, i) for i in range(count)]
    queue_list = _eviction_queues(draw, bounds, shape)
    names = [q.meta.name for q in queue_list if q.meta.name != "root"]
    victims = draw(int_range(1, max(1, min(2, bounds.max_jobs - 1))))
    starving = draw(int_range(1, max(1, min(2, bounds.max_jobs - victims))))
    groups, pods = _victim_jobs(draw, node_list, names, shape, victims)
    more_groups, more_pods = _starving_jobs(draw, names, shape, bounds, starving)
    return Cluster(
        nodes=node_list,
        queues=queue_list,
        priority_classes=[PriorityClass(ObjectMeta(n), v) for n, v in PRIORITY_CLASSES],
        pod_groups=groups + more_groups,
        pods=pods + more_pods,
    )
