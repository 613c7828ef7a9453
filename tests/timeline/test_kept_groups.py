"""The jobs filed by the job feed (vspec.framework.job_answers.OpenGroups: enqueue's
pending jobs, allocate's jobs with work and its idle jobs by queue, those JobValid
passes; backfill's jobs with a Pending or Pipelined task): over drawn timelines,
session by session, each group holds exactly the session's jobs (the very objects) that
the question asked afresh of every job files there, and most jobs are not asked.
Neither the day's shape nor the drawn timelines leave an idle job JobValid rejects, so
a gang short of valid pods (one of three failed) is built for that. The feed's own rule
is tested with the OpenAnswers in tests/timeline/test_job_answers.py."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import cast

import pytest
from hypothesis import given, settings

from tests.timeline.conftest import Loader, day_shape, drawn_timelines, run_case, run_drawn
from vspec.api.job_info import JobInfo
from vspec.framework.cache import JobFeed
from vspec.framework.job_answers import OpenGroups
from vspec.framework.session import Session
from vspec.fuzz.runner import SEED_CONF, load_space
from vspec.fuzz.strategies import ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec


@dataclass
class Seen:
    jobs: dict[str, int] = field(default_factory=dict)  # per question, the jobs filed
    asked: dict[str, int] = field(default_factory=dict)  # of them, those asked
    left_out: int = 0  # jobs a question left out (allocate: JobValid rejected them)
    wrong: list[str] = field(default_factory=list)


@contextmanager
def groups_checked() -> Iterator[Seen]:
    """Every filing compared with the question asked afresh of every job."""
    seen = Seen()
    groups = OpenGroups.groups

    def checked(
        kept: OpenGroups, ssn: Session, answer: Callable[[JobInfo], Hashable | None]
    ) -> Mapping[Hashable, Mapping[str, JobInfo]]:
        name = type(kept).__name__
        asked = []

        def counted(job: JobInfo) -> Hashable | None:
            asked.append(job)
            return answer(job)

        got = groups(kept, ssn, counted)
        fresh: dict[Hashable, dict[str, JobInfo]] = {}
        for uid, job in ssn.jobs.items():
            key = answer(job)
            if key is None:
                seen.left_out += 1
            else:
                fresh.setdefault(key, {})[uid] = job
        filed = {key: dict(members) for key, members in got.items() if members}
        if filed != fresh or any(
            job is not ssn.jobs[uid] for members in got.values() for uid, job in members.items()
        ):
            seen.wrong.append(f"{name} in session {ssn.uid}")
        seen.jobs[name] = seen.jobs.get(name, 0) + len(ssn.jobs)
        seen.asked[name] = seen.asked.get(name, 0) + len(asked)
        return got

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OpenGroups, "groups", checked)
        yield seen


def test_the_day_shape_files_jobs_as_asked_afresh() -> None:
    cluster, timeline = day_shape()
    for verbosity in (3, 0):
        with groups_checked() as seen:
            run_case(conf_from_document(SEED_CONF), cluster, timeline, 4, verbosity)
        assert seen.wrong == []
        for name in ("_Waiting", "_Filed", "_Filled"):
            assert seen.jobs[name] > 200
            assert seen.asked[name] < seen.jobs[name] / 4  # most jobs are not asked


# A gang of three whose third pod failed: Running, nothing pending, two valid pods, so
# gang's JobValid rejects it in every session the arrivals around it open.
SHORT_GANG = """
name: t
cluster:
  nodes: [{name: n1, allocatable: {cpu: 8, memory: 16Gi}}]
  podGroups:
  - {name: short, minMember: 3, phase: Running}
  pods:
  - {name: short-0, podGroup: short, phase: Running, nodeName: n1, requests: {cpu: 1}}
  - {name: short-1, podGroup: short, phase: Running, nodeName: n1, requests: {cpu: 1}}
  - {name: short-2, podGroup: short, phase: Failed, nodeName: n1, requests: {cpu: 1}}
timeline:
  arrivals:
  - {at: 0s, runFor: 2m, jobs: [{name: a, tasks: [{name: w, requests: {cpu: 1}}]}]}
  - {at: 1m, runFor: 2m, jobs: [{name: b, tasks: [{name: w, requests: {cpu: 1}}]}]}
  - {at: 3m, runFor: 2m, jobs: [{name: c, tasks: [{name: w, requests: {cpu: 1}}]}]}
"""


def test_a_gang_short_of_valid_pods_stays_rejected(loader: Loader) -> None:
    spec = loader.spec(SHORT_GANG, conf=False)
    assert spec.timeline is not None
    with groups_checked() as seen:
        run_case(conf_from_document(SEED_CONF), spec.cluster, spec.timeline, 0, verbosity=3)
    assert seen.wrong == []
    assert seen.left_out >= 5  # the short gang, once a session
    assert seen.asked["_Filed"] < seen.jobs["_Filed"]


@settings(max_examples=30, deadline=None)
@given(drawn_timelines(ConfSpace(fixed=SEED_CONF)))
def test_seed_conf_timelines_file_jobs_as_asked_afresh(case: GeneratedTimelineSpec) -> None:
    with groups_checked() as seen:
        run_drawn(case, case.verbosity)
    assert seen.wrong == []


@settings(max_examples=25, deadline=None)
@given(drawn_timelines(load_space("mixed").conf or ConfSpace()))
def test_any_conf_timelines_file_jobs_as_asked_afresh(case: GeneratedTimelineSpec) -> None:
    """Preempt and reclaim evict; confs outside the job contract file every job."""
    with groups_checked() as seen:
        run_drawn(case, case.verbosity)
    assert seen.wrong == []


def _session(jobs: dict[str, JobInfo], feed: JobFeed, touched: set[str]) -> Session:
    """What a kept filing reads of a session: its jobs, its feed, the jobs touched."""
    return cast(
        Session,
        SimpleNamespace(jobs=jobs, job_feed=feed, cache=SimpleNamespace(touched_jobs=touched)),
    )


class _Parity(OpenGroups):
    """Jobs filed by whether their id is odd (a question of the test's own)."""


def test_a_job_touched_before_the_first_ask_is_filed_once_a_session_opens_it() -> None:
    """The timelines never leave such a job unnamed (a touched clone is cloned afresh
    or its pod group written back), so the rule is driven here: a job touched before
    the first ask has no kept key, and is asked at the next open the feed follows
    though the feed does not name it."""
    jobs = {uid: JobInfo(uid) for uid in ("j1", "j2", "j3")}
    kept, asked = _Parity(), []

    def odd(job: JobInfo) -> str | None:
        asked.append(job.uid)
        return "odd" if int(job.uid[1]) % 2 else None

    first = JobFeed(object(), None, frozenset(jobs), frozenset())
    got = kept.groups(_session(jobs, first, {"j3"}), odd)
    assert set(got["odd"]) == {"j1", "j3"}  # j3 asked as it is now, not kept
    assert sorted(asked) == ["j1", "j2", "j3"]
    asked.clear()
    second = JobFeed(object(), first.mark, frozenset(), frozenset())
    assert set(kept.groups(_session(jobs, second, set()), odd)["odd"]) == {"j1", "j3"}
    assert asked == ["j3"]  # asked again now that it opened untouched, and kept
    asked.clear()
    third = JobFeed(object(), second.mark, frozenset(), frozenset({"j1"}))
    del jobs["j1"]
    assert set(kept.groups(_session(jobs, third, set()), odd)["odd"]) == {"j3"}
    assert asked == []
