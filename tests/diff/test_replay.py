"""The judge replays Volcano's tie-breaks on vspec's engine before calling a difference
that follows a tie a disagreement (no Go here: a stand-in for Volcano draws otherwise)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.builders import node
from vspec.diff.judge import Case, Judge
from vspec.diff.outcome import Outcome, compare
from vspec.framework.engine import PythonEngine
from vspec.harness.loader import load_file
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.result import Bind, SimulationResult

TIES = Path(__file__).parent / "data" / "tie-cascade.yaml"
# The seed at which vspec's engine, standing in for Volcano, draws the tied nodes that
# let all five tasks fit (at the spec's seed three fit).
OTHER_DRAWS = 13


class DrawsOtherwise(PythonEngine):
    """vspec's engine with other tie-breaks: Volcano's draws, as far as the judge sees."""

    def simulate(self, conf: SchedulerConf, cluster: Cluster, **run: Any) -> SimulationResult:
        return super().simulate(conf, cluster, **{**run, "seed": OTHER_DRAWS})


def _case() -> Case:
    [spec] = load_file(TIES).specs
    return Case(spec.scheduler, spec.cluster, spec.seed, spec.now, spec.cycles, spec.verbosity)


def test_the_stand_in_places_more_tasks_than_vspec_s_own_draws() -> None:
    case = _case()
    mine = Outcome.of(PythonEngine().simulate(case.conf, case.cluster, seed=case.seed))
    theirs = Outcome.of(DrawsOtherwise().simulate(case.conf, case.cluster))
    assert len(mine.binds) == 3 and len(theirs.binds) == 5
    assert compare(mine, theirs, {}).differences


def test_replaying_the_other_draws_agrees() -> None:
    # No other seeds and no reruns: only the replay can settle it.
    judge = Judge(DrawsOtherwise(), seeds=0, reruns=0)
    verdict = judge.judge(_case())
    assert not verdict.disagrees
    assert verdict.model == verdict.real
    assert verdict.comparison.other_ties  # shown as choices among ties


class RarelyVspecs(PythonEngine):
    """Volcano whose outcome varies from run to run and is vspec's own only in its 12th
    run (past the 8 runs a disagreement gets first)."""

    def __init__(self, nodes: tuple[str, ...] = ("n0", "n1")) -> None:
        super().__init__()
        object.__setattr__(self, "calls", 0)
        object.__setattr__(self, "nodes", nodes)

    def simulate(self, conf: SchedulerConf, cluster: Cluster, **run: Any) -> SimulationResult:
        object.__setattr__(self, "calls", self.calls + 1)
        if self.calls == 12:
            return super().simulate(conf, cluster, **run)
        node = self.nodes[self.calls % len(self.nodes)]  # outcomes of its own, not vspec's
        return SimulationResult(binds=[Bind("ns0/elsewhere", node, 0)])


def test_volcano_is_run_longer_when_its_runs_vary_and_none_agrees() -> None:
    judge = Judge(RarelyVspecs(), seeds=0, reruns=7)
    verdict = judge.judge(_case())
    assert not verdict.disagrees
    assert verdict.agreeing_run == 12


@pytest.mark.parametrize("extra", [0, 140], ids=["every-node-looked-at", "nodes-sampled"])
def test_volcano_is_run_longer_where_it_samples_the_nodes(extra: int) -> None:
    case = _case()
    more = [node(f"extra{i:03}", {"cpu": 1, "pods": 110}) for i in range(extra)]
    case = replace(case, cluster=replace(case.cluster, nodes=[*case.cluster.nodes, *more]))
    # Runs that all agree until the 12th, vspec's: as Volcano's feasible-node search on
    # a big cluster mostly finds the same nodes first.
    verdict = Judge(RarelyVspecs(nodes=("n0",)), seeds=0, reruns=7).judge(case)
    assert verdict.disagrees is (extra == 0)
    assert len(verdict.reruns) == (7 if extra == 0 else 11)
