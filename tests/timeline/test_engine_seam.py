"""A timeline runs on the engine it is handed, session by session (Engine.scheduler):
the seam a second engine (the real Volcano) plugs into."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tests.timeline.conftest import Loader
from tests.timeline.test_clock import STUCK, TWO_JOBS
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
    builtin: bool | None = None  # what it says of its plugins (None: what the inner says)

    @property
    def logs(self) -> Any:
        return self.inner.logs

    @property
    def builtin_plugins(self) -> bool:
        return bool(self.inner.builtin_plugins) if self.builtin is None else self.builtin

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
    builtin: bool | None = None

    def simulate(self, *args: Any, **kwargs: Any) -> SimulationResult:
        return PythonEngine().simulate(*args, **kwargs)

    def scheduler(self, conf: SchedulerConf, *, seed: int = 0, verbosity: int = 3) -> Counting:
        inner = PythonEngine().scheduler(conf, seed=seed, verbosity=verbosity)
        made = Counting(inner, builtin=self.builtin)
        self.made.append(made)
        return made


def test_the_timeline_runs_on_the_engine_it_is_given(loader: Loader) -> None:
    spec = loader.spec(TWO_JOBS)
    assert spec.timeline is not None
    engine = CountingEngine()
    seen = run_timeline(spec.scheduler, spec.cluster, spec.timeline, now=spec.now, engine=engine)
    default = run_timeline(
        spec.scheduler, spec.cluster, spec.timeline, now=spec.now, engine=PythonEngine()
    )
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


def test_the_clock_jumps_a_stuck_backlog_only_on_the_engines_own_plugins(loader: Loader) -> None:
    """Whether a plugin could read the clock is the engine's to say: an engine that runs
    a user's plugin gets every session of the stuck half hour run."""
    spec = loader.spec(STUCK)
    assert spec.timeline is not None
    own, foreign = CountingEngine(), CountingEngine(builtin=False)
    jumped = run_timeline(spec.scheduler, spec.cluster, spec.timeline, now=spec.now, engine=own)
    every = run_timeline(spec.scheduler, spec.cluster, spec.timeline, now=spec.now, engine=foreign)
    assert jumped.sessions < 10 < every.sessions
    assert jumped.jobs["default/big"].started == every.jobs["default/big"].started


def test_the_clock_imports_nothing_of_an_engine() -> None:
    """The timeline package reads the model, never the Python engine's data model or
    framework, so any engine behind the seam can run a timeline."""
    code = (
        "import sys, vspec.timeline.clock, vspec.timeline.metrics, vspec.timeline.export;"
        "print(sorted(m for m in sys.modules if m.startswith(("
        "'vspec.api', 'vspec.framework', 'vspec.plugins', 'vspec.actions', 'vspec.k8s'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
