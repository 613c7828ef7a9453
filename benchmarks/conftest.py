"""The benchmark harness (``tox -e bench``): pytest-benchmark, timed in CPU seconds.

pytest-benchmark's table compares runs (``--benchmark-autosave``, then
``--benchmark-compare``); the summary below adds what it cannot show: wall time, max RSS,
pods bound per CPU-second and the session's CPU per action of each measured run.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

# The workload spec files are run by the benchmarks, not collected as tests.
collect_ignore = ["workloads"]

FIGURES = pytest.StashKey[dict[str, dict[str, Any]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--w3", action="store_true", help="also run W3 (5,000 nodes; minutes)")
    parser.addoption("--figures", metavar="FILE", help="write the figures as JSON to FILE")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.stash[FIGURES] = {}
    if not any(arg.startswith("--benchmark-timer") for arg in config.invocation_params.args):
        config.option.benchmark_timer = "benchmarks.measure.cpu_seconds"


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Where a benchmark puts its figures (shown in the summary, saved with --figures)."""
    row: dict[str, Any] = {}
    request.config.stash[FIGURES][request.node.name] = row
    return row


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    rows = {name: row for name, row in config.stash[FIGURES].items() if row}
    if not rows:
        return
    terminalreporter.section("vspec figures (CPU seconds; wall is the shared machine's)")
    for name, row in rows.items():
        terminalreporter.write_line(f"{name}: {json.dumps(row)}")
    target = config.getoption("figures")
    if target:
        with open(target, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=2)
