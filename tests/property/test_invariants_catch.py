"""Each invariant holds for the real engine and catches a deliberately broken one.

Every test runs one small scenario twice: with the engine as it is (no violation), then
with one piece of it broken by monkeypatching (the invariant reports it). A check that
could not fail would pass the first half and fail the second.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction
from math import isqrt
from typing import Any, ClassVar

import pytest

from tests.builders import cluster, node, pod, pod_group, run, violations
from tests.conftest import FakeEngine
from vspec.api.job_info import JobInfo
from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.framework import registry, scheduler
from vspec.framework.interface import Action, Plugin
from vspec.framework.session import Session
from vspec.framework.statement import Statement
from vspec.invariants import catalogue, check_invariants, get
from vspec.invariants.checks import DETERMINISTIC_MAX_PAIRS, LOGPRINT_FINDING
from vspec.model.corev1 import Taint
from vspec.model.objects import ObjectMeta, PriorityClass, Queue


def test_catalogue_names_the_contract_invariants() -> None:
    names = [inv.name for inv in catalogue()]
    assert names == [
        "gang-atomicity",
        "no-overcommit",
        "predicates-respected",
        "queue-capability",
        "logprint-correct",
        "deterministic",
        "no-priority-inversion",
        "pipelined-consistent",
        "conservation",
        "drf-victims-fair",
        "preempt-victims-eligible",
        "reclaim-victims-eligible",
        "critical-pods-protected",
        "gang-victims-keep-min",
        "phase-consistent",
        "preempt-for-pipelined",
        "liveness",
        "allocate-order",
        "task-order",
        "pod-limit",
        "best-score",
        "reclaim-until-covered",
        "reclaim-above-deserved",
        "pipelined-within-deserved",
        "quota-respected",
        "pdb-respected",
        "numa-fit",
        "revocable-zones",
        "task-topology-order",
    ]
    for inv in catalogue():
        assert inv.summary and inv.definition and inv.applies


GANG = {
    "actions": "enqueue, allocate",
    "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]}],
}


def gang_world() -> Any:
    # One node with room for 2 of a 3-pod gang: Volcano binds none of them.
    return cluster(
        [node("n0", {"cpu": 2, "memory": "8Gi", "pods": 110})],
        [pod("ns", f"g-w-{i}", "g", {"cpu": 1}) for i in range(3)],
        [pod_group("ns", "g", "q", min_member=3, phase="Inqueue")],
    )


def test_gang_atomicity(monkeypatch: pytest.MonkeyPatch) -> None:
    inputs, result = run(GANG, gang_world())
    assert result.binds == []
    assert violations("gang-atomicity", inputs, result) == []

    monkeypatch.setattr(Statement, "discard", Statement.commit)  # commit partial gangs
    inputs, result = run(GANG, gang_world())
    assert len(result.binds) == 2
    [message] = violations("gang-atomicity", inputs, result)
    assert "job ns/g had 2 pod(s) bound" in message and "minMember 3" in message


ALLOCATE = {"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "priority"}]}]}


def test_no_overcommit(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        return cluster(
            [node("n0", {"cpu": 2, "memory": "8Gi", "pods": 110})],
            [pod("ns", f"j{i}-p", f"j{i}", {"cpu": 1}) for i in range(3)],
            [pod_group("ns", f"j{i}", "q", min_member=1, phase="Inqueue") for i in range(3)],
        )

    inputs, result = run(ALLOCATE, world())
    assert len(result.binds) == 2
    assert violations("no-overcommit", inputs, result) == []

    # Every resource comparison says "fits": a third pod lands on the full node.
    monkeypatch.setattr(Resource, "less_equal_with_resources_name", lambda self, rr, d: [])
    monkeypatch.setattr(Resource, "less_equal", lambda self, rr, d: True)
    inputs, result = run(ALLOCATE, world())
    assert len(result.binds) == 3
    [message] = violations("no-overcommit", inputs, result)
    assert "node n0 holds cpu 3" in message and "above allocatable cpu 2" in message


PREDICATES = {
    "actions": "enqueue, allocate",
    "tiers": [{"plugins": [{"name": "priority"}, {"name": "predicates"}]}],
}


def test_predicates_respected(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        tainted = node(
            "n0",
            {"cpu": 4, "memory": "8Gi", "pods": 110},
            taints=[Taint("dedicated", "x", "NoSchedule")],
        )
        return cluster(
            [tainted, node("n1", {"cpu": 0, "memory": "8Gi", "pods": 110})],
            [pod("ns", "j-p", "j", {"cpu": 1})],
            [pod_group("ns", "j", "q", min_member=1, phase="Inqueue")],
        )

    inputs, result = run(PREDICATES, world())
    assert result.binds == []
    assert violations("predicates-respected", inputs, result) == []

    monkeypatch.setattr(Session, "predicate_for_allocate_action", lambda self, task, node: None)
    inputs, result = run(PREDICATES, world())
    assert [(b.task, b.node) for b in result.binds] == [("ns/j-p", "n0")]
    [message] = violations("predicates-respected", inputs, result)
    assert "untolerated taint {dedicated: x}" in message


PROPORTION = {
    "actions": "enqueue, allocate",
    "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "proportion"}]}],
}


def test_queue_capability(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        capped = Queue(ObjectMeta("q"), capability={"cpu": Fraction(1)})
        return cluster(
            [node("n0", {"cpu": 4, "memory": "8Gi", "pods": 110})],
            [pod("ns", f"j-p-{i}", "j", {"cpu": 1}) for i in range(2)],
            [pod_group("ns", "j", "q", min_member=2, phase="Inqueue")],
            queues=[capped],
        )

    inputs, result = run(PROPORTION, world())
    assert result.binds == []
    assert violations("queue-capability", inputs, result) == []

    monkeypatch.setattr(Session, "allocatable", lambda self, queue, task: True)
    inputs, result = run(PROPORTION, world())
    assert len(result.binds) == 2
    [message] = violations("queue-capability", inputs, result)
    assert "queue q is allocated cpu 2" in message and "capability cpu 1" in message


LOGPRINT = {
    "actions": "print, enqueue, allocate",
    "tiers": [{"plugins": [{"name": "gang"}, {"name": "logprint"}]}],
}


class BrokenLogprint(Plugin):
    """Words the pending line its own way, calls a pending job ready with another job's
    details, and forgets the last job."""

    name: ClassVar[str] = "logprint"

    def on_session_open(self, ssn: Session) -> None:
        def print_jobs(jobs: list[JobInfo]) -> None:
            for job in jobs[:-1]:
                ssn.log.v(1, f"Job {job.namespace}/{job.name} is pending: %!d(string=x)")
                ssn.log.v(1, f"Job {job.namespace}/{job.name} is ready, detail info : Job (x)")

        ssn.add_print_fn(self.name, print_jobs)


def test_logprint_correct(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        return cluster(
            [node("n0", {"cpu": 1, "memory": "8Gi", "pods": 110})],
            [pod("ns", "a-p", "a", {"cpu": 1}), pod("ns", "b-p", "b", {"cpu": 1}, node_name="n0")],
            [
                pod_group("ns", "a", "q", min_member=1, phase="Pending"),
                pod_group("ns", "b", "q", min_member=1, phase="Running"),
            ],
        )

    inputs, result = run(LOGPRINT, world(), verbosity=1)
    assert violations("logprint-correct", inputs, result) == []
    # The seed's %!s(MISSING) is a finding about the plugin, not a violation.
    invariant = get("logprint-correct")
    assert invariant is not None and invariant.findings is not None
    assert invariant.findings(inputs, result) == [LOGPRINT_FINDING]

    monkeypatch.setitem(registry.PLUGINS, "logprint", BrokenLogprint)
    inputs, result = run(LOGPRINT, world(), verbosity=1)
    messages = violations("logprint-correct", inputs, result)
    assert "cycle 0: pending line of ns/a is not the plugin's: " in messages[0]
    assert any("ready line of ns/a: its details do not start with" in m for m in messages)
    assert any("missing 1 'Job ns/b is ready'" in m for m in messages)
    assert any("1 unexpected 'Job ns/a is ready' line(s)" in m for m in messages)
    assert invariant.findings(inputs, result) == []


def test_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        return cluster(
            [
                node("n0", {"cpu": 2, "memory": "8Gi", "pods": 110}),
                node("n1", {"cpu": 2, "memory": "8Gi", "pods": 110}),
            ],
            [pod("ns", "j-p", "j", {"cpu": 1})],
            [pod_group("ns", "j", "q", min_member=1, phase="Inqueue")],
        )

    inputs, result = run(ALLOCATE, world())
    assert violations("deterministic", inputs, result) == []

    calls = iter(range(1000))  # a hidden global: each call picks another node

    def alternate(ssn: Session, task: Any, scores: dict[float, list[Any]]) -> Any:
        best = scores[max(scores)]
        return best[next(calls) % len(best)]

    monkeypatch.setattr("vspec.actions._node_choice.select_best_node", alternate)
    inputs, result = run(ALLOCATE, world())
    assert violations("deterministic", inputs, result) == [
        "a second run with seed 3 gives different binds",
        "a second run with seed 3 gives different tasks",
        "a second run with seed 3 gives different logs",
    ]


def test_deterministic_runs_on_large_clusters_only_when_thorough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above the size threshold a spec run skips the costly re-run; the fuzzer's
    thorough inputs still check it, and catch a nondeterministic engine."""
    side = isqrt(DETERMINISTIC_MAX_PAIRS) + 1
    world = cluster(
        [node(f"n{i}", {"cpu": 2, "memory": "8Gi", "pods": 110}) for i in range(side)],
        [pod("ns", f"j-p{i}", "j", {"cpu": 1}) for i in range(side)],
        [pod_group("ns", "j", "q", min_member=1, phase="Inqueue")],
    )
    calls = iter(range(10**6))

    def alternate(ssn: Session, task: Any, scores: dict[float, list[Any]]) -> Any:
        best = scores[max(scores)]
        return best[next(calls) % len(best)]

    def alternate_row(
        ssn: Session, task: Any, nodes: list[Any], rows: Any, scores: Any, top: Any
    ) -> Any:
        tied = rows[scores == top]
        return nodes[int(tied[next(calls) % len(tied)])]

    monkeypatch.setattr("vspec.actions._node_choice.select_best_node", alternate)
    # A cluster this big takes the columnar path (vspec/framework/columnar.py): its tie-break.
    monkeypatch.setattr("vspec.actions._node_choice._best_scored", alternate_row)
    inputs, result = run(ALLOCATE, world)
    invariant = get("deterministic")
    assert invariant is not None and not invariant.applies_to(inputs)
    thorough = replace(inputs, thorough=True)
    assert invariant.applies_to(thorough)
    assert "a second run with seed 3 gives different binds" in invariant.check(thorough, result)


def test_deterministic_reruns_a_small_spec_only_through_users_code() -> None:
    """vspec's own engine and plugins are re-run by its suite and fuzzer, not by each
    spec run; another engine, or a plugin of the user's (one replacing a built-in too),
    is re-run on every small spec."""
    world = cluster(
        [node("n0", {"cpu": 2, "memory": "8Gi", "pods": 110})],
        [pod("ns", "j-p", "j", {"cpu": 1})],
        [pod_group("ns", "j", "q", min_member=1, phase="Inqueue")],
    )
    inputs, _ = run(ALLOCATE, world)
    invariant = get("deterministic")
    assert invariant is not None and not invariant.applies_to(inputs)
    assert invariant.applies_to(replace(inputs, thorough=True))
    assert invariant.applies_to(replace(inputs, engine=FakeEngine()))

    class Users(Plugin):
        name: ClassVar[str] = "priority"

    Users.__module__ = "vspec_user_plugins.priority"
    with registry.isolated():
        registry.register_plugin(Users)
        assert invariant.applies_to(inputs)


PREEMPT = {
    "actions": "enqueue, allocate, preempt",
    "tiers": [
        {
            "plugins": [
                {
                    "name": "priority",
                    "enableJobOrder": True,
                    "enableTaskOrder": True,
                    "enablePreemptable": True,
                    "enableJobStarving": True,
                }
            ]
        }
    ],
}


def test_no_priority_inversion(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        classes = [PriorityClass(ObjectMeta("high"), 100), PriorityClass(ObjectMeta("low"), 1)]
        return cluster(
            [node("n0", {"cpu": 1, "memory": "8Gi", "pods": 110})],
            [
                pod("ns", "run-p", "run", {"cpu": 1}, node_name="n0"),
                pod("ns", "wait-p", "wait", {"cpu": 1}),
            ],
            [
                pod_group("ns", "run", "q", min_member=1, phase="Running", priority_class="high"),
                pod_group("ns", "wait", "q", min_member=1, phase="Inqueue", priority_class="low"),
            ],
            classes=classes,
        )

    inputs, result = run(PREEMPT, world(), default_flags=False)
    assert result.evictions == []
    assert violations("no-priority-inversion", inputs, result) == []

    monkeypatch.setattr(
        Session, "preemptable", lambda self, preemptor, preemptees: list(preemptees)
    )
    inputs, result = run(PREEMPT, world(), default_flags=False)
    assert [e.task for e in result.evictions] == ["ns/run-p"]
    [message] = violations("no-priority-inversion", inputs, result)
    assert "ns/run-p (job ns/run, priority 100) was preempted" in message


class PipelineAnywhere(Action):
    """Pipelines every pending task on the first node, room or not."""

    name: ClassVar[str] = "allocate"

    def execute(self, ssn: Session) -> None:
        first = ssn.node_list[0]
        for job in ssn.jobs.values():
            for task in job.tasks_in(TaskStatus.Pending):
                ssn.pipeline(task, first.name)


def test_pipelined_consistent(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        return cluster(
            [node("n0", {"cpu": 1, "memory": "8Gi", "pods": 110})],
            [
                pod("ns", "run-p", "run", {"cpu": 1}, node_name="n0"),
                pod("ns", "wait-p", "wait", {"cpu": 1}),
            ],
            [
                pod_group("ns", "run", "q", min_member=1, phase="Running"),
                pod_group("ns", "wait", "q", min_member=1, phase="Inqueue"),
            ],
        )

    inputs, result = run(ALLOCATE, world())
    assert result.binds == [] and violations("pipelined-consistent", inputs, result) == []

    monkeypatch.setitem(registry.ACTIONS, "allocate", PipelineAnywhere)
    inputs, result = run(ALLOCATE, world())
    assert result.pipelined["ns/wait"] == [("ns/wait-p", "n0")]
    [message] = violations("pipelined-consistent", inputs, result)
    assert "node n0: pipelined ns/wait-p need cpu 2" in message


def test_conservation(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        return cluster(
            [node("n0", {"cpu": 2, "memory": "8Gi", "pods": 110})],
            [pod("ns", "j-p", "j", {"cpu": 1}), pod("ns", "k-p", "k", {"cpu": 1})],
            [pod_group("ns", "j", "q", min_member=1, phase="Inqueue")],
        )

    inputs, result = run(ALLOCATE, world())
    assert violations("conservation", inputs, result) == []

    advance = scheduler.advance

    def leaky(cluster: Any, ssn: Session, written: Any) -> Any:
        after = advance(cluster, ssn, written)
        after.pods = after.pods[1:]
        return after

    monkeypatch.setattr(scheduler, "advance", leaky)
    inputs, result = run(ALLOCATE, world())
    [message] = violations("conservation", inputs, result)
    assert message == "final cluster: pods lost ['ns/j-p'], pods appeared []"


def test_check_invariants_selects_requests_and_disables() -> None:
    inputs, result = run(GANG, gang_world())
    assert check_invariants(inputs.conf, inputs.cluster, result, engine=inputs.engine, seed=3) == []
    assert check_invariants(
        inputs.conf,
        inputs.cluster,
        result,
        engine=inputs.engine,
        requested=["nonsense"],
        disabled=["deterministic"],
        seed=3,
    ) == [
        "invariants: unknown invariant 'nonsense' (known: gang-atomicity, no-overcommit, "
        "predicates-respected, queue-capability, logprint-correct, deterministic, "
        "no-priority-inversion, pipelined-consistent, conservation, drf-victims-fair, "
        "preempt-victims-eligible, "
        "reclaim-victims-eligible, critical-pods-protected, gang-victims-keep-min, "
        "phase-consistent, preempt-for-pipelined, liveness, allocate-order, task-order, "
        "pod-limit, best-score, reclaim-until-covered, reclaim-above-deserved, "
        "pipelined-within-deserved, quota-respected, pdb-respected, numa-fit, revocable-zones, "
        "task-topology-order)"
    ]


@pytest.fixture(autouse=True)
def _builtins_loaded() -> Iterator[None]:
    registry.load_builtins()  # before monkeypatch.setitem replaces an entry
    yield
