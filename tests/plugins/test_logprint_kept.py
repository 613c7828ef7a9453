"""logprint keeps a job's lines in the job (``JobInfo.derived``) while nothing they
print has changed: a job carried to the next session prints its very lines again, and
any change to a printed field, made the way a session or the model makes it, prints
the job anew.

A session changes a job only through its task methods and its pod group's status
(phase, counts, conditions; the job contract of ``vspec.framework.interface``), in
place; anything else is a new object in the model's copy-on-write way (a new
``ObjectMeta``, a new map). Each change below is made alone to the job printed last,
as it stands in the next session's print, and the line must be what the job prints
when rendered afresh."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime

from tests.builders import group_of, node, pod, pod_group, printed, printed_afresh, queue, session
from vspec.api.job_info import JobInfo
from vspec.api.types import TaskStatus
from vspec.framework.session import Session
from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
PLUGINS = [{"name": "gang"}, {"name": "logprint"}]


def _session() -> Session:
    group = pod_group("ns", "job", "q1", min_member=1, phase="Running", creation=T0)
    group.meta.uid = "uid-job"
    group.meta.labels = {"team": "a"}
    group.meta.annotations = {"note": "x"}
    group.min_task_member = {"web": 1}
    group.conditions = [Condition("Scheduled", "True", "ok", "", "tx", T0)]
    cluster = Cluster(
        nodes=[node("n1", {"cpu": "4", "memory": "4Gi", "pods": "10"})],
        pods=[
            pod("ns", "r1", "job", {"cpu": "1"}, phase="Running", node_name="n1"),
            pod("ns", "w1", "job", {"cpu": "1"}),
        ],
        pod_groups=[group],
        queues=[queue("q1")],
    )
    return session(cluster, [PLUGINS], verbosity=1)


def _meta(job: JobInfo, **change: object) -> None:
    """A new ObjectMeta with ``change``: the model never changes one in place."""
    pg = group_of(job)
    meta = copy.copy(pg.meta)
    for name, value in change.items():
        setattr(meta, name, value)
    pg.meta = meta


def _condition(job: JobInfo, **change: object) -> None:
    conditions = group_of(job).conditions
    conditions[0] = dataclasses.replace(conditions[0], **change)  # type: ignore[arg-type]


def _status(job: JobInfo, status: TaskStatus) -> None:
    task = next(t for t in job.tasks.values() if t.name == "w1")
    job.update_task_status(task, status)


def _without_task(job: JobInfo) -> None:
    job.delete_task_info(next(t for t in job.tasks.values() if t.name == "w1"))


def _reordered(job: JobInfo) -> None:
    """The first task taken out and added again: it is printed last."""
    task = next(iter(job.tasks.values()))
    job.delete_task_info(task)
    job.add_task_info(task.clone())


_CHANGES: dict[str, Callable[[JobInfo], None]] = {
    # the job's own fields
    "uid": lambda job: setattr(job, "uid", "ns/other"),
    "namespace": lambda job: setattr(job, "namespace", "other"),
    "queue": lambda job: setattr(job, "queue", "q2"),
    "name": lambda job: setattr(job, "name", "other"),
    "minAvailable": lambda job: setattr(job, "min_available", 2),
    "minAvailable 0": lambda job: setattr(job, "min_available", 0),
    "preemptable": lambda job: setattr(job, "preemptable", True),
    "revocableZone": lambda job: setattr(job, "revocable_zone", "*"),
    "budget min": lambda job: setattr(job, "budget", ("1", "")),
    "budget max": lambda job: setattr(job, "budget", ("", "1")),
    # its tasks, through the job's task methods
    "task status": lambda job: _status(job, TaskStatus.Allocated),
    "task status, ready": lambda job: _status(job, TaskStatus.Running),
    "task taken out": _without_task,
    "tasks reordered": _reordered,
    # the pod group's metadata (copy-on-write) and spec
    "meta name": lambda job: _meta(job, name="other"),
    "meta namespace": lambda job: _meta(job, namespace="other"),
    "meta uid": lambda job: _meta(job, uid="uid-other"),
    "meta labels": lambda job: _meta(job, labels={"team": "b"}),
    "meta annotations": lambda job: _meta(job, annotations={}),
    "meta creation": lambda job: _meta(job, creation_timestamp=datetime(2026, 1, 1, tzinfo=UTC)),
    "meta deletion": lambda job: _meta(job, deletion_timestamp=T0),
    "minMember": lambda job: setattr(group_of(job), "min_member", 2),
    "minTaskMember": lambda job: setattr(group_of(job), "min_task_member", {"web": 2}),
    "spec queue": lambda job: setattr(group_of(job), "queue", "q2"),
    "priorityClassName": lambda job: setattr(group_of(job), "priority_class_name", "high"),
    "minResources": lambda job: setattr(group_of(job), "min_resources", {"cpu": 1}),
    "no pod group": lambda job: setattr(job, "pod_group", None),
    # its status, in place, as the session's actions and the job updater write it
    "phase": lambda job: setattr(group_of(job), "phase", "Inqueue"),
    "phase pending": lambda job: setattr(group_of(job), "phase", "Pending"),
    "running": lambda job: setattr(group_of(job), "running", 3),
    "succeeded": lambda job: setattr(group_of(job), "succeeded", 1),
    "failed": lambda job: setattr(group_of(job), "failed", 1),
    "condition type": lambda job: _condition(job, type="Unschedulable"),
    "condition status": lambda job: _condition(job, status="False"),
    "condition reason": lambda job: _condition(job, reason="NotEnoughResources"),
    "condition message": lambda job: _condition(job, message="1/2 tasks in gang unschedulable"),
    "condition transition id": lambda job: _condition(job, transition_id="tx2"),
    "condition time": lambda job: _condition(job, last_transition_time=datetime(2026, 1, 1)),
    "condition added": lambda job: group_of(job).conditions.append(Condition("Unschedulable")),
    "conditions replaced": lambda job: setattr(group_of(job), "conditions", []),
}


def test_an_unchanged_job_prints_its_kept_lines() -> None:
    ssn = _session()
    first = printed(ssn)
    (job,) = ssn.jobs.values()
    assert first == printed_afresh(job) and len(first) == 1
    again = printed(ssn)
    assert again == first
    assert again[0] is first[0]  # the kept line itself, not rendered again


def test_every_printed_field_changed_between_prints_prints_anew() -> None:
    for what, change in _CHANGES.items():
        ssn = _session()
        first = printed(ssn)
        (job,) = ssn.jobs.values()
        change(job)
        expected = printed_afresh(job)
        assert expected != first, what  # the change is one the lines show
        assert printed(ssn) == expected, what
