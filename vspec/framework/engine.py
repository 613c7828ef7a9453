"""vspec's own engine: the Python re-implementation of Volcano v1.11.0's scheduler, and of
v1.10.0's where the two differ (:mod:`vspec.model.versions`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from vspec.framework import scheduler
from vspec.framework.recorder import NO_RECORDER, Recorder
from vspec.model.conf import SchedulerConf
from vspec.model.engine import Prefer
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult
from vspec.model.versions import DEFAULT_VERSION, Gates, gates_for

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
    # The Volcano release modelled; an unmodelled one is refused when the engine is made.
    volcano_version: str = DEFAULT_VERSION
    # Another run's tie-breaks, taken where the same nodes tie (vspec diff's replay of
    # Volcano's draws); None draws from the seed alone.
    prefer: Prefer | None = None

    def __post_init__(self) -> None:
        gates_for(self.volcano_version)

    @property
    def gates(self) -> Gates:
        return gates_for(self.volcano_version)

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
        extra: dict[str, Any] = {}
        if self.recorder is not NO_RECORDER:
            extra["recorder"] = self.recorder
        if self.volcano_version != DEFAULT_VERSION:
            extra["gates"] = self.gates
        if self.prefer is not None:
            extra["prefer"] = self.prefer
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
        return scheduler.Scheduler(
            conf, seed=seed, verbosity=verbosity, recorder=self.recorder, gates=self.gates
        )
