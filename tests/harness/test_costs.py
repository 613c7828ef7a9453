"""What the invariants cost: the meter charges each CPU second once, and ``vspec run -v``
prints each invariant's seconds under the spec's line, summed over a timeline's sessions."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from vspec.cli import main
from vspec.errors import Location
from vspec.harness.report import cost_line
from vspec.harness.runner import SpecOutcome, Verdict
from vspec.invariants import CostMeter

ROOT = Path(__file__).resolve().parents[2]


def _spin(seconds: float) -> None:
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def test_the_meter_charges_a_nested_measure_to_the_inner_name_only() -> None:
    meter = CostMeter()

    def outer() -> None:
        _spin(0.02)
        meter.charged("inner", _spin, 0.05)

    meter.charged("outer", outer)
    meter.charged("inner", _spin, 0.01)
    assert meter.seconds["inner"] >= 0.06
    assert 0.02 <= meter.seconds["outer"] < 0.05  # not the inner 0.05 again
    assert meter.total == pytest.approx(sum(meter.seconds.values()))


def test_the_cost_line_puts_the_costliest_first_and_leaves_out_crumbs() -> None:
    outcome = SpecOutcome("s", Location("s.yaml", 1), Verdict.PASSED, cpu_seconds=2.5)
    outcome.invariant_seconds = {"liveness": 0.2, "(shared)": 0.7, "task-order": 0.001}
    assert cost_line(outcome) == "CPU 2.50s: invariants 0.90s ((shared) 0.70, liveness 0.20)"
    assert cost_line(SpecOutcome("s", Location("s.yaml", 1), Verdict.PASSED)) == ""


def test_run_v_prints_each_invariants_cpu_over_a_timelines_sessions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["run", "-v", str(ROOT / "specs" / "timeline" / "basics.yaml")])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = [line for line in out.splitlines() if line.startswith("    CPU ")]
    assert lines, out
    assert all(": invariants " in line for line in lines)


def test_a_measure_that_raises_is_charged_and_closed() -> None:
    meter = CostMeter()

    def failing() -> None:
        _spin(0.01)
        raise ValueError("judged")

    def outer() -> None:
        with pytest.raises(ValueError):
            meter.charged("inner", failing)

    meter.charged("outer", outer)
    assert meter.seconds["inner"] >= 0.01
    assert meter.seconds["outer"] < 0.01  # the inner's seconds were taken off it
