"""The preempt action, driven through ``simulate`` with the tiny plugins of
``preemption_fixtures`` so that each test checks the action's own rules."""

from __future__ import annotations

from typing import Any

import pytest

from tests.actions.preemption_fixtures import (
    PRIORITY_CLASSES,
    VICTIM_LABEL,
    conf,
    evicted,
    lines,
    priority,
    queue_verdicts,
    run,
)
from tests.builders import cluster, node, pod, pod_group, queue
from vspec.framework.registry import get_action
from vspec.model.objects import Cluster

PREEMPT = "preempt"


def two_jobs_one_node(*, high_cpu: str = "1", low_pods: int = 2, **high: Any) -> Cluster:
    """A low-priority job filling n1 (2 cpu) and a pending high-priority job, one queue."""
    return cluster(
        [node("n1", {"cpu": "2", "memory": "100Gi", "pods": "10"})],
        [
            pod("c1", f"low-{i}", "low", {"cpu": "1", "memory": "1Gi"}, node_name="n1")
            for i in range(low_pods)
        ]
        + [pod("c1", "high-0", "high", {"cpu": high_cpu, "memory": "1Gi"}, **high)],
        [
            pod_group("c1", "low", "q1", min_member=1, phase="Running", priority_class="low"),
            pod_group("c1", "high", "q1", min_member=1, phase="Running", priority_class="high"),
        ],
        queues=[queue("q1")],
        classes=PRIORITY_CLASSES,
    )


def test_high_priority_job_preempts_and_is_pipelined_not_bound() -> None:
    result = run(conf(PREEMPT, priority(), queue_verdicts()), two_jobs_one_node())
    # The victim heap pops the task TaskOrder would place last (c1-low-1 > c1-low-0).
    assert evicted(result) == [("c1/low-1", "preempt")]
    assert result.pipelined["c1/high"] == [("c1/high-0", "n1")]
    assert result.binds == []
    log = lines(result)
    assert "Added Queue <q1> for Job <c1/low>" in log
    assert "Considering Task <c1/high-0> on Node <n1>." in log
    assert "Try to preempt Task <c1/low-1> for Task <c1/high-0>" in log
    assert (
        "Preempted <cpu 1000.00, memory 1073741824.00, pods 1.00> for Task <c1/high-0> "
        "requested <cpu 1000.00, memory 1073741824.00, pods 1.00>." in log
    )


def test_evicts_only_until_the_preemptor_fits() -> None:
    world = two_jobs_one_node(low_pods=2, high_cpu="2")
    result = run(conf(PREEMPT, priority(), queue_verdicts()), world)
    assert sorted(evicted(result)) == [("c1/low-0", "preempt"), ("c1/low-1", "preempt")]
    one = run(conf(PREEMPT, priority(), queue_verdicts()), two_jobs_one_node(low_pods=2))
    assert len(one.evictions) == 1


def test_no_eviction_when_idle_resources_suffice() -> None:
    result = run(conf(PREEMPT, priority(), queue_verdicts()), two_jobs_one_node(low_pods=1))
    assert result.evictions == []
    assert result.pipelined["c1/high"] == [("c1/high-0", "n1")]


def test_preemption_policy_never_is_refused_with_volcanos_message() -> None:
    world = two_jobs_one_node(preemption_policy="Never")
    result = run(conf(PREEMPT, priority(), queue_verdicts()), world)
    assert result.evictions == []
    assert result.pipelined["c1/high"] == []
    assert (
        "Preemptor <c1/high-0> failed to preempt Task , err: not eligible to preempt other "
        "tasks due to preemptionPolicy is Never" in lines(result)
    )


def test_tasks_of_other_queues_are_never_preempted() -> None:
    world = cluster(
        [node("n1", {"cpu": "2", "memory": "100Gi", "pods": "10"})],
        [
            pod("c1", "low-0", "low", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "low-1", "low", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "high-0", "high", {"cpu": "1", "memory": "1Gi"}),
        ],
        [
            pod_group("c1", "low", "q2", min_member=1, phase="Running", priority_class="low"),
            pod_group("c1", "high", "q1", min_member=1, phase="Running", priority_class="high"),
        ],
        queues=[queue("q1"), queue("q2")],
        classes=PRIORITY_CLASSES,
    )
    result = run(conf(PREEMPT, priority(), queue_verdicts()), world)
    assert result.evictions == []


def test_bound_tasks_are_preemptable_and_unpreemptable_ones_are_kept() -> None:
    world = cluster(
        [node("n1", {"cpu": "2", "memory": "100Gi", "pods": "10"})],
        [
            pod(
                "c1", "low-0", "low", {"cpu": "1", "memory": "1Gi"}, node_name="n1", phase="Pending"
            ),  # Bound
            pod(
                "c1",
                "low-1",
                "low",
                {"cpu": "1", "memory": "1Gi"},
                node_name="n1",
                labels={"volcano.sh/preemptable": "false"},
            ),
            pod("c1", "high-0", "high", {"cpu": "1", "memory": "1Gi"}),
        ],
        [
            pod_group("c1", "low", "q1", min_member=1, phase="Running", priority_class="low"),
            pod_group("c1", "high", "q1", min_member=1, phase="Running", priority_class="high"),
        ],
        queues=[queue("q1")],
        classes=PRIORITY_CLASSES,
    )
    result = run(conf(PREEMPT, priority(), queue_verdicts()), world)
    assert evicted(result) == [("c1/low-0", "preempt")]


def test_statement_is_discarded_when_the_job_is_not_pipelined() -> None:
    # A gang of two 2-cpu tasks: one fits after evicting both low tasks, the second
    # cannot, so the job is not pipelined and the evictions are rolled back.
    world = cluster(
        [node("n1", {"cpu": "2", "memory": "100Gi", "pods": "10"})],
        [
            pod("c1", "low-0", "low", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "low-1", "low", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "high-0", "high", {"cpu": "2", "memory": "1Gi"}),
            pod("c1", "high-1", "high", {"cpu": "2", "memory": "1Gi"}),
        ],
        [
            pod_group("c1", "low", "q1", min_member=1, phase="Running", priority_class="low"),
            pod_group("c1", "high", "q1", min_member=2, phase="Running", priority_class="high"),
        ],
        queues=[queue("q1")],
        classes=PRIORITY_CLASSES,
    )
    result = run(conf(PREEMPT, priority(), queue_verdicts()), world)
    assert result.evictions == []
    assert result.pipelined["c1/high"] == []
    assert "Discarding operations ..." in lines(result)
    assert result.tasks["c1/low-0"].status == "Running"


def test_evictions_on_a_node_that_did_not_fit_stay_in_the_statement() -> None:
    # The queue is never Allocatable, so every victim is evicted on each node and the
    # preemptor still does not fit; the job is pipelined by default (no JobPipelined
    # plugin enabled) and the statement, evictions included, is committed.
    world = cluster(
        [
            node("n1", {"cpu": "1", "memory": "100Gi", "pods": "10"}),
            node("n2", {"cpu": "1", "memory": "100Gi", "pods": "10"}),
        ],
        [
            pod("c1", "low-0", "low", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "low-1", "low", {"cpu": "1", "memory": "1Gi"}, node_name="n2"),
            pod("c1", "high-0", "high", {"cpu": "1", "memory": "1Gi"}),
        ],
        [
            pod_group("c1", "low", "q1", min_member=1, phase="Running", priority_class="low"),
            pod_group("c1", "high", "q1", min_member=1, phase="Running", priority_class="high"),
        ],
        queues=[queue("q1")],
        classes=PRIORITY_CLASSES,
    )
    sched = conf(PREEMPT, priority(enableJobPipelined=False), queue_verdicts(notAllocatable=["q1"]))
    result = run(sched, world)
    assert sorted(evicted(result)) == [("c1/low-0", "preempt"), ("c1/low-1", "preempt")]
    assert result.pipelined["c1/high"] == []


def test_within_job_preemption_evicts_lower_priority_tasks_of_the_same_job() -> None:
    world = cluster(
        [node("n1", {"cpu": "1", "memory": "100Gi", "pods": "10"})],
        [
            pod("c1", "job-0", "job", {"cpu": "1", "memory": "1Gi"}, node_name="n1", priority=1),
            pod("c1", "job-1", "job", {"cpu": "1", "memory": "1Gi"}, priority=50),
        ],
        [pod_group("c1", "job", "q1", min_member=1, phase="Running")],
        queues=[queue("q1")],
        classes=PRIORITY_CLASSES,
    )
    result = run(conf(PREEMPT, priority(), queue_verdicts()), world)
    assert evicted(result) == [("c1/job-0", "preempt")]
    assert result.pipelined["c1/job"] == [("c1/job-1", "n1")]


def test_within_job_pass_runs_once_per_queue() -> None:
    # Two queues, one starving job each, nothing to preempt. q1: between-jobs tries a-0,
    # within-jobs tries a-0 and b-0. q2: b's task heap is the one q1's within-job pass
    # rebuilt and popped, so between-jobs finds it empty; within-jobs tries both again.
    world = cluster(
        [node("n1", {"cpu": "1", "memory": "100Gi", "pods": "10"})],
        [
            pod("c1", "full-0", "full", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "a-0", "a", {"cpu": "1", "memory": "1Gi"}),
            pod("c1", "b-0", "b", {"cpu": "1", "memory": "1Gi"}),
        ],
        [
            pod_group("c1", "a", "q1", min_member=1, phase="Running"),
            pod_group("c1", "b", "q2", min_member=1, phase="Running"),
            pod_group("c1", "full", "q1", min_member=1, phase="Running"),
        ],
        queues=[queue("q1"), queue("q2")],
        classes=PRIORITY_CLASSES,
    )
    result = run(conf(PREEMPT, priority(), queue_verdicts()), world)
    log = lines(result)
    assert result.evictions == []
    assert log.count("Considering Task <c1/a-0> on Node <n1>.") == 3
    assert log.count("Considering Task <c1/b-0> on Node <n1>.") == 2
    assert "No preemptor task in job <c1/b>." in log
    no_victims = (
        "No validated victims on Node <n1>: not enough resources: requested "
        "<cpu 1000.00, memory 1073741824.00, pods 1.00>, but future idle "
        "<cpu 0.00, memory 106300440576.00, pods 9.00>"
    )
    assert log.count(no_victims) == 5


def test_victim_tasks_are_evicted_at_the_end_of_the_action() -> None:
    world = cluster(
        [node("n1", {"cpu": "4", "memory": "100Gi", "pods": "10"})],
        [
            pod(
                "c1",
                "job-0",
                "job",
                {"cpu": "1", "memory": "1Gi"},
                node_name="n1",
                labels={VICTIM_LABEL: "true"},
            ),
            pod("c1", "job-1", "job", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
        ],
        [pod_group("c1", "job", "q1", min_member=1, phase="Running")],
        queues=[queue("q1")],
        classes=PRIORITY_CLASSES,
    )
    sched = conf(PREEMPT, priority(), {"name": "tpre-victims", "enabledVictim": True})
    assert evicted(run(sched, world)) == [("c1/job-0", "evict")]
    disabled = conf(PREEMPT, priority(), {"name": "tpre-victims"})
    assert run(disabled, world).evictions == []


def test_without_a_starving_verdict_nothing_is_preempted() -> None:
    # JobStarving with no enabled plugin is false: no job is a preemptor.
    result = run(
        conf(PREEMPT, priority(enableJobStarving=False), queue_verdicts()), two_jobs_one_node()
    )
    assert result.evictions == []
    assert result.pipelined["c1/high"] == []


@pytest.mark.skipif(get_action("allocate") is None, reason="allocate action not available")
def test_pipelined_preemptor_is_bound_by_allocate_in_the_next_cycle() -> None:
    result = run(
        conf("allocate, preempt", priority(), queue_verdicts()), two_jobs_one_node(), cycles=2
    )
    assert [(e.task, e.cycle) for e in result.evictions] == [("c1/low-1", 0)]
    assert [(b.task, b.node, b.cycle) for b in result.binds] == [("c1/high-0", "n1", 1)]
