"""``vspec diff`` at the release CI can build (v1.10.0): vspec's engine, modelling
v1.10.0, against the real Volcano v1.10.0 on specs/, Volcano's own unit-test cases and
150 generated specs of every built-in fuzz space. Every disagreement fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from vspec.api import task_info
from vspec.cli import main
from vspec.diff.judge import Judge
from vspec.engines.volcano import VolcanoEngine
from vspec.framework import probing
from vspec.framework.session import Session
from vspec.fuzz import BUILTIN_SPACES
from vspec.fuzz.diff import Campaign
from vspec.model.probes import Probe
from vspec.model.result import ProbeAnswer

from .conftest import BUILT_VERSION
from .test_volcano_engine import CONFORMANCE, ROOT

# Specs that disagree, and why (none today).
FINDINGS: dict[str, str] = {}

# A pod copied from a cluster carries its topology decision, which logprint's ready line
# prints as Go prints each quantity struct; quantities of every form ParseQuantity keeps
# in an int64 (canonical text kept or not), a BinarySI one on its inf.Dec path (an
# address, masked) and a decision Go's JSON refuses (printed empty).
NUMA_DECISION = """
name: pods' topology decisions in logprint's ready line
verbosity: 1
scheduler:
  actions: "print"
  tiers: [{plugins: [{name: gang}, {name: logprint}]}]
cluster:
  nodes: [{name: n1, allocatable: {cpu: 8, memory: 8Gi}}]
  podGroups: [{name: svc, minMember: 1, phase: Running}]
  pods:
  - name: svc-0
    podGroup: svc
    phase: Running
    nodeName: n1
    requests: {cpu: 1}
    annotations:
      volcano.sh/topology-decision: >-
        {"numa":{"0":{"cpu":"1","memory":"1Gi","hugepages-2Mi":"8Ki"},
        "1":{"cpu":"1.5","memory":"1000","x":2,"y":"1e3","z":"500m"}}}
  - name: svc-1
    podGroup: svc
    phase: Running
    nodeName: n1
    requests: {cpu: 1}
    annotations: {volcano.sh/topology-decision: '{"NUMA":{"1":{"memory":"1.5Gi"}}}'}
  - name: svc-2
    podGroup: svc
    phase: Running
    nodeName: n1
    requests: {cpu: 1}
    annotations: {volcano.sh/topology-decision: '{"numa":{"x":{"cpu":"1"}}}'}
"""


def _campaign(volcano: VolcanoEngine, out: Path) -> Campaign:
    # The command's own judge (8 runs of Volcano on a suspected disagreement, more when
    # they vary): Volcano's own variations are often rare.
    judge = Judge(volcano, BUILT_VERSION)
    return Campaign(judge, out, shrink_seconds=5, progress=None)


def _disagreeing(campaign: Campaign) -> dict[str, str]:
    return {
        found.subject.label.split("::", 1)[-1]: "; ".join(
            d.text for d in found.verdict.comparison.differences
        )[:300]
        for found in campaign.report.disagreements
    }


def test_specs_and_conformance_cases_agree_at_v1_10_but_for_the_findings(
    volcano: VolcanoEngine, tmp_path: Path
) -> None:
    campaign = _campaign(volcano, tmp_path)
    campaign.spec_files([ROOT / "specs", *([CONFORMANCE] if CONFORMANCE.is_dir() else [])])
    assert not campaign.report.errors
    assert campaign.report.total >= 40
    disagreeing = _disagreeing(campaign)
    assert set(disagreeing) <= set(FINDINGS), disagreeing
    # Each disagreement was shrunk to a spec file that names both outcomes.
    for found in campaign.report.disagreements:
        text = found.path.read_text()
        assert "# vspec's engine" in text and "# Volcano:" in text


@pytest.mark.parametrize("space", BUILTIN_SPACES)
def test_every_space_agrees_at_v1_10(volcano: VolcanoEngine, tmp_path: Path, space: str) -> None:
    campaign = _campaign(volcano, tmp_path)
    campaign.space(space, seconds=None, examples=150, seed=30)
    assert campaign.report.total == 150
    assert _disagreeing(campaign) == {}


def test_topology_decisions_print_as_volcano_prints_them(
    volcano: VolcanoEngine, tmp_path: Path
) -> None:
    numa = tmp_path / "numa.yaml"
    numa.write_text(NUMA_DECISION)
    campaign = _campaign(volcano, tmp_path)
    campaign.spec_files([numa])
    assert not campaign.report.errors
    assert campaign.report.total == 1
    assert _disagreeing(campaign) == {}


def test_probes_are_compared(
    volcano: VolcanoEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both engines' predicate verdicts agree on a spec's probes, until vspec's engine
    is planted with one that passes where Volcano's fails."""
    spec = ROOT / "specs" / "predicates" / "selectors-and-taints.yaml"
    campaign = _campaign(volcano, tmp_path / "agree")
    campaign.spec_files([spec])
    assert campaign.report.total == 1
    assert _disagreeing(campaign) == {}

    honest = probing.answer

    def planted(ssn: Session, probes: Sequence[Probe]) -> list[ProbeAnswer]:
        answers = honest(ssn, probes)
        answers[0].predicates = dict.fromkeys(answers[0].predicates)  # every node passes
        return answers

    monkeypatch.setattr(probing, "answer", planted)
    campaign = _campaign(volcano, tmp_path / "planted")
    campaign.spec_files([spec])
    [found] = campaign.report.disagreements
    assert found.verdict.comparison.aspects == {"probes"}
    assert any(
        # (shrunk: the spec written keeps what the difference needs)
        d.text.startswith("probes[0] predicates.") and ": vspec passes; volcano " in d.text
        for d in found.verdict.comparison.differences
    )


def test_the_command_reports_the_count_and_exits_1_on_a_disagreement(
    volcano: VolcanoEngine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A planted disagreement: vspec's engine made to forget topology decisions again
    (as it once did), in this process, where the command runs it; the other specs agree."""
    monkeypatch.setattr(task_info, "numa_resources", lambda decision: "map[]")
    numa = tmp_path / "numa.yaml"
    numa.write_text(NUMA_DECISION)
    out = tmp_path / "out"
    args = [
        str(numa),
        str(ROOT / "specs" / "priority"),
        "--volcano-version",
        volcano.target.version,
        "--out",
        str(out),
        "--shrink-seconds",
        "3",
    ]
    code = main(["diff", *args])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    lines = captured.out.splitlines()
    assert lines[-1] == "2 specs compared, 1 disagreements"
    assert any(line.startswith("DISAGREE ") and "topology decision" in line for line in lines)
    [written] = out.glob("diff-*.yaml")
    assert "numaInfo" in written.read_text()
