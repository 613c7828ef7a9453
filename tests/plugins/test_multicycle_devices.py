"""Device and NUMA decisions across sessions: the bind patches the cards into the pod's
annotations, which the next session's device pools read back; pinned CPUs stay out of
the scheduler cache's NUMA allocatable."""

from __future__ import annotations

from typing import Any

from tests.builders import kube_object, node, pod, pod_group, queue, session, task
from vspec.framework.scheduler import simulate
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster, Pod
from vspec.model.result import SimulationResult

SHARING = {"name": "deviceshare", "arguments": {"deviceshare.GPUSharingEnable": True}}
VGPU = {"name": "deviceshare", "arguments": {"deviceshare.VGPUEnable": True}}
ONE_CARD = {"cpu": 8, "pods": 10, "volcano.sh/gpu-number": 1, "volcano.sh/gpu-memory": 8000}
REGISTER = "GPU-0,10,16000,NVIDIA-A100,true:"
NUMA = {"name": "numa-aware"}


def _run(cluster: Cluster, plugin: dict[str, Any], cycles: int) -> SimulationResult:
    conf = load_conf(
        {
            "actions": "enqueue, allocate",
            "tiers": [
                {"plugins": [{"name": "gang"}]},
                {"plugins": [{"name": "predicates"}, {"name": "proportion"}, plugin]},
            ],
        },
        default_plugin_flags=True,
    )
    return simulate(conf, cluster, cycles=cycles, verbosity=4)


def _gpu_pod(name: str, memory: int) -> Pod:
    return pod("ns", name, "pg", {"cpu": 1}, limits={"volcano.sh/gpu-memory": memory})


def _vgpu_pod(name: str, memory: int) -> Pod:
    limits = {"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": memory}
    return pod("ns", name, "pg", {"cpu": 1}, limits=limits)


def _cluster(nodes: list[Any], pods: list[Pod]) -> Cluster:
    return Cluster(
        nodes=nodes,
        queues=[queue("q1")],
        pod_groups=[pod_group("ns", "pg", "q1", min_member=1)],
        pods=pods,
    )


def _pod(result: SimulationResult, name: str) -> Pod:
    assert result.cluster is not None
    return next(p for p in result.cluster.pods if p.meta.name == name)


def test_bound_pod_keeps_its_card_so_a_later_pod_goes_elsewhere() -> None:
    first = _run(
        _cluster([node("g1", ONE_CARD), node("g2", ONE_CARD)], [_gpu_pod("a", 6000)]), SHARING, 1
    )
    a = _pod(first, "a")
    assert a.meta.annotations["volcano.sh/gpu-index"] == "0"
    assert "volcano.sh/predicate-time" in a.meta.annotations
    assert first.cluster is not None
    later = Cluster(
        nodes=first.cluster.nodes,
        queues=first.cluster.queues,
        pod_groups=first.cluster.pod_groups,
        pods=[*first.cluster.pods, _gpu_pod("b", 6000)],
    )
    second = _run(later, SHARING, 1)
    other = "g2" if a.node_name == "g1" else "g1"
    assert [(b.task, b.node) for b in second.binds] == [("ns/b", other)]


def test_gpu_sharing_pod_stays_pending_over_cycles() -> None:
    pods = [_gpu_pod("a", 6000), _gpu_pod("b", 6000)]
    original = pods[0].meta.annotations.copy()
    result = _run(_cluster([node("g1", ONE_CARD)], pods), SHARING, 3)
    assert [(b.task, b.cycle) for b in result.binds] == [("ns/a", 0)]
    assert result.tasks["ns/b"].node is None
    assert pods[0].meta.annotations == original  # the input cluster is untouched
    assert "volcano.sh/gpu-index" not in _pod(result, "b").meta.annotations


def test_vgpu_pod_keeps_its_slice_over_cycles() -> None:
    annotations = {
        "volcano.sh/node-vgpu-register": REGISTER,
        "volcano.sh/node-vgpu-handshake": "Requesting_2025.01.01 00:00:00",
    }
    gpu = node("g1", {"cpu": 8, "pods": 10, "volcano.sh/vgpu-number": 10}, annotations=annotations)
    result = _run(_cluster([gpu], [_vgpu_pod("a", 12000), _vgpu_pod("b", 12000)]), VGPU, 2)
    assert [(b.task, b.cycle) for b in result.binds] == [("ns/a", 0)]
    assert result.tasks["ns/b"].node is None
    patched = _pod(result, "a").meta.annotations
    assert patched["volcano.sh/vgpu-ids-new"] == "GPU-0,NVIDIA,12000,0:"
    assert patched["volcano.sh/vgpu-node"] == "g1"
    assert patched["volcano.sh/bind-phase"] == "allocating"


def test_discarded_allocation_drops_the_gpu_index_patch() -> None:
    ssn = session(_cluster([node("g1", ONE_CARD)], [_gpu_pod("a", 6000)]), [SHARING])
    a = task(ssn, "ns/a")
    stmt = ssn.statement()
    stmt.allocate(a, ssn.nodes["g1"])
    assert a.bind_annotations["volcano.sh/gpu-index"] == "0"
    stmt.discard()
    assert dict(a.bind_annotations) == {}


def _numa_pod(name: str, cpus: int) -> Pod:
    resources = {"cpu": cpus, "memory": "1Gi"}
    annotations = {"volcano.sh/numa-topology-policy": "single-numa-node"}
    return pod("ns", name, "pg", resources, limits=resources, annotations=annotations)


def test_pinned_cpus_stay_taken_in_later_cycles() -> None:
    # Two NUMA nodes of four CPUs; the node's cpu resource is ample, NUMA is the limit.
    details = {str(c): {"numa": c // 4, "socket": c // 4, "core": c // 2} for c in range(8)}
    spec = {
        "policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "single-numa-node"},
        "numares": {"cpu": {"allocatable": "0-7", "capacity": 8}},
        "cpuDetail": details,
    }
    cluster = _cluster(
        [node("n1", {"cpu": 32, "memory": "16Gi", "pods": 10})],
        [_numa_pod("a", 3), _numa_pod("b", 3), _numa_pod("c", 3)],
    )
    cluster.objects.append(kube_object("Numatopology", "", "n1", {"spec": spec}))
    result = _run(cluster, NUMA, 2)
    assert sorted((b.task, b.cycle) for b in result.binds) == [("ns/a", 0), ("ns/b", 0)]
    assert result.tasks["ns/c"].node is None
    assert any(
        line.text == "[numaPlugin]allocatedResSet: map[n1:map[cpu:0-2,4-6]]" for line in result.logs
    )
