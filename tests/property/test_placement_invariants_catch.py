"""The placement invariants (pod-limit, best-score): each holds for the real engine on a
small scenario and reports the same scenario run on an engine broken on purpose."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import cluster, node, pod, pod_group, run, violations
from vspec.k8s import scores
from vspec.plugins import binpack, predicates

SEED_TIERS = [
    {"plugins": [{"name": n} for n in ("priority", "gang", "conformance")]},
    {"plugins": [{"name": n} for n in ("drf", "predicates", "proportion", "nodeorder", "binpack")]},
]


def seed_conf(actions: str = "enqueue, allocate, backfill") -> dict[str, Any]:
    return {"actions": actions, "tiers": SEED_TIERS}


def full_node_world() -> Any:
    """Two pod slots, one held by a terminating pod that frees the cpu, and a pending pod."""
    return cluster(
        [node("n0", {"cpu": 2, "memory": "4Gi", "pods": 2})],
        [
            pod("ns", "old-0", "old", {"cpu": 1}, node_name="n0"),
            pod("ns", "gone-0", "gone", {"cpu": 1}, node_name="n0", deleting=True),
            pod("ns", "new-0", "new", {"cpu": 1}),
        ],
        [
            pod_group("ns", "old", "q", min_member=1, phase="Running"),
            pod_group("ns", "gone", "q", min_member=1, phase="Running"),
            pod_group("ns", "new", "q", min_member=1, phase="Inqueue"),
        ],
    )


def test_pod_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pending pod may be pipelined onto the terminating pod's cpu, not into a third
    slot."""
    inputs, result = run(seed_conf(), full_node_world())
    assert result.binds == [] and not any(result.pipelined.values())
    assert violations("pod-limit", inputs, result) == []

    # The pod-count filter lets a node take one pod past its limit.
    original = predicates.PredicatesPlugin.predicate

    def loose(self: Any, task: Any, node_info: Any) -> None:
        node_info.allocatable.max_task_num += 1
        try:
            original(self, task, node_info)
        finally:
            node_info.allocatable.max_task_num -= 1

    monkeypatch.setattr(predicates.PredicatesPlugin, "predicate", loose)
    inputs, result = run(seed_conf(), full_node_world())
    assert result.pipelined["ns/new"] == [("ns/new-0", "n0")]
    [message] = violations("pod-limit", inputs, result)
    assert "node n0 ends with 3 pods" in message and "pod limit 2" in message


def test_pod_limit_leaves_preempts_pipelines_alone() -> None:
    """Volcano v1.11's preempt passes the pod-count failure as resolvable and, needing no
    victim (the terminating pod frees the cpu and a slot), pipelines the pending pod onto
    the full node: not a violation, the fuzzer's first false alarm of pod-limit."""
    inputs, result = run(seed_conf("enqueue, allocate, preempt"), full_node_world())
    assert result.pipelined["ns/new"] == [("ns/new-0", "n0")]
    assert violations("pod-limit", inputs, result) == []


def score_world() -> Any:
    """n0 already half used, n1 empty: nodeorder's least-requested and balanced scores
    outweigh binpack's preference for the fuller node."""
    return cluster(
        [
            node("n0", {"cpu": 4, "memory": "4Gi", "pods": 110}),
            node("n1", {"cpu": 4, "memory": "4Gi", "pods": 110}),
        ],
        [
            pod("ns", "a-0", "a", {"cpu": 2, "memory": "1Gi"}, node_name="n0"),
            pod("ns", "b-0", "b", {"cpu": 1, "memory": "1Gi"}),
        ],
        [
            pod_group("ns", "a", "q", min_member=1, phase="Running"),
            pod_group("ns", "b", "q", min_member=1, phase="Inqueue"),
        ],
    )


def test_best_score(monkeypatch: pytest.MonkeyPatch) -> None:
    inputs, result = run(seed_conf(), score_world())
    assert [(b.task, b.node) for b in result.binds] == [("ns/b-0", "n1")]
    assert violations("best-score", inputs, result) == []

    # Least-requested prefers the fullest node.
    monkeypatch.setattr(
        scores, "_least_requested", lambda requested, capacity: requested * 100 // capacity
    )
    inputs, result = run(seed_conf(), score_world())
    assert [(b.task, b.node) for b in result.binds] == [("ns/b-0", "n0")]
    [message] = violations("best-score", inputs, result)
    assert "ns/b-0 bound to n0: its score 486.5 is below the best 500" in message


def test_best_score_binpack(monkeypatch: pytest.MonkeyPatch) -> None:
    """With binpack weighed up, the fuller node wins; binpack forgetting what a node
    holds sends the pod to the empty one."""
    tiers = [dict(t) for t in SEED_TIERS]
    tiers[1] = {
        "plugins": [
            {"name": "predicates"},
            {"name": "nodeorder"},
            {"name": "binpack", "arguments": {"binpack.weight": 10}},
        ]
    }
    settings = {"actions": "enqueue, allocate", "tiers": tiers}
    inputs, result = run(settings, score_world())
    assert [(b.task, b.node) for b in result.binds] == [("ns/b-0", "n0")]
    assert violations("best-score", inputs, result) == []

    original = binpack.binpacking_score

    def forgetful(task: Any, node_info: Any, terms: Any, weight: Any, log: Any) -> float:
        used, node_info.used = node_info.used, node_info.used.clone().sub(node_info.used)
        try:
            return original(task, node_info, terms, weight, log)
        finally:
            node_info.used = used

    monkeypatch.setattr(binpack, "binpacking_score", forgetful)
    inputs, result = run(settings, score_world())
    assert [(b.task, b.node) for b in result.binds] == [("ns/b-0", "n1")]
    [message] = violations("best-score", inputs, result)
    assert "ns/b-0 bound to n1" in message


def test_best_score_without_predicates_scores_the_opening_state() -> None:
    """Quirk kept: only predicates' AllocateFunc updates ssn.NodeMap, so without it
    nodeorder scores the second task against the nodes as the session opened."""
    world = cluster(
        [node(f"n{i}", {"cpu": 4, "memory": "4Gi", "pods": 110}) for i in range(2)],
        [
            pod("ns", "a-0", "a", {"cpu": 1}, node_name="n1"),
            *(pod("ns", f"b-{i}", "b", {"cpu": 2}) for i in range(2)),
        ],
        [
            pod_group("ns", "a", "q", min_member=1, phase="Running"),
            pod_group("ns", "b", "q", min_member=2, phase="Inqueue"),
        ],
    )
    settings = {"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "nodeorder"}]}]}
    inputs, result = run(settings, world)
    # n0 looks emptier for both tasks, though the first one filled half of it.
    assert [(b.task, b.node) for b in result.binds] == [("ns/b-0", "n0"), ("ns/b-1", "n0")]
    assert violations("best-score", inputs, result) == []
