"""The judge replays Volcano's tie-breaks on vspec's engine before calling a difference
that follows a tie a disagreement (no Go here: a stand-in for Volcano draws otherwise)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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

    def __init__(self) -> None:
        super().__init__()
        object.__setattr__(self, "calls", 0)

    def simulate(self, conf: SchedulerConf, cluster: Cluster, **run: Any) -> SimulationResult:
        object.__setattr__(self, "calls", self.calls + 1)
        if self.calls == 12:
            return super().simulate(conf, cluster, **run)
        node = ("n0", "n1")[self.calls % 2]  # two outcomes of its own, neither vspec's
        return SimulationResult(binds=[Bind("ns0/elsewhere", node, 0)])


def test_volcano_is_run_longer_when_its_runs_vary_and_none_agrees() -> None:
    judge = Judge(RarelyVspecs(), seeds=0, reruns=7)
    verdict = judge.judge(_case())
    assert not verdict.disagrees
    assert verdict.agreeing_run == 12
