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

from collections.abc import Callable, Hashable, Iterable, Mapping, Set
from itertools import count
from typing import TYPE_CHECKING, Generic, TypeVar

from vspec.api.job_info import JobInfo

if TYPE_CHECKING:
    from vspec.framework.session import Session

T = TypeVar("T")


class _Kept:
    """What :class:`OpenAnswers` and :class:`OpenGroups` keep alike: the mark of the
    snapshot their jobs opened in, and the jobs then touched before the first ask, which
    have no answer kept. Which jobs to ask is worked out from the feed alone (those it
    names, and those left unasked), not by comparing every job's id with the kept ones."""

    __slots__ = ("_mark", "_unasked")

    def __init__(self) -> None:
        self._mark: object | None = None
        self._unasked: Set[str] = frozenset()

    def _forget(self, uid: str) -> None:
        """Drop the job's kept answer, if any."""
        raise NotImplementedError

    def _clear(self) -> None:
        """Drop every kept answer."""
        raise NotImplementedError

    def _to_ask(self, ssn: Session) -> Set[str]:
        """The session's jobs with no answer kept and not touched since the snapshot
        (patched by the feed at the first ask of a session): every other job has its
        answer as it opened kept, or has been touched."""
        jobs, feed = ssn.jobs, ssn.job_feed
        unasked: Set[str]
        if self._mark is feed.mark:
            unasked = self._unasked
        elif feed.follows(self._mark):
            for uid in feed.gone | feed.changed:
                self._forget(uid)
            unasked = (feed.changed | self._unasked) & jobs.keys()
        else:
            self._clear()
            unasked = set(jobs)
        self._mark = feed.mark
        touched = ssn.cache.touched_jobs
        self._unasked = unasked & touched
        return unasked - touched


class OpenAnswers(_Kept, Generic[T]):
    """One question's answers for a session's jobs, kept by job id (in the scheduler's
    memo: ``SchedulerState.memo``, one subclass per question). ``answer`` must read only
    what a job holds as it opens and the session's touches move (its tasks, sums, spec
    and phase; one that reads the phase is asked before the close, where the job
    updater writes it), and one subclass is always asked the same question."""

    __slots__ = ("opened",)

    def __init__(self) -> None:
        super().__init__()
        # Each job's answer as it opened in the session of ``_mark``'s snapshot; a job
        # touched before it was first asked has none until a session opens it untouched.
        self.opened: dict[str, T] = {}

    def _forget(self, uid: str) -> None:
        self.opened.pop(uid, None)

    def _clear(self) -> None:
        self.opened.clear()

    def answers(self, ssn: Session, answer: Callable[[JobInfo], T]) -> Mapping[str, T]:
        """Every job's answer now, by job id."""
        jobs, opened = ssn.jobs, self.opened
        for uid in self._to_ask(ssn):
            opened[uid] = answer(jobs[uid])
        moved = ssn.cache.touched_jobs & jobs.keys()
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


class OpenGroups(_Kept):
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

    __slots__ = ("_groups", "_opened")

    def __init__(self) -> None:
        super().__init__()
        # Each job's key as it opened in the session of ``_mark``'s snapshot (None: left
        # out); the jobs filed under each key, at that open.
        self._opened: dict[str, Hashable | None] = {}
        self._groups: dict[Hashable, dict[str, JobInfo]] = {}

    def _forget(self, uid: str) -> None:
        key = self._opened.pop(uid, None)
        if key is not None:
            del self._groups[key][uid]

    def _clear(self) -> None:
        self._opened.clear()
        self._groups.clear()

    def groups(
        self, ssn: Session, answer: Callable[[JobInfo], Hashable | None]
    ) -> Mapping[Hashable, Mapping[str, JobInfo]]:
        """The jobs filed under each key now (a touched job by its answer now); a key
        may hold no job."""
        jobs, opened, groups = ssn.jobs, self._opened, self._groups
        for uid in self._to_ask(ssn):
            job = jobs[uid]
            key = opened[uid] = answer(job)
            if key is not None:
                groups.setdefault(key, {})[uid] = job
        moved = ssn.cache.touched_jobs & jobs.keys()
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
