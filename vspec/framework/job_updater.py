"""What CloseSession writes back for each job (``framework/job_updater.go``, ``jobStatus``)."""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter

from vspec.api.job_info import JobInfo, StatusCounts
from vspec.api.types import TaskStatus
from vspec.framework.cache import PodGroupStatus
from vspec.framework.session import Session
from vspec.model.corev1 import Condition
from vspec.model.objects import PodGroup

# A condition's fields but its stamps, which the updater does not count as a change (read
# with one attrgetter: every session compares every pod group's conditions).
_unstamped = attrgetter(
    *(f.name for f in fields(Condition) if f.name not in ("transition_id", "last_transition_time"))
)
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
            if c.transition_id == session and c.type == "Unschedulable" and c.status == "True":
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


def _changed(new: PodGroup, old: PodGroupStatus | None) -> bool:
    """Whether ``new``'s status differs from ``old``; condition timestamps and transition
    IDs do not count as a change. A condition that is the very object it was is equal."""
    if old is None:
        return True
    if (
        new.phase != old.phase
        or new.running != old.running
        or new.succeeded != old.succeeded
        or new.failed != old.failed
    ):
        return True
    conditions = new.conditions
    if len(conditions) != len(old.conditions):
        return True
    for n, o in zip(conditions, old.conditions, strict=True):
        if n is not o and _unstamped(n) != _unstamped(o):
            return True
    return False


def update_all(ssn: Session) -> dict[str, bool]:
    """Write every job's status into its session PodGroup; returns job -> written."""
    written = {}
    before = ssn.pod_group_status
    # Read once: the same for every job.
    session, completed_counts_failed = ssn.uid, ssn.gates.completed_counts_failed
    for job in ssn.jobs.values():
        pg = job.pod_group
        if pg is None:
            continue
        counts = job.status_counts()
        phase = pg.phase = job_phase(pg, counts, session, completed_counts_failed)
        pg.running = counts.running
        pg.failed = counts.failed
        pg.succeeded = counts.succeeded
        update_pg = written[job.uid] = _changed(pg, before.get(job.uid))
        if update_pg or phase in _UNSCHEDULABLE_PHASES:
            record_job_status_event(ssn, job, update_pg)
    return written


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
