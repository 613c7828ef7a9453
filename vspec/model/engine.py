"""The seam between the harness and a scheduler implementation.

A spec's model (conf, cluster, clock, cycles, probes) goes in, a
:class:`~vspec.model.result.SimulationResult` comes out. A timeline drives the engine
session by session instead (:meth:`Engine.scheduler`): its clock decides when sessions
run and changes the cluster between them. The runner, the pytest plugin,
the ``deterministic`` invariant and the fuzzer are handed an :class:`Engine` and never
import one, so vspec's Python re-implementation (``vspec.framework.engine``) and a real
Volcano scheduler can run the same specs and be judged by the same checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.result import LogRecords, SimulationResult

if TYPE_CHECKING:
    from vspec.model.probes import Probe

# The engines a spec may ask for (``[tool.vspec] engine``); vspec.engines makes them.
ENGINE_NAMES = ("python", "volcano")
# Another run's choice of node for a task in a session (session index, task's
# namespace/name -> node name, None when it took none): what a replay of that run's
# tie-breaks prefers (vspec diff replays Volcano's on vspec's engine).
Prefer = Callable[[int, str], "str | None"]


class SchedulerProcess(Protocol):
    """One running scheduler (a vc-scheduler process): what outlives its sessions (the
    random generator, node rotation, plugins' package-level state, its cache) is kept
    between the sessions the caller asks for."""

    @property
    def logs(self) -> LogRecords:
        """Every line logged so far, appended to as sessions run."""
        ...

    @property
    def builtin_plugins(self) -> bool:
        """Every plugin of its conf is the engine's built-in Volcano plugin, none a user's
        (which could read the clock): a timeline's clock jumps over a stuck backlog only
        then."""
        ...

    def run_once(
        self, cluster: Cluster, now: datetime, result: SimulationResult, *, capture: bool
    ) -> Cluster:
        """One session at ``now`` on ``cluster``, its binds, evictions and events added
        to ``result`` (``capture``: the in-session task and pod group states too);
        returns the cluster one schedule period later.

        Raises what :meth:`Engine.simulate` raises.
        """
        ...

    def skip_session(self) -> None:
        """A session the caller knows would change nothing is not run; the process moves
        on as if it had (its random generator draws the session's uid)."""
        ...


class Engine(Protocol):
    """A scheduler that runs the model of a spec; ``name`` is how reports and ``--engine``
    call it."""

    @property
    def name(self) -> str: ...

    @property
    def reproducible(self) -> bool:
        """Whether the same inputs and seed give the same outcome by design. vspec's
        engine does; the real Volcano does not (Go's map order, predicates run in
        parallel, binds made from goroutines), so ``deterministic`` does not judge it."""
        ...

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

    def scheduler(
        self, conf: SchedulerConf, *, seed: int = 0, verbosity: int = 3
    ) -> SchedulerProcess:
        """A scheduler process under ``conf``, for the caller to run session by session.

        Raises :class:`vspec.errors.ConfError` for a conf the engine rejects,
        :class:`vspec.errors.PluginError` when an action's or plugin's code raises.
        """
        ...
