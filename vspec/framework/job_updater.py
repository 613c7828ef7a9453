"""What CloseSession writes back for each job (``framework/job_updater.go``, ``jobStatus``)."""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter

from vspec.api.job_info import JobInfo
from vspec.api.types import TaskStatus, allocated_status, completed_status
from vspec.framework.session import PodGroupStatus, Session, pod_group_status
from vspec.model.corev1 import Condition

# A condition's fields but its stamps, which the updater does not count as a change (read
# with one attrgetter: every session compares every pod group's conditions).
_unstamped = attrgetter(
    *(f.name for f in fields(Condition) if f.name not in ("transition_id", "last_transition_time"))
)


def _succeeded(status: TaskStatus) -> bool:
    return status is TaskStatus.Succeeded


def job_phase(ssn: Session, job: JobInfo) -> str:
    """The PodGroup phase rule of ``jobStatus``."""
    pg = job.pod_group
    assert pg is not None
    unschedulable = any(
        c.type == "Unschedulable" and c.status == "True" and c.transition_id == ssn.uid
        for c in pg.conditions
    )
    if job.count(TaskStatus.Running) and unschedulable:
        return "Unknown"
    # v1.10.0 counted Succeeded tasks only, so a job with a Failed task never completed
    # (gate completed_counts_failed, upstream 9ac1c8c4f).
    failed_ends = ssn.gates.completed_counts_failed
    ended = completed_status if failed_ends else _succeeded
    allocated = sum(
        len(tasks)
        for status, tasks in job.task_status_index.items()
        if allocated_status(status) or ended(status)
    )
    if allocated >= pg.min_member:
        done = job.count(TaskStatus.Succeeded)
        if failed_ends:
            done += job.count(TaskStatus.Failed)
        # Quirk kept: minMember 0 with nothing allocated ends Completed (0 == 0).
        return "Completed" if done == allocated else "Running"
    if pg.phase != "Inqueue":
        return "Pending"
    return pg.phase


def _changed(new: PodGroupStatus, old: PodGroupStatus | None) -> bool:
    """Condition timestamps and transition IDs do not count as a change."""
    if old is None:
        return True
    if (new.phase, new.running, new.succeeded, new.failed) != (
        old.phase,
        old.running,
        old.succeeded,
        old.failed,
    ):
        return True
    if len(new.conditions) != len(old.conditions):
        return True
    return any(
        _unstamped(n) != _unstamped(o) for n, o in zip(new.conditions, old.conditions, strict=True)
    )


def update_all(ssn: Session) -> dict[str, bool]:
    """Write every job's status into its session PodGroup; returns job -> written."""
    written = {}
    for job in ssn.jobs.values():
        pg = job.pod_group
        if pg is None:
            continue
        pg.phase = job_phase(ssn, job)
        pg.running = job.count(TaskStatus.Running)
        pg.failed = job.count(TaskStatus.Failed)
        pg.succeeded = job.count(TaskStatus.Succeeded)
        new = pod_group_status(job)
        assert new is not None
        written[job.uid] = _changed(new, ssn.pod_group_status.get(job.uid))
        record_job_status_event(ssn, job, written[job.uid])
    return written


def record_job_status_event(ssn: Session, job: JobInfo, update_pg: bool) -> None:
    """``RecordJobStatusEvent``: the PodGroup event users see in ``kubectl describe``."""
    pg = job.pod_group
    assert pg is not None
    if pg.phase in ("Unknown", "Pending", "Inqueue"):
        message = (
            f"{job.count(TaskStatus.Pending)}/{len(job.tasks)} tasks in gang unschedulable: "
            f"{ssn.closing_fit_error(job)}"
        )
        ssn.record_pod_group_event(job, "Warning", "Unschedulable", message)
    elif update_pg:
        ssn.record_pod_group_event(job, "Normal", "Scheduled", "pod group is ready")
