"""GPU sharing by memory or by whole cards (``api/devices/nvidia/gpushare``).

A node offers ``volcano.sh/gpu-number`` cards sharing ``volcano.sh/gpu-memory`` evenly
(node capacity); ``volcano.sh/gpu-unhealthy-ids`` removes cards. A pod asks for
``volcano.sh/gpu-memory`` or ``volcano.sh/gpu-number`` in its container *limits*; the
allocation patches the cards into the pod's ``volcano.sh/gpu-index`` annotation, from
which a later session's pool counts them (memory requests only: Volcano's quirk).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from vspec.api.devices import DeviceError, Logger
from vspec.model.objects import Node, Pod
from vspec.model.quantity import value

GPU_MEMORY = "volcano.sh/gpu-memory"
GPU_NUMBER = "volcano.sh/gpu-number"
GPU_INDEX = "volcano.sh/gpu-index"
PREDICATE_TIME = "volcano.sh/predicate-time"
UNHEALTHY_GPU_IDS = "volcano.sh/gpu-unhealthy-ids"


@dataclass(frozen=True)
class Modes:
    """Which kind of request is honoured (Volcano's package variables, set by the
    deviceshare plugin's arguments)."""

    sharing: bool
    number: bool


def _limit(pod: Pod, name: str) -> int:
    """The containers' limits summed, or the largest init container's if larger."""
    total = sum(value(c.limits[name]) for c in pod.containers if name in c.limits)
    init = max((value(c.limits[name]) for c in pod.init_containers if name in c.limits), default=0)
    return max(total, init)


def unix_nano(now: datetime) -> int:
    """Go's ``Time.UnixNano``."""
    return (now - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1) * 1000


def gpu_memory_of_pod(pod: Pod) -> int:
    return _limit(pod, GPU_MEMORY)


def gpu_number_of_pod(pod: Pod) -> int:
    return _limit(pod, GPU_NUMBER)


def gpu_index(pod: Pod, log: Logger) -> list[int]:
    """The cards named by the pod's ``volcano.sh/gpu-index`` annotation."""
    raw = pod.meta.annotations.get(GPU_INDEX)
    if raw is None:
        return []
    try:
        return [int(part) for part in raw.split(",")]
    except ValueError:
        log.error(f"invalid {GPU_INDEX}={raw}")
        return []


@dataclass
class GPUDevice:
    id: int
    memory: int
    pods: dict[str, Pod] = field(default_factory=dict)

    def used_memory(self) -> int:
        return sum(
            gpu_memory_of_pod(pod)
            for pod in self.pods.values()
            if pod.phase not in ("Succeeded", "Failed")
        )

    def idle(self) -> bool:
        return not self.pods


class GPUDevices:
    """One node's cards (``gpushare.GPUDevices``)."""

    def __init__(self, name: str, devices: dict[int, GPUDevice], modes: Modes) -> None:
        self.name = name
        self.devices = devices
        self.modes = modes

    @classmethod
    def of_node(cls, node: Node, modes: Modes, log: Logger) -> GPUDevices | None:
        capacity = node.capacity or node.allocatable
        memory, number = capacity.get(GPU_MEMORY), capacity.get(GPU_NUMBER)
        if memory is None or number is None:
            return None
        count = value(number)
        if count == 0:
            log.warning(f"invalid {GPU_NUMBER}={number}")
            return None
        per_card = value(memory) // count
        devices = {i: GPUDevice(i, per_card) for i in range(count)}
        raw = node.meta.annotations.get(UNHEALTHY_GPU_IDS)
        for part in raw.split(",") if raw is not None else ():
            try:
                unhealthy = int(part)
            except ValueError:
                log.warning(f"Failed to parse unhealthy gpu id {part} due to invalid syntax")
                continue
            log.v(4, f"delete unhealthy gpu id {unhealthy} from GPUDevices")
            devices.pop(unhealthy, None)
        return cls(node.meta.name, devices, modes)

    def add_resource(self, pod: Pod, log: Logger) -> None:
        if gpu_memory_of_pod(pod) > 0:
            for card in gpu_index(pod, log):
                device = self.devices.get(card)
                if device is not None:
                    device.pods[pod.meta.uid] = pod

    def has_device_request(self, pod: Pod) -> bool:
        return (self.modes.sharing and gpu_memory_of_pod(pod) > 0) or (
            self.modes.number and gpu_number_of_pod(pod) > 0
        )

    def by_memory(self, pod: Pod) -> list[int]:
        """Cards with enough free memory, lowest id first."""
        request = gpu_memory_of_pod(pod)
        return sorted(d.id for d in self.devices.values() if d.memory - d.used_memory() >= request)

    def by_number(self, pod: Pod) -> list[int]:
        """The first idle cards (Go walks a map: random cards), or none if too few."""
        request = gpu_number_of_pod(pod)
        idle = [d.id for d in self.devices.values() if d.idle()]
        return idle[:request] if len(idle) >= request else []

    def filter_node(self, pod: Pod, policy: str, log: Logger) -> str | None:
        log.v(4, f"DeviceSharing:Into FitInPod {pod.meta.name}")
        reason = None
        if self.modes.sharing and gpu_memory_of_pod(pod) > 0 and not self.by_memory(pod):
            reason = f"GpuShare no enough gpu memory on node {self.name}"
        elif self.modes.number and gpu_number_of_pod(pod) > 0 and not self.by_number(pod):
            reason = f"GpuNumber no enough gpu number on node {self.name}"
        if reason is not None:
            log.error(f"deviceSharing err= {reason.split(' ', 1)[1]}")
            return reason
        log.v(4, "DeviceSharing:FitInPod successed")
        return None

    def score_node(self, pod: Pod, policy: str) -> float:
        return 0.0

    def allocate(self, pod: Pod, log: Logger, now: datetime) -> dict[str, str]:
        """The first card with room (memory) and/or the first idle cards (number)."""
        log.v(4, f"DeviceSharing:Into AllocateToPod {pod.meta.name}")
        patched: dict[str, str] = {}
        for requested, whole_cards in (
            (gpu_memory_of_pod(pod), False),
            (gpu_number_of_pod(pod), True),
        ):
            if requested <= 0:
                continue
            cards = self.by_number(pod) if whole_cards else self.by_memory(pod)[:1]
            if not cards:
                raise DeviceError(
                    f"the node {self.name} can't place the pod {pod.meta.name} in ns "
                    f"{pod.meta.namespace}"
                )
            patched[PREDICATE_TIME] = str(unix_nano(now))
            patched[GPU_INDEX] = ",".join(map(str, cards))
            for card in cards:
                self.devices[card].pods[pod.meta.uid] = pod
            kind = "gpu number" if whole_cards else "gpu sharing"
            log.v(
                4,
                f"predicates with {kind}, update pod {pod.meta.namespace}/{pod.meta.name} "
                f"allocate to node [{self.name}]",
            )
        return patched

    def release(self, pod: Pod, log: Logger) -> tuple[str, ...]:
        """Quirk kept: Volcano frees the cards named by the session's copy of the pod.
        A card given in this session was patched onto the API server's copy only, so it
        stays taken for the rest of the session; a bound pod's cards are freed."""
        for card in gpu_index(pod, log):
            device = self.devices.get(card)
            if device is not None:
                device.pods.pop(pod.meta.uid, None)
        return (PREDICATE_TIME, GPU_INDEX)
