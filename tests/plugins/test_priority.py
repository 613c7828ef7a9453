"""priority: task/job order, preemption by strictly lower priority, starving rule."""

from __future__ import annotations

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.framework.session import Session
from vspec.model.objects import Cluster, ObjectMeta, PriorityClass

FLAGS = {
    "name": "priority",
    "enableTaskOrder": True,
    "enableJobOrder": True,
    "enablePreemptable": True,
    "enableJobStarving": True,
}


def _cluster() -> Cluster:
    high, low = pod_group("c1", "high", "q1"), pod_group("c1", "low", "q1")
    high.priority_class_name = "high-priority"
    low.priority_class_name = "low-priority"
    return Cluster(
        nodes=[node("n1", {"cpu": "4", "memory": "4Gi", "pods": "10"})],
        pods=[
            pod("c1", "h1", "high", {"cpu": "1"}, priority=10),
            pod("c1", "h2", "high", {"cpu": "1"}, priority=5, phase="Running", node_name="n1"),
            pod("c1", "h3", "high", {"cpu": "1"}, priority=10, phase="Running", node_name="n1"),
            pod("c1", "l1", "low", {"cpu": "1"}, phase="Running", node_name="n1"),
        ],
        pod_groups=[high, low],
        queues=[queue("q1")],
        priority_classes=[
            PriorityClass(ObjectMeta("high-priority"), value=100),
            PriorityClass(ObjectMeta("low-priority"), value=10),
        ],
    )


def _ssn() -> Session:
    return session(_cluster(), [FLAGS])


def test_task_order_puts_higher_priority_first() -> None:
    ssn = _ssn()
    h1, h2 = task(ssn, "c1/h1"), task(ssn, "c1/h2")
    assert ssn.task_order_fn(h1, h2)
    assert not ssn.task_order_fn(h2, h1)
    assert any(
        "Priority TaskOrder: <c1/h1> priority is 10, <c1/h2> priority is 5" in line
        for line in ssn.log.texts()
    )


def test_task_order_tie_falls_back_to_uid() -> None:
    ssn = _ssn()
    h1, h3 = task(ssn, "c1/h1"), task(ssn, "c1/h3")
    assert ssn.task_compare_fns(h1, h3) == 0
    assert ssn.task_order_fn(h1, h3)  # "c1-h1" < "c1-h3"


def test_job_order_uses_priority_class_value() -> None:
    ssn = _ssn()
    high, low = ssn.jobs["c1/high"], ssn.jobs["c1/low"]
    assert (high.priority, low.priority) == (100, 10)
    assert ssn.job_order_fn(high, low)
    assert not ssn.job_order_fn(low, high)


def test_preemptable_other_job_needs_strictly_lower_job_priority() -> None:
    ssn = _ssn()
    l1, h2, h3 = task(ssn, "c1/l1"), task(ssn, "c1/h2"), task(ssn, "c1/h3")
    # A high job's task may take the low job's task, whatever the task priorities.
    assert ssn.preemptable(task(ssn, "c1/h1"), [l1]) == [l1]
    # The low job may not preempt the high job's tasks.
    assert ssn.preemptable(l1, [h2, h3]) == []


def test_preemptable_same_job_compares_task_priority() -> None:
    ssn = _ssn()
    h1, h2, h3 = task(ssn, "c1/h1"), task(ssn, "c1/h2"), task(ssn, "c1/h3")
    assert ssn.preemptable(h1, [h2, h3]) == [h2]  # 5 < 10; 10 is not strictly lower
    lines = ssn.log.texts()
    assert any(
        "Can not preempt task <c1/h3>because preemptee task has greater or equal task "
        "priority (10) than preemptor (10)" in line
        for line in lines
    )
    assert any(line.startswith("Victims from Priority plugins are [Task (c1-h2:") for line in lines)


def test_job_starving_counts_every_task() -> None:
    ssn = _ssn()
    # high: h2, h3 running (ready 2) and h1 pending: 2 < 3 tasks.
    assert ssn.job_starving(ssn.jobs["c1/high"])
    # low: its only task runs.
    assert not ssn.job_starving(ssn.jobs["c1/low"])


def test_failed_task_keeps_a_job_starving() -> None:
    cluster = _cluster()
    cluster.pods.append(pod("c1", "l2", "low", {"cpu": "1"}, phase="Failed"))
    ssn = session(cluster, [FLAGS])
    assert ssn.job_starving(ssn.jobs["c1/low"])


def test_disabled_flags_register_nothing_that_decides() -> None:
    ssn = session(_cluster(), [{"name": "priority"}])
    h1, h2 = task(ssn, "c1/h1"), task(ssn, "c1/h2")
    assert ssn.task_compare_fns(h1, h2) == 0
    assert not ssn.job_starving(ssn.jobs["c1/high"])  # no starving fn: false
