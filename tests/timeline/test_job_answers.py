"""The per-job passes that skip the jobs the job feed does not name keep, session by
session over drawn timelines, what they work out afresh from every job: the pending
and ready answers (vspec.framework.job_answers), the job updater's statuses, writes
and events (job_updater, _Updated, the settled jobs left unstamped) and the clones the
hand-back carries on (cache)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings

from tests.timeline.conftest import day_shape, drawn_timelines, run_case, run_drawn
from vspec.api.job_info import JobInfo, same_spec
from vspec.framework import job_updater
from vspec.framework.cache import SchedulerCache
from vspec.framework.job_answers import OpenAnswers
from vspec.framework.session import Session
from vspec.fuzz.runner import SEED_CONF, load_space
from vspec.fuzz.strategies import ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec
from vspec.model.objects import Cluster


@dataclass
class Seen:
    """How often each pass was checked, how often it skipped, and what it got wrong."""

    checked: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    wrong: list[str] = field(default_factory=list)

    def count(self, what: dict[str, int], name: str, n: int = 1) -> None:
        what[name] = what.get(name, 0) + n


def _pg_status(job: JobInfo) -> tuple[object, ...]:
    pg = job.pod_group
    assert pg is not None
    return (pg.phase, pg.running, pg.succeeded, pg.failed)


@contextmanager
def passes_checked() -> Iterator[Seen]:
    """Every skipping pass's outcome compared with one worked out from every job."""
    seen = Seen()
    answers = OpenAnswers.answers
    update_all = job_updater.update_all
    hand_back = SchedulerCache.hand_back

    def answers_checked(
        self: OpenAnswers[Any], ssn: Session, answer: Callable[[JobInfo], Any]
    ) -> Mapping[str, Any]:
        asked = []

        def counted(job: JobInfo) -> Any:
            asked.append(job)
            return answer(job)

        got = answers(self, ssn, counted)
        name = type(self).__name__
        seen.count(seen.checked, name)
        seen.count(seen.skipped, name, len(ssn.jobs) - len(asked))
        fresh = {uid: answer(job) for uid, job in ssn.jobs.items()}
        if dict(got) != fresh:
            seen.wrong.append(f"{name} in session {ssn.uid}")
        return got

    def updater_checked(ssn: Session) -> dict[str, bool]:
        jobs = [job for job in ssn.jobs.values() if job.pod_group is not None]
        before = {job.uid: _pg_status(job) for job in jobs}
        events = ssn.cache.effects.events
        start = len(events)
        counts = JobInfo.status_counts
        asked = []

        def counted(job: JobInfo) -> Any:
            asked.append(job)
            return counts(job)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(JobInfo, "status_counts", counted)
            written = update_all(ssn)
        seen.count(seen.skipped, "updater", len(jobs) - len(asked))
        got = ({uid: _pg_status(job) for uid, job in ssn.jobs.items()}, events[start:])
        # Again from every job: the statuses as the plugins closed them, every job asked.
        for job in jobs:
            pg = job.pod_group
            assert pg is not None
            pg.phase, pg.running, pg.succeeded, pg.failed = before[job.uid]
        del events[start:]
        same = job_updater._same_conditions

        def never_holds(new: Any, old: Any, session: str | None = None) -> bool:
            return session is None and same(new, old)  # no status is taken as held

        # The settled jobs stamped as gang would have, and read like the others; then
        # left as the close left them (unstamped, the memo of what settles kept).
        stamped, memo = ssn.stamped, ssn.state.memo(job_updater._Settled)
        kept = memo.mark, memo.jobs
        unstamped = {}
        if stamped is not None:
            for uid in stamped.jobs:
                pg = ssn.jobs[uid].pod_group
                assert pg is not None
                unstamped[uid] = list(pg.conditions)
                pg.conditions[0] = stamped.condition
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(job_updater, "_same_conditions", never_holds)
            patch.setattr(ssn, "stamped", None)
            fresh_written = update_all(ssn)
        memo.mark, memo.jobs = kept
        for uid, conditions in unstamped.items():
            pg = ssn.jobs[uid].pod_group
            assert pg is not None
            pg.conditions = conditions
        fresh = ({uid: _pg_status(job) for uid, job in ssn.jobs.items()}, events[start:])
        seen.count(seen.checked, "updater")
        seen.count(seen.skipped, "settled", len(unstamped))
        if written != fresh_written or got != fresh:
            seen.wrong.append(f"updater in session {ssn.uid}")
        return written

    def hand_back_checked(
        self: SchedulerCache, cluster: Cluster, settled: Collection[str] = ()
    ) -> None:
        fed = len(self._handed_changed)
        hand_back(self, cluster, settled)
        seen.count(seen.checked, "hand_back")
        seen.count(seen.skipped, "hand_back", len(self._carried) - fed)
        for uid, kept in self._carried.items():
            source, clone = kept.source.pod_group, kept.clone.pod_group
            held = kept.spec_held
            if (
                source is None
                or clone is None
                or held is None
                or held[0] is not source
                or held[1] is not clone
                or not same_spec(source, clone)
            ):
                seen.wrong.append(f"hand_back carried {uid} of another spec")
            elif kept.written is None or clone.conditions != kept.written.conditions:
                # a new clone's are those of the pod group the next cluster holds
                seen.wrong.append(f"hand_back carried {uid} with other conditions")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OpenAnswers, "answers", answers_checked)
        patch.setattr(job_updater, "update_all", updater_checked)
        patch.setattr("vspec.framework.framework.update_all", updater_checked)
        patch.setattr(SchedulerCache, "hand_back", hand_back_checked)
        yield seen


def test_the_day_shape_skips_most_jobs_and_keeps_every_answer() -> None:
    cluster, timeline = day_shape()
    with passes_checked() as seen:
        run_case(conf_from_document(SEED_CONF), cluster, timeline, 4, 0)
    assert seen.wrong == []
    for name in ("_Ready", "updater", "hand_back"):
        assert seen.checked[name] > 40
    for name in ("_Ready", "updater", "hand_back"):
        assert seen.skipped[name] > 5 * seen.checked[name]  # most jobs are not asked
    assert seen.skipped["settled"] > 5 * seen.checked["updater"]  # and most are settled


def _checked(case: GeneratedTimelineSpec) -> None:
    with passes_checked() as seen:
        run_drawn(case, case.verbosity)
    assert seen.wrong == []


@settings(max_examples=30, deadline=None)
@given(drawn_timelines(ConfSpace(fixed=SEED_CONF)))
def test_seed_conf_timelines_keep_every_answer(case: GeneratedTimelineSpec) -> None:
    _checked(case)


@settings(max_examples=25, deadline=None)
@given(drawn_timelines(load_space("mixed").conf or ConfSpace()))
def test_any_conf_timelines_keep_every_answer(case: GeneratedTimelineSpec) -> None:
    """Preempt and reclaim evict; confs outside the job contract ask every job."""
    _checked(case)
