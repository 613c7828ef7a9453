"""The cluster as the scheduler's cache sees it: Kubernetes and Volcano objects.

These are the *model* of the data flow (spec file -> model -> session): plain data,
built by the spec loader, never mutated by a session. Sessions snapshot them into
``TaskInfo``/``JobInfo``/``NodeInfo``; multi-cycle runs produce a new :class:`Cluster`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from vspec.errors import Location
from vspec.model.corev1 import (
    Affinity,
    Condition,
    Container,
    ContainerImage,
    ResourceList,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)

if TYPE_CHECKING:
    from vspec.model.changes import Changed

# Go's zero time: what Volcano's test builders leave in every creationTimestamp.
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)
# The scheduler's clock at the first session unless a spec says otherwise.
DEFAULT_NOW = datetime(2025, 1, 1, tzinfo=UTC)

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_SPEC_KEY = "volcano.sh/task-spec"
QUEUE_NAME_ANNOTATION = "scheduling.volcano.sh/queue-name"

_T = TypeVar("_T")


def shallow_copy(obj: _T) -> _T:
    """``copy.copy`` of a plain (``__dict__``) object at a third of its cost: every
    session clones every job and its PodGroup, and writes every PodGroup back."""
    clone = object.__new__(type(obj))
    clone.__dict__.update(obj.__dict__)
    return clone


@dataclass(init=False)
class ObjectMeta:
    """``metav1.ObjectMeta``: what the scheduler reads of an object's metadata, and
    where the spec declared the object (``location``, for errors only)."""

    name: str
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    creation_timestamp: datetime = ZERO_TIME
    deletion_timestamp: datetime | None = None
    location: Location | None = field(default=None, compare=False, repr=False)

    def __init__(
        self,
        name: str,
        namespace: str = "",
        uid: str = "",
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        creation_timestamp: datetime = ZERO_TIME,
        deletion_timestamp: datetime | None = None,
        location: Location | None = None,
    ) -> None:
        """The fields written straight into the instance: the dataclass's own
        ``__init__`` sets each through ``__setattr__``, whose check has nothing to drop
        yet, and took two thirds of the 10 microseconds an object's metadata cost (a
        generated cluster builds one per node, pod group and pod)."""
        self.__dict__.update(
            name=name,
            namespace=namespace,
            uid=uid,
            labels={} if labels is None else labels,
            annotations={} if annotations is None else annotations,
            creation_timestamp=creation_timestamp,
            deletion_timestamp=deletion_timestamp,
            location=location,
        )

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _KEY_FIELDS:
            self.__dict__.pop("key", None)  # derived from them: derived again when asked

    @cached_property
    def key(self) -> str:
        """``namespace/name`` for namespaced objects, the name otherwise; kept once
        derived (a copy keeps it too), as the clock, the cache's diff and ``advance`` ask
        it of every pod every session."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


_KEY_FIELDS = frozenset({"name", "namespace"})


@dataclass
class Pod:
    """``v1.Pod``: the fields of its spec and status that scheduling reads."""

    meta: ObjectMeta
    phase: str = "Pending"
    node_name: str = ""
    scheduler_name: str = ""  # unset: placed by vspec, whatever the scheduler names
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str = ""
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Toleration] = field(default_factory=list)
    affinity: Affinity | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] = field(default_factory=list)
    containers: list[Container] = field(default_factory=list)
    init_containers: list[Container] = field(default_factory=list)
    overhead: ResourceList = field(default_factory=dict)
    scheduling_gates: list[str] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    nominated_node_name: str = ""

    def scheduled_by(self, names: tuple[str, ...] | frozenset[str] | set[str]) -> bool:
        """Whether a scheduler with these names places this pod (unset counts as ours)."""
        return not self.scheduler_name or self.scheduler_name in names

    @property
    def group_name(self) -> str:
        return self.meta.annotations.get(GROUP_NAME_ANNOTATION, "")

    @property
    def job_id(self) -> str:
        """``getJobID``: ``namespace/<group annotation>``, or "" for a pod of no job."""
        group = self.group_name
        return f"{self.meta.namespace}/{group}" if group else ""


@dataclass(frozen=True)
class NodeUsage:
    """A node's measured load, as Volcano's metrics source fills ``NodeInfo.ResourceUsage``."""

    cpu: dict[str, float] = field(default_factory=dict)  # period ("5m") -> percent
    memory: dict[str, float] = field(default_factory=dict)
    time: datetime = ZERO_TIME


@dataclass
class Node:
    """``v1.Node``: what it offers, the taints that keep pods off it, and the images it holds."""

    meta: ObjectMeta
    allocatable: ResourceList = field(default_factory=dict)
    capacity: ResourceList = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    unschedulable: bool = False
    images: list[ContainerImage] = field(default_factory=list)
    usage: NodeUsage | None = None


@dataclass
class PodGroup:
    """Volcano's ``PodGroup``: its spec, and the status the job updater writes back."""

    meta: ObjectMeta
    queue: str = "default"
    min_member: int = 0
    min_task_member: dict[str, int] = field(default_factory=dict)
    min_resources: ResourceList | None = None
    priority_class_name: str = ""
    phase: str = "Pending"
    conditions: list[Condition] = field(default_factory=list)
    running: int = 0
    succeeded: int = 0
    failed: int = 0


@dataclass
class Queue:
    """Volcano's ``Queue``: its spec and state."""

    meta: ObjectMeta
    weight: int = 1
    capability: ResourceList = field(default_factory=dict)
    deserved: ResourceList = field(default_factory=dict)
    guarantee: ResourceList = field(default_factory=dict)
    priority: int = 0
    parent: str = ""
    state: str = "Open"
    reclaimable: bool | None = None
    affinity: dict[str, Any] | None = None  # nodegroup: spec.affinity, Kubernetes form


@dataclass
class PriorityClass:
    """``schedulingv1.PriorityClass``: the priority of the pods and pod groups that name it."""

    meta: ObjectMeta
    value: int = 0
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"


@dataclass
class KubeObject:
    """Any other manifest a plugin reads (ResourceQuota, PodDisruptionBudget, Numatopology)."""

    api_version: str
    kind: str
    meta: ObjectMeta
    body: dict[str, Any]


@dataclass
class Cluster:
    """Everything the scheduler cache holds, in the order the objects were declared."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    pod_groups: list[PodGroup] = field(default_factory=list)
    queues: list[Queue] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    objects: list[KubeObject] = field(default_factory=list)
    # Pods a controller creates once their pod group has left Pending (a Volcano Job's):
    # not yet in the cache; a cycle whose session enqueued the group adds them.
    held_pods: list[Pod] = field(default_factory=list)
    # What the engine or the clock that made this cluster changed in its lists since the
    # one it was made from (vspec.model.changes, "Change reports"): not part of its value.
    nodes_changed: Changed[Node] | None = field(default=None, compare=False, repr=False)
    pods_changed: Changed[Pod] | None = field(default=None, compare=False, repr=False)
    pod_groups_changed: Changed[PodGroup] | None = field(default=None, compare=False, repr=False)

    def objects_of_kind(self, kind: str) -> list[KubeObject]:
        return [o for o in self.objects if o.kind == kind]
