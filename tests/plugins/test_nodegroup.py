"""nodegroup: the queue named by the pod decides which node groups it may use."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.api.unschedule_info import FitError
from vspec.model.objects import Cluster

ENTRY = {"name": "nodegroup", "enablePredicate": True, "enableNodeOrder": True}


def _affinity(kind: str, required: list[str], preferred: list[str]) -> dict[str, Any]:
    return {
        kind: {
            "requiredDuringSchedulingIgnoredDuringExecution": required,
            "preferredDuringSchedulingIgnoredDuringExecution": preferred,
        }
    }


def _cluster() -> Cluster:
    def group(name: str, g: str) -> Any:
        return node(name, {"cpu": 4, "pods": 10}, labels={"volcano.sh/nodegroup-name": g})

    q1 = {
        **_affinity("nodeGroupAffinity", ["g1"], ["g2"]),
        **_affinity("nodeGroupAntiAffinity", ["g3"], ["g4"]),
    }
    return Cluster(
        nodes=[
            group("n1", "g1"),
            group("n2", "g2"),
            group("n3", "g3"),
            group("n4", "g4"),
            group("n5", "g5"),
        ],
        queues=[queue("q1", affinity=q1), queue("bare")],
        pod_groups=[pod_group("ns", "pg", "q1")],
        pods=[
            pod("ns", "p1", "pg", {"cpu": 1}, labels={"volcano.sh/queue-name": "q1"}),
            pod(
                "ns",
                "p2",
                "pg",
                {"cpu": 1},
                annotations={"scheduling.volcano.sh/queue-name": "bare"},
            ),
            pod("ns", "p3", "pg", {"cpu": 1}),
        ],
    )


def test_predicate_follows_queue_affinity() -> None:
    ssn = session(_cluster(), [ENTRY])
    p1, p2, p3 = (task(ssn, f"ns/p{i}") for i in (1, 2, 3))
    for name in ("n1", "n2", "n4"):  # required, preferred, preferred anti-affinity (sic)
        ssn.predicate_fn(p1, ssn.nodes[name])
    for name in ("n3", "n5"):
        with pytest.raises(FitError, match="node not satisfy"):
            ssn.predicate_fn(p1, ssn.nodes[name])
    with pytest.raises(FitError):  # a queue without rules admits no node
        ssn.predicate_fn(p2, ssn.nodes["n1"])
    ssn.predicate_fn(p3, ssn.nodes["n5"])  # the pod names no queue


def test_scores() -> None:
    ssn = session(_cluster(), [ENTRY])
    p1, p3 = task(ssn, "ns/p1"), task(ssn, "ns/p3")
    scores = {n: ssn.node_order_fn(p1, ssn.nodes[n]) for n in ("n1", "n2", "n3", "n4", "n5")}
    assert scores == {"n1": 100, "n2": 50, "n3": 0, "n4": -1, "n5": 0}
    assert ssn.node_order_fn(p3, ssn.nodes["n1"]) == 0
