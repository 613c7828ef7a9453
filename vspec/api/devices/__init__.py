"""Shared devices a node offers beside its resources (``api/shared_device_pool.go``,
``api/devices``): GPU sharing by memory or number (:mod:`.gpushare`) and HAMi vGPU
(:mod:`.vgpu`). A session keeps one pool per node and kind in ``NodeInfo.others``;
the deviceshare plugin filters and assigns with them. A pool reads the devices a bound
pod holds from the annotations its allocation patched onto the pod.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from vspec.errors import GoError
from vspec.model.objects import Pod

GPU_SHARING_DEVICE = "GpuShare"
VGPU_DEVICE = "hamivgpu"
REGISTERED_DEVICES = (GPU_SHARING_DEVICE, VGPU_DEVICE)


class Logger(Protocol):
    """The part of the session's klog a device pool writes to."""

    def v(self, level: int, text: str) -> None: ...

    def warning(self, text: str) -> None: ...

    def error(self, text: str) -> None: ...


class DeviceError(GoError):
    """The pod cannot be given devices on this node."""


class Devices(Protocol):
    """``api.Devices``: what the deviceshare plugin asks of every pool."""

    name: str

    def add_resource(self, pod: Pod, log: Logger) -> None:
        """Account a pod already holding devices (from its annotations)."""

    def has_device_request(self, pod: Pod) -> bool: ...

    def filter_node(self, pod: Pod, policy: str, log: Logger) -> str | None:
        """Why the pod does not fit (the status reason), or None."""

    def score_node(self, pod: Pod, policy: str) -> float: ...

    def allocate(self, pod: Pod, log: Logger, now: datetime) -> dict[str, str]:
        """Take devices for the pod and return the annotations Volcano patches onto it
        (stamped with the session clock); DeviceError when none fit."""

    def release(self, pod: Pod, log: Logger) -> tuple[str, ...]:
        """Give the pod's devices back; the annotation keys Volcano's patch removes."""
