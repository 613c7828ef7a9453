"""numa-aware: the kubelet's CPU pinning simulated per node from Numatopology."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import kube_object, node, pod, pod_group, queue, session, task
from vspec.api.unschedule_info import FitError
from vspec.model.objects import Cluster
from vspec.plugins.numaaware import format_cpuset, parse_cpuset

ENTRY = {"name": "numa-aware", "enablePredicate": True, "enableNodeOrder": True}
POLICY = "volcano.sh/numa-topology-policy"


def _topology(name: str, policy: str = "single-numa-node") -> Any:
    # Two NUMA nodes = two sockets, two cores of two threads each.
    details = {str(c): {"numa": c // 4, "socket": c // 4, "core": c // 2} for c in range(8)}
    spec = {
        "policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": policy},
        "numares": {"cpu": {"allocatable": "0-7", "capacity": 8}},
        "cpuDetail": details,
    }
    return kube_object("Numatopology", "", name, {"spec": spec})


def _guaranteed(name: str, cpus: int, policy: str | None = "single-numa-node") -> Any:
    resources = {"cpu": cpus, "memory": "1Gi"}
    annotations = {POLICY: policy} if policy else {}
    return pod("ns", name, "pg", resources, limits=resources, annotations=annotations)


def _cluster(*objects: Any) -> Cluster:
    return Cluster(
        nodes=[node(n, {"cpu": 8, "memory": "16Gi", "pods": 10}) for n in ("n1", "n2", "bare")],
        queues=[queue("q1")],
        pod_groups=[pod_group("ns", "pg", "q1")],
        pods=[
            _guaranteed("two", 2),
            _guaranteed("four", 4),
            _guaranteed("three", 3),
            _guaranteed("restricted", 2, policy="restricted"),
            pod("ns", "burstable", "pg", {"cpu": 2}, annotations={POLICY: "single-numa-node"}),
        ],
        objects=list(objects),
    )


def test_cpus_are_pinned_within_one_numa_node_until_none_has_room() -> None:
    ssn = session(_cluster(_topology("n1"), _topology("n2")), [ENTRY])
    plugin = ssn.plugins["numa-aware"]
    n1 = ssn.nodes["n1"]
    two, four, three = task(ssn, "ns/two"), task(ssn, "ns/four"), task(ssn, "ns/three")
    ssn.predicate_fn(two, n1)
    assert plugin.assign_res[two.uid]["n1"] == {"cpu": frozenset({0, 1})}
    ssn.pipeline(two, "n1")
    assert plugin.node_res_sets["n1"]["cpu"] == frozenset(range(2, 8))
    ssn.predicate_fn(four, n1)
    assert plugin.assign_res[four.uid]["n1"] == {"cpu": frozenset({4, 5, 6, 7})}
    ssn.pipeline(four, "n1")
    with pytest.raises(FitError, match="cannot be assigned by numa"):
        ssn.predicate_fn(three, n1)


def test_policy_checks() -> None:
    ssn = session(_cluster(_topology("n1")), [ENTRY])
    with pytest.raises(FitError, match=r"task topology polocy\[restricted\] is different"):
        ssn.predicate_fn(task(ssn, "ns/restricted"), ssn.nodes["n1"])
    with pytest.raises(FitError, match="numa info is empty"):
        ssn.predicate_fn(task(ssn, "ns/two"), ssn.nodes["bare"])
    ssn.predicate_fn(task(ssn, "ns/burstable"), ssn.nodes["bare"])  # not Guaranteed: skipped


def test_batch_order_prefers_fewer_numa_nodes() -> None:
    cluster = _cluster(_topology("n1", "best-effort"), _topology("n2", "best-effort"))
    cluster.pods.append(_guaranteed("spread", 3, policy="best-effort"))
    ssn = session(cluster, [ENTRY])
    n1, n2 = ssn.nodes["n1"], ssn.nodes["n2"]
    # n2 has only CPUs 2, 3 and 4 free: 3 CPUs there span both NUMA nodes.
    ssn.plugins["numa-aware"].node_res_sets["n2"]["cpu"] = frozenset({2, 3, 4})
    spread = task(ssn, "ns/spread")
    ssn.predicate_fn(spread, n1)
    ssn.predicate_fn(spread, n2)
    assert ssn.batch_node_order_fn(spread, [n1, n2]) == {"n1": 50.0, "n2": 0.0}


def test_cpuset_text() -> None:
    assert parse_cpuset("0-2,5,7-8") == frozenset({0, 1, 2, 5, 7, 8})
    assert format_cpuset({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"
    assert parse_cpuset("") == frozenset()
