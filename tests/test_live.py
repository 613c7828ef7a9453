"""The live progress line of ``vspec run`` (issue 13, item 8)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vspec.cli.live import SHOW_AFTER, LiveState
from vspec.errors import Location
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.spec import Spec

REPO = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def spec(name: str, file: str, cycles: int = 2) -> Spec:
    return Spec(name, Location(file, 1), SchedulerConf([], []), Cluster(), cycles=cycles)


def test_a_spec_shows_its_line_only_after_a_second() -> None:
    clock = Clock()
    state = LiveState(files=1, clock=clock, started=clock.now)
    state.before(spec("big gang", "a.yaml"))
    state.session_opened(None)  # type: ignore[arg-type]
    state.action_started(None, "allocate")  # type: ignore[arg-type]
    for node in (object(), None, object()):
        state.chose(None, None, node)  # type: ignore[arg-type]
    assert state.lines() == []  # one file: no counter; under a second: no spec line
    clock.now += SHOW_AFTER
    assert state.lines() == ["big gang: cycle 1 of 2, allocate, 2 tasks placed (1s)"]
    state.after(None)  # type: ignore[arg-type]
    assert state.lines() == []


def test_an_invariant_rerun_is_named_not_counted_as_more_cycles() -> None:
    clock = Clock()
    state = LiveState(files=1, clock=clock, started=clock.now)
    state.before(spec("twice", "a.yaml", cycles=1))
    state.session_opened(None)  # type: ignore[arg-type]
    state.chose(None, None, object())  # type: ignore[arg-type]
    state.session_opened(None)  # type: ignore[arg-type]  (deterministic runs it again)
    clock.now += 2
    assert state.lines() == ["twice: cycle 1 of 1, checking invariants, 0 tasks placed (2s)"]


def test_many_files_show_a_counter_with_an_estimate() -> None:
    clock = Clock()
    state = LiveState(files=4, clock=clock, started=clock.now)
    state.before(spec("one", "a.yaml"))
    state.after(None)  # type: ignore[arg-type]
    assert state.lines() == ["1 specs, file 1 of 4"]  # no pace yet, no estimate
    clock.now += 30
    state.before(spec("two", "b.yaml"))
    assert state.lines() == ["1 specs, file 2 of 4, about 1:30 left"]  # 30 s a file, 3 to go


SCRIPT = """
import sys, time
import vspec.framework.scheduler as scheduler
from vspec.model.result import SimulationResult

def simulate(conf, cluster, *, recorder=None, **_):
    if recorder is not None:  # handed on only when a live line is drawn
        recorder.session_opened(None)
        recorder.action_started(None, "allocate")
        recorder.chose(None, None, object())
    time.sleep(1.6)
    return SimulationResult()

scheduler.simulate = simulate
from vspec.cli import main
sys.exit(main(["run", *sys.argv[1:]]))
"""


def _spec_file(path: Path, name: str) -> Path:
    path.write_text(f"name: {name}\nexpect: {{invariants: {{disable: [deterministic]}}}}\n")
    return path


def test_on_a_terminal_the_line_is_drawn_then_erased(tmp_path: Path) -> None:
    _spec_file(tmp_path / "a.yaml", "slow spec")
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        cwd=REPO,
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env={**os.environ, "TERM": "xterm", "COLUMNS": "120"},
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=60) == 0
    text = b"".join(chunks).decode()
    line = "slow spec: cycle 1 of 1, allocate, 1 tasks placed"
    assert line in text
    after = text[text.rindex(line) :]
    assert "\x1b[2K" in after and "1 passed" in after  # erased, then the summary stays


def test_not_a_terminal_draws_nothing(tmp_path: Path) -> None:
    _spec_file(tmp_path / "a.yaml", "slow spec")
    _spec_file(tmp_path / "b.yaml", "another")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 passed" in proc.stdout
    assert "tasks placed" not in proc.stdout + proc.stderr
    assert "specs, file" not in proc.stdout and "\x1b" not in proc.stdout


@pytest.fixture(autouse=True)
def _no_ci(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("CI", raising=False)  # rich would not draw under some CI variables
