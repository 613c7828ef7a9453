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

from collections.abc import Callable, Hashable, Iterable, Mapping
from itertools import count
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


class _Ready(OpenAnswers[bool]):
    """Whether each job is ready (gang's pass over every job at the close)."""


def ready_jobs(ssn: Session) -> Mapping[str, bool]:
    """Whether each of the session's jobs is ready now (``JobInfo.is_ready``)."""
    return ssn.state.memo(_Ready).answers(ssn, JobInfo.is_ready)


class OpenGroups:
    """The session's jobs filed by one question's answer as each opened: a job answered
    None is left out, any other answer files it under that key. Kept by job id as
    :class:`OpenAnswers` keeps answers (in the scheduler's memo, one subclass per
    question, which must read only what a job holds as it opens), and the groups kept
    with them as dicts of job id to job: a job the feed does not name is the very clone
    filed last session (``JobFeed``), so only the jobs named, gone or touched since the
    open are filed again, and an action that reads one or two groups of a few jobs each
    (allocate's and backfill's jobs with work to do) no longer reads every live job.

    A group lists its jobs in the order they were filed, not the session's job order:
    a caller that needs that order sorts what it reads (:func:`in_session_order`)."""

    __slots__ = ("_groups", "_mark", "_opened")

    def __init__(self) -> None:
        # Each job's key as it opened in the session of ``_mark``'s snapshot (None: left
        # out); the jobs filed under each key, at that open.
        self._opened: dict[str, Hashable | None] = {}
        self._groups: dict[Hashable, dict[str, JobInfo]] = {}
        self._mark: object | None = None

    def groups(
        self, ssn: Session, answer: Callable[[JobInfo], Hashable | None]
    ) -> Mapping[Hashable, Mapping[str, JobInfo]]:
        """The jobs filed under each key now (a touched job by its answer now); a key
        may hold no job."""
        jobs, feed = ssn.jobs, ssn.job_feed
        opened, groups = self._opened, self._groups
        touched = ssn.cache.touched_jobs
        if self._mark is not feed.mark:  # the first ask of this session
            if feed.follows(self._mark):
                for uid in feed.gone | feed.changed:
                    key = opened.pop(uid, None)
                    if key is not None:
                        del groups[key][uid]
            else:
                opened.clear()
                groups.clear()
            self._mark = feed.mark
        if len(opened) < len(jobs):
            for uid in jobs.keys() - opened.keys() - touched:
                job = jobs[uid]
                key = opened[uid] = answer(job)
                if key is not None:
                    groups.setdefault(key, {})[uid] = job
        moved = touched & jobs.keys()
        if not moved:
            return groups
        now = dict(groups)
        copied: set[Hashable] = set()
        for uid in moved:
            for key, add in ((opened.get(uid), False), (answer(jobs[uid]), True)):
                if key is None:
                    continue
                if key not in copied:
                    copied.add(key)
                    now[key] = dict(now.get(key, {}))
                if add:
                    now[key][uid] = jobs[uid]
                else:
                    now[key].pop(uid, None)
        return now


def in_session_order(ssn: Session, uids: Iterable[str]) -> list[str]:
    """``uids`` in the order of the session's jobs (a few, sorted by a look-up built
    in C from every job's id)."""
    found = list(uids)
    if len(found) > 1:
        place = dict(zip(ssn.jobs, count()))
        found.sort(key=place.__getitem__)
    return found
