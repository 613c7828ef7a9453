"""``SortNodes``: descending score, equals in scoring order; a replay puts the node the
replayed run took ahead of its equals, and only of them."""

from __future__ import annotations

from vspec.api.node_info import NodeInfo
from vspec.util.scheduler_helper import sort_nodes


def _names(nodes: list[NodeInfo]) -> list[str]:
    return [node.name for node in nodes]


def test_descending_score_and_scoring_order_within_a_score() -> None:
    a, b, c, d = (NodeInfo(None, name) for name in "abcd")
    assert _names(sort_nodes({1.0: [a, b], 5.0: [c], 3.0: [d]})) == ["c", "d", "a", "b"]


def test_a_replay_puts_the_taken_node_first_among_its_equals_only() -> None:
    a, b, c, d = (NodeInfo(None, name) for name in "abcd")
    scores = {5.0: [a, b, c], 1.0: [d]}
    assert _names(sort_nodes(scores, "c")) == ["c", "a", "b", "d"]
    assert _names(sort_nodes(scores, "d")) == ["a", "b", "c", "d"]  # not above a higher score
    assert _names(sort_nodes(scores, "x")) == ["a", "b", "c", "d"]
