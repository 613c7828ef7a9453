"""The passes fed by the job feed (vspec.framework.cache, JobFeed) keep, session by
session over drawn timelines, what they would work out afresh from every job."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings

from tests.timeline.conftest import day_shape, drawn_timelines, run_case, run_drawn
from vspec.api.pod_group_info import PodGroupTexts
from vspec.api.task_info import TaskTexts
from vspec.fuzz.runner import SEED_CONF
from vspec.fuzz.strategies import ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec
from vspec.plugins import logprint


@dataclass
class Seen:
    """How often each consumer was checked, and took the feed's way."""

    checked: dict[str, int] = field(default_factory=dict)
    fed: dict[str, int] = field(default_factory=dict)
    wrong: list[str] = field(default_factory=list)

    def count(self, what: dict[str, int], name: str) -> None:
        what[name] = what.get(name, 0) + 1


def _counted(seen: Seen, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.count(seen.fed, name)
        return fn(*args, **kwargs)

    return counted


@contextmanager
def consumers_checked() -> Iterator[Seen]:
    """Every fed consumer's answer compared with one worked out afresh."""
    seen = Seen()
    printed = logprint._print

    def lines_checked(ssn: Any, jobs: Any, task_text: Any, group_text: Any) -> None:
        log = ssn.log
        start = len(log.lines)
        printed(ssn, jobs, task_text, group_text)
        lines = [(line.verbosity, line.cycle, line.text, line.source) for line in log.lines[start:]]
        fresh = [
            (logprint.PRINT_VERBOSITY, log.cycle, text, source)
            for job in jobs
            for text, source in logprint._render(
                job, job.tasks_go_string(TaskTexts()), PodGroupTexts()
            )
        ]
        seen.count(seen.checked, "logprint")
        if lines != fresh:
            seen.wrong.append(f"logprint's lines in session {ssn.uid}")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(logprint, "_print", lines_checked)
        patch.setattr(logprint._Feed, "_fed", _counted(seen, "logprint", logprint._Feed._fed))
        yield seen


def test_the_day_shape_feeds_every_consumer_what_it_works_out_afresh() -> None:
    cluster, timeline = day_shape()
    with consumers_checked() as seen:
        run_case(conf_from_document(SEED_CONF), cluster, timeline, 4, 1)
    assert seen.wrong == []
    assert seen.checked["logprint"] > 40
    assert seen.fed["logprint"] > seen.checked["logprint"] / 2


@settings(max_examples=30, deadline=None)
@given(drawn_timelines(ConfSpace(fixed=SEED_CONF)))
def test_seed_conf_timelines_feed_every_consumer_what_it_works_out_afresh(
    case: GeneratedTimelineSpec,
) -> None:
    with consumers_checked() as seen:
        run_drawn(case, max(case.verbosity, 1))
    assert seen.wrong == []
