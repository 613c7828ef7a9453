"""The resources Kubernetes objects request and offer, in Volcano's units: milli-CPU,
memory bytes, and scalar resources (extended resources, ephemeral storage, ``pods``).

:class:`ResourceVector` is the plain arithmetic of Volcano's ``Resource``
(``pkg/scheduler/api/resource_info.go``): building one from a ``ResourceList``
(``NewResource``), adding, the unasserted ``Sub``, per-dimension max, and the names and
emptiness of a vector with Volcano's tolerance (:data:`MIN_RESOURCE`).
:func:`pod_request` is Kubernetes' ``GetPodResourceRequest`` as Volcano calls it. The
Python engine's :class:`vspec.api.resource.Resource` adds Volcano's comparisons on top;
the timeline clock and vspec's fair-share reference count with these alone, so that they
need nothing of an engine's data model. Imports the model's objects and quantities.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Self, TypeVar

from vspec.model.quantity import milli_value, parse_quantity, value

if TYPE_CHECKING:
    from vspec.model.objects import Pod

MIN_RESOURCE = 0.1
CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"
GPU_RESOURCE_NAME = "nvidia.com/gpu"

# Volcano's IgnoredDevicesList: vGPU resources are handled by deviceshare, not as scalars.
IGNORED_DEVICES = frozenset(
    {"volcano.sh/vgpu-memory", "volcano.sh/vgpu-memory-percentage", "volcano.sh/vgpu-cores"}
)


def is_scalar_resource_name(name: str) -> bool:
    """Kubernetes' ``IsScalarResourceName``: extended, hugepages, prefixed native, volumes."""
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    if "kubernetes.io/" in name:
        return True
    return "/" in name and not name.startswith("requests.")


class ResourceVector:
    """A resource vector. ``scalars`` keeps insertion order (Go's map order is random)."""

    __slots__ = ("max_task_num", "memory", "milli_cpu", "scalars")

    def __init__(
        self,
        milli_cpu: float = 0.0,
        memory: float = 0.0,
        scalars: dict[str, float] | None = None,
        max_task_num: int = 0,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.scalars: dict[str, float] = scalars if scalars is not None else {}
        self.max_task_num = max_task_num

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_list(cls, resource_list: Mapping[str, object] | None) -> Self:
        """``NewResourceVector(v1.ResourceVectorList)``: quantities as written in a manifest."""
        r = cls()
        if not resource_list:
            return r
        for name, raw in resource_list.items():
            q = raw if isinstance(raw, Fraction) else parse_quantity(raw)
            r.add_quantity(name, q)
        return r

    def add_quantity(self, name: str, q: Fraction) -> None:
        if name == CPU:
            self.milli_cpu += milli_value(q)
        elif name == MEMORY:
            self.memory += value(q)
        elif name == PODS:
            self.max_task_num += value(q)
            self.add_scalar(PODS, float(value(q)))
        elif name == EPHEMERAL_STORAGE:
            self.add_scalar(name, float(milli_value(q)))
        elif name.startswith("count/"):
            return
        elif is_scalar_resource_name(name) and name not in IGNORED_DEVICES:
            self.add_scalar(name, float(milli_value(q)))

    def clone(self) -> Self:
        """Slots assigned on a bare object: calling the class runs ``__init__`` as a
        second Python frame, a third of a clone's cost (a session clones some 200)."""
        cls = type(self)
        clone = cls.__new__(cls)
        clone.milli_cpu = self.milli_cpu
        clone.memory = self.memory
        clone.scalars = dict(self.scalars)
        clone.max_task_num = self.max_task_num
        return clone

    # -- accessors ----------------------------------------------------------------------
    def get(self, name: str) -> float:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        return self.scalars.get(name, 0.0)

    def signature(self) -> tuple[float, float, tuple[tuple[str, float], ...]]:
        """The quantities as a hashable value: equal signatures compare alike against any
        resource (scalar order included, as it orders the names of short dimensions)."""
        return self.milli_cpu, self.memory, tuple(self.scalars.items())

    def resource_names(self) -> list[str]:
        names = []
        if self.milli_cpu >= MIN_RESOURCE:
            names.append(CPU)
        if self.memory >= MIN_RESOURCE:
            names.append(MEMORY)
        names.extend(n for n, q in self.scalars.items() if q >= MIN_RESOURCE)
        return names

    def is_empty(self) -> bool:
        if self.milli_cpu >= MIN_RESOURCE or self.memory >= MIN_RESOURCE:
            return False
        return all(q < MIN_RESOURCE for n, q in self.scalars.items() if n != PODS)

    # -- mutation -----------------------------------------------------------------------
    def add(self, rr: ResourceVector) -> Self:
        self.milli_cpu += rr.milli_cpu
        self.memory += rr.memory
        scalars = self.scalars
        for name, q in rr.scalars.items():
            scalars[name] = scalars.get(name, 0.0) + q
        return self

    def sub_without_assert(self, rr: ResourceVector) -> Self:
        self.milli_cpu -= rr.milli_cpu
        self.memory -= rr.memory
        scalars = self.scalars
        # Quirk kept from Go: a receiver without scalars ignores rr's scalars.
        if not scalars:
            return self
        for name, q in rr.scalars.items():
            scalars[name] = scalars.get(name, 0.0) - q
        return self

    def add_scalar(self, name: str, q: float) -> None:
        self.scalars[name] = self.scalars.get(name, 0.0) + q

    def set_max_resource(self, rr: ResourceVector) -> None:
        self.milli_cpu = max(self.milli_cpu, rr.milli_cpu)
        self.memory = max(self.memory, rr.memory)
        if not self.scalars:
            self.scalars.update(rr.scalars)
            return
        for name, q in rr.scalars.items():
            if name not in self.scalars or q > self.scalars[name]:
                self.scalars[name] = q


V = TypeVar("V", bound=ResourceVector)


def pod_request(pod: Pod, vector: type[V]) -> V:
    """``GetPodResourceRequest``: containers + sidecars, max with init containers, + pods 1,
    as a ``vector`` (the engine's own resource type, or :class:`ResourceVector`)."""
    result = vector()
    for c in pod.containers:
        result.add(vector.from_list(c.requests))
    if pod.overhead:
        result.add(vector.from_list(pod.overhead))
    restartable = vector()
    init_max = vector()
    for c in pod.init_containers:
        req = vector.from_list(c.requests)
        if c.restart_policy == "Always":
            result.add(req)
            restartable.add(req)
            req = restartable
        else:
            req = req.clone().add(restartable)
        init_max.set_max_resource(req)
    result.set_max_resource(init_max)
    result.add_scalar(PODS, 1.0)
    return result
