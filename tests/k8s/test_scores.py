"""Kubernetes v1.31 scores with their integer arithmetic."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.builders import node as k8s_node
from tests.builders import node_info, snapshot
from tests.builders import pod as k8s_pod
from vspec.golang import go_div, go_round
from vspec.k8s.nodeinfo import K8sMemo, image_state_summaries
from vspec.k8s.podinfo import PodInfo, normalized_image_name, pod_images
from vspec.k8s.scores import (
    balanced_allocation,
    default_normalize_score,
    image_locality,
    inter_pod_affinity_pre_score,
    inter_pod_affinity_score,
    intolerable_prefer_no_schedule_taints,
    least_allocated,
    min_max_normalize,
    most_allocated,
    pod_topology_spread_pre_score,
    prefer_no_schedule_tolerations,
)
from vspec.model.corev1 import parse_container

NODE = {"cpu": 4, "memory": "8Gi", "nvidia.com/gpu": 4, "pods": 110}


def _loaded() -> Any:
    return node_info(
        k8s_node("n1", NODE), k8s_pod("ns1", "a", requests={"cpu": 1, "memory": "2Gi"})
    )


def test_go_arithmetic_helpers() -> None:
    assert go_div(-7, 2) == -3 and go_div(7, 2) == 3 and go_div(7, -2) == -3
    assert go_round(2.5) == 3 and go_round(-2.5) == -3 and go_round(2.4999) == 2


def test_least_and_most_allocated_use_non_zero_requests() -> None:
    pod = PodInfo(k8s_pod("ns1", "p"))  # no requests: counts 100m / 200Mi
    node = _loaded()
    # cpu (4000-1100)*100/4000 = 72; memory (8Gi-2Gi-200Mi)*100/8Gi = 72.
    assert least_allocated(pod, node) == 72
    # cpu 1100*100/4000 = 27; memory 27.
    assert most_allocated(pod, node) == 27


def test_least_allocated_overcommitted_resource_scores_zero() -> None:
    pod = PodInfo(k8s_pod("ns1", "p", requests={"cpu": 8, "memory": "1Gi"}))
    # cpu over capacity -> 0; memory (8Gi-3Gi)*100/8Gi = 62; mean (0+62)/2 = 31.
    assert least_allocated(pod, _loaded()) == 31
    # MostAllocated caps requests at capacity: cpu 100, memory 37 -> 68.
    assert most_allocated(pod, _loaded()) == 68


def test_balanced_allocation_uses_real_requests_and_gpu_only_when_requested() -> None:
    node = _loaded()
    assert balanced_allocation(PodInfo(k8s_pod("ns1", "p")), node) == 100
    assert balanced_allocation(PodInfo(k8s_pod("ns1", "q", requests={"cpu": 1})), node) == 87
    gpu = PodInfo(k8s_pod("ns1", "g", requests={"cpu": 1, "nvidia.com/gpu": 1}))
    # Fractions 0.5, 0.25, 0.25: std = sqrt(1/72) -> int(88.2) = 88.
    assert balanced_allocation(gpu, node) == 88


def test_image_locality() -> None:
    mb = 1024 * 1024
    nodes = [k8s_node("n1", images=[(["nginx:latest"], 500 * mb)]), k8s_node("n2")]
    states = image_state_summaries(nodes)
    n1, n2 = node_info(nodes[0]), node_info(nodes[1])
    n1.image_states, n2.image_states = states["n1"], states["n2"]
    images, count = pod_images(k8s_pod("ns1", "p", containers=[{"name": "c", "image": "nginx"}]))
    assert images == ["nginx:latest"] and count == 1
    # 500MB spread over 1 of 2 nodes = 250MB; (250-23)*100/(1000-23) = 23.
    assert image_locality(images, count, n1, 2) == 23
    assert image_locality(images, count, n2, 2) == 0


def test_pods_alike_but_for_their_images_keep_their_own_images() -> None:
    """The memo shares what a pod's containers give among pods of one template: the
    image is part of the template (it was left out of the key, so a pod took the
    images of the first pod with its requests and ports, and image locality scored
    the wrong image)."""
    memo = K8sMemo()
    pods = [
        k8s_pod("ns", name, containers=[{"name": "c", "image": image, "requests": {"cpu": 1}}])
        for name, image in (("a", "big:1"), ("b", "small:2"), ("c", "big:1"))
    ]
    assert [memo.pod_info(p).images for p in pods] == [("big:1",), ("small:2",), ("big:1",)]
    with_init = []
    for name, tool in (("d", "tool:3"), ("e", "tool:4")):
        pod = k8s_pod("ns", name, containers=[{"name": "c", "image": "big:1"}])
        pod.init_containers = [parse_container({"name": "i", "image": tool})]
        with_init.append(memo.pod_info(pod).images)
    assert with_init == [("tool:3", "big:1"), ("tool:4", "big:1")]


def test_normalized_image_name() -> None:
    assert normalized_image_name("reg:5000/app") == "reg:5000/app:latest"
    assert normalized_image_name("app:1.0") == "app:1.0"


def test_taint_toleration_counts_and_reversed_normalisation() -> None:
    taints = k8s_node(
        "n",
        taints=[
            {"key": "a", "effect": "PreferNoSchedule"},
            {"key": "b", "effect": "PreferNoSchedule"},
            {"key": "c", "effect": "NoSchedule"},
        ],
    ).taints
    pod = k8s_pod(
        "ns1",
        "p",
        tolerations=[
            {"key": "a", "operator": "Exists", "effect": "PreferNoSchedule"},
            {"key": "b", "operator": "Exists", "effect": "NoSchedule"},
        ],
    )
    tolerations = prefer_no_schedule_tolerations(pod.tolerations)
    assert intolerable_prefer_no_schedule_taints(taints, tolerations) == 1
    assert default_normalize_score([0, 1, 2], reverse=True) == [100, 50, 0]
    assert default_normalize_score([0, 0], reverse=True) == [100, 100]
    assert default_normalize_score([0, 0], reverse=False) == [0, 0]


def test_min_max_normalisation() -> None:
    assert min_max_normalize([-5, 0, 5]) == [0, 50, 100]
    assert min_max_normalize([3, 3]) == [0, 0]
    assert min_max_normalize([0, 1, 3]) == [0, 33, 100]


def _preferred(kind: str, weight: int, labels: dict[str, str]) -> dict[str, Any]:
    return {
        kind: {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": weight,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": labels},
                        "topologyKey": "zone",
                    },
                }
            ]
        }
    }


def test_inter_pod_affinity_scores_both_directions() -> None:
    db = k8s_pod("ns1", "db", labels={"app": "db"})
    shy = k8s_pod("ns1", "shy", affinity=_preferred("podAntiAffinity", 4, {"app": "web"}))
    z1 = node_info(k8s_node("n1", labels={"zone": "z1"}), db)
    z2 = node_info(k8s_node("n2", labels={"zone": "z2"}), shy)
    web = PodInfo(
        k8s_pod(
            "ns1",
            "web",
            labels={"app": "web"},
            affinity=_preferred("podAffinity", 10, {"app": "db"}),
        )
    )
    topology = inter_pod_affinity_pre_score(web, snapshot(z1, z2))
    assert topology == {"zone": {"z1": 10, "z2": -4}}
    assert inter_pod_affinity_score(topology, z1.node) == 10
    assert inter_pod_affinity_score(topology, z2.node) == -4
    # Without own preferences only pods with affinity are looked at: shy still counts.
    plain = PodInfo(k8s_pod("ns1", "plain", labels={"app": "web"}))
    assert inter_pod_affinity_pre_score(plain, snapshot(z1, z2)) == {"zone": {"z2": -4}}
    assert inter_pod_affinity_pre_score(PodInfo(k8s_pod("ns1", "x")), snapshot(z1, z2)) is None


def test_existing_required_affinity_adds_nothing_with_volcanos_zero_hard_weight() -> None:
    hard = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}
            ]
        }
    }
    z1 = node_info(k8s_node("n1", labels={"zone": "z1"}), k8s_pod("ns1", "e", affinity=hard))
    web = PodInfo(k8s_pod("ns1", "web", labels={"app": "web"}))
    assert inter_pod_affinity_pre_score(web, snapshot(z1)) is None


def _soft_spread(key: str = "zone") -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": key,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "s"}},
    }


def test_pod_topology_spread_score() -> None:
    z1 = node_info(
        k8s_node("n1", labels={"zone": "z1"}),
        k8s_pod("ns1", "a", labels={"app": "s"}),
        k8s_pod("ns1", "b", labels={"app": "s"}),
    )
    z2 = node_info(k8s_node("n2", labels={"zone": "z2"}), k8s_pod("ns1", "c", labels={"app": "s"}))
    bare = node_info(k8s_node("n3"))
    pod = k8s_pod("ns1", "new", labels={"app": "s"}, spread=[_soft_spread()])
    state = pod_topology_spread_pre_score(
        pod, [z1.node, z2.node, bare.node], snapshot(z1, z2, bare)
    )
    assert state is not None
    assert state.ignored_nodes == {"n3"}
    assert state.weights == [pytest.approx(math.log(4))]
    raw = [state.score(n) for n in (z1, z2, bare)]
    assert raw == [3, 1, 0]  # round(2*log 4), round(1*log 4), ignored
    assert state.normalize(["n1", "n2", "n3"], raw) == [33, 100, 0]


def test_pod_topology_spread_hostname_counts_per_node() -> None:
    host = "kubernetes.io/hostname"
    n1 = node_info(
        k8s_node("n1", labels={host: "n1"}),
        k8s_pod("ns1", "a", labels={"app": "s"}),
        k8s_pod("ns1", "b", labels={"app": "s"}),
    )
    n2 = node_info(k8s_node("n2", labels={host: "n2"}))
    pod = k8s_pod("ns1", "new", labels={"app": "s"}, spread=[_soft_spread(host)])
    state = pod_topology_spread_pre_score(pod, [n1.node, n2.node], snapshot(n1, n2))
    assert state is not None
    raw = [state.score(n1), state.score(n2)]
    assert raw == [go_round(2 * math.log(4)), 0]
    assert state.normalize(["n1", "n2"], raw) == [0, 100]
    assert pod_topology_spread_pre_score(k8s_pod("ns1", "none"), [n1.node], snapshot(n1)) is None
