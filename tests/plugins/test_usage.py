"""usage: the measured load filters and scores nodes while the metrics are fresh."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.builders import NOW, node, pod, pod_group, queue, session, task
from vspec.api.unschedule_info import FitError
from vspec.model.objects import Cluster, NodeUsage

ARGS = {
    "usage.weight": 5,
    "cpu.weight": 1,
    "memory.weight": 1,
    "thresholds": {"cpu": 80, "mem": 80},
}


def _usage(cpu: float, mem: float, age: timedelta = timedelta(0)) -> NodeUsage:
    return NodeUsage({"10m": cpu}, {"10m": mem}, NOW - age)


def _cluster(*usages: NodeUsage | None) -> Cluster:
    return Cluster(
        nodes=[
            node(f"n{i}", {"cpu": 4, "memory": "8Gi", "pods": 10}, usage=u)
            for i, u in enumerate(usages, 1)
        ],
        queues=[queue("q1")],
        pod_groups=[pod_group("c1", "pg1", "q1")],
        pods=[pod("c1", "p1", "pg1", {"cpu": 1, "memory": "1Gi"})],
    )


def test_predicate_thresholds_and_stale_metrics() -> None:
    cluster = _cluster(
        _usage(80, 79), _usage(81, 10), _usage(10, 90), _usage(99, 99, timedelta(minutes=6)), None
    )
    ssn = session(cluster, [{"name": "usage", "enablePredicate": True, "arguments": ARGS}])
    p1 = task(ssn, "c1/p1")
    ssn.predicate_fn(p1, ssn.nodes["n1"])  # at the threshold is fine
    with pytest.raises(FitError, match="the CPU load of the node exceeds"):
        ssn.predicate_fn(p1, ssn.nodes["n2"])
    with pytest.raises(FitError, match="the memory load of the node exceeds"):
        ssn.predicate_fn(p1, ssn.nodes["n3"])
    ssn.predicate_fn(p1, ssn.nodes["n4"])  # metrics older than 5 minutes: ignored
    ssn.predicate_fn(p1, ssn.nodes["n5"])  # no metrics at all


def test_node_order_prefers_idle_nodes() -> None:
    cluster = _cluster(_usage(30, 50), _usage(60, 50), _usage(10, 20, timedelta(minutes=6)))
    ssn = session(cluster, [{"name": "usage", "enableNodeOrder": True, "arguments": ARGS}])
    p1 = task(ssn, "c1/p1")
    assert ssn.node_order_fn(p1, ssn.nodes["n1"]) == pytest.approx(300)
    assert ssn.node_order_fn(p1, ssn.nodes["n2"]) == pytest.approx(225)
    assert ssn.node_order_fn(p1, ssn.nodes["n3"]) == 0


def test_non_integer_threshold_counts_as_zero_and_missing_thresholds_log_an_error() -> None:
    args = {**ARGS, "thresholds": {"cpu": 50.5}}
    ssn = session(
        _cluster(_usage(1, 1)), [{"name": "usage", "enablePredicate": True, "arguments": args}]
    )
    with pytest.raises(FitError):
        ssn.predicate_fn(task(ssn, "c1/p1"), ssn.nodes["n1"])
    ssn = session(_cluster(_usage(1, 1)), [{"name": "usage", "arguments": {}}])
    assert any("Failed to obtain thresholds information" in t for t in ssn.log.texts())
