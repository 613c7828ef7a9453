"""The one comparison of probe answers with a spec's expectations, which judges both
engines: what fails, with which message, and what cannot be decided."""

from __future__ import annotations

from vspec.model.probe_answers import judge
from vspec.model.probes import JobProbe, OrderProbe, TaskProbe, VictimProbe, VictimTasksProbe
from vspec.model.result import ProbeAnswer, ProbeFailure


def test_predicates_pass_fail_and_message_substrings() -> None:
    probe = TaskProbe("c1/p1", predicates={"n1": True, "n2": "didn't match", "n3": False})
    fine = ProbeAnswer(predicates={"n1": None, "n2": "node(s) didn't match", "n3": "taint"})
    assert judge([probe], [fine]).failures == []
    wrong = ProbeAnswer(predicates={"n1": "Insufficient cpu", "n2": "taint", "n3": None})
    assert judge([probe], [wrong]).failures == [
        ProbeFailure(0, "predicates.n1", "expected to pass, failed: Insufficient cpu"),
        ProbeFailure(
            0, "predicates.n2", 'expected a failure containing "didn\'t match", failed: taint'
        ),
        ProbeFailure(0, "predicates.n3", "expected to fail, passed"),
    ]


def test_a_key_left_unanswered_fails_and_never_passes() -> None:
    probes = [
        TaskProbe("c1/p1", predicates={"n1": True}, scores={"n1": 0}),
        JobProbe("c1/pg1", ready=True, valid=True),
        VictimTasksProbe(["c1/p1"], victims=[]),
    ]
    failures = judge(probes, [ProbeAnswer(), ProbeAnswer(), ProbeAnswer()]).failures
    assert [(f.probe, f.key) for f in failures] == [
        (0, "predicates.n1"),
        (0, "scores.n1"),
        (1, "ready"),
        (1, "valid"),
        (2, "victims"),
    ]


def test_scores_are_relative_unless_the_probe_gives_a_tolerance() -> None:
    answer = ProbeAnswer(scores={"n1": 30.001}, plugin_scores={"binpack": {"n1": 19.5}})
    strict = TaskProbe("c1/p1", scores={"n1": 30}, plugin_scores={"binpack": {"n1": 20}})
    assert judge([strict], [answer]).failures == [
        ProbeFailure(0, "scores.n1", "expected 30, got 30.001"),
        ProbeFailure(0, "pluginScores.binpack.n1", "expected 20, got 19.5"),
    ]
    loose = TaskProbe(
        "c1/p1", scores={"n1": 30}, plugin_scores={"binpack": {"n1": 20}}, tolerance=0.5
    )
    assert judge([loose], [answer]).failures == []
    # A score that is not a finite number arrives as None and matches nothing.
    assert judge([loose], [ProbeAnswer(scores={"n1": None})]).failures[0].message == (
        "expected 30, got None"
    )


def test_a_best_node_among_ties_is_undecided_unless_it_is_not_among_them() -> None:
    probe = TaskProbe("c1/p1", best_node="n1")
    assert judge([probe], [ProbeAnswer(best=["n1"])]).failures == []
    assert judge([probe], [ProbeAnswer(best=["n2"])]).failures == [
        ProbeFailure(0, "bestNode", "expected n1, got n2")
    ]
    tied = judge([probe], [ProbeAnswer(best=["n1", "n2"])])
    assert tied.failures == []
    assert tied.undecided == [
        "probes[0] bestNode: ['n1', 'n2'] tie for the best score and Volcano draws at random"
    ]
    elsewhere = judge([probe], [ProbeAnswer(best=["n2", "n3"])])
    assert elsewhere.undecided == []
    assert [f.key for f in elsewhere.failures] == ["bestNode"]


def test_job_votes_and_validity() -> None:
    probe = JobProbe("c1/pg1", enqueueable=True, starving=False, valid="minAvailable")
    answer = ProbeAnswer(
        votes={"enqueueable": False, "starving": False},
        valid=(False, "NotEnoughPods: minAvailable 3 > 2 pods"),
    )
    assert judge([probe], [answer]).failures == [
        ProbeFailure(0, "enqueueable", "expected true, got false")
    ]
    passed = ProbeAnswer(votes={"enqueueable": True, "starving": False}, valid=(True, ""))
    assert judge([probe], [passed]).failures == [
        ProbeFailure(0, "valid", "expected invalid with 'minAvailable', got valid")
    ]


def test_victims_are_a_set_orders_a_sequence_and_a_missing_object_names_itself() -> None:
    probes = [
        VictimProbe("preemptor", "c1/p9", ["c1/p1", "c1/p2"], victims=["c1/p2", "c1/p1"]),
        OrderProbe("jobs", ["c1/b", "c1/a"], expect=["c1/a", "c1/b"]),
        VictimProbe("reclaimer", "c1/nope", [], victims=[]),
    ]
    answers = [
        ProbeAnswer(victims=["c1/p1", "c1/p2"]),
        ProbeAnswer(order=["c1/b", "c1/a"]),
        ProbeAnswer(missing="no pod 'c1/nope' in the cluster"),
    ]
    assert judge(probes, answers).failures == [
        ProbeFailure(1, "expect", "expected order ['c1/a', 'c1/b'], got ['c1/b', 'c1/a']"),
        ProbeFailure(2, "probe", "no pod 'c1/nope' in the cluster"),
    ]
