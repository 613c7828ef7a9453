"""What CloseSession writes back for each job (``framework/job_updater.go``, ``jobStatus``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import fields
from itertools import filterfalse
from operator import is_

from vspec.api.job_info import JobInfo, StatusCounts
from vspec.api.types import TaskStatus
from vspec.framework.cache import PodGroupStatus, pod_group_status
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


def _same_conditions(
    new: list[Condition], old: tuple[Condition, ...], session: str | None = None
) -> bool:
    """Pairwise equal but for the stamps, which the updater does not count as a change;
    a condition that is the very object it was is equal (a frozen dataclass). Field by
    field, paired by place: every close compares every pod group's (mostly one condition
    each), and a ``zip(..., strict=True)`` cost twice the rest of the call. Given the
    ``session`` uid, also none is an Unschedulable one it stamped (which may make the
    phase Unknown: :func:`job_phase`)."""
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
        if n.transition_id == session and n.type == "Unschedulable" and n.status == "True":
            return False
    return True


def update_all(ssn: Session) -> dict[str, bool]:
    """Write every job's status into its session PodGroup; returns job -> written, which
    is whether the status differs from the one the session opened with. A settled job
    (:func:`settled_jobs`) holds its status: it is not written, and not read."""
    settled = ssn.settled_jobs()
    written = dict.fromkeys(settled, False)
    jobs, before = ssn.jobs, ssn.pod_group_status
    # Read once: the same for every job.
    session, completed_counts_failed = ssn.uid, ssn.gates.completed_counts_failed
    changed, touched = _changed(ssn), ssn.cache.touched_jobs
    settling = _Settling(ssn)
    for job, old in _with_statuses(jobs, before, settled):
        pg = job.pod_group
        if pg is None:
            continue
        uid = job.uid
        if old is not None and uid not in changed and uid not in touched:
            # Unpacked in one step: a named tuple's fields are read through descriptors,
            # which Python 3.11 does not specialise (this runs for most live jobs).
            phase, conditions, running, succeeded, failed = old
            if phase not in _UNSCHEDULABLE_PHASES and _same_conditions(
                pg.conditions, conditions, session
            ):
                # The status holds (_Updated): written as it was, no event.
                pg.phase, pg.running, pg.failed, pg.succeeded = phase, running, failed, succeeded
                written[uid] = False
                settling.held(uid, phase, pg.conditions)
                continue
        counts = job.status_counts()
        phase = pg.phase = job_phase(pg, counts, session, completed_counts_failed)
        running = pg.running = counts.running
        failed = pg.failed = counts.failed
        succeeded = pg.succeeded = counts.succeeded
        update_pg = written[uid] = (
            old is None
            or phase != old.phase
            or running != old.running
            or succeeded != old.succeeded
            or failed != old.failed
            or not _same_conditions(pg.conditions, old.conditions)
        )
        if update_pg or phase in _UNSCHEDULABLE_PHASES:
            record_job_status_event(ssn, job, update_pg)
        else:
            settling.held(uid, phase, pg.conditions)
    settling.keep()
    return written


class _Updated:
    """The feed mark of the session the updater last closed (``SchedulerState.memo``).

    When the session's job feed follows it, a job the feed does not name and the
    session did not touch (``SchedulerCache.touched_jobs``) is the clone the last close
    left unwritten (one written back is fed), with the tasks it had then: its counts
    are those it was found to hold then, the status it opened with. When that status's
    phase is Running or Completed (which the counts decide alone) and its conditions,
    as the plugins closed them, are the same but for the stamps and hold no
    Unschedulable one stamped by this session (the Unknown rule), the status holds: the
    job is written as it was, with no event, and its counts are not read."""

    __slots__ = ("mark",)

    def __init__(self) -> None:
        self.mark: object | None = None


def _changed(ssn: Session) -> Set[str]:
    """The jobs whose status may not hold since the last close (:class:`_Updated`)."""
    feed, kept = ssn.job_feed, ssn.state.memo(_Updated)
    follows = feed.follows(kept.mark)
    kept.mark = feed.mark
    return feed.changed if follows else ssn.jobs.keys()


def _with_statuses(
    jobs: dict[str, JobInfo], before: dict[str, PodGroupStatus], settled: Mapping[str, str]
) -> Iterable[tuple[JobInfo, PodGroupStatus | None]]:
    """Each job but the settled ones with the status it opened with (None: none). The
    snapshot makes both dicts in one order (the very id strings), so they are paired by
    place when their keys are the same objects in order, checked in C; else each status
    is looked up."""
    if settled:
        return ((jobs[uid], before.get(uid)) for uid in filterfalse(settled.__contains__, jobs))
    if len(jobs) == len(before) and all(map(is_, jobs, before)):
        return zip(jobs.values(), before.values(), strict=True)
    return ((job, before.get(uid)) for uid, job in jobs.items())


class _Settled:
    """The jobs the last close found settled, or that would be at the next (by job id,
    their phase), and the feed mark of that session (``SchedulerState.memo``).

    A job is settled when its status held at the close (not written, no event), its
    phase is Running or Completed, and its pod group, after gang's close, holds the
    session's Scheduled stamp alone. When the next session's feed follows that mark, a
    job it does not name and the session did not touch is the very clone, with the same
    tasks (gang finds it ready again) and its pod group as then (that status again, one
    Scheduled condition as the cache holds it); if it still holds that status at the
    close, gang's stamp is all its close does: it holds again, and is left unstamped
    (:class:`Stamped`)."""

    __slots__ = ("jobs", "mark")

    def __init__(self) -> None:
        self.jobs: Mapping[str, str] = {}
        self.mark: object | None = None


def settled_jobs(ssn: Session) -> dict[str, str]:
    """The session's settled jobs (:class:`_Settled`), when the conf keeps the job
    contract: those settled at the last close the feed does not name and the session
    did not touch. Under the contract an action may write a pod group's status without
    touching its job, so unless vspec's own code alone ran (``SchedulerCache.own_code``)
    each is checked to hold the status it opened with; one that does not is read as
    any other."""
    kept, feed, cache = ssn.state.memo(_Settled), ssn.job_feed, ssn.cache
    if not (cache.carries_jobs and feed.follows(kept.mark)):
        return {}
    settled = dict(kept.jobs)
    off = settled.keys() & (feed.changed | feed.gone | cache.touched_jobs)
    if not cache.own_code:
        off.update(_status_moved(ssn, [uid for uid in settled if uid not in off]))
    for uid in off:
        del settled[uid]
    return settled


def _status_moved(ssn: Session, uids: list[str]) -> list[str]:
    """Those of ``uids`` whose pod group (or its status) is not the one they opened with."""
    jobs, opened = ssn.jobs, ssn.pod_group_status
    moved = []
    for uid in uids:
        pg = jobs[uid].pod_group
        if pg is None or pod_group_status(pg) != opened[uid]:
            moved.append(uid)
    return moved


class _Settling:
    """The jobs settled at this close (:class:`_Settled`), gathered as the updater
    finds their status held: those left unstamped, and those stamped by gang's one
    condition alone."""

    __slots__ = ("condition", "jobs", "kept", "mark")

    def __init__(self, ssn: Session) -> None:
        self.kept = ssn.state.memo(_Settled)
        stamped = ssn.stamped
        self.mark = ssn.job_feed.mark if stamped is not None else None
        self.condition = None if stamped is None else stamped.condition
        self.jobs = dict(ssn.settled_jobs())

    def held(self, uid: str, phase: str, conditions: list[Condition]) -> None:
        """The status of job ``uid`` held at ``phase`` with ``conditions``."""
        if (
            len(conditions) == 1
            and conditions[0] is self.condition
            and phase not in _UNSCHEDULABLE_PHASES
        ):
            self.jobs[uid] = phase

    def keep(self) -> None:
        """Kept for the next session's close."""
        self.kept.mark = self.mark
        self.kept.jobs = self.jobs


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
