"""gang: JobValid, JobReady/Pipelined/Starving, job order, victim counters and the
conditions written at session close."""

from __future__ import annotations

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.api.types import TaskStatus
from vspec.framework.session import Session
from vspec.model.objects import Cluster, Pod

FLAGS = {
    "name": "gang",
    "enableJobOrder": True,
    "enableJobReady": True,
    "enableJobPipelined": True,
    "enablePreemptable": True,
    "enableReclaimable": True,
    "enableJobStarving": True,
}
N1 = {"cpu": "4", "memory": "4Gi", "pods": "10"}


def _running(name: str, group: str) -> Pod:
    return pod("c1", name, group, {"cpu": "1"}, phase="Running", node_name="n1")


def _ssn(*, pending_min: int = 3, running_min: int = 2) -> Session:
    """c1/pending: 2 pending pods, minMember ``pending_min``; c1/running: 3 running."""
    return session(
        Cluster(
            nodes=[node("n1", N1)],
            pods=[
                pod("c1", "a1", "pending", {"cpu": "1"}),
                pod("c1", "a2", "pending", {"cpu": "1"}),
                _running("b1", "running"),
                _running("b2", "running"),
                _running("b3", "running"),
            ],
            pod_groups=[
                pod_group("c1", "pending", "q1", min_member=pending_min),
                pod_group("c1", "running", "q1", min_member=running_min, phase="Running"),
            ],
            queues=[queue("q1")],
        ),
        [FLAGS],
    )


def test_job_valid_counts_valid_tasks() -> None:
    ssn = _ssn(pending_min=3)
    result = ssn.job_valid(ssn.jobs["c1/pending"])
    assert result is not None and not result.passed
    assert result.reason == "NotEnoughTasks"
    assert result.message == "Not enough valid tasks for gang-scheduling, valid: 2, min: 3"
    assert ssn.job_valid(ssn.jobs["c1/running"]) is None


def test_job_valid_checks_each_role_first() -> None:
    cluster = Cluster(
        nodes=[node("n1", N1)],
        pods=[
            pod("c1", "m", "pg", {"cpu": "1"}, labels={"volcano.sh/task-spec": "master"}),
            pod("c1", "w", "pg", {"cpu": "1"}, labels={"volcano.sh/task-spec": "worker"}),
        ],
        pod_groups=[pod_group("c1", "pg", "q1", min_member=3)],
        queues=[queue("q1")],
    )
    cluster.pod_groups[0].min_task_member = {"master": 1, "worker": 2}
    ssn = session(cluster, [FLAGS])
    result = ssn.job_valid(ssn.jobs["c1/pg"])
    assert result is not None
    assert (result.reason, result.message) == (
        "NotEnoughPodsOfTask",
        "Not enough valid pods of each task for gang-scheduling",
    )


def test_job_ready_and_pipelined_follow_min_member() -> None:
    ssn = _ssn(pending_min=2)
    pending, running = ssn.jobs["c1/pending"], ssn.jobs["c1/running"]
    assert not ssn.job_ready(pending)
    assert not ssn.job_pipelined(pending)  # Reject
    assert ssn.job_ready(running)
    assert ssn.job_pipelined(running)
    # Pipelining both pending tasks makes the job pipelined but not ready.
    for t in pending.tasks_in(TaskStatus.Pending):
        ssn.pipeline(t, "n1")
    assert ssn.job_pipelined(pending)
    assert not ssn.job_ready(pending)


def test_job_starving_ignores_task_count() -> None:
    ssn = _ssn()
    assert ssn.job_starving(ssn.jobs["c1/pending"])  # 0 < 3
    assert not ssn.job_starving(ssn.jobs["c1/running"])  # 3 >= 2


def test_job_order_puts_not_ready_jobs_first() -> None:
    ssn = _ssn()
    pending, running = ssn.jobs["c1/pending"], ssn.jobs["c1/running"]
    assert ssn.job_order_fn(pending, running)
    assert not ssn.job_order_fn(running, pending)
    assert (
        "Gang JobOrderFn: <c1/running> is ready: true, <c1/pending> is ready: false"
        in ssn.log.texts()
    )


def test_victims_keep_min_member_ready_tasks() -> None:
    ssn = _ssn(running_min=2)
    b = [task(ssn, f"c1/b{i}") for i in (1, 2, 3)]
    preemptor = task(ssn, "c1/a1")
    # 3 ready, minMember 2: only the first candidate may go.
    assert ssn.preemptable(preemptor, b) == [b[0]]
    assert ssn.reclaimable(preemptor, list(reversed(b))) == [b[2]]


def test_no_victims_when_job_is_at_min_member() -> None:
    ssn = _ssn(running_min=3)
    b = [task(ssn, f"c1/b{i}") for i in (1, 2, 3)]
    assert ssn.preemptable(task(ssn, "c1/a1"), b) == []


def test_close_writes_unschedulable_condition_with_fit_error() -> None:
    ssn = _ssn(pending_min=2)
    ssn.plugins["gang"].on_session_close(ssn)
    job = ssn.jobs["c1/pending"]
    cond = job.condition("Unschedulable")
    assert cond is not None
    assert cond.status == "True"
    assert cond.reason == "NotEnoughResources"
    assert cond.transition_id == ssn.uid
    assert cond.message == (
        "2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, "
        "2 minAvailable; Pending: 2 Unschedulable"
    )
    ready = ssn.jobs["c1/running"].condition("Scheduled")
    assert ready is not None
    assert (ready.reason, ready.message, ready.transition_id) == (
        "tasks in gang are ready to be scheduled",
        "",
        ssn.uid,
    )
    assert ssn.jobs["c1/running"].condition("Unschedulable") is None


def test_close_counts_discarded_allocations_as_schedulable() -> None:
    ssn = _ssn(pending_min=2)
    job = ssn.jobs["c1/pending"]
    stmt = ssn.statement()
    stmt.allocate(task(ssn, "c1/a1"), ssn.nodes["n1"])
    stmt.discard()  # a1 is Pending again, its last transaction Allocated
    ssn.plugins["gang"].on_session_close(ssn)
    cond = job.condition("Unschedulable")
    assert cond is not None and cond.message.startswith("1/2 tasks in gang unschedulable: ")


def test_close_replaces_the_condition_of_the_same_type() -> None:
    ssn = _ssn(pending_min=2)
    gang = ssn.plugins["gang"]
    gang.on_session_close(ssn)
    gang.on_session_close(ssn)
    pg = ssn.jobs["c1/pending"].pod_group
    assert pg is not None
    assert [c.type for c in pg.conditions] == ["Unschedulable"]
