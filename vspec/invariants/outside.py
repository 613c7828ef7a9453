"""Kubernetes and Volcano rules restated from their documentation, for the invariants.

An invariant that called the engine's own helpers (``JobInfo.is_ready``,
``pod_resource_request``...) would share every bug of them: a wrong comparison in gang
would be a wrong comparison in the check. So the few rules the invariants need are
written again here, from the outside: a pod's status from its phase, its requests from
its containers, a gang's readiness from its pods, a task's priority from its pod.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.model.objects import Node, Pod, PodGroup

TASK_SPEC = "volcano.sh/task-spec"
TASK_PRIORITY = "volcano.sh/task-priority"
PREEMPTABLE = "volcano.sh/preemptable"
OVERSUBSCRIPTION = "volcano.sh/oversubscription"
OVERSUBSCRIPTION_RESOURCES = {
    "cpu": "volcano.sh/oversubscription-cpu",
    "memory": "volcano.sh/oversubscription-memory",
}
# Statuses that count as placed for a gang (Volcano's AllocatedStatus, plus Succeeded).
PLACED = frozenset(
    {
        TaskStatus.Allocated,
        TaskStatus.Binding,
        TaskStatus.Bound,
        TaskStatus.Running,
        TaskStatus.Succeeded,
    }
)
_INT = re.compile(r"^[+-]?\d+$")
# What Volcano leaves out of its resource vectors (IgnoredDevicesList): the vGPU memory
# and cores a pod asks of a card, which deviceshare accounts card by card.
VGPU_SLICES = frozenset(
    {"volcano.sh/vgpu-memory", "volcano.sh/vgpu-memory-percentage", "volcano.sh/vgpu-cores"}
)
# Below this a quantity is zero (Volcano's minResource).
TOLERANCE = 0.1


def pod_status(pod: Pod) -> TaskStatus:
    """A pod's scheduling status: terminating pods are Releasing; a Pending pod with a
    node is Bound; the other phases map to themselves."""
    terminating = pod.meta.deletion_timestamp is not None
    if pod.phase == "Running":
        return TaskStatus.Releasing if terminating else TaskStatus.Running
    if pod.phase == "Pending":
        if terminating:
            return TaskStatus.Releasing
        return TaskStatus.Bound if pod.node_name else TaskStatus.Pending
    return {"Succeeded": TaskStatus.Succeeded, "Failed": TaskStatus.Failed}.get(
        pod.phase, TaskStatus.Unknown
    )


def _add(into: Resource, name: str, q: Fraction) -> None:
    """cpu in milli-cores, memory in bytes, other resources in milli-units (rounded up,
    as Kubernetes' MilliValue); ``count/`` quotas and vGPU slices are no resources. A ``pods`` entry
    is kept for node allocatables only: a pod takes one slot whatever it writes."""
    if name == "cpu":
        into.milli_cpu += _ceil(q, 1000)
    elif name == "memory":
        into.memory += _ceil(q, 1)
    elif name == "pods":
        into.scalars["pods"] = into.scalars.get("pods", 0.0) + _ceil(q, 1)
    elif not name.startswith("count/") and name not in VGPU_SLICES:
        into.scalars[name] = into.scalars.get(name, 0.0) + _ceil(q, 1000)


def _ceil(q: Fraction, scale: int) -> int:
    """``q * scale`` rounded up, in integers (``math.ceil`` of the Fraction product is
    the same number, several times slower; every check reads every pod's requests)."""
    return -(-q.numerator * scale // q.denominator)


def resources_of(lists: Sequence[Mapping[str, Fraction]]) -> Resource:
    out = Resource()
    for resources in lists:
        for name, q in resources.items():
            _add(out, name, q)
    return out


def _max_into(into: Resource, other: Resource) -> None:
    into.milli_cpu = max(into.milli_cpu, other.milli_cpu)
    into.memory = max(into.memory, other.memory)
    for name, v in other.scalars.items():
        into.scalars[name] = max(into.scalars.get(name, 0.0), v)


def _plus(a: Resource, b: Resource) -> Resource:
    scalars = dict(a.scalars)
    for name, v in b.scalars.items():
        scalars[name] = scalars.get(name, 0.0) + v
    return Resource(a.milli_cpu + b.milli_cpu, a.memory + b.memory, scalars)


def pod_request(pod: Pod) -> Resource:
    """What a pod asks of its node: its containers' requests (plus sidecars, i.e. init
    containers that keep running, and the overhead), at least what each init container
    needs on top of the sidecars started before it, and one pod slot."""
    total = resources_of([c.requests for c in pod.containers] + [pod.overhead])
    sidecars = Resource()
    init = Resource()
    for c in pod.init_containers:
        own = resources_of([c.requests])
        if c.restart_policy == "Always":
            total = _plus(total, own)
            sidecars = _plus(sidecars, own)
            _max_into(init, sidecars)
        else:
            _max_into(init, _plus(own, sidecars))
    _max_into(total, init)
    total.scalars["pods"] = 1
    return total


def best_effort(pod: Pod) -> bool:
    """A pod that requests no cpu, memory or other resource (pod slots do not count)."""
    return requests_nothing(pod_request(pod))


def requests_nothing(r: Resource) -> bool:
    """A best-effort pod's request: no cpu, memory or other resource (pod slots aside)."""
    return (
        r.milli_cpu < TOLERANCE
        and r.memory < TOLERANCE
        and all(v < TOLERANCE for k, v in r.scalars.items() if k != "pods")
    )


def node_allocatable(node: Node) -> Resource:
    """The node's allocatable, plus the oversubscribed amounts its annotations announce."""
    out = resources_of([node.allocatable])
    annotations = node.meta.annotations
    if annotations.get(OVERSUBSCRIPTION) == "true":
        for name, key in OVERSUBSCRIPTION_RESOURCES.items():
            try:
                extra = float(annotations.get(key, "0"))
            except ValueError:
                continue
            if name == "cpu":
                out.milli_cpu += extra
            else:
                out.memory += extra
    return out


def task_priority(pod: Pod) -> int:
    """The pod's priority (1 when unset), overridden by a volcano.sh/task-priority
    annotation holding an integer."""
    annotated = pod.meta.annotations.get(TASK_PRIORITY)
    if annotated is not None and _INT.match(annotated):
        return int(annotated)
    return 1 if pod.priority is None else pod.priority


def task_role(pod: Pod) -> str:
    return pod.meta.annotations.get(TASK_SPEC) or pod.meta.labels.get(TASK_SPEC) or ""


def preemptable(pod: Pod) -> bool:
    """volcano.sh/preemptable (annotation, then label): only "true"-like values keep a pod
    preemptable once it is set; unset means preemptable."""
    value = pod.meta.annotations.get(PREEMPTABLE, pod.meta.labels.get(PREEMPTABLE))
    if value is None:
        return True
    return value in ("1", "t", "T", "TRUE", "true", "True")


def gang_ready(
    pg: PodGroup,
    pods: Sequence[Pod],
    statuses: Mapping[str, TaskStatus],
    nothing: Callable[[Pod], bool] = best_effort,
) -> bool:
    """Gang's rule: placed tasks plus pending best-effort ones reach minMember, and, when
    minMember is at least the sum of the per-role minimums, every role reaches its own.
    ``statuses``: every pod's status; ``nothing``: whether a pod is best-effort
    (:func:`best_effort`, or a memo of it)."""
    # The roles are counted only where their minimums are judged.
    by_role = bool(pg.min_task_member) and pg.min_member >= sum(pg.min_task_member.values())
    placed = 0
    roles: Counter[str] = Counter()
    for pod in pods:
        status = statuses[pod.meta.key]
        if status in PLACED or (status is TaskStatus.Pending and nothing(pod)):
            placed += 1
            if by_role:
                roles[task_role(pod)] += 1
    if placed < pg.min_member:
        return False
    return not by_role or all(roles[role] >= n for role, n in pg.min_task_member.items())


def placed_count(pods: Sequence[Pod], statuses: Mapping[str, TaskStatus]) -> int:
    return sum(1 for p in pods if statuses[p.meta.key] in PLACED)
