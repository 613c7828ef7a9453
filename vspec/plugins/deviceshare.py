"""deviceshare: GPUs shared by memory, handed out by number, or sliced as HAMi vGPUs
(``plugins/deviceshare/deviceshare.go``; the pools are in :mod:`vspec.api.devices`).

``deviceshare.GPUSharingEnable`` honours ``volcano.sh/gpu-memory`` requests,
``deviceshare.GPUNumberEnable`` ``volcano.sh/gpu-number`` (not both), and
``deviceshare.VGPUEnable`` the ``volcano.sh/vgpu-*`` requests (not with the others).

Volcano assigns devices in the predicates plugin's event handler and patches the
card ids into the pod's annotations (``volcano.sh/gpu-index``, ``volcano.sh/vgpu-ids-new``),
from which the next session's pools count them. Here deviceshare's own handler assigns
them and keeps the patch in ``TaskInfo.bind_annotations``; the bind writes it onto the
pod, so in a multi-cycle run a bound pod keeps its cards. Unlike Volcano's API patch,
the annotations of a pod that is allocated but never bound are not kept (no later
session reads them: pools only count the pods on their node). The node lock
(``deviceshare.NodeLockEnable``) is not modelled.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

from vspec.api.devices import (
    GPU_SHARING_DEVICE,
    REGISTERED_DEVICES,
    VGPU_DEVICE,
    DeviceError,
    Devices,
)
from vspec.api.devices.gpushare import GPUDevices, Modes
from vspec.api.devices.vgpu import VGPUDevices, has_vgpu_request
from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import Code, Status, TaskStatus
from vspec.api.unschedule_info import FitError
from vspec.errors import EngineError, PluginError
from vspec.framework.arguments import Arguments
from vspec.framework.interface import (
    ArgumentSpec,
    BoolArgument,
    Event,
    EventHandler,
    IntArgument,
    Plugin,
    StrArgument,
)
from vspec.framework.registry import register_plugin
from vspec.model.objects import Pod

if TYPE_CHECKING:
    from vspec.framework.session import Session

GPU_SHARING_PREDICATE = "deviceshare.GPUSharingEnable"
GPU_NUMBER_PREDICATE = "deviceshare.GPUNumberEnable"
NODE_LOCK_ENABLE = "deviceshare.NodeLockEnable"
VGPU_ENABLE = "deviceshare.VGPUEnable"
SCHEDULE_POLICY = "deviceshare.SchedulePolicy"
SCHEDULE_WEIGHT = "deviceshare.ScheduleWeight"
GPU_SHARING_ARG = BoolArgument(GPU_SHARING_PREDICATE, False, "share GPUs by volcano.sh/gpu-memory")
GPU_NUMBER_ARG = BoolArgument(GPU_NUMBER_PREDICATE, False, "whole GPUs by volcano.sh/gpu-number")
VGPU_ARG = BoolArgument(VGPU_ENABLE, False, "HAMi vGPUs by volcano.sh/vgpu-*")
SCHEDULE_POLICY_ARG = StrArgument(SCHEDULE_POLICY, "", "vGPU scoring: binpack or spread")
SCHEDULE_WEIGHT_ARG = IntArgument(SCHEDULE_WEIGHT, 0, "weight of the device score")


@register_plugin
class DeviceSharePlugin(Plugin):
    """Predicate over shared GPUs (by memory or number) and HAMi vGPUs."""

    name: ClassVar[str] = "deviceshare"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (
        GPU_SHARING_ARG,
        GPU_NUMBER_ARG,
        BoolArgument(NODE_LOCK_ENABLE, False, "lock nodes while binding (not modelled)"),
        VGPU_ARG,
        SCHEDULE_POLICY_ARG,
        SCHEDULE_WEIGHT_ARG,
    )

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.modes = Modes(GPU_SHARING_ARG.read(arguments), GPU_NUMBER_ARG.read(arguments))
        self.vgpu = VGPU_ARG.read(arguments)
        self.schedule_policy = SCHEDULE_POLICY_ARG.read(arguments)
        self.schedule_weight = SCHEDULE_WEIGHT_ARG.read(arguments)
        # Volcano exits (klog.Fatal) on these combinations.
        if self.modes.sharing and self.modes.number:
            raise PluginError(self.name, "can not define true in both gpu sharing and gpu number")
        if (self.modes.sharing or self.modes.number) and self.vgpu:
            raise PluginError(self.name, "gpu-share and vgpu can't be used together")

    def _requests(self, kind: str, pod: Pod) -> bool:
        """``HasDeviceRequest`` of a node without that pool (a nil pool in Go)."""
        if kind == GPU_SHARING_DEVICE:
            return GPUDevices("", {}, self.modes).has_device_request(pod)
        return self.vgpu and has_vgpu_request(pod)

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log
        for node in ssn.nodes.values():
            if node.node is None:
                continue
            pools: dict[str, Devices | None] = {
                GPU_SHARING_DEVICE: GPUDevices.of_node(node.node, self.modes, log),
                VGPU_DEVICE: VGPUDevices.of_node(node.node, self.vgpu, ssn.now, log),
            }
            for kind, pool in pools.items():
                node.others[kind] = pool
                if pool is None:
                    continue
                for task in node.tasks.values():
                    if task.status is not TaskStatus.Pipelined:
                        pool.add_resource(task.pod, log)

        def predicate(task: TaskInfo, node: NodeInfo) -> None:
            for kind in REGISTERED_DEVICES:
                pool = node.others.get(kind)
                if pool is None:
                    if self._requests(kind, task.pod):
                        raise self._fit_error(task, node, f"node not initialized with device{kind}")
                    log.v(
                        4,
                        f"pod {task.namespace}/{task.name} did not request device {kind} on "
                        f"{node.name}, skipping it",
                    )
                    continue
                assert isinstance(pool, (GPUDevices, VGPUDevices))
                reason = pool.filter_node(task.pod, self.schedule_policy, log)
                if reason is not None:
                    raise self._fit_error(task, node, reason)
            log.v(
                4,
                f"checkDevices predicates Task <{task.namespace}/{task.name}> on Node "
                f"<{node.name}>: fit ",
            )

        def node_order(task: TaskInfo, node: NodeInfo) -> float:
            # Quirk kept: the device score is computed and logged, but 0 is returned.
            if self.schedule_policy:
                total = 0.0
                for kind in REGISTERED_DEVICES:
                    pool = node.others.get(kind)
                    if pool is None:
                        self._score_nil_pool(kind, task, node)
                    elif isinstance(pool, (GPUDevices, VGPUDevices)) and pool.has_device_request(
                        task.pod
                    ):
                        total += pool.score_node(task.pod, self.schedule_policy)
                log.v(4, f"deviceScore for task {task.namespace}/{task.name} is: {total:g}")
                score = math.floor(total + 0.5) * self.schedule_weight
                log.v(
                    5,
                    f"Node: {node.name}, task<{task.namespace}/{task.name}> Device Score "
                    f"weight {self.schedule_weight}, score: {float(score):f}",
                )
            return 0.0

        ssn.add_predicate_fn(self.name, predicate)
        ssn.add_node_order_fn(self.name, node_order)
        ssn.add_event_handler(
            EventHandler(
                allocate_func=lambda event: self._allocate(ssn, event),
                deallocate_func=lambda event: self._release(ssn, event),
            )
        )

    def _score_nil_pool(self, kind: str, task: TaskInfo, node: NodeInfo) -> None:
        """Quirk kept: Go's score loop walks every entry of ``node.Others``, the nil pool
        of a node without the device too, and asks it ``HasDeviceRequest``; when the pod
        requests the device, vgpu's ``ScoreNode`` reads a field of its nil receiver and
        the scheduler panics (gpushare's returns 0). Scoring reaches such a node where
        deviceshare's predicate does not remove it: preempt keeps a node whose failure
        is a resolvable Unschedulable."""
        if kind == VGPU_DEVICE and self._requests(kind, task.pod):
            raise EngineError(
                f"deviceshare scores node <{node.name}>, which has no vgpu, for task "
                f"<{task.namespace}/{task.name}> requesting one: Volcano's vgpu ScoreNode "
                "dereferences the node's nil device pool and panics"
            )

    @staticmethod
    def _pools_for(ssn: Session, task: TaskInfo) -> list[GPUDevices | VGPUDevices]:
        node = ssn.nodes.get(task.node_name)
        if node is None:
            return []
        pools = [node.others.get(kind) for kind in REGISTERED_DEVICES]
        return [
            p
            for p in pools
            if isinstance(p, (GPUDevices, VGPUDevices)) and p.has_device_request(task.pod)
        ]

    def _allocate(self, ssn: Session, event: Event) -> None:
        """What predicates' AllocateFunc does for devices in Volcano: take them, and
        patch the pod (kept on the task until the bind)."""
        task = event.task
        for pool in self._pools_for(ssn, task):
            try:
                patched = pool.allocate(task.pod, ssn.log, ssn.now)
            except DeviceError as err:
                ssn.log.error(f"AllocateToPod failed {err}")
                return
            if patched:
                task.bind_annotations = {**task.bind_annotations, **patched}

    def _release(self, ssn: Session, event: Event) -> None:
        task = event.task
        for pool in self._pools_for(ssn, task):
            removed = pool.release(task.pod, ssn.log)
            if removed:
                task.bind_annotations = {
                    k: v for k, v in task.bind_annotations.items() if k not in removed
                }

    @staticmethod
    def _fit_error(task: TaskInfo, node: NodeInfo, reason: str) -> FitError:
        return FitError.with_status(task, node.name, Status(Code.Unschedulable, reason))
