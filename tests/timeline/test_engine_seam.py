"""A timeline runs on the engine it is handed, session by session (Engine.scheduler):
the seam a second engine (the real Volcano) plugs into."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tests.timeline.conftest import Loader
from tests.timeline.test_clock import TWO_JOBS
from vspec.framework.engine import PythonEngine
from vspec.harness.runner import Verdict, execute
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult
from vspec.timeline.clock import run_timeline


@dataclass
class Counting:
    """The Python engine's scheduler, counting what the clock asks of it."""

    inner: Any
    sessions: list[datetime] = field(default_factory=list)
    skipped: int = 0

    @property
    def logs(self) -> Any:
        return self.inner.logs

    def run_once(
        self, cluster: Cluster, now: datetime, result: SimulationResult, *, capture: bool
    ) -> Cluster:
        self.sessions.append(now)
        after: Cluster = self.inner.run_once(cluster, now, result, capture=capture)
        return after

    def skip_session(self) -> None:
        self.skipped += 1
        self.inner.skip_session()


@dataclass
class CountingEngine:
    name: str = "counting"
    reproducible: bool = True
    made: list[Counting] = field(default_factory=list)

    def simulate(self, *args: Any, **kwargs: Any) -> SimulationResult:
        return PythonEngine().simulate(*args, **kwargs)

    def scheduler(self, conf: SchedulerConf, *, seed: int = 0, verbosity: int = 3) -> Counting:
        made = Counting(PythonEngine().scheduler(conf, seed=seed, verbosity=verbosity))
        self.made.append(made)
        return made


def test_the_timeline_runs_on_the_engine_it_is_given(loader: Loader) -> None:
    spec = loader.spec(TWO_JOBS)
    assert spec.timeline is not None
    engine = CountingEngine()
    seen = run_timeline(spec.scheduler, spec.cluster, spec.timeline, now=spec.now, engine=engine)
    default = run_timeline(spec.scheduler, spec.cluster, spec.timeline, now=spec.now)
    (scheduler,) = engine.made
    assert len(scheduler.sessions) == seen.sessions > 0
    assert scheduler.skipped == seen.skipped > 0
    assert seen.jobs == default.jobs and seen.pods == default.pods
    assert seen.simulation.logs == default.simulation.logs


def test_a_timeline_spec_runs_on_the_runners_engine(loader: Loader) -> None:
    engine = CountingEngine()
    outcome = execute(loader.spec(TWO_JOBS), engine=engine)
    assert outcome.status == Verdict.PASSED, outcome.messages
    assert len(engine.made) == 1 and engine.made[0].sessions
