"""The seam between the harness and a scheduler implementation.

A spec's model (conf, cluster, clock, cycles, probes) goes in, a
:class:`~vspec.model.result.SimulationResult` comes out. The runner, the pytest plugin,
the ``deterministic`` invariant and the fuzzer are handed an :class:`Engine` and never
import one, so vspec's Python re-implementation (``vspec.framework.engine``) and a real
Volcano scheduler can run the same specs and be judged by the same checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.probes import Probe
from vspec.model.result import SimulationResult

# The engines a spec may ask for (``[tool.vspec] engine``); vspec.engines makes them.
ENGINE_NAMES = ("python",)


class Engine(Protocol):
    """A scheduler that runs the model of a spec; ``name`` is how reports and ``--engine``
    call it."""

    @property
    def name(self) -> str: ...

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
        """Run ``cycles`` sessions from ``cluster`` and report what happened.

        Raises :class:`vspec.errors.PluginError` naming the plugin or action when one
        raises, :class:`vspec.errors.EngineError` where Volcano would panic.
        """
        ...
