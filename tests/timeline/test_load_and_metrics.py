"""Timeline keys and metric bounds: located errors for what is wrong, values for what
is right."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from tests.timeline.conftest import Loader
from vspec.timeline.expr import MetricError, check_bound, evaluate, parse_bound
from vspec.timeline.records import JobRecord, Tick, TimelineResult

ONE_JOB = """
name: t
cluster:
  nodes: [{name: n1, allocatable: {cpu: 4}}]
timeline:
  arrivals:
  - {at: 0s, runFor: 1m, jobs: [{name: a, tasks: [{name: w, requests: {cpu: 1}}]}]}
"""


@pytest.mark.parametrize(
    ("tail", "line", "message"),
    [
        ("expect: {metrics: ['p95(wiat) < 1m']}", 7, "p95() takes wait or completion first"),
        ("expect: {metrics: ['mean(util(cpu))']}", 7, "is not a bound"),
        ("expect: {metrics: ['foo > 1']}", 7, "unknown name 'foo'"),
        ("expect: {metrics: ['p95(wait, tga=big) < 1m']}", 7, "did you mean 'tag'"),
        ("expect: {podGroups: {default/a: {phase: Running}}}", 7, "a timeline's spec bounds"),
    ],
)
def test_bad_bounds_are_located(loader: Loader, tail: str, line: int, message: str) -> None:
    (error,) = loader.errors(ONE_JOB + tail)
    assert error.startswith(f"{line}:") and message in error


def test_metrics_need_a_timeline(loader: Loader) -> None:
    (error,) = loader.errors("name: t\nexpect: {metrics: ['makespan < 1h']}\n")
    assert "this spec has none" in error


def test_timeline_errors_are_located(loader: Loader) -> None:
    errors = loader.errors(
        """
        name: t
        cluster:
          nodes: [{name: n1, allocatable: {cpu: 4}}]
        timeline:
          period: 1x
          arrivals:
          - {at: 0s, runForTask: {nope: 1m}, jobs: [{name: a, tasks: [{name: w}]}]}
          nodes:
          - {at: 1m, drain: n9}
        """
    )
    assert any(e.startswith("5:") and "is not a duration" in e for e in errors), errors
    (more,) = loader.errors(ONE_JOB.replace("runFor: 1m,", "runForTask: {nope: 1m},"))
    assert more.startswith("6:") and "no task 'nope' in this arrival (its tasks: w)" in more
    (node,) = loader.errors(ONE_JOB + "  nodes:\n  - {at: 1m, drain: n9}\n")
    assert node.startswith("8:") and "no node 'n9'" in node


def test_an_arrival_name_clashing_with_the_cluster_is_an_error(loader: Loader) -> None:
    text = ONE_JOB.replace("nodes: [{name: n1, allocatable: {cpu: 4}}]", "jobs: [{name: a}]")
    (error,) = loader.errors(text)
    assert "pod group 'default/a' is defined twice" in error


def _result(waits: list[float | None], fairness: list[float]) -> TimelineResult:
    start = datetime(2025, 1, 1, tzinfo=UTC)
    result = TimelineResult(start=start, end=start + timedelta(minutes=len(fairness)))
    for i, wait in enumerate(waits):
        started = None if wait is None else start + timedelta(seconds=wait)
        tags = ("big",) if i % 2 else ()
        result.jobs[f"ns/j{i}"] = JobRecord(f"ns/j{i}", "q1", tags, 1, 1, start, started)
    for i, f in enumerate(fairness):
        result.ticks.append(
            Tick(
                start + timedelta(minutes=i),
                True,
                used={"cpu": 10.0 * f},
                capacity={"cpu": 20.0},
                queue_used={"q1": {"cpu": 10.0 * f}},
                queue_deserved={"q1": {"cpu": 10.0}},
                pending=0,
                running=0,
            )
        )
    return result


def test_job_aggregates_and_filters() -> None:
    result = _result([0, 60, 120, 600, 30, None], [1.0])
    assert evaluate("p50(wait)", result) == 60  # nearest rank over 6 values
    assert evaluate("max(wait, tag=big)", result) == math.inf  # j5 never started
    assert evaluate("max(wait, tag=big, job='ns/j[13]')", result) == 600
    assert evaluate("count(tag=big)", result) == 3
    assert evaluate("mean(wait, job='ns/j[0-2]')", result) == 60
    assert check_bound("p95(wait, tag=big) <= 5m", result) == "p95(wait, tag=big) is never"
    assert check_bound("p50(wait) <= 5m", result) is None
    assert "no job matches tag=small" in str(check_bound("max(wait, tag=small) < 1s", result))


def test_series_over_time() -> None:
    # Fairness by minute: 1, .5, .5, .5, 1, .7 -> below 80% for 3 minutes, then 1 more.
    result = _result([0], [1.0, 0.5, 0.5, 0.5, 1.0, 0.7])
    assert evaluate("longest(fairness(q1) < 80%)", result) == 180
    assert evaluate("total(fairness(q1) < 80%)", result) == 240
    assert evaluate("mean(util(cpu))", result) == pytest.approx((1 + 0.5 * 3 + 1 + 0.7) / 12)
    assert evaluate("min(share(q1) / deserved(q1))", result) == pytest.approx(0.5)
    assert check_bound("longest(fairness(q1) < 0.8) <= 10m", result) is None
    failed = check_bound("longest(fairness(q1) < 0.8) <= 2m", result)
    assert failed == "longest(fairness(q1) < 0.8) is 3m0s"
    assert "no queue 'q2'" in str(check_bound("mean(share(q2)) > 0", result))


def test_only_the_form_is_accepted() -> None:
    for text in ("__import__('os') == 1", "p95(wait).real < 1", "[1] == [1]", "1 < 2 if 1 else 3"):
        with pytest.raises(MetricError):
            parse_bound(text)
