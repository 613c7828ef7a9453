"""Allocate's kept JobValid answers (vspec.actions.allocate, _KeptValid): over drawn
timelines at V(3), where every idle job is popped, each answer it gives is the one
JobValid gives the job afresh; a memo that keeps an answer past a moved status is
caught."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings

from vspec.actions import allocate
from vspec.api.job_info import JobInfo
from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.framework.cache import JobFeed
from vspec.fuzz.runner import SEED_CONF
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.timeline import Timeline
from vspec.timeline.clock import run_timeline

BOUNDS = ClusterBounds(max_nodes=4, max_jobs=6)
Valid = Callable[[JobInfo], bool]


@dataclass
class Seen:
    answered: int = 0  # answers checked
    kept: int = 0  # of them, kept from an earlier session (JobValid not asked)
    wrong: list[str] = field(default_factory=list)


@contextmanager
def answers_checked() -> Iterator[Seen]:
    """Every answer the memo gives compared with JobValid asked afresh."""
    seen = Seen()
    kept_valid = allocate._KeptValid.valid

    def checked(
        memo: allocate._KeptValid,
        feed: JobFeed,
        touched: Iterable[str],
        jobs: list[JobInfo],
        valid: Valid,
    ) -> list[bool]:
        asked: list[JobInfo] = []

        def counted(job: JobInfo) -> bool:
            asked.append(job)
            return valid(job)

        answers = kept_valid(memo, feed, touched, jobs, counted)
        for job, answer in zip(jobs, answers, strict=True):
            seen.answered += 1
            if answer is not valid(job):
                seen.wrong.append(f"{job.uid}: kept {answer}")
        seen.kept += len(jobs) - len(asked)
        return answers

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(allocate._KeptValid, "valid", checked)
        yield seen


def _run(conf: SchedulerConf, cluster: Cluster, timeline: Timeline, seed: int) -> None:
    run_timeline(conf, cluster, timeline, seed=seed, verbosity=3, engine=get_engine())


def test_the_day_shape_keeps_answers_jobvalid_gives_afresh() -> None:
    from benchmarks.timeline_day import workload

    cluster, timeline = workload(nodes=20, jobs=60, hours=0.25, seed=4)
    with answers_checked() as seen:
        _run(conf_from_document(SEED_CONF), cluster, timeline, 4)
    assert seen.wrong == []
    assert seen.answered > 200
    assert seen.kept > seen.answered / 2


def test_an_answer_stands_while_the_feed_and_the_session_leave_its_job_alone() -> None:
    """The memo's own rule, one move at a time: a job the next feed does not count as
    changed or gone, and no action touched, is answered as before; a changed, touched
    or gone job, a feed that does not follow the last one, or a job never seen is asked
    (a kept answer may not outlive the clone it was found for)."""
    memo = allocate._KeptValid()
    a, b, c = JobInfo("ns/a"), JobInfo("ns/b"), JobInfo("ns/c")
    asked: list[str] = []
    marks = [object() for _ in range(6)]

    def valid(job: JobInfo) -> bool:
        asked.append(job.uid)
        return job is not b

    def ask(feed: JobFeed, *jobs: JobInfo, touched: Iterable[str] = ()) -> list[str]:
        asked.clear()
        answers = memo.valid(feed, touched, list(jobs), valid)
        assert answers == [job is not b for job in jobs]
        return list(asked)

    def feed(k: int, changed: Iterable[str] = (), gone: Iterable[str] = ()) -> JobFeed:
        return JobFeed(marks[k], marks[k - 1], frozenset(changed), frozenset(gone))

    assert ask(JobFeed(marks[0], None, frozenset(), frozenset()), a, b) == ["ns/a", "ns/b"]
    assert ask(feed(1), a, b) == []
    assert ask(feed(2, changed=["ns/a"]), a, b, c) == ["ns/a", "ns/c"]
    assert ask(feed(3), b, a, touched=["ns/b"]) == ["ns/b"]
    assert ask(feed(4, gone=["ns/c"]), a, c) == ["ns/c"]
    assert ask(feed(4), b, touched=["ns/a"]) == []  # the same session again
    assert ask(feed(4), a) == ["ns/a"]
    assert ask(JobFeed(marks[5], marks[3], frozenset(), frozenset()), a, b) == ["ns/a", "ns/b"]


@settings(max_examples=30, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), BOUNDS))
def test_seed_conf_timelines_keep_answers_jobvalid_gives_afresh(
    case: GeneratedTimelineSpec,
) -> None:
    with answers_checked() as seen, suppress(VspecError):  # a conf Volcano rejects
        _run(case.conf, case.cluster, case.timeline, case.seed)
    assert seen.wrong == []
