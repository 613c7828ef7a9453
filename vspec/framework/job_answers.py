"""Per-job answers kept from session to session by the job feed (``JobFeed``).

Some passes ask one question of every live job at every session (is it pending? is it
ready?), though only a few jobs change between sessions. An answer that depends only on
what a job holds as it opens is the same, for a job the feed does not name, as at the
last snapshot; and it stays so in the session until the job's tasks or phase move
(``SchedulerCache.touched_jobs``). So :class:`OpenAnswers` keeps each job's answer as it
opened, works out those of the jobs the feed names, and asks the jobs touched since the
snapshot afresh, without keeping their answers (which are no longer the opening ones).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Generic, TypeVar

from vspec.api.job_info import JobInfo

if TYPE_CHECKING:
    from vspec.framework.session import Session

T = TypeVar("T")


class OpenAnswers(Generic[T]):
    """One question's answers for a session's jobs, kept by job id (in the scheduler's
    memo: ``SchedulerState.memo``, one subclass per question). ``answer`` must read only
    what a job holds as it opens and the session's touches move (its tasks, sums, spec
    and phase; one that reads the phase is asked before the close, where the job
    updater writes it), and one subclass is always asked the same question."""

    __slots__ = ("_mark", "opened")

    def __init__(self) -> None:
        # Each job's answer as it opened in the session of ``_mark``'s snapshot; a job
        # touched before it was first asked has none until a session opens it untouched.
        self.opened: dict[str, T] = {}
        self._mark: object | None = None

    def answers(self, ssn: Session, answer: Callable[[JobInfo], T]) -> Mapping[str, T]:
        """Every job's answer now, by job id."""
        jobs, feed = ssn.jobs, ssn.job_feed
        opened = self.opened
        touched = ssn.cache.touched_jobs
        if self._mark is not feed.mark:  # the first ask of this session
            if feed.follows(self._mark):
                for uid in feed.gone:
                    opened.pop(uid, None)
                for uid in feed.changed:
                    opened.pop(uid, None)
            else:
                opened.clear()
            self._mark = feed.mark
        if len(opened) < len(jobs):
            for uid in jobs.keys() - opened.keys() - touched:
                opened[uid] = answer(jobs[uid])
        moved = touched & jobs.keys()
        if not moved:
            return opened
        now = dict(opened)
        for uid in moved:
            now[uid] = answer(jobs[uid])
        return now


class _Pending(OpenAnswers[bool]):
    """Whether each job is pending (enqueue's and allocate's pass over every job)."""


def pending_jobs(ssn: Session) -> Mapping[str, bool]:
    """Whether each of the session's jobs is pending now (``JobInfo.is_pending``)."""
    return ssn.state.memo(_Pending).answers(ssn, JobInfo.is_pending)


class _Ready(OpenAnswers[bool]):
    """Whether each job is ready (gang's pass over every job at the close)."""


def ready_jobs(ssn: Session) -> Mapping[str, bool]:
    """Whether each of the session's jobs is ready now (``JobInfo.is_ready``)."""
    return ssn.state.memo(_Ready).answers(ssn, JobInfo.is_ready)
