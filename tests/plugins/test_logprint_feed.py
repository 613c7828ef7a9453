"""logprint's feed: when the conf keeps the job contract, a print reuses the lines it
gave each job last time unless the job is another object or its status moved.

The contract (``vspec.framework.interface.Plugin.carries_jobs``) lets a session change
a job it keeps only through its task methods and its pod group's status, in place: the
phase and counts the job updater writes, the conditions gang writes into the list, or
a new list hand_back puts back. Drawn sequences of such changes, and of jobs cloned
afresh as a session that carries no job gets them, are made between prints of the same
session state; every print must be what the jobs print when rendered from scratch."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import group_of, node, pod, pod_group, printed, printed_afresh, queue, session
from vspec.api.job_info import JobInfo
from vspec.api.types import TaskStatus
from vspec.framework.session import Session
from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
PLUGINS = [{"name": "gang"}, {"name": "logprint"}]
JOBS = 4


def _session() -> Session:
    groups, pods = [], []
    for j in range(JOBS):
        group = pod_group("ns", f"job{j}", "q1", min_member=1 + j % 2, creation=T0)
        group.conditions = [Condition("Scheduled", "True", "ok", "", "tx", T0)]
        groups.append(group)
        pods.append(pod("ns", f"r{j}", f"job{j}", {"cpu": "1"}, phase="Running", node_name="n1"))
        pods.append(pod("ns", f"w{j}", f"job{j}", {"cpu": "1"}))
    cluster = Cluster(
        nodes=[node("n1", {"cpu": "16", "memory": "4Gi", "pods": "20"})],
        pods=pods,
        pod_groups=groups,
        queues=[queue("q1")],
    )
    ssn = session(cluster, [PLUGINS], verbosity=1)
    ssn.cache.carries_jobs = True  # as the scheduler sets it for a conf that keeps the contract
    return ssn


def _task_status(status: TaskStatus) -> Callable[[Session, JobInfo], None]:
    def change(ssn: Session, job: JobInfo) -> None:
        task = next(iter(reversed(job.tasks.values())))
        job.update_task_status(task, status)

    return change


def _condition(ssn: Session, job: JobInfo) -> None:
    """Gang's write at close: a new condition of the type, put in place of the old."""
    stamp = f"tx{len(ssn.log.lines)}"
    ssn.update_pod_group_condition(job, Condition("Scheduled", "True", "ok", "", stamp, T0))


def _put_back(ssn: Session, job: JobInfo) -> None:
    """hand_back's restore: a new list of other conditions."""
    first = group_of(job).conditions[0]
    group_of(job).conditions = [dataclasses.replace(first, reason="restored")]


def _fresh_clone(ssn: Session, job: JobInfo) -> None:
    """A new clone in the job's place, as a session that carries no job gets."""
    ssn.jobs[job.uid] = job.clone()


CHANGES: dict[str, Callable[[Session, JobInfo], None]] = {
    "task allocated": _task_status(TaskStatus.Allocated),
    "task running": _task_status(TaskStatus.Running),
    "task pending": _task_status(TaskStatus.Pending),
    "task taken out": lambda ssn, job: job.delete_task_info(next(iter(job.tasks.values()))),
    "phase running": lambda ssn, job: setattr(group_of(job), "phase", "Running"),
    "phase inqueue": lambda ssn, job: setattr(group_of(job), "phase", "Inqueue"),
    "phase pending": lambda ssn, job: setattr(group_of(job), "phase", "Pending"),
    "running": lambda ssn, job: setattr(group_of(job), "running", group_of(job).running + 1),
    "succeeded": lambda ssn, job: setattr(group_of(job), "succeeded", group_of(job).succeeded + 1),
    "failed": lambda ssn, job: setattr(group_of(job), "failed", group_of(job).failed + 1),
    "condition written": _condition,
    "condition added": lambda ssn, job: group_of(job).conditions.append(Condition("Unschedulable")),
    "conditions put back": _put_back,
    "fresh clone": _fresh_clone,
}

steps = st.lists(
    st.lists(st.tuples(st.integers(0, JOBS - 1), st.sampled_from(sorted(CHANGES))), max_size=3),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(steps)
def test_the_feed_prints_what_the_jobs_print_afresh(
    sequence: list[list[tuple[int, str]]],
) -> None:
    ssn = _session()
    assert printed(ssn) == printed_afresh(*ssn.jobs.values())
    for changes in sequence:
        for index, what in changes:
            job = list(ssn.jobs.values())[index]
            if what.startswith("task") and not job.tasks:
                continue
            CHANGES[what](ssn, job)
        assert printed(ssn) == printed_afresh(*ssn.jobs.values()), changes


def test_an_unchanged_carried_job_is_not_printed_again() -> None:
    """The feed hands the kept line on: not rendered, and not even looked up by its
    value key (``JobInfo.printed``), which a session of ~200 carried jobs paid per job."""
    ssn = _session()
    first = printed(ssn)
    for job in ssn.jobs.values():
        job.derived.clear()  # what _job_lines keeps: the feed must not need it
    again = printed(ssn)
    assert again == first
    assert all(a is b for a, b in zip(again, first, strict=True))
    assert not any(job.derived for job in ssn.jobs.values())
