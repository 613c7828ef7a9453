"""What CloseSession writes back for each job (``framework/job_updater.go``, ``jobStatus``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from operator import is_

from vspec.api.job_info import JobInfo, StatusCounts
from vspec.api.types import TaskStatus
from vspec.framework.cache import PodGroupStatus
from vspec.framework.session import Session
from vspec.model.corev1 import Condition
from vspec.model.objects import PodGroup

# A condition's fields but its stamps, which the updater does not count as a change;
# compared one by one in _same_conditions (every session compares every pod group's).
_UNSTAMPED = ("type", "status", "reason", "message")
if tuple(f.name for f in fields(Condition)) != (
    *_UNSTAMPED,
    "transition_id",
    "last_transition_time",
):
    raise AssertionError("Condition's fields moved: update _UNSTAMPED and _same_conditions")
# The phases whose pod group event ("<n>/<m> tasks in gang unschedulable") is recorded
# at every close; the others' ("pod group is ready") only when the pod group is written.
_UNSCHEDULABLE_PHASES = frozenset({"Unknown", "Pending", "Inqueue"})


def job_phase(
    pg: PodGroup, counts: StatusCounts, session: str, completed_counts_failed: bool
) -> str:
    """The PodGroup phase rule of ``jobStatus``, from the job's counts
    (:meth:`JobInfo.status_counts`: the updater asks for every live job at every close),
    in the session of uid ``session``."""
    if counts.running:
        for c in pg.conditions:
            if c.type == "Unschedulable" and c.transition_id == session and c.status == "True":
                return "Unknown"
    # v1.10.0 counted Succeeded tasks only, so a job with a Failed task never completed
    # (gate completed_counts_failed, upstream 9ac1c8c4f).
    done = counts.succeeded
    if completed_counts_failed:
        done += counts.failed
    allocated = counts.allocated + done
    if allocated >= pg.min_member:
        # Quirk kept: minMember 0 with nothing allocated ends Completed (0 == 0).
        return "Completed" if done == allocated else "Running"
    if pg.phase != "Inqueue":
        return "Pending"
    return pg.phase


def _same_conditions(new: list[Condition], old: tuple[Condition, ...]) -> bool:
    """Pairwise equal but for the stamps, which the updater does not count as a change;
    a condition that is the very object it was is equal (a frozen dataclass). Field by
    field, paired by place: every close compares every pod group's (mostly one condition
    each), and a ``zip(..., strict=True)`` cost twice the rest of the call."""
    if len(new) != len(old):
        return False
    for at, o in enumerate(old):
        n = new[at]
        if n is not o and (
            n.type != o.type
            or n.status != o.status
            or n.reason != o.reason
            or n.message != o.message
        ):
            return False
    return True


def update_all(ssn: Session) -> dict[str, bool]:
    """Write every job's status into its session PodGroup; returns job -> written, which
    is whether the status differs from the one the session opened with."""
    written = {}
    jobs, before = ssn.jobs, ssn.pod_group_status
    # Read once: the same for every job.
    session, completed_counts_failed = ssn.uid, ssn.gates.completed_counts_failed
    for job, old in _with_statuses(jobs, before):
        pg = job.pod_group
        if pg is None:
            continue
        counts = job.status_counts()
        phase = pg.phase = job_phase(pg, counts, session, completed_counts_failed)
        running = pg.running = counts.running
        failed = pg.failed = counts.failed
        succeeded = pg.succeeded = counts.succeeded
        update_pg = written[job.uid] = (
            old is None
            or phase != old.phase
            or running != old.running
            or succeeded != old.succeeded
            or failed != old.failed
            or not _same_conditions(pg.conditions, old.conditions)
        )
        if update_pg or phase in _UNSCHEDULABLE_PHASES:
            record_job_status_event(ssn, job, update_pg)
    return written


def _with_statuses(
    jobs: dict[str, JobInfo], before: dict[str, PodGroupStatus]
) -> Iterable[tuple[JobInfo, PodGroupStatus | None]]:
    """Each job with the status it opened with (None: none). The snapshot makes both
    dicts in one order (the very id strings), so they are paired by place when their
    keys are the same objects in order, checked in C; else each status is looked up."""
    if len(jobs) == len(before) and all(map(is_, jobs, before)):
        return zip(jobs.values(), before.values(), strict=True)
    return ((job, before.get(uid)) for uid, job in jobs.items())


def record_job_status_event(ssn: Session, job: JobInfo, update_pg: bool) -> None:
    """``RecordJobStatusEvent``: the PodGroup event users see in ``kubectl describe``."""
    pg = job.pod_group
    assert pg is not None
    if pg.phase in _UNSCHEDULABLE_PHASES:
        message = (
            f"{job.count(TaskStatus.Pending)}/{len(job.tasks)} tasks in gang unschedulable: "
            f"{ssn.closing_fit_error(job)}"
        )
        ssn.record_pod_group_event(job, "Warning", "Unschedulable", message)
    elif update_pg:
        ssn.record_pod_group_event(job, "Normal", "Scheduled", "pod group is ready")
