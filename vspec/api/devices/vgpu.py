"""HAMi vGPU: slices of NVIDIA cards by memory and cores (``api/devices/nvidia/vgpu``).

The device plugin registers a node's cards in the node annotation
``volcano.sh/node-vgpu-register`` (``uuid,count,memory,type,health:`` per card) and keeps
``volcano.sh/node-vgpu-handshake`` fresh; a card may be shared by ``count`` pods. A
pod asks in its container limits for ``volcano.sh/vgpu-number`` cards, each with
``volcano.sh/vgpu-memory`` (or ``-memory-percentage``) and ``volcano.sh/vgpu-cores``; a
bound pod holds what its ``volcano.sh/vgpu-ids-new`` annotation says, which the
allocation patches onto it.

Volcano patches the node's handshake through the API server; vspec leaves the node
model unchanged (a session judges the handshake at ``ssn.now``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from fractions import Fraction

from vspec.api.devices import DeviceError, Logger
from vspec.golang import go_atoi
from vspec.model.objects import Node, Pod

VGPU_MEMORY = "volcano.sh/vgpu-memory"
VGPU_MEMORY_PERCENTAGE = "volcano.sh/vgpu-memory-percentage"
VGPU_CORES = "volcano.sh/vgpu-cores"
VGPU_NUMBER = "volcano.sh/vgpu-number"
VGPU_REGISTER = "volcano.sh/node-vgpu-register"
VGPU_HANDSHAKE = "volcano.sh/node-vgpu-handshake"
ASSIGNED_IDS = "volcano.sh/vgpu-ids-new"
ASSIGNED_IDS_TO_ALLOCATE = "volcano.sh/devices-to-allocate"
ASSIGNED_NODE = "volcano.sh/vgpu-node"
ASSIGNED_TIME = "volcano.sh/vgpu-time"
BIND_TIME = "volcano.sh/bind-time"
BIND_PHASE = "volcano.sh/bind-phase"
GPU_IN_USE = "nvidia.com/use-gputype"
GPU_NO_USE = "nvidia.com/nouse-gputype"
NVIDIA = "NVIDIA"
HANDSHAKE_TIMEOUT = timedelta(seconds=60)
HANDSHAKE_LAYOUT = "%Y.%m.%d %H:%M:%S"  # Go "2006.01.02 15:04:05"
DEFAULT_MEM_PERCENTAGE = 101
BINPACK, SPREAD = "binpack", "spread"


@dataclass
class ContainerDeviceRequest:
    nums: int
    type: str
    memreq: int
    mem_percentage: int
    coresreq: int


@dataclass(frozen=True)
class ContainerDevice:
    uuid: str
    type: str
    usedmem: int
    usedcores: int


@dataclass
class VGPUDevice:
    id: int
    uuid: str
    number: int
    memory: int
    type: str
    health: bool
    used_num: int = 0
    used_mem: int = 0
    used_core: int = 0
    pods: dict[str, tuple[int, int]] = field(default_factory=dict)  # pod name -> (mem, cores)


def _as_int64(q: Fraction | None) -> int | None:
    """``Quantity.AsInt64``: only whole values."""
    return None if q is None or q.denominator != 1 else q.numerator


def decode_node_devices(text: str) -> dict[int, VGPUDevice] | None:
    """The register annotation: one ``uuid,count,memory,type,health`` per ``:`` field;
    a card's id is its field position."""
    if ":" not in text:
        return None
    devices = {}
    for index, part in enumerate(text.split(":")):
        if "," not in part:
            continue
        items = part.split(",")
        if len(items) < 5:
            continue  # Go would index out of range here
        devices[index] = VGPUDevice(
            index,
            items[0],
            go_atoi(items[1]),
            go_atoi(items[2]),
            items[3],
            items[4] in ("1", "t", "T", "true", "TRUE", "True"),
        )
    return devices


def decode_pod_devices(text: str) -> list[list[ContainerDevice]]:
    """``uuid,type,mem,cores:`` per device, ``;`` between containers."""
    containers = []
    for chunk in text.split(";") if text else ():
        devices = []
        for part in chunk.split(":"):
            if "," in part:
                items = part.split(",")
                if len(items) >= 4:
                    devices.append(
                        ContainerDevice(items[0], items[1], go_atoi(items[2]), go_atoi(items[3]))
                    )
        containers.append(devices)
    return containers


def encode_pod_devices(containers: list[list[ContainerDevice]], log: Logger) -> str:
    """``encodePodDevices``: the inverse of :func:`decode_pod_devices`."""
    encoded = []
    for container in containers:
        text = "".join(f"{d.uuid},{d.type},{d.usedmem},{d.usedcores}:" for d in container)
        log.v(4, f"Encoded container Devices= {text}")
        encoded.append(text)
    return ";".join(encoded)


def has_vgpu_request(pod: Pod) -> bool:
    return any(VGPU_MEMORY in c.limits or VGPU_NUMBER in c.limits for c in pod.containers)


def resource_requests(pod: Pod, log: Logger) -> list[ContainerDeviceRequest]:
    """``resourcereqs``: per container asking for vGPUs, what it asks of each card."""
    requests = []
    for c in pod.containers:
        number = c.limits.get(VGPU_NUMBER)
        if number is None and VGPU_MEMORY not in c.limits:
            continue
        count = 1 if number is None else (_as_int64(number) or 0)
        memory = _as_int64(c.limits.get(VGPU_MEMORY, c.requests.get(VGPU_MEMORY))) or 0
        percent = _as_int64(
            c.limits.get(VGPU_MEMORY_PERCENTAGE, c.requests.get(VGPU_MEMORY_PERCENTAGE))
        )
        percentage = DEFAULT_MEM_PERCENTAGE if percent is None else percent
        if percentage == DEFAULT_MEM_PERCENTAGE and memory == 0:
            percentage = 100
        cores = _as_int64(c.limits.get(VGPU_CORES, c.requests.get(VGPU_CORES))) or 0
        requests.append(ContainerDeviceRequest(count, NVIDIA, memory, percentage, cores))
    log.v(3, f"counts= {requests}")
    return requests


def _gpu_type_allowed(annotations: dict[str, str], card_type: str) -> bool:
    """``checkGPUtype``: the pod's use-gputype / nouse-gputype annotations.

    Quirk kept: a single (comma-free) nouse-gputype value that matches *allows* the card.
    """
    card = card_type.upper()
    if GPU_IN_USE in annotations:
        return any(v.upper() in card for v in annotations[GPU_IN_USE].split(","))
    if GPU_NO_USE in annotations:
        nouse = annotations[GPU_NO_USE]
        if "," not in nouse:
            return True
        return not any(v.upper() in card for v in nouse.split(","))
    return True


class VGPUDevices:
    """One node's vGPU cards (``vgpu.GPUDevices``)."""

    def __init__(self, name: str, devices: dict[int, VGPUDevice], enabled: bool) -> None:
        self.name = name
        self.devices = devices
        self.enabled = enabled
        # The score of the last filter on this node (what ScoreNode returns).
        self.score = 0.0

    @classmethod
    def of_node(cls, node: Node, enabled: bool, now: datetime, log: Logger) -> VGPUDevices | None:
        annotations = node.meta.annotations
        register = annotations.get(VGPU_REGISTER)
        handshake = annotations.get(VGPU_HANDSHAKE)
        if register is None or handshake is None:
            return None
        devices = decode_node_devices(register)
        if not devices:
            return None
        if "Requesting" in handshake:
            parts = handshake.split("_")
            try:
                since = datetime.strptime(parts[1], HANDSHAKE_LAYOUT).replace(tzinfo=UTC)
            except (IndexError, ValueError):
                since = datetime(1, 1, 1, tzinfo=UTC)
            if now > since + HANDSHAKE_TIMEOUT:
                log.v(0, f"node {node.meta.name} device {handshake} leave")
                return None
        elif "Deleted" in handshake:
            return None
        return cls(node.meta.name, devices, enabled)

    def add_resource(self, pod: Pod, log: Logger) -> None:
        ids = pod.meta.annotations.get(ASSIGNED_IDS)
        if ids is None:
            return
        for container in decode_pod_devices(ids):
            for used in container:
                for device in self.devices.values():
                    if device.uuid == used.uuid:
                        device.used_mem += used.usedmem
                        device.used_num += 1
                        device.used_core += used.usedcores
                        mem, cores = device.pods.get(pod.meta.name, (0, 0))
                        device.pods[pod.meta.name] = (mem + used.usedmem, cores + used.usedcores)

    def has_device_request(self, pod: Pod) -> bool:
        return self.enabled and has_vgpu_request(pod)

    def fit(
        self, pod: Pod, *, replicate: bool, policy: str, log: Logger
    ) -> tuple[list[list[ContainerDevice]], float]:
        """``checkNodeGPUSharingPredicateAndScore``: the cards per container and the score;
        on a copy of the counters (``replicate``) or on the live ones (allocation)."""
        if not has_vgpu_request(pod):
            return [], 0.0
        requests = resource_requests(pod, log)
        devices = copy.deepcopy(self.devices) if replicate else self.devices
        score = 0.0
        assigned: list[list[ContainerDevice]] = []
        for request in requests:
            if request.nums > len(devices):
                raise DeviceError(f"no enough gpu cards on node {self.name}")
            taken: list[ContainerDevice] = []
            for i in range(len(devices) - 1, -1, -1):
                device = devices.get(i)
                if device is None or device.number <= device.used_num:
                    continue
                if request.mem_percentage != DEFAULT_MEM_PERCENTAGE and request.memreq == 0:
                    # Quirk kept: integer division, so any percentage below 100 means 0.
                    request.memreq = device.memory * (request.mem_percentage // 100)
                if device.memory - device.used_mem < request.memreq:
                    continue
                if 100 - device.used_core < request.coresreq:
                    continue
                if request.coresreq == 100 and device.used_num > 0:
                    continue
                if device.used_core == 100 and request.coresreq == 0:
                    continue
                if request.type not in device.type or not _gpu_type_allowed(
                    pod.meta.annotations, device.type
                ):
                    log.error(f"failed checktype {device.type} {request.type}")
                    continue
                if request.nums > 0:
                    request.nums -= 1
                    device.used_num += 1
                    device.used_mem += request.memreq
                    device.used_core += request.coresreq
                    taken.append(
                        ContainerDevice(device.uuid, request.type, request.memreq, request.coresreq)
                    )
                    if policy == BINPACK:
                        score += 100 * (device.used_mem / device.memory)
                    elif policy == SPREAD:
                        score += 100 if device.used_num == 1 else 0
                    else:
                        score = 0.0
                if request.nums == 0:
                    break
            if request.nums > 0:
                raise DeviceError("not enough gpu fitted on this node")
            assigned.append(taken)
        return assigned, score

    def filter_node(self, pod: Pod, policy: str, log: Logger) -> str | None:
        if not self.enabled:
            return None
        log.v(4, f"hami-vgpu DeviceSharing starts filtering pods {pod.meta.name}")
        try:
            _, score = self.fit(pod, replicate=True, policy=policy, log=log)
        except DeviceError as err:
            log.error(f'"Failed to allocate vgpu task" err="{err}"')
            return f"hami-vgpuDeviceSharing {err}"
        self.score = score
        log.v(4, "hami-vgpu DeviceSharing successfully filters pods")
        return None

    def score_node(self, pod: Pod, policy: str) -> float:
        return self.score

    def allocate(self, pod: Pod, log: Logger, now: datetime) -> dict[str, str]:
        """Takes the cards on the live counters; the annotations name them."""
        if not self.enabled:
            return {}
        log.v(4, f"hami-vgpu DeviceSharing:Into AllocateToPod {pod.meta.name}")
        try:
            assigned, _ = self.fit(pod, replicate=False, policy="", log=log)
        except DeviceError as err:
            log.error(f'"Failed to allocate vgpu task" err="{err}"')
            raise
        ids = encode_pod_devices(assigned, log)
        stamp = str(int(now.timestamp()))
        patched = {
            ASSIGNED_NODE: self.name,
            ASSIGNED_TIME: stamp,
            ASSIGNED_IDS: ids,
            ASSIGNED_IDS_TO_ALLOCATE: ids,
            BIND_PHASE: "allocating",
            BIND_TIME: stamp,
        }
        log.v(3, "DeviceSharing:Allocate Success")
        return patched

    def release(self, pod: Pod, log: Logger) -> tuple[str, ...]:
        """Quirk kept: Volcano releases nothing, so an un-allocated pod keeps its share
        for the rest of the session, and its annotations."""
        return ()
