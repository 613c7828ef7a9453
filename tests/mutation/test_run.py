"""The mutation runner tells a failed fuzz run from a survivor, and reads back how a
finding was shrunk."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.mutation import run


def _fake_fuzz(status: int, finding: str | None, stdout: str = "") -> Any:
    """A ``subprocess.run`` standing in for ``vspec fuzz``: exits ``status`` after
    writing ``finding`` (a file name) into its --out directory."""

    def fake(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        out = Path(command[command.index("--out") + 1])
        if finding is not None:
            out.mkdir(parents=True)
            (out / finding).write_text(
                "name: f\ncluster:\n  nodes: [{name: n0}]\n  pods: [{name: p0}, {name: p1}]\n",
                encoding="utf-8",
            )
        return subprocess.CompletedProcess(command, status, stdout, "Traceback (most recent...)")

    return fake


def test_status_1_without_a_finding_is_an_error_not_a_survivor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A traceback in vspec fuzz exits 1 too: that run says nothing about the mutant.
    monkeypatch.setattr(run.subprocess, "run", _fake_fuzz(1, None))
    outcome = run.fuzz(None, ("--seconds", "1"), "mixed", 1)
    assert not outcome.killed
    assert outcome.error == "vspec fuzz exited 1 but wrote no finding"


@pytest.mark.parametrize(
    ("status", "finding", "error"),
    [
        (0, None, ""),
        (1, "liveness-0123abcd.yaml", ""),
        (0, "liveness-0123abcd.yaml", "vspec fuzz exited 0 but wrote a finding"),
        (2, None, "vspec fuzz failed with exit status 2"),
        (-9, None, "vspec fuzz failed with exit status -9"),
    ],
)
def test_each_exit_status(
    monkeypatch: pytest.MonkeyPatch, status: int, finding: str | None, error: str
) -> None:
    stdout = (
        "9 examples in 1.0s (9.0/s); 1 finding(s)\n"
        "  liveness: /x/liveness-0123abcd.yaml (shrunk to 1 node(s), 2 pod(s) "
        "(Hypothesis: 3 node(s), 7 pod(s)) in 0.4s)\n"
    )
    monkeypatch.setattr(run.subprocess, "run", _fake_fuzz(status, finding, stdout))
    outcome = run.fuzz(None, ("--seconds", "1"), "mixed", 1)  # unmutated: no false-alarm re-run
    assert outcome.error == error
    assert outcome.killed == (finding is not None and not error)
    if outcome.killed:
        assert (outcome.kind, outcome.nodes, outcome.pods) == ("liveness", 1, 2)
        assert outcome.shrunk == (
            "shrunk to 1 node(s), 2 pod(s) (Hypothesis: 3 node(s), 7 pod(s)) in 0.4s"
        )


@pytest.mark.parametrize("mutant", run.MUTANTS + run.PLUGIN_MUTANTS, ids=lambda m: m.name)
def test_each_mutant_finds_its_snippet_once(mutant: run.Mutant) -> None:
    """A refactor that rewrites a mutated line stops the campaign at that mutant."""
    text = (run.ROOT / mutant.path).read_text(encoding="utf-8")
    assert text.count(mutant.old) == 1
    assert mutant.new != mutant.old


def test_a_fixed_example_count_is_passed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        seen.append(command)
        return _fake_fuzz(0, None)(command, **kwargs)

    monkeypatch.setattr(run.subprocess, "run", fake)
    assert (
        run.main(["--examples", "7", "--no-baseline", "--target", "0", "gang-order-reversed"]) == 0
    )
    assert seen[0][seen[0].index("--examples") + 1] == "7" and "--seconds" not in seen[0]


def test_plugin_mutants_run_apart_from_the_core_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--plugins`` fuzzes the plugin mutants alone, each in its space; the core run
    leaves them out, so that its figure stays comparable."""
    spaces: list[str] = []

    def fake(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        spaces.append(command[command.index("--space") + 1])
        return _fake_fuzz(0, None)(command, **kwargs)

    monkeypatch.setattr(run.subprocess, "run", fake)
    assert run.main(["--examples", "1", "--no-baseline", "--target", "0", "--plugins"]) == 0
    assert len(spaces) == len(run.PLUGIN_MUTANTS) and set(spaces) == {"plugins"}
    spaces.clear()
    assert run.main(["--examples", "1", "--no-baseline", "--target", "0"]) == 0
    assert len(spaces) == len(run.MUTANTS) and "plugins" not in spaces
