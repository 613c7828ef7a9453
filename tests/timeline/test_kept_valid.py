"""Allocate's JobValid answers kept by the job feed (vspec.actions.allocate, _Valid, an
OpenAnswers): over drawn timelines at V(3), where every idle job is popped, each idle
job is kept or dropped by the answer JobValid gives it afresh, and most answers are
kept rather than asked again. Neither the day's shape nor the drawn timelines leave an
idle job JobValid rejects, so a gang short of valid pods (one of three failed) is built
for that. The feed's own rule is tested with the other OpenAnswers in
tests/timeline/test_job_answers.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings

from tests.timeline.conftest import Loader, day_shape, drawn_timelines, run_case, run_drawn
from vspec.actions import allocate
from vspec.api.job_info import JobInfo
from vspec.framework.session import Session
from vspec.fuzz.runner import SEED_CONF
from vspec.fuzz.strategies import ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec


@dataclass
class Seen:
    answered: int = 0  # idle jobs answered
    rejected: int = 0  # of them, those JobValid rejects
    asked: int = 0  # JobValid calls allocate made
    wrong: list[str] = field(default_factory=list)


@contextmanager
def answers_checked() -> Iterator[Seen]:
    """Every idle job's kept answer compared with JobValid asked afresh."""
    seen = Seen()
    keep = allocate._IdleJobs.keep_answered
    answers = allocate._Valid.answers

    def checked(idle: allocate._IdleJobs, answers: Mapping[str, bool]) -> None:
        fresh = idle._valid
        assert fresh is not None
        for job in idle.jobs:
            seen.answered += 1
            seen.rejected += not fresh(job)
            if answers[job.uid] is not fresh(job):
                seen.wrong.append(f"{job.uid}: kept {answers[job.uid]}")
        keep(idle, answers)

    def counted(
        kept: allocate._Valid, ssn: Session, answer: Callable[[JobInfo], bool]
    ) -> Mapping[str, bool]:
        def asked(job: JobInfo) -> bool:
            seen.asked += 1
            return answer(job)

        return answers(kept, ssn, asked)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(allocate._IdleJobs, "keep_answered", checked)
        patch.setattr(allocate._Valid, "answers", counted)
        yield seen


def test_the_day_shape_keeps_answers_jobvalid_gives_afresh() -> None:
    cluster, timeline = day_shape()
    with answers_checked() as seen:
        run_case(conf_from_document(SEED_CONF), cluster, timeline, 4, verbosity=3)
    assert seen.wrong == []
    assert seen.answered > 200
    assert seen.asked < seen.answered / 2


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
    with answers_checked() as seen:
        run_case(conf_from_document(SEED_CONF), spec.cluster, spec.timeline, 0, verbosity=3)
    assert seen.wrong == []
    assert seen.rejected >= 5  # the short gang, once a session
    assert seen.asked < seen.answered


@settings(max_examples=30, deadline=None)
@given(drawn_timelines(ConfSpace(fixed=SEED_CONF)))
def test_seed_conf_timelines_keep_answers_jobvalid_gives_afresh(
    case: GeneratedTimelineSpec,
) -> None:
    with answers_checked() as seen:
        run_drawn(case, 3)
    assert seen.wrong == []
