"""The Kubernetes NodeInfo: running sums, host ports, affinity pod lists, image states."""

from __future__ import annotations

from tests.builders import node as k8s_node
from tests.builders import node_info
from tests.builders import pod as k8s_pod
from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.k8s.nodeinfo import K8sNodeInfo, Snapshot, build_node_map, image_state_summaries
from vspec.k8s.podinfo import DEFAULT_MEMORY_REQUEST, PodInfo, pod_requests
from vspec.model.objects import Cluster

ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "zone"}
        ]
    }
}


def test_requests_and_non_zero_requests_are_summed_and_undone() -> None:
    info = K8sNodeInfo(k8s_node("n1", {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": 2}))
    assert info.allocatable == {"cpu": 4000, "memory": 8 * 2**30, "nvidia.com/gpu": 2}
    sized = TaskInfo(
        k8s_pod("ns1", "a", requests={"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": 1})
    )
    empty = TaskInfo(k8s_pod("ns1", "b"))
    info.add_task(sized)
    info.add_task(empty)
    assert info.requested == {"cpu": 500, "memory": 2**30, "nvidia.com/gpu": 1}
    # A container without requests counts 100m / 200Mi in the non-zero sums.
    assert info.non0_cpu == 600
    assert info.non0_mem == 2**30 + DEFAULT_MEMORY_REQUEST
    assert info.remove_task(sized)
    assert info.requested == {"cpu": 0, "memory": 0, "nvidia.com/gpu": 0}
    assert (info.non0_cpu, info.non0_mem) == (100, DEFAULT_MEMORY_REQUEST)
    assert not info.remove_task(sized)
    assert list(info.pods) == ["ns1/b"]


def test_non_zero_defaults_apply_per_container_and_missing_resource() -> None:
    pod = k8s_pod(
        "ns1",
        "p",
        containers=[
            {"name": "a", "resources": {"requests": {"cpu": "1"}}},
            {"name": "b", "resources": {"requests": {"memory": "1Gi", "cpu": "0"}}},
        ],
    )
    non0 = pod_requests(pod, non_missing=True)
    assert non0["cpu"] == 1  # the explicit 0 of container b stays 0
    assert non0["memory"] == DEFAULT_MEMORY_REQUEST + 2**30
    real = PodInfo(pod).requested
    assert real == {"cpu": 1000, "memory": 2**30}


def test_used_ports_are_a_set_per_host_ip() -> None:
    ported = k8s_pod(
        "ns1", "a", containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}]
    )
    twin = k8s_pod(
        "ns1", "b", containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}]
    )
    info = node_info(k8s_node("n1"), ported, twin)
    assert info.used_ports == {"0.0.0.0": {("TCP", 8080)}}
    assert info.port_conflicts(("10.0.0.1", "TCP", 8080))
    assert not info.port_conflicts(("0.0.0.0", "UDP", 8080))
    # Kubernetes' HostPortInfo is a set: removing one of two users frees the port.
    info.remove_task(TaskInfo(twin))
    assert not info.port_conflicts(("0.0.0.0", "TCP", 8080))


def test_specific_host_ip_conflicts_with_wildcard_only() -> None:
    pod = k8s_pod(
        "ns1",
        "a",
        containers=[
            {"name": "c", "ports": [{"containerPort": 1, "hostPort": 9000, "hostIP": "10.0.0.1"}]}
        ],
    )
    info = node_info(k8s_node("n1"), pod)
    assert info.port_conflicts(("0.0.0.0", "TCP", 9000))
    assert info.port_conflicts(("10.0.0.1", "TCP", 9000))
    assert not info.port_conflicts(("10.0.0.2", "TCP", 9000))


def test_affinity_pod_lists() -> None:
    plain = k8s_pod("ns1", "plain")
    anti = k8s_pod("ns1", "anti", affinity=ANTI)
    preferred = k8s_pod(
        "ns1",
        "pref",
        affinity={
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "podAffinityTerm": {"labelSelector": {}, "topologyKey": "zone"}}
                ]
            }
        },
    )
    info = node_info(k8s_node("n1"), plain, anti, preferred)
    assert list(info.pods_with_affinity) == ["ns1/anti", "ns1/pref"]
    assert list(info.pods_with_required_anti_affinity) == ["ns1/anti"]
    info.remove_task(TaskInfo(anti))
    assert list(info.pods_with_required_anti_affinity) == []


def test_image_states_record_node_count_when_each_node_was_added() -> None:
    nodes = [
        k8s_node("n1", images=[(["img:1", "img@sha"], 500)]),
        k8s_node("n2", images=[(["img:1"], 999)]),
        k8s_node("n3"),
    ]
    states = image_state_summaries(nodes)
    assert (states["n1"]["img:1"].num_nodes, states["n1"]["img:1"].size) == (1, 500)
    # The second node sees two nodes and the size the first node reported.
    assert (states["n2"]["img:1"].num_nodes, states["n2"]["img:1"].size) == (2, 500)
    assert states["n3"] == {}


def test_build_node_map_takes_every_task_and_skips_placeholder_nodes() -> None:
    n1 = NodeInfo(k8s_node("n1"))
    n1.add_task(TaskInfo(k8s_pod("ns1", "a", node_name="n1", requests={"cpu": 1})))
    ghost = NodeInfo(None, "ghost")
    node_map = build_node_map([n1, ghost])
    assert list(node_map) == ["n1"]
    assert list(node_map["n1"].pods) == ["ns1/a"]
    assert node_map["n1"].requested["cpu"] == 1000


def test_snapshot_lists_are_frozen_at_creation() -> None:
    info = node_info(k8s_node("n1"))
    snap = Snapshot({"n1": info}, {})
    info.add_task(TaskInfo(k8s_pod("ns1", "anti", affinity=ANTI)))
    assert snap.have_pods_with_required_anti_affinity == []
    assert Snapshot({"n1": info}, {}).have_pods_with_required_anti_affinity == [info]


def test_snapshot_reads_namespace_labels_from_cluster_objects() -> None:
    from tests.builders import namespace_object

    cluster = Cluster(objects=[namespace_object("team-a", {"team": "a"})])
    snap = Snapshot.of_session({}, cluster)
    assert snap.namespace_labels == {"team-a": {"team": "a"}}
