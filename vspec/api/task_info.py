"""``TaskInfo``: one pod as the scheduler tracks it (``api/job_info.go``, ``pod_info.go``)."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vspec.api.kept_texts import KeptTexts
from vspec.api.resource import Resource
from vspec.api.topology_decision import numa_resources
from vspec.api.types import TaskStatus
from vspec.model.objects import TASK_SPEC_KEY, Pod
from vspec.model.resources import pod_request

PREEMPTABLE_KEY = "volcano.sh/preemptable"
REVOCABLE_ZONE_KEY = "volcano.sh/revocable-zone"
TASK_PRIORITY_ANNOTATION = "volcano.sh/task-priority"
_INT32 = re.compile(r"^[+-]?[0-9]{1,10}$")
NUMA_POLICY_KEY = "volcano.sh/numa-topology-policy"
TOPOLOGY_DECISION_KEY = "volcano.sh/topology-decision"
_NO_ANNOTATIONS: Mapping[str, str] = MappingProxyType({})


@dataclass
class TransactionContext:
    """``TransactionContext``: a task's node and status before a statement discarded
    them, which the reason of its pod's scheduling condition still reports
    (``TaskSchedulingReason``)."""

    node_name: str
    status: TaskStatus
    eviction_occurred: bool = False


def parse_go_bool(value: str) -> bool | None:
    """``strconv.ParseBool``: the spellings Go accepts, None otherwise."""
    if value in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if value in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    return None


def task_status_of(pod: Pod) -> TaskStatus:
    """``getTaskStatus``: status from phase, node and deletion."""
    phase = pod.phase
    if phase == "Running":
        return TaskStatus.Releasing if pod.meta.deletion_timestamp else TaskStatus.Running
    if phase == "Pending":
        if pod.meta.deletion_timestamp:
            return TaskStatus.Releasing
        return TaskStatus.Bound if pod.node_name else TaskStatus.Pending
    if phase == "Succeeded":
        return TaskStatus.Succeeded
    if phase == "Failed":
        return TaskStatus.Failed
    return TaskStatus.Unknown


def pod_resource_request(pod: Pod) -> Resource:
    """``GetPodResourceRequest`` (:func:`vspec.model.resources.pod_request`) as a Resource."""
    return pod_request(pod, Resource)


class PodRequests:
    """``pod_resource_request`` by containers list, for pods of no init container and
    no overhead (whose request is their containers' alone): the replicas of a generated
    task share one list, so a cache of 11,000 such pods works out 1,100 requests. The
    values are shared: clone one before changing it."""

    def __init__(self) -> None:
        # id -> (the list, its request): holding the list keeps its id from being reused.
        self._of: dict[int, tuple[object, Resource]] = {}

    def __len__(self) -> int:
        """How many containers lists it holds."""
        return len(self._of)

    def __call__(self, pod: Pod) -> Resource:
        if pod.init_containers or pod.overhead:
            return pod_resource_request(pod)
        kept = self._of.get(id(pod.containers))
        if kept is None:
            kept = self._of[id(pod.containers)] = (pod.containers, pod_resource_request(pod))
        return kept[1]


def _label_or_annotation(pod: Pod, key: str) -> str | None:
    if key in pod.meta.annotations:
        return pod.meta.annotations[key]
    return pod.meta.labels.get(key)


def pod_preemptable(pod: Pod) -> bool:
    """``GetPodPreemptable``: annotation, then label; default true, unparsable false."""
    value = _label_or_annotation(pod, PREEMPTABLE_KEY)
    if value is None:
        return True
    return parse_go_bool(value) is True


def pod_revocable_zone(pod: Pod) -> str:
    annotations = pod.meta.annotations
    if REVOCABLE_ZONE_KEY in annotations:
        return "*" if annotations[REVOCABLE_ZONE_KEY] == "*" else ""
    if PREEMPTABLE_KEY in annotations and parse_go_bool(annotations[PREEMPTABLE_KEY]):
        return "*"
    return ""


def task_role(pod: Pod) -> str:
    annotations, labels = pod.meta.annotations, pod.meta.labels
    return annotations.get(TASK_SPEC_KEY) or labels.get(TASK_SPEC_KEY) or ""


class TaskInfo:
    """Mutable per-session task state; ``pod`` is shared, never mutated."""

    __slots__ = (
        "best_effort",
        "bind_annotations",
        "eviction_occurred",
        "has_restartable_init_container",
        "init_resreq",
        "job",
        "key",
        "last_transaction",
        "name",
        "namespace",
        "node_name",
        "numa_info",
        "pod",
        "preemptable",
        "priority",
        "resreq",
        "revocable_zone",
        "sch_gated",
        "status",
        "task_role",
        "uid",
    )

    def __init__(self, pod: Pod, request: Resource | None = None) -> None:
        """``request``: the pod's ``pod_resource_request`` when the caller has it (a
        :class:`PodRequests`); it is cloned, not kept."""
        init_resreq = pod_resource_request(pod) if request is None else request.clone()
        self.uid = pod.meta.uid
        self.job = pod.job_id
        self.name = pod.meta.name
        self.namespace = pod.meta.namespace
        self.key = f"{self.namespace}/{self.name}"
        self.task_role = task_role(pod)
        self.init_resreq = init_resreq
        self.resreq = init_resreq.clone()
        self.node_name = pod.node_name
        self.status = task_status_of(pod)
        self.eviction_occurred = False
        self.last_transaction: TransactionContext | None = None
        self.priority = 1 if pod.priority is None else pod.priority
        annotated = pod.meta.annotations.get(TASK_PRIORITY_ANNOTATION)
        if annotated is not None and _INT32.match(annotated):
            self.priority = int(annotated)
        self.preemptable = pod_preemptable(pod)
        self.best_effort = init_resreq.is_empty()
        self.has_restartable_init_container = any(
            c.restart_policy == "Always" for c in pod.init_containers
        )
        self.sch_gated = bool(pod.scheduling_gates)
        self.revocable_zone = pod_revocable_zone(pod)
        self.numa_info: object | None = None
        self.pod = pod
        # Annotations Volcano patches onto the pod while placing it (device shares): the
        # pod model is shared and never mutated, so they ride here until the bind applies
        # them. Replaced, never changed in place, so clones may share it.
        self.bind_annotations: Mapping[str, str] = _NO_ANNOTATIONS

    def clone(self) -> TaskInfo:
        """Every slot assigned by hand: ``copy.copy`` of a slotted object goes through
        ``__reduce_ex__`` and took 8 of this method's 9 microseconds (a snapshot clones
        every task, a statement each task it places)."""
        clone = TaskInfo.__new__(TaskInfo)
        clone.best_effort = self.best_effort
        clone.bind_annotations = self.bind_annotations
        clone.eviction_occurred = self.eviction_occurred
        clone.has_restartable_init_container = self.has_restartable_init_container
        clone.init_resreq = self.init_resreq.clone()
        clone.job = self.job
        clone.key = self.key
        last = self.last_transaction
        clone.last_transaction = None if last is None else copy.copy(last)
        clone.name = self.name
        clone.namespace = self.namespace
        clone.node_name = self.node_name
        clone.numa_info = self.numa_info
        clone.pod = self.pod
        clone.preemptable = self.preemptable
        clone.priority = self.priority
        clone.resreq = self.resreq.clone()
        clone.revocable_zone = self.revocable_zone
        clone.sch_gated = self.sch_gated
        clone.status = self.status
        clone.task_role = self.task_role
        clone.uid = self.uid
        return clone

    def transaction_context(self) -> TransactionContext:
        return TransactionContext(self.node_name, self.status, self.eviction_occurred)

    def generate_last_tx_context(self) -> None:
        self.last_transaction = self.transaction_context()

    def clear_last_tx_context(self) -> None:
        self.last_transaction = None

    def __str__(self) -> str:
        """Go's ``TaskInfo.String()``, which Volcano's ``%v`` of a task prints. Its
        ``NumaInfo`` is never nil (``GetPodTopologyInfo`` always returns one), so the
        ``numaInfo {<policy> map[...]}`` part is always there; its map holds the pod's
        ``volcano.sh/topology-decision``, which vspec never writes (see numaaware) but
        a pod copied from a cluster may carry."""
        annotations = self.pod.meta.annotations
        policy = annotations.get(NUMA_POLICY_KEY, "")
        decision = annotations.get(TOPOLOGY_DECISION_KEY)
        numa = "map[]" if decision is None else numa_resources(decision)
        return (
            f"Task ({self.uid}:{self.namespace}/{self.name}): taskSpec {self.task_role}, "
            f"job {self.job}, status {self.status}, pri {self.priority}, resreq {self.resreq}, "
            f"preemptable {str(self.preemptable).lower()}, revocableZone {self.revocable_zone}, "
            f"numaInfo {{{policy} {numa}}}"
        )

    __repr__ = __str__

    def printed(self) -> tuple[object, ...]:
        """Everything :meth:`__str__` prints, as a key: equal keys print equal texts."""
        r = self.resreq
        annotations = self.pod.meta.annotations
        return (
            self.uid,
            self.namespace,
            self.name,
            self.task_role,
            self.job,
            self.status,
            self.priority,
            r.milli_cpu,
            r.memory,
            tuple(r.scalars.items()),
            self.preemptable,
            self.revocable_zone,
            annotations.get(NUMA_POLICY_KEY, ""),
            annotations.get(TOPOLOGY_DECISION_KEY),
        )


class TaskTexts(KeptTexts[TaskInfo]):
    """:meth:`TaskInfo.__str__` of tasks, kept by what each prints (:meth:`TaskInfo.printed`)."""

    def __init__(self) -> None:
        super().__init__(TaskInfo.printed, str)
