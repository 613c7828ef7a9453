"""Where a long ``vspec run`` is, on a live line at the bottom of the terminal.

A spec that runs longer than :data:`SHOW_AFTER` seconds shows its name, cycle, action and
the tasks placed so far; a run of several files shows a counter with an estimate of the
time left. The lines are redrawn in place and disappear when the run ends, so the output
that stays is what ``vspec run`` prints anyway; when stdout is not a terminal (a pipe, a
CI log) nothing is drawn at all.

The engine is not asked to report anything: the line is fed by a
:class:`~vspec.framework.recorder.Recorder` (the hooks a session already calls) and by the
runner's per-spec callbacks, and rich redraws it from its own thread four times a second.

Imports the framework's recorder seam; rich when the line is drawn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from vspec.framework.recorder import Recorder

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

    from vspec.api.node_info import NodeInfo
    from vspec.api.task_info import TaskInfo
    from vspec.framework.session import Session
    from vspec.harness.runner import SpecOutcome
    from vspec.model.spec import Spec

SHOW_AFTER = 1.0  # seconds a spec runs before its own line appears


@dataclass
class LiveState(Recorder):
    """What the live line shows; set by the runner's callbacks and the recorder hooks
    (main thread), read by rich's refresh thread."""

    watches_nodes = False  # only chose is watched, which every path calls
    files: int = 0  # spec files in the run
    clock: Any = time.monotonic
    started: float = field(default_factory=time.monotonic)
    done: int = 0  # specs finished
    files_done: int = 0
    file: str | None = None
    spec: str | None = None
    spec_started: float = 0.0
    cycles: int = 1  # the spec's own; sessions beyond them are an invariant's re-run
    rerun: bool = False
    cycle: int = 0
    action: str = ""
    placed: int = 0

    # -- the runner's callbacks --

    def before(self, spec: Spec) -> None:
        if spec.location.file != self.file:
            if self.file is not None:
                self.files_done += 1
            self.file = spec.location.file
        self.spec, self.spec_started, self.cycles = spec.name, self.clock(), spec.cycles
        self.cycle, self.action, self.placed, self.rerun = 0, "", 0, False

    def after(self, _outcome: SpecOutcome) -> None:
        self.done += 1
        self.spec = None

    # -- the session's hooks --

    def session_opened(self, ssn: Session) -> None:
        if self.cycle == self.cycles:  # the invariants run the spec again
            self.cycle, self.placed, self.rerun = 0, 0, True
        self.cycle += 1

    def action_started(self, ssn: Session, action: str) -> None:
        self.action = action

    def chose(self, ssn: Session, task: TaskInfo, node: NodeInfo | None) -> None:
        if node is not None:
            self.placed += 1

    # -- what is shown --

    def lines(self) -> list[str]:
        now = self.clock()
        shown: list[str] = []
        if self.spec is not None and now - self.spec_started >= SHOW_AFTER:
            where = f"cycle {self.cycle} of {self.cycles}"
            where += f", {self.action}" if self.action else ""
            where += ", checking invariants" if self.rerun else ""
            shown.append(
                f"{self.spec}: {where}, {self.placed} tasks placed ({now - self.spec_started:.0f}s)"
            )
        if self.files > 1:
            counter = (
                f"{self.done} specs, file {min(self.files_done + 1, self.files)} of {self.files}"
            )
            left = self.estimate(now)
            shown.append(counter + (f", about {left} left" if left else ""))
        return shown

    def estimate(self, now: float) -> str:
        """The time left at the pace of the files finished so far ("" before the first)."""
        if not self.files_done or self.files_done >= self.files:
            return ""
        seconds = (now - self.started) / self.files_done * (self.files - self.files_done)
        minutes, secs = divmod(int(seconds), 60)
        return f"{minutes}:{secs:02d}"

    def __rich__(self) -> RenderableType:
        from rich.text import Text

        return Text("\n".join(self.lines()), no_wrap=True, overflow="ellipsis")


def live_display(state: LiveState, stream: TextIO) -> Live | None:
    """A transient rich Live over ``stream`` showing ``state``; None when ``stream`` is
    not a terminal (quiet in pipes and logs)."""
    from rich.console import Console

    console: Console = Console(file=stream, highlight=False)
    if not console.is_terminal or console.is_dumb_terminal:
        return None
    from rich.live import Live

    # Lines printed while it is shown go above it (rich's stdout redirection).
    return Live(state, console=console, transient=True, refresh_per_second=4)
