"""A timeline keeps every session's log lines only when ``expect.logs`` reads them: a
day at verbosity 3 logs gigabytes that nothing else reads."""

from __future__ import annotations

from datetime import datetime

from tests.timeline.conftest import Loader
from tests.timeline.test_clock import TWO_JOBS
from vspec.engines import get_engine
from vspec.harness.runner import Verdict, execute
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult
from vspec.timeline.clock import run_timeline


def _sessions_lines(loader: Loader, *, keep_logs: bool) -> tuple[list[list[str]], list[str]]:
    """Each session's lines as the hook saw them, and the result's lines."""
    spec = loader.spec(TWO_JOBS)
    assert spec.timeline is not None
    seen: list[list[str]] = []

    def hook(_now: datetime, _before: Cluster, session: SimulationResult) -> None:
        seen.append([line.text for line in session.logs])

    result = run_timeline(
        spec.scheduler,
        spec.cluster,
        spec.timeline,
        now=spec.now,
        verbosity=3,
        on_session=hook,
        engine=get_engine(),
        keep_logs=keep_logs,
    )
    return seen, [line.text for line in result.simulation.logs]


def test_without_keep_logs_the_result_holds_the_last_sessions_lines(loader: Loader) -> None:
    kept, all_lines = _sessions_lines(loader, keep_logs=True)
    seen, last_lines = _sessions_lines(loader, keep_logs=False)
    assert len(seen) > 1
    assert seen == kept  # every session's hook sees its own lines either way
    assert all_lines == [line for lines in kept for line in lines]
    assert last_lines == seen[-1] and len(last_lines) < len(all_lines)


def test_expect_logs_reads_the_lines_of_every_session(loader: Loader) -> None:
    """``a``'s pods are bound in the first session only: its bind line is found."""
    expect = "expect:\n  logs:\n    contains: ['Binding Task <default/a-w-0> to node <n1>']\n"
    body = TWO_JOBS + expect
    outcome = execute(loader.spec(body), engine=get_engine())
    assert outcome.status is Verdict.PASSED, outcome.messages
