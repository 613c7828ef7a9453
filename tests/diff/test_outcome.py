"""What the diff compares: nodes exactly unless tied, print lines as multisets, errors."""

from __future__ import annotations

from collections import Counter

from vspec.diff.outcome import Outcome, compare, ties_of
from vspec.explain.records import Attempt, TaskExplanation
from vspec.model.result import (
    Bind,
    Eviction,
    LogLine,
    LogRecords,
    ProbeAnswer,
    Severity,
    SimulationResult,
)


def _outcome(binds: dict[str, str], printed: tuple[str, ...] | list[str] = ()) -> Outcome:
    return Outcome(
        binds={(0, task): node for task, node in binds.items()},
        printed=Counter((0, text) for text in printed),
    )


def test_a_node_that_tied_for_the_best_score_agrees() -> None:
    ties = {(0, "ns/a"): frozenset({"n1", "n2"})}
    comparison = compare(_outcome({"ns/a": "n1"}), _outcome({"ns/a": "n2"}), ties)
    assert comparison.differences == ()
    assert comparison.other_ties


def test_a_node_outside_the_tie_disagrees() -> None:
    ties = {(0, "ns/a"): frozenset({"n1", "n2"})}
    comparison = compare(_outcome({"ns/a": "n1"}), _outcome({"ns/a": "n3"}), ties)
    assert [d.aspect for d in comparison.differences] == ["binds"]


def test_without_a_tie_the_node_is_exact() -> None:
    comparison = compare(_outcome({"ns/a": "n1"}), _outcome({"ns/a": "n2"}), {})
    assert [d.text for d in comparison.differences] == ["ns/a (session 0): vspec n1; volcano n2"]


def test_other_nodes_after_a_tie_broken_otherwise_agree_when_the_same_tasks_were_placed() -> None:
    ties = {(0, "ns/a"): frozenset({"n1", "n2"})}
    model = _outcome({"ns/a": "n1", "ns/b": "n2"})
    assert compare(model, _outcome({"ns/a": "n2", "ns/b": "n1"}), ties).differences == ()
    # A task placed on one side only is a disagreement, tie or not.
    unplaced = compare(model, _outcome({"ns/a": "n2"}), ties)
    assert [d.text for d in unplaced.differences] == ["ns/b (session 0): vspec n2; volcano -"]


def test_print_lines_are_a_multiset() -> None:
    model = _outcome({}, ["Job a is pending", "Job b is pending"])
    assert (
        compare(model, _outcome({}, ["Job b is pending", "Job a is pending"]), {}).differences == ()
    )
    twice = compare(model, _outcome({}, ["Job a is pending"] * 2), {})
    assert [d.text for d in twice.differences] == [
        "vspec only: (0, 'Job b is pending')",
        "volcano only: (0, 'Job a is pending')",
    ]


def test_an_error_on_one_side_only_disagrees_and_on_both_agrees() -> None:
    failed = Outcome.failed("EngineError: panic")
    assert [d.aspect for d in compare(_outcome({}), failed, {}).differences] == ["error"]
    assert compare(failed, Outcome.failed("EngineError: other words"), {}).differences == ()


def test_an_outcome_keeps_the_print_lines_of_either_engine_and_not_the_others() -> None:
    logs = LogRecords()
    for source, text in (("logprint.go:53", "a"), ("seed.go:99", "b"), ("allocate.go:1", "c")):
        logs.append(LogLine(1, Severity.INFO, text, 0, source))
    result = SimulationResult(
        binds=[Bind("ns/a", "n1")], evictions=[Eviction("ns/b", "preempt")], logs=logs
    )
    outcome = Outcome.of(result)
    assert outcome.printed == Counter({(0, "a"): 1, (0, "b"): 1})
    assert outcome.evictions == Counter({(0, "ns/b", "preempt"): 1})


def test_ties_are_read_from_the_last_attempt_that_chose_a_node() -> None:
    task = TaskExplanation("ns/a", "ns/j", "q", 0, "Allocated", "n2", "")
    task.attempts = [
        Attempt(0, "allocate", chosen="n1", tied=["n1", "n3"]),
        Attempt(0, "backfill", chosen="n2"),
    ]
    assert ties_of([task]) == {(0, "ns/a"): frozenset()}


def test_printed_lines_mask_uids_clock_fractions_and_the_map_order_of_a_job_s_tasks() -> None:
    def printed(text: str) -> Counter[tuple[int, str]]:
        logs = LogRecords()
        logs.append(LogLine(1, Severity.INFO, text, 0, "logprint.go:56"))
        return Outcome.of(SimulationResult(logs=logs)).printed

    uid = "0e108913-5aeb-4cd9-a56a-e9713fdfefe6"
    model = printed(
        f"Job j TransitionID:{uid} LastTransitionTime:2025-01-01 00:00:00 +0000 UTC"
        "\n\t 0: Task a\n\t 1: Task b"
    )
    real = printed(
        "Job j TransitionID:ea6cbaf4-cabe-4c61-ac86-b54f974cd927 "
        "LastTransitionTime:2025-01-01 00:00:00.01121 +0000 UTC\n\t 0: Task b\n\t 1: Task a"
    )
    assert model == real


def test_the_task_a_condition_names_as_the_origin_is_not_compared() -> None:
    from vspec.model.corev1 import Condition
    from vspec.model.result import PodGroupResult

    def groups(task: str, reason: str = "0/2 nodes") -> dict[str, object]:
        message = f"1/2 tasks in gang unschedulable. Origin reason is {task}: {reason}"
        result = SimulationResult(
            pod_groups={
                "ns/j": PodGroupResult("Inqueue", "Inqueue", [Condition("X", message=message)])
            }
        )
        return dict(Outcome.of(result).pod_groups)

    assert groups("j-r0-0") == groups("j-r1-0")
    # Nor its fit errors, which are that task's (Volcano v1.10.0 and v1.11.0 gave both of
    # these from run to run for one generated spec).
    mixed = "0/3 nodes are unavailable: 1 Insufficient cpu, 2 Insufficient pods."
    assert groups("j-r0-2", mixed) == groups(
        "j-r1-1", "0/3 nodes are unavailable: 3 Insufficient pods."
    )
    assert groups("j-r0-2") != dict(
        Outcome.of(
            SimulationResult(pod_groups={"ns/j": PodGroupResult("Inqueue", "Inqueue", [])})
        ).pod_groups
    )


def test_probe_answers_are_compared_key_by_key() -> None:
    mine = ProbeAnswer(
        predicates={"n1": None, "n2": "node(s) had untolerated taint"},
        scores={"n1": 10.0, "n2": 0.0},
        best=["n1", "n2"],
        victims=["ns/a", "ns/b"],
    )
    same = ProbeAnswer(
        predicates={"n1": None, "n2": "node(s) had untolerated taint"},
        scores={"n1": 10.000000001, "n2": 0.0},  # within the spec's float rule
        best=["n2", "n1"],  # the tied nodes, in another order
        victims=["ns/b", "ns/a"],  # a set
    )
    assert not compare(Outcome(probes=(mine,)), Outcome(probes=(same,)), {}).differences
    other = ProbeAnswer(
        predicates={"n1": "node(s) didn't match", "n2": "node(s) had untolerated taint"},
        scores={"n1": 10.0, "n2": 1.0},
        best=["n1"],
        victims=["ns/a"],
    )
    texts = [
        d.text for d in compare(Outcome(probes=(mine,)), Outcome(probes=(other,)), {}).differences
    ]
    assert texts == [
        "probes[0] predicates.n1: vspec passes; volcano node(s) didn't match",
        "probes[0] scores.n2: vspec 0.0; volcano 1.0",
        "probes[0] bestNode: vspec ['n1', 'n2']; volcano ['n1']",
        "probes[0] victims: vspec ['ns/a', 'ns/b']; volcano ['ns/a']",
    ]


def test_a_probe_s_missing_object_agrees_whatever_each_engine_says_of_it() -> None:
    vspec_says, volcano_says = ProbeAnswer(missing="no pod ns/x"), ProbeAnswer(missing="not found")
    assert not compare(
        Outcome(probes=(vspec_says,)), Outcome(probes=(volcano_says,)), {}
    ).differences
    [difference] = compare(
        Outcome(probes=(vspec_says,)), Outcome(probes=(ProbeAnswer(order=["a"]),)), {}
    ).differences
    assert difference.text == "probes[0] probe: vspec no pod ns/x; volcano answered"
