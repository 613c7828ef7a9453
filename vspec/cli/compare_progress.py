"""Where ``vspec compare``'s runs are: for each conf, the simulated time its clock has
reached out of the workload's span, the sessions run, and the time left at the pace its
clock has kept so far (simulated seconds per second); and the time left for them all.

On a terminal, rich draws a bar per conf on stderr and redraws it in place four times a
second; it disappears when the runs end, leaving the lines said as each run started and
ended. Elsewhere (a pipe, a CI log) a plain line per running conf every :data:`EVERY`
seconds. With ``--no-progress`` only the start and end lines. Nothing goes to stdout,
where the table is.

The clock is not asked to show anything: it reports to an observer
(:class:`vspec.timeline.clock.Progress`), and the runs hand its reports here
(:mod:`vspec.report.compare_runs`), from a worker's queue when in processes.
Imports the clock's report type; rich when the bars are drawn.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from vspec.timeline.clock import Progress

if TYPE_CHECKING:
    from types import TracebackType

    from rich.console import RenderableType
    from rich.live import Live

EVERY = 30.0  # seconds between plain progress lines
# The pace is measured over the last WINDOW seconds: a run's first hours cost less than
# the rest (its cluster fills up), so the pace since its start would promise too much.
WINDOW = 300.0


@dataclass
class _Conf:
    """One run as last heard of."""

    path: Path
    began: float | None = None  # when its run started
    # (when, simulated seconds) of its reports of the last WINDOW seconds, and the one before
    samples: deque[tuple[float, float]] = field(default_factory=deque)
    latest: Progress | None = None

    @property
    def done(self) -> bool:
        return self.latest is not None and self.latest.done

    def heard(self, now: float, progress: Progress) -> None:
        self.latest = progress
        samples = self.samples
        samples.append((now, progress.reached.total_seconds()))
        while len(samples) > 2 and samples[1][0] <= now - WINDOW:
            samples.popleft()

    def rate(self, now: float) -> float | None:
        """Simulated seconds per second over the last :data:`WINDOW` seconds; None before
        the clock has moved."""
        if not self.samples:
            return None
        when, reached = self.samples[0]
        last, latest = self.samples[-1]
        end = last if self.done else now  # a clock that has stopped keeps its pace
        gained = latest - reached
        return gained / (end - when) if gained > 0 and end > when else None

    def left(self, now: float) -> float | None:
        rate = self.rate(now)
        if rate is None or self.latest is None:
            return None
        return (self.latest.span - self.latest.reached).total_seconds() / rate


class CompareProgress:
    """The view of the runs (:class:`vspec.report.compare_runs.ProgressView`): entered
    while they run; ``workers`` runs at a time share the time left for them all."""

    def __init__(
        self,
        confs: dict[str, Path],
        stream: TextIO,
        *,
        workers: int = 1,
        shown: bool = True,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.confs = {name: _Conf(path) for name, path in confs.items()}
        self.stream, self.workers, self.shown, self.clock = stream, workers, shown, clock
        self.tty = _is_terminal(stream) if tty is None else tty
        self.live: Live | None = None
        self.last_lines = clock()

    def __enter__(self) -> CompareProgress:
        if self.shown and self.tty:
            self.live = _live(self, self.stream)
            self.live.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    # -- what the runs report --

    def started(self, name: str) -> None:
        conf = self.confs[name]
        conf.began = self.clock()
        self._say(f"running {name} ({conf.path}) ...")

    def update(self, name: str, progress: Progress) -> None:
        conf = self.confs[name]
        now = self.clock()
        conf.heard(now, progress)
        if progress.done:
            took = _clock_time(now - (conf.began if conf.began is not None else now))
            self._say(
                f"{name}: done, {_simulated(progress.reached)} simulated in {took}, "
                f"{progress.sessions:,} sessions run, {progress.skipped:,} periods jumped"
            )
        elif self.shown and not self.tty and now - self.last_lines >= EVERY:
            self.last_lines = now
            self._say("\n".join(self.lines(now)))

    # -- what is shown --

    def line(self, name: str, now: float) -> str:
        """Where one run is: ``seed: 1d 4h of 7d 2h (17%), 2,345 sessions, about 0:41:10
        left``."""
        conf = self.confs[name]
        progress = conf.latest
        if conf.began is None:
            return f"{name}: waiting"
        if progress is None:
            return f"{name}: loading the workload"
        text = (
            f"{name}: {_simulated(progress.reached)} of {_simulated(progress.span)} "
            f"({_fraction(progress):.0%}), {progress.sessions:,} sessions"
        )
        if progress.done:
            return text + ", done"
        left = conf.left(now)
        return text + (f", about {_clock_time(left)} left" if left is not None else "")

    def lines(self, now: float) -> list[str]:
        """The runs started and not done, and the time left for all."""
        shown = [
            self.line(n, now) for n, c in self.confs.items() if c.began is not None and not c.done
        ]
        left = self.left(now)
        if left is not None:
            shown.append(f"all {len(self.confs)} confs: about {_clock_time(left)} left")
        return shown

    def left(self, now: float) -> float | None:
        """The time left for every run not done: their simulated time still to run (a run
        not started: the longest span heard of) at the mean pace of the runs measured so
        far, ``workers`` at a time."""
        rates = [r for c in self.confs.values() if (r := c.rate(now)) is not None]
        spans = [c.latest.span for c in self.confs.values() if c.latest is not None]
        if not rates or not spans:
            return None
        span = max(spans).total_seconds()
        remaining, running = 0.0, 0
        for conf in self.confs.values():
            if conf.done:
                continue
            running += 1
            latest = conf.latest
            remaining += (
                span
                if latest is None
                else latest.span.total_seconds() - latest.reached.total_seconds()
            )
        pace = sum(rates) / len(rates) * min(self.workers, max(running, 1))
        return remaining / pace

    def __rich__(self) -> RenderableType:
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        now = self.clock()
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True, overflow="ellipsis")
        for name, conf in self.confs.items():
            progress = conf.latest
            if conf.began is None or conf.done:
                continue
            total = progress.span.total_seconds() if progress else 1.0
            done = progress.reached.total_seconds() if progress else 0.0
            grid.add_row(
                ProgressBar(total=total or 1.0, completed=done, width=20),
                Text(self.line(name, now)),
            )
        left = self.left(now)
        if left is not None:
            grid.add_row("", Text(f"all {len(self.confs)} confs: about {_clock_time(left)} left"))
        return grid

    def _say(self, text: str) -> None:
        if self.live is not None:
            self.live.console.print(text, highlight=False, markup=False)
        else:
            print(text, file=self.stream, flush=True)


def _fraction(progress: Progress) -> float:
    span = progress.span.total_seconds()
    return progress.reached.total_seconds() / span if span else 1.0


def _simulated(span: timedelta) -> str:
    """A simulated duration to the minute: ``2d 3h 5m``, ``4h 0m``, ``12m``."""
    minutes = int(span.total_seconds() // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{days}d"] if days else []
    if days or hours:
        parts.append(f"{hours}h")
    parts.append(f"{minutes}m")
    return " ".join(parts)


def _clock_time(seconds: float) -> str:
    """Wall time as ``h:mm:ss``."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def _is_terminal(stream: TextIO) -> bool:
    from rich.console import Console

    console = Console(file=stream)
    return console.is_terminal and not console.is_dumb_terminal


def _live(view: CompareProgress, stream: TextIO) -> Live:
    from rich.console import Console
    from rich.live import Live

    console = Console(file=stream, highlight=False)
    # stdout is the table's: only what is written to stderr goes above the bars.
    return Live(view, console=console, transient=True, refresh_per_second=4, redirect_stdout=False)
