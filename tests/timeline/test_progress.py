"""The clock's progress reports (an observer the clock calls and never waits on) and
``vspec compare``'s view of them: the simulated time reached out of the span, the
sessions, and the time left at the pace so far."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

from rich.console import Console

from tests.timeline.conftest import Loader
from vspec.cli.compare_progress import EVERY, CompareProgress
from vspec.engines import get_engine
from vspec.timeline.clock import Progress, run_timeline

# Arrivals over an hour, a backlog that waits, a node added later: sessions and jumps.
HOUR = """
name: t
cluster:
  nodes: [{name: n1, allocatable: {cpu: 4}}]
timeline:
  period: 10s
  arrivals:
  - {at: 0s, count: 12, every: 5m, runFor: {exponential: 20m},
     jobs: [{name: j, tasks: [{name: w, replicas: 2, requests: {cpu: 1}}]}]}
  - {at: 20m, runFor: 30m, jobs: [{name: big, tasks: [{name: w, requests: {cpu: 6}}]}]}
  nodes:
  - {at: 50m, add: {name: n2, allocatable: {cpu: 8}}}
"""


def test_progress_is_monotone_and_ends_at_the_span(loader: Loader) -> None:
    reports: list[Progress] = []
    spec = loader.spec(HOUR)
    assert spec.timeline is not None
    args = (spec.scheduler, spec.cluster, spec.timeline)
    watched = run_timeline(*args, now=spec.now, engine=get_engine(), on_progress=reports.append)
    alone = run_timeline(*args, now=spec.now, engine=get_engine())
    # An observer changes nothing of the run.
    assert watched.jobs == alone.jobs and watched.pods == alone.pods
    assert watched.ticks == alone.ticks
    *running, last = reports
    assert len(running) > watched.sessions  # one a session, and one a jump
    assert all(not r.done for r in running) and last.done
    reached = [r.reached for r in reports]
    assert reached == sorted(reached) and reached[0] == timedelta(0)
    assert [r.sessions for r in reports] == sorted(r.sessions for r in reports)
    assert all(r.reached <= r.span for r in reports)
    assert last.reached == last.span == watched.end - watched.start
    assert last.sessions == watched.sessions and last.skipped == watched.skipped
    # Before the end, the span is what the arrivals say: the latest of their times plus
    # their run times (the node event at 50m is earlier), until the clock passes it.
    ends = [a.at + max(a.run_for.values()) for a in spec.timeline.arrivals]
    assert running[0].span == max(ends) > timedelta(minutes=50)


def test_until_bounds_the_span(loader: Loader) -> None:
    reports: list[Progress] = []
    loader.run(HOUR.replace("period: 10s", "period: 10s\n  until: 30m"), on_progress=reports.append)
    assert {r.span for r in reports[:-1]} == {timedelta(minutes=30)}
    assert reports[-1].done and reports[-1].reached <= timedelta(minutes=30)
    assert reports[-1].reached == reports[-1].span


def _progress(minutes: float, span: float = 240, sessions: int = 0) -> Progress:
    return Progress(timedelta(minutes=minutes), timedelta(minutes=span), sessions, 0)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_say_where_each_run_is_and_the_time_left() -> None:
    out, clock = io.StringIO(), _Clock()
    confs = {"seed": Path("seed.yaml"), "pack": Path("pack.yaml")}
    with CompareProgress(confs, out, tty=False, clock=clock) as view:
        view.started("seed")
        view.update("seed", _progress(0))
        clock.now = 10.0
        view.update("seed", _progress(60, sessions=1234))  # an hour in 10 seconds
        assert "seed: 1h 0m of 4h 0m (25%), 1,234 sessions" in view.line("seed", clock.now)
        assert view.line("seed", clock.now).endswith("about 0:00:30 left")
        assert view.line("pack", clock.now) == "pack: waiting"
        # The two runs' simulated time still to run, at the pace measured: 3h + 4h.
        assert view.left(clock.now) == 70.0
        clock.now = EVERY + 1
        view.update("seed", _progress(120, sessions=2000))
        view.update("seed", Progress(timedelta(hours=4), timedelta(hours=4), 3000, 7, done=True))
    text = out.getvalue()
    assert text.startswith("running seed (seed.yaml) ...\n")
    assert "seed: 2h 0m of 4h 0m (50%), 2,000 sessions, about 0:00:" in text
    assert "all 2 confs: about" in text
    assert "seed: done, 4h 0m simulated in 0:00:31, 3,000 sessions run, 7 periods jumped" in text


def test_no_progress_says_only_when_runs_start_and_end() -> None:
    out, clock = io.StringIO(), _Clock()
    with CompareProgress({"a": Path("a.conf")}, out, tty=False, shown=False, clock=clock) as view:
        view.started("a")
        for minute in range(0, 240, 10):
            clock.now += EVERY
            view.update("a", _progress(minute))
        view.update("a", Progress(timedelta(hours=4), timedelta(hours=4), 5, 0, done=True))
    assert out.getvalue().splitlines() == [
        "running a (a.conf) ...",
        "a: done, 4h 0m simulated in 0:12:00, 5 sessions run, 0 periods jumped",
    ]


def test_the_bars_show_each_running_conf() -> None:
    clock = _Clock()
    view = CompareProgress({"a": Path("a"), "b": Path("b")}, io.StringIO(), tty=False, clock=clock)
    view.started("a")
    view.update("a", _progress(0, span=7 * 24 * 60))
    clock.now = 60.0
    view.update("a", _progress(24 * 60, span=7 * 24 * 60, sessions=9500))
    screen = io.StringIO()
    Console(file=screen, width=160, force_terminal=False).print(view)
    drawn = screen.getvalue()
    assert "a: 1d 0h 0m of 7d 0h 0m (14%), 9,500 sessions, about 0:06:00 left" in drawn
    assert "━" in drawn  # the bar
    assert "b:" not in drawn  # not started
    assert "all 2 confs: about 0:13:00 left" in drawn  # 6 days of a, 7 of b, a day a minute


def test_the_time_left_follows_the_recent_pace() -> None:
    """A run's first hours are cheap (its cluster fills up): the time left is measured at
    the pace of the last WINDOW seconds, not since the start."""
    clock = _Clock()
    view = CompareProgress({"a": Path("a")}, io.StringIO(), tty=False, clock=clock)
    view.started("a")
    view.update("a", _progress(0, span=24 * 60))
    clock.now = 10.0
    view.update("a", _progress(6 * 60, span=24 * 60))  # six hours in ten seconds
    for step in range(1, 13):  # then an hour a minute
        clock.now = 10.0 + 60 * step
        view.update("a", _progress(60 * (6 + step), span=24 * 60))
    # Six hours left at an hour a minute, where the pace since the start (18 hours in
    # 730 seconds) would say four minutes.
    assert view.line("a", clock.now).endswith("about 0:06:00 left")


def test_a_finished_run_keeps_its_pace_for_the_others_estimate() -> None:
    clock = _Clock()
    view = CompareProgress({"a": Path("a"), "b": Path("b")}, io.StringIO(), tty=False, clock=clock)
    view.started("a")
    view.update("a", _progress(0, span=60))
    clock.now = 60.0
    view.update("a", Progress(timedelta(hours=1), timedelta(hours=1), 10, 0, done=True))
    clock.now = 600.0  # b loads its workload: no report of it yet
    view.started("b")
    assert view.left(clock.now) == 60.0  # b's hour at a's hour a minute
