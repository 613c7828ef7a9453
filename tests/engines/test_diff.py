"""``vspec diff`` at the release CI can build (v1.10.0): vspec's engine against the real
Volcano on specs/ and on generated specs of the seed space.

vspec's engine models v1.11.0 only, so at v1.10.0 the v1.11 changes show as
disagreements: exactly the documented ones are accepted (test_volcano_engine.py's list,
plus the findings below), each with its reason. Every other disagreement fails.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from vspec.diff.judge import Judge, Verdict
from vspec.engines.volcano import VolcanoEngine
from vspec.fuzz.diff import Campaign

from .test_volcano_engine import ROOT, SPECS_DIFFERING

# Specs of specs/ that disagree at v1.10.0 besides SPECS_DIFFERING's, and why.
DIFF_ONLY = {
    # xfail findings: Volcano v1.11.0 panics there (an asserting Sub); v1.10.0 does not
    # (capacity has no hierarchy there; proportion's enqueue changed).
    "capacity with hierarchy and no root queue panics on the first eviction": "v1.11 capacity",
    "proportion panics in enqueue after an eviction earlier in the session": "v1.11 proportion",
    # v1.10.0's reclaim takes one more victim and pipelines the reclaimer; at v1.11.0 the
    # two engines differ only in which of two equal victims goes (Go's map order).
    "a starving queue reclaims its deserved share from an overused queue": "v1.11 reclaim",
    # Finding: the unreachable extender's error is Python's ("[Errno 111] Connection
    # refused") in vspec's condition message, Go's ("dial tcp ...: connect: connection
    # refused") in Volcano's.
    "an unreachable extender blocks scheduling unless ignorable": "extender error wording",
}


def _v1_11_change(verdict: Verdict) -> str | None:
    """The v1.11 change a generated spec's disagreement at v1.10.0 shows, if it is one of
    those seen (their shrunk specs agree on v1.11.0): Volcano binding or pipelining a
    task vspec's engine does not, and nothing else differing but what follows from it."""
    differences = verdict.comparison.differences
    if verdict.comparison.aspects <= {"pipelined", "pod groups", "print"} and all(
        d.text.split(": ", 1)[1].startswith("vspec -;")
        for d in differences
        if d.aspect == "pipelined"
    ):
        # v1.10.0's allocate pipelines a task onto the room of a releasing pod on a node
        # without a free pod slot; v1.11.0's does not (allocate.go changed between them).
        return "v1.11 allocate"
    if verdict.comparison.aspects <= {"binds", "pod groups", "print"} and all(
        d.text.endswith("volcano -") for d in differences if d.aspect == "binds"
    ):
        # v1.10.0's predicates let backfill pick a node without a free pod slot for a
        # best-effort task, and the bind then fails; v1.11.0's predicates refuse the node.
        return "v1.11 predicates"
    return None


def _unexplained(campaign: Campaign) -> dict[str, str]:
    return {
        found.subject.label: "; ".join(d.text for d in found.verdict.comparison.differences)[:300]
        for found in campaign.report.disagreements
        if _v1_11_change(found.verdict) is None
    }


def test_specs_agree_at_v1_10_but_for_the_documented_differences(
    volcano: VolcanoEngine, tmp_path: Path
) -> None:
    campaign = Campaign(Judge(volcano), tmp_path, shrink_seconds=5, progress=None)
    campaign.spec_files([ROOT / "specs"])
    assert not campaign.report.errors
    assert campaign.report.total >= 40
    accepted = {**SPECS_DIFFERING, **DIFF_ONLY}
    names = {label.split("::", 1)[1]: why for label, why in _unexplained(campaign).items()}
    assert set(names) <= set(accepted), {n: names[n] for n in set(names) - set(accepted)}
    # Each disagreement was shrunk to a spec file that names both outcomes.
    for found in campaign.report.disagreements:
        text = found.path.read_text()
        assert "# vspec's engine" in text and "# Volcano:" in text


def test_the_seed_space_agrees_at_v1_10(volcano: VolcanoEngine, tmp_path: Path) -> None:
    campaign = Campaign(Judge(volcano), tmp_path, shrink_seconds=5, progress=None)
    campaign.space("seed", seconds=None, examples=300, seed=30)
    assert campaign.report.total == 300
    assert _unexplained(campaign) == {}


def test_the_command_reports_the_count_and_exits_1_on_a_disagreement(
    volcano: VolcanoEngine, tmp_path: Path
) -> None:
    """One extender spec disagrees (the error wording); the others agree."""
    args = [
        str(ROOT / "specs" / "plugins" / "extender" / "unreachable-extender.yaml"),
        str(ROOT / "specs" / "priority"),
        "--volcano-version",
        volcano.target.version,
        "--out",
        str(tmp_path),
        "--shrink-seconds",
        "3",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "vspec", "diff", *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "3 specs compared, 1 disagreements"  # the extender file holds two
    assert any(line.startswith("DISAGREE ") and "unreachable" in line for line in lines)
    [written] = tmp_path.glob("diff-*.yaml")
    assert "Connection refused" in written.read_text()
