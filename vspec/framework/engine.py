"""vspec's own engine: the Python re-implementation of Volcano v1.11.0's scheduler."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from vspec.framework import scheduler
from vspec.framework.recorder import NO_RECORDER, Recorder
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult

if TYPE_CHECKING:
    from vspec.model.probes import Probe


@dataclass(frozen=True)
class PythonEngine:
    """:class:`vspec.model.engine.Engine` over :func:`vspec.framework.scheduler.simulate`."""

    name: str = "python"
    reproducible: bool = True
    # Told why each decision was taken (``vspec explain``, the HTML report); never
    # changes what is decided.
    recorder: Recorder = NO_RECORDER

    def simulate(
        self,
        conf: SchedulerConf,
        cluster: Cluster,
        *,
        seed: int = 0,
        now: datetime | None = None,
        cycles: int = 1,
        verbosity: int = 3,
        probes: Sequence[Probe] = (),
    ) -> SimulationResult:
        # Looked up per call, not bound at import: tests stand a fake in for the scheduler.
        # A recorder is handed on only when one was asked for, so that a stand-in
        # without the parameter still serves every other front-end.
        extra = {} if self.recorder is NO_RECORDER else {"recorder": self.recorder}
        return scheduler.simulate(
            conf,
            cluster,
            seed=seed,
            now=now,
            cycles=cycles,
            verbosity=verbosity,
            probes=probes,
            **extra,
        )

    def scheduler(
        self, conf: SchedulerConf, *, seed: int = 0, verbosity: int = 3
    ) -> scheduler.Scheduler:
        return scheduler.Scheduler(conf, seed=seed, verbosity=verbosity, recorder=self.recorder)
