"""deviceshare: GPU cards shared by memory or handed out by number."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.api.unschedule_info import FitError
from vspec.errors import PluginError
from vspec.model.objects import Cluster

SHARING = {
    "name": "deviceshare",
    "enablePredicate": True,
    "arguments": {"deviceshare.GPUSharingEnable": True},
}
NUMBER = {
    "name": "deviceshare",
    "enablePredicate": True,
    "arguments": {"deviceshare.GPUNumberEnable": True},
}


def _gpu_pod(name: str, memory: int = 0, number: int = 0, **extra: Any) -> Any:
    limits = {}
    if memory:
        limits["volcano.sh/gpu-memory"] = memory
    if number:
        limits["volcano.sh/gpu-number"] = number
    return pod("ns", name, "pg", {"cpu": 1}, limits=limits, **extra)


def _cluster(*pods: Any) -> Cluster:
    gpu = {"cpu": 8, "pods": 10, "volcano.sh/gpu-number": 2, "volcano.sh/gpu-memory": 16000}
    return Cluster(
        nodes=[node("gpu", gpu), node("cpu", {"cpu": 8, "pods": 10})],
        queues=[queue("q1")],
        pod_groups=[pod_group("ns", "pg", "q1")],
        pods=list(pods),
    )


def test_sharing_by_memory_fills_cards_and_counts_bound_pods() -> None:
    bound = _gpu_pod(
        "bound",
        memory=5000,
        phase="Running",
        node_name="gpu",
        annotations={"volcano.sh/gpu-index": "0"},
    )
    cluster = _cluster(
        bound, _gpu_pod("p1", memory=6000), _gpu_pod("p2", memory=6000), _gpu_pod("plain")
    )
    ssn = session(cluster, [SHARING])
    gpu, cpu = ssn.nodes["gpu"], ssn.nodes["cpu"]
    p1, p2 = task(ssn, "ns/p1"), task(ssn, "ns/p2")
    ssn.predicate_fn(p1, gpu)
    with pytest.raises(FitError, match="node not initialized with deviceGpuShare"):
        ssn.predicate_fn(p1, cpu)
    ssn.predicate_fn(task(ssn, "ns/plain"), cpu)  # no GPU asked: any node
    ssn.pipeline(p1, "gpu")  # card 0 has 3000 left, p1 takes card 1
    with pytest.raises(FitError, match="GpuShare no enough gpu memory on node gpu"):
        ssn.predicate_fn(p2, gpu)
    # Quirk kept: p1's card was patched onto the API server's pod only, so Volcano's
    # release (which reads the session's pod) frees nothing in this session...
    ssn.evict(p1, "test")
    with pytest.raises(FitError, match="GpuShare no enough gpu memory on node gpu"):
        ssn.predicate_fn(p2, gpu)
    # ...while a bound pod carries its gpu-index, and evicting it frees card 0.
    ssn.evict(task(ssn, "ns/bound"), "test")
    ssn.predicate_fn(p2, gpu)


def test_number_takes_whole_idle_cards() -> None:
    cluster = _cluster(_gpu_pod("p1", number=1), _gpu_pod("p2", number=2))
    ssn = session(cluster, [NUMBER])
    gpu = ssn.nodes["gpu"]
    p1, p2 = task(ssn, "ns/p1"), task(ssn, "ns/p2")
    ssn.predicate_fn(p2, gpu)
    ssn.pipeline(p1, "gpu")
    with pytest.raises(FitError, match="GpuNumber no enough gpu number on node gpu"):
        ssn.predicate_fn(p2, gpu)


def test_unhealthy_cards_are_removed() -> None:
    cluster = _cluster(_gpu_pod("p1", number=2))
    cluster.nodes[0].meta.annotations["volcano.sh/gpu-unhealthy-ids"] = "1"
    ssn = session(cluster, [NUMBER])
    with pytest.raises(FitError):
        ssn.predicate_fn(task(ssn, "ns/p1"), ssn.nodes["gpu"])


def test_exclusive_modes_are_refused() -> None:
    both = {"deviceshare.GPUSharingEnable": True, "deviceshare.GPUNumberEnable": True}
    with pytest.raises(PluginError, match="can not define true in both"):
        session(_cluster(), [{"name": "deviceshare", "arguments": both}])
    share_and_vgpu = {"deviceshare.GPUSharingEnable": True, "deviceshare.VGPUEnable": True}
    with pytest.raises(PluginError, match="gpu-share and vgpu can't be used together"):
        session(_cluster(), [{"name": "deviceshare", "arguments": share_and_vgpu}])


VGPU = {
    "name": "deviceshare",
    "enablePredicate": True,
    "enableNodeOrder": True,
    "arguments": {"deviceshare.VGPUEnable": True, "deviceshare.SchedulePolicy": "binpack"},
}
REGISTER = "GPU-a,2,16000,NVIDIA-A100,true:GPU-b,2,16000,NVIDIA-A100,true:"


def _vgpu_cluster(*pods: Any, handshake: str = "Reported_2025.01.01 00:00:00") -> Cluster:
    annotations = {
        "volcano.sh/node-vgpu-register": REGISTER,
        "volcano.sh/node-vgpu-handshake": handshake,
    }
    return Cluster(
        nodes=[
            node("v1", {"cpu": 8, "pods": 10}, annotations=annotations),
            node("plain", {"cpu": 8, "pods": 10}),
        ],
        queues=[queue("q1")],
        pod_groups=[pod_group("ns", "pg", "q1")],
        pods=list(pods),
    )


def _vgpu_pod(name: str, number: int, memory: int, **extra: Any) -> Any:
    limits = {"volcano.sh/vgpu-number": number, "volcano.sh/vgpu-memory": memory}
    return pod("ns", name, "pg", {"cpu": 1}, limits=limits, **extra)


def test_vgpu_slices_cards_by_memory_and_count() -> None:
    held = _vgpu_pod(
        "held",
        1,
        10000,
        phase="Running",
        node_name="v1",
        annotations={"volcano.sh/vgpu-ids-new": "GPU-b,NVIDIA,10000,0:"},
    )
    cluster = _vgpu_cluster(held, _vgpu_pod("p1", 1, 8000), _vgpu_pod("p2", 2, 8000))
    ssn = session(cluster, [VGPU])
    v1 = ssn.nodes["v1"]
    p1, p2 = task(ssn, "ns/p1"), task(ssn, "ns/p2")
    with pytest.raises(FitError, match="node not initialized with devicehamivgpu"):
        ssn.predicate_fn(p1, ssn.nodes["plain"])
    # GPU-b has 6000 left, so two 8000 slices do not fit.
    with pytest.raises(FitError, match="hami-vgpuDeviceSharing not enough gpu fitted"):
        ssn.predicate_fn(p2, v1)
    ssn.predicate_fn(p1, v1)  # GPU-a: binpack score 8000/16000*100
    assert v1.others["hamivgpu"].score == 50.0
    ssn.pipeline(p1, "v1")
    pool = v1.others["hamivgpu"]
    assert [d.used_mem for d in pool.devices.values()] == [8000, 10000]


def test_vgpu_stale_handshake_hides_the_cards() -> None:
    cluster = _vgpu_cluster(_vgpu_pod("p1", 1, 1000), handshake="Requesting_2024.12.31 23:58:00")
    ssn = session(cluster, [VGPU])
    with pytest.raises(FitError, match="node not initialized with devicehamivgpu"):
        ssn.predicate_fn(task(ssn, "ns/p1"), ssn.nodes["v1"])
