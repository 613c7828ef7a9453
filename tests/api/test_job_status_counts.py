"""A job's status counts are worked out once per ``JobInfo.version`` (gang and the job
updater ask for every live job at every session): over any sequence of task changes and
clones, what the job answers is what counting its index afresh gives."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from vspec.api.job_info import JobInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import ALLOCATED_STATUSES, TaskStatus
from vspec.model.corev1 import Container
from vspec.model.objects import ObjectMeta, Pod

STATUSES = list(TaskStatus)
# One step on a job: a status change, a task taken out, a task added, or a clone
# (taken as the job from then on), each by the index of a task.
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["status", "delete", "add", "clone"]),
        st.integers(0, 5),
        st.sampled_from(STATUSES),
    ),
    max_size=30,
)


def _task(i: int, status: TaskStatus) -> TaskInfo:
    pod = Pod(
        ObjectMeta(f"p{i}", "ns", uid=f"p{i}"),
        containers=[Container(requests={"cpu": Fraction(i % 2)})],
    )
    task = TaskInfo(pod)
    task.status = status
    return task


def _fresh(job: JobInfo) -> tuple[int, int, int, int, int]:
    """Running, Succeeded, Failed, allocated, ValidTaskNum, counted as Volcano counts."""
    index = job.task_status_index

    def count(*statuses: TaskStatus) -> int:
        return sum(len(index.get(s, {})) for s in statuses)

    allocated = count(*ALLOCATED_STATUSES)
    valid = allocated + count(TaskStatus.Succeeded, TaskStatus.Pipelined, TaskStatus.Pending)
    return (
        count(TaskStatus.Running),
        count(TaskStatus.Succeeded),
        count(TaskStatus.Failed),
        allocated,
        valid,
    )


def _answered(job: JobInfo) -> tuple[int, int, int, int, int]:
    counts = job.status_counts()
    assert counts.valid == job.valid_task_num()
    return counts.running, counts.succeeded, counts.failed, counts.allocated, counts.valid


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(STATUSES), max_size=6), STEPS)
def test_counts_follow_every_task_change_and_clone(
    initial: list[TaskStatus], steps: list[tuple[str, int, TaskStatus]]
) -> None:
    job = JobInfo("ns/j")
    for i, status in enumerate(initial):
        job.add_task_info(_task(i, status))
    assert _answered(job) == _fresh(job)
    for op, i, status in steps:
        tasks = list(job.tasks.values())
        if op == "status" and tasks:
            job.update_task_status(tasks[i % len(tasks)], status)
        elif op == "delete" and tasks:
            job.delete_task_info(tasks[i % len(tasks)])
        elif op == "add":
            job.add_task_info(_task(10 + len(tasks) + i, status))
        elif op == "clone":
            job = job.clone()
        # Asked after every step: a count kept past a change it should follow shows.
        assert _answered(job) == _fresh(job)


def test_a_clone_and_its_source_count_their_own_changes() -> None:
    job = JobInfo("ns/j")
    tasks = [_task(i, TaskStatus.Running) for i in range(3)]
    for task in tasks:
        job.add_task_info(task)
    assert job.status_counts().running == 3
    clone = job.clone()
    assert clone.status_counts().running == 3
    clone.update_task_status(clone.tasks["p0"], TaskStatus.Succeeded)
    assert (clone.status_counts().running, clone.status_counts().succeeded) == (2, 1)
    assert (job.status_counts().running, job.status_counts().succeeded) == (3, 0)
