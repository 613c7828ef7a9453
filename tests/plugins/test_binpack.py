"""binpack: argument parsing and the NodeOrder arithmetic (Volcano's TestNode cases)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.framework.arguments import Arguments
from vspec.framework.log import Klog
from vspec.framework.session import Session
from vspec.model.objects import Cluster
from vspec.plugins.binpack import PriorityWeight


def _cluster() -> Cluster:
    """The cluster of Volcano's binpack TestNode; p1 and p2 are bound (they count in Used)."""
    return Cluster(
        nodes=[
            node("n1", {"cpu": "2", "memory": "4Gi", "pods": "10"}),
            node("n2", {"cpu": "4", "memory": "16Gi", "pods": "10", "nvidia.com/gpu": "4"}),
            node("n3", {"cpu": "2", "memory": "4Gi", "pods": "10", "example.com/foo": "16"}),
        ],
        pods=[
            pod("c1", "p1", "pg1", {"cpu": "1", "memory": "1Gi"}, node_name="n1", phase="Pending"),
            pod(
                "c1", "p2", "pg1", {"cpu": "1.5", "memory": "0Gi"}, node_name="n3", phase="Pending"
            ),
            pod("c1", "p3", "pg1", {"cpu": "2", "memory": "10Gi", "nvidia.com/gpu": "2"}),
            pod("c1", "p4", "pg1", {"cpu": "3", "memory": "4Gi", "example.com/foo": "3"}),
        ],
        pod_groups=[pod_group("c1", "pg1", "c1")],
        queues=[queue("c1")],
    )


def _ssn(arguments: dict[str, Any], verbosity: int = 5) -> Session:
    entry = {"name": "binpack", "enableNodeOrder": True, "arguments": arguments}
    return session(_cluster(), [entry], verbosity=verbosity)


def _scores(ssn: Session) -> dict[str, dict[str, float]]:
    return {
        name: {n: ssn.node_order_fn(task(ssn, f"c1/{name}"), ssn.nodes[n]) for n in ssn.nodes}
        for name in ("p1", "p2", "p3", "p4")
    }


def _approx(expected: dict[str, dict[str, float]]) -> Any:
    return {k: pytest.approx(v, abs=1e-8) for k, v in expected.items()}


def test_go_case0_weights_for_extended_resources() -> None:
    ssn = _ssn(
        {
            "binpack.weight": 10,
            "binpack.cpu": 2,
            "binpack.memory": 3,
            "binpack.resources": "nvidia.com/gpu, example.com/foo",
            "binpack.resources.nvidia.com/gpu": 7,
            "binpack.resources.example.com/foo": 8,
        }
    )
    assert _scores(ssn) == _approx(
        {
            "p1": {"n1": 700, "n2": 137.5, "n3": 0},
            "p2": {"n1": 0, "n2": 375, "n3": 0},
            "p3": {"n1": 0, "n2": 531.25, "n3": 0},
            "p4": {"n1": 0, "n2": 173.076923076, "n3": 0},
        }
    )


def test_go_case1_single_extended_resource() -> None:
    ssn = _ssn(
        {
            "binpack.weight": 1,
            "binpack.cpu": 1,
            "binpack.memory": 1,
            "binpack.resources": "nvidia.com/gpu",
            "binpack.resources.nvidia.com/gpu": 23,
        }
    )
    assert _scores(ssn) == _approx(
        {
            "p1": {"n1": 75, "n2": 15.625, "n3": 0},
            "p2": {"n1": 0, "n2": 37.5, "n3": 0},
            "p3": {"n1": 0, "n2": 50.5, "n3": 0},
            "p4": {"n1": 0, "n2": 50, "n3": 0},
        }
    )


def test_missing_resource_counts_its_weight_but_scores_zero() -> None:
    # p4 asks for example.com/foo, which n2 lacks: 0 for that term, weight 8 still counts.
    ssn = _ssn({"binpack.resources": "example.com/foo", "binpack.resources.example.com/foo": 8})
    p4 = task(ssn, "c1/p4")
    expected = (3 / 4 + 4 / 16) / (1 + 1 + 8) * 100
    assert ssn.node_order_fn(p4, ssn.nodes["n2"]) == pytest.approx(expected)


def test_default_weights_and_logs() -> None:
    ssn = _ssn({})
    p1 = task(ssn, "c1/p1")
    # (1+1)/2 cpu and (1+1)/4 Gi memory on n1: (1 + 0.5) / 2 * 100.
    assert ssn.node_order_fn(p1, ssn.nodes["n1"]) == 75
    assert "Binpack score for Task c1/p1 on node n1 is: 75" in ssn.log.texts()
    # n3 already uses 1.5 of its 2 cpu: the whole score is 0.
    assert ssn.node_order_fn(p1, ssn.nodes["n3"]) == 0
    assert (
        "task c1/p1 cannot binpack node n3: resource: cpu is not enough, need 1000.000000, "
        "used 1500.000000, allocatable 2000.000000" in ssn.log.texts()
    )
    assert (
        "Leaving binpack plugin. binpack.weight[1], binpack.cpu[1], binpack.memory[1], "
        "cpu[1], memory[1] ..." in ssn.log.texts()
    )


def test_weight_zero_registers_no_node_order() -> None:
    ssn = _ssn({"binpack.weight": 0})
    assert ssn.registered("node_order", "binpack") is None
    assert "binpack weight is zero, skip node order function" in ssn.log.texts()


def test_arguments_follow_go_rules() -> None:
    log = Klog()
    weight = PriorityWeight.from_arguments(
        Arguments(
            {
                "binpack.cpu": -3,
                "binpack.memory": 2.0,  # GetInt refuses floats: default kept
                "binpack.resources": " nvidia.com/gpu ,, example.com/foo",
                "binpack.resources.nvidia.com/gpu": -1,
            },
            log,
        )
    )
    assert (weight.weight, weight.cpu, weight.memory) == (1, 1, 1)
    assert weight.resources == {"nvidia.com/gpu": 1, "example.com/foo": 1, "cpu": 1, "memory": 1}
    assert "Could not parse argument: 2.0 for key binpack.memory to int" in log.texts()
    assert str(weight) == (
        "binpack.weight[1], binpack.cpu[1], binpack.memory[1], nvidia.com/gpu[1], "
        "example.com/foo[1], cpu[1], memory[1]"
    )


def test_resources_not_found_on_any_node_are_logged() -> None:
    ssn = _ssn({"binpack.resources": "example.com/bar"}, verbosity=4)
    assert "resources [example.com/bar] record in weight but not found on any node" in (
        ssn.log.texts()
    )
