"""The reclaim action, driven through ``simulate`` with the tiny plugins of
``preemption_fixtures`` (every candidate is reclaimable; queue verdicts from arguments)."""

from __future__ import annotations

from typing import Any

from tests.actions.preemption_fixtures import (
    PRIORITY_CLASSES,
    conf,
    evicted,
    lines,
    priority,
    queue_verdicts,
    reject_nodes,
    run,
)
from tests.builders import cluster, node, pod, pod_group, queue
from vspec.model.objects import Cluster
from vspec.model.result import Severity

RECLAIM = "reclaim"
ONE_CPU = "cpu 1000.00, memory 1073741824.00, pods 1.00"


def hog_and_want(
    *,
    cpu: str = "2",
    hog: int = 2,
    want_cpu: str = "1",
    hog_queue: str = "q1",
    reclaimable: bool | None = None,
    **want: Any,
) -> Cluster:
    """Job ``hog`` (queue ``hog_queue``) runs ``hog`` 1-cpu tasks on n1; job ``want``
    (queue q2) has one pending task."""
    return cluster(
        [node("n1", {"cpu": cpu, "memory": "100Gi", "pods": "10"})],
        [
            pod("c1", f"hog-{i}", "hog", {"cpu": "1", "memory": "1Gi"}, node_name="n1")
            for i in range(hog)
        ]
        + [pod("c1", "want-0", "want", {"cpu": want_cpu, "memory": "1Gi"}, **want)],
        [
            pod_group("c1", "hog", hog_queue, min_member=1, phase="Running"),
            pod_group("c1", "want", "q2", min_member=1, phase="Running"),
        ],
        queues=[queue("q1", reclaimable=reclaimable), queue("q2")],
        classes=PRIORITY_CLASSES,
    )


def reclaim_conf(**verdicts: list[str]) -> Any:
    return conf(RECLAIM, priority(), queue_verdicts(**verdicts))


def test_reclaims_from_another_queue_and_pipelines() -> None:
    result = run(reclaim_conf(), hog_and_want())
    assert evicted(result) == [("c1/hog-1", "reclaim")]
    assert result.pipelined["c1/want"] == [("c1/want-0", "n1")]
    assert result.binds == []
    assert "There are <2> Jobs and <2> Queues in total for scheduling." in lines(result)
    assert lines(result, Severity.ERROR) == ["Try to reclaim Task <c1/hog-1> for Tasks <c1/want-0>"]
    assert f"Reclaimed <{ONE_CPU}> for task <c1/want-0> requested <{ONE_CPU}>." in lines(result)


def test_only_evicted_resources_count_not_the_idle_ones() -> None:
    # 1 cpu idle would make one eviction enough; reclaim evicts 2 cpus for a 2-cpu task.
    result = run(reclaim_conf(), hog_and_want(cpu="3", want_cpu="2"))
    assert sorted(evicted(result)) == [("c1/hog-0", "reclaim"), ("c1/hog-1", "reclaim")]
    assert result.pipelined["c1/want"] == [("c1/want-0", "n1")]


def test_evictions_stand_when_they_do_not_cover_the_request() -> None:
    # Victims (1 cpu) plus idle (1 cpu) validate, but the evicted cpu alone is short.
    world = cluster(
        [node("n1", {"cpu": "3", "memory": "100Gi", "pods": "10"})],
        [
            pod("c1", "hog-0", "hog", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod(
                "c1",
                "hog-1",
                "hog",
                {"cpu": "1", "memory": "1Gi"},
                node_name="n1",
                labels={"volcano.sh/preemptable": "false"},
            ),
            pod("c1", "want-0", "want", {"cpu": "2", "memory": "1Gi"}),
        ],
        [
            pod_group("c1", "hog", "q1", min_member=1, phase="Running"),
            pod_group("c1", "want", "q2", min_member=1, phase="Running"),
        ],
        queues=[queue("q1"), queue("q2")],
        classes=PRIORITY_CLASSES,
    )
    result = run(reclaim_conf(), world)
    assert evicted(result) == [("c1/hog-0", "reclaim")]
    assert result.pipelined["c1/want"] == []


def test_bound_tasks_are_not_reclaimed() -> None:
    bound = hog_and_want()
    for p in bound.pods[:2]:
        p.phase = "Pending"  # with a node name: Bound
    result = run(reclaim_conf(), bound, verbosity=4)
    assert result.evictions == []
    assert "No reclaimees on Node <n1>." in lines(result)


def test_tasks_of_the_same_queue_are_not_reclaimed() -> None:
    assert run(reclaim_conf(), hog_and_want(hog_queue="q2")).evictions == []


def test_unreclaimable_queues_are_spared() -> None:
    assert run(reclaim_conf(), hog_and_want(reclaimable=False)).evictions == []
    assert len(run(reclaim_conf(), hog_and_want(reclaimable=True)).evictions) == 1


def test_overused_queue_does_not_reclaim() -> None:
    result = run(reclaim_conf(overused=["q2"]), hog_and_want())
    assert result.evictions == []
    assert "Queue <q2> is overused, ignore it." in lines(result)


def test_queue_that_is_not_preemptive_does_not_reclaim() -> None:
    result = run(reclaim_conf(notPreemptive=["q2"]), hog_and_want())
    assert result.evictions == []
    assert (
        "Queue <q2> can not reclaim by preempt others when considering task <want-0> , "
        "ignore it." in lines(result)
    )


def test_preemption_policy_never_is_skipped_with_volcanos_message() -> None:
    result = run(reclaim_conf(), hog_and_want(preemption_policy="Never"))
    assert result.evictions == []
    assert (
        "Task c1/want-0 is not eligible to preempt other tasks due to preemptionPolicy "
        "is Never" in lines(result)
    )


def test_a_job_no_longer_starving_drops_its_queue() -> None:
    # "first" (high priority) reclaims and is pushed back; popped again it has no task
    # left, so q2 is dropped and "second" never reclaims.
    world = cluster(
        [node("n1", {"cpu": "2", "memory": "100Gi", "pods": "10"})],
        [
            pod("c1", "hog-0", "hog", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "hog-1", "hog", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "first-0", "first", {"cpu": "1", "memory": "1Gi"}),
            pod("c1", "second-0", "second", {"cpu": "1", "memory": "1Gi"}),
        ],
        [
            pod_group("c1", "hog", "q1", min_member=1, phase="Running"),
            pod_group("c1", "first", "q2", min_member=1, phase="Running", priority_class="high"),
            pod_group("c1", "second", "q2", min_member=1, phase="Running", priority_class="low"),
        ],
        queues=[queue("q1"), queue("q2")],
        classes=PRIORITY_CLASSES,
    )
    result = run(reclaim_conf(), world)
    assert evicted(result) == [("c1/hog-1", "reclaim")]
    assert result.pipelined["c1/first"] == [("c1/first-0", "n1")]
    assert result.pipelined["c1/second"] == []


def test_nodes_failing_unresolvably_are_passed_over_in_order() -> None:
    world = cluster(
        [
            node("n1", {"cpu": "1", "memory": "100Gi", "pods": "10"}),
            node("n2", {"cpu": "1", "memory": "100Gi", "pods": "10"}),
        ],
        [
            pod("c1", "hog-0", "hog", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "hog-1", "hog", {"cpu": "1", "memory": "1Gi"}, node_name="n2"),
            pod("c1", "want-0", "want", {"cpu": "1", "memory": "1Gi"}),
        ],
        [
            pod_group("c1", "hog", "q1", min_member=1, phase="Running"),
            pod_group("c1", "want", "q2", min_member=1, phase="Running"),
        ],
        queues=[queue("q1"), queue("q2")],
        classes=PRIORITY_CLASSES,
    )
    result = run(
        conf(RECLAIM, priority(), queue_verdicts(), reject_nodes("n1")), world, verbosity=4
    )
    assert evicted(result) == [("c1/hog-1", "reclaim")]
    assert result.pipelined["c1/want"] == [("c1/want-0", "n2")]
    assert (
        "Reclaim predicate for task c1/want-0 on node n1 return error task c1/want-0 on node "
        "n1 fit failed: node(s) rejected by test " in lines(result)
    )
    assert "Considering Task <c1/want-0> on Node <n1>." not in lines(result)


def test_victims_of_the_queue_ordered_last_go_first() -> None:
    # No VictimQueueOrder plugin: the negation of QueueOrder, which falls back to queue
    # names (q1 before q3), so q3's task goes first. JobOrder would have picked zeta
    # (c1/alpha orders before c1/zeta), so this also shows queues decide across queues.
    world = cluster(
        [node("n1", {"cpu": "2", "memory": "100Gi", "pods": "10"})],
        [
            pod("c1", "zeta-0", "zeta", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "alpha-0", "alpha", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod("c1", "want-0", "want", {"cpu": "1", "memory": "1Gi"}),
        ],
        [
            pod_group("c1", "zeta", "q1", min_member=1, phase="Running"),
            pod_group("c1", "want", "q2", min_member=1, phase="Running"),
            pod_group("c1", "alpha", "q3", min_member=1, phase="Running"),
        ],
        queues=[queue("q1"), queue("q2"), queue("q3")],
        classes=PRIORITY_CLASSES,
    )
    assert evicted(run(reclaim_conf(), world)) == [("c1/alpha-0", "reclaim")]
