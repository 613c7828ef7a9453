"""The real Volcano scheduler as an engine: Volcano's own actions and plugins, linked by
a small Go program (``program/``), run the same specs as vspec's Python engine.

Each session is one request to the program: the scheduler conf, vc-scheduler's options
and the cluster as Kubernetes objects go in; binds, evictions, pod group statuses, the
in-session task states and every klog line come back. Between cycles the cluster moves
on by the rule both engines share (:mod:`vspec.model.cycles`).
"""

from __future__ import annotations

import atexit
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vspec.engines.volcano import kube
from vspec.engines.volcano.build import EngineBuildError, Target, ensure_built
from vspec.engines.volcano.conf import conf_text, options
from vspec.engines.volcano.plugins import go_plugins_for
from vspec.engines.volcano.probes import answer as probe_answer
from vspec.engines.volcano.probes import query
from vspec.engines.volcano.process import EngineProcess
from vspec.errors import ConfError, EngineError, SpecError
from vspec.framework.registry import GoPlugin
from vspec.model.conf import SchedulerConf
from vspec.model.corev1 import Condition
from vspec.model.cycles import next_cluster
from vspec.model.objects import DEFAULT_NOW, Cluster, PodGroup, shallow_copy
from vspec.model.probe_answers import judge
from vspec.model.result import (
    Bind,
    Eviction,
    LogBlock,
    LogLine,
    LogRecords,
    PodGroupResult,
    RecordedEvent,
    Severity,
    SimulationResult,
    TaskResult,
)

if TYPE_CHECKING:
    from vspec.model.probes import Probe

SCHEDULE_PERIOD = timedelta(seconds=1)
# The releases whose package-level state the program's reset.go puts back for a new
# scheduler: one process then serves spec after spec.
AUDITED = frozenset({"v1.10.0", "v1.11.0"})
_SEVERITIES = {"I": Severity.INFO, "W": Severity.WARNING, "E": Severity.ERROR, "F": Severity.ERROR}
_UNBOUND = ("Pending", "Allocated", "Pipelined")


class VolcanoEngine:
    """:class:`vspec.model.engine.Engine` over the Go program built for ``target``. The
    program is built (once, cached) on first use.

    Each spec runs as a new vc-scheduler, as each deployment starts its own: Volcano
    keeps package-level state that a conf sets (deviceshare's GPU switches, actions'
    arguments) or that sessions move on (node rotation), and one spec's must not reach
    the next. For the releases in :data:`AUDITED` the program puts that state back at a
    new scheduler's first request, and one process serves spec after spec (starting a
    process costs more than a small spec's session); otherwise each spec gets a process
    of its own, the next one started while the current one runs.
    """

    name = "volcano"
    reproducible = False

    def __init__(self, target: Target | None = None) -> None:
        self.target = target or Target()
        # One build per set of Go plugins the specs bring; a failed one is not retried.
        self._built: dict[tuple[GoPlugin, ...], Path | EngineBuildError] = {}
        self._spare: EngineProcess | None = None
        self._idle: EngineProcess | None = None  # a reusable process between specs
        # The program's CPU seconds by phase over every request (its "cost"): what
        # benchmarks add to this process's own.
        self.program_cpu: Counter[str] = Counter()
        # The processes left waiting for a next spec end with the run, not after it.
        atexit.register(self.close)

    def binary(self, plugins: tuple[GoPlugin, ...] = ()) -> Path:
        built = self._built.get(plugins)
        if built is None:
            try:
                built = ensure_built(replace(self.target, plugins=plugins))
            except EngineBuildError as exc:
                built = exc
            self._built[plugins] = built
        if isinstance(built, EngineBuildError):
            raise built
        return built

    def reusable(self, plugins: tuple[GoPlugin, ...]) -> bool:
        """Whether one process may serve spec after spec: a release whose package-level
        state the program resets for each new scheduler (the program's reset.go), with
        no Go plugin (whose state nobody knows). A fork's tree may keep more."""
        return not plugins and self.target.source is None and self.target.version in AUDITED

    def fresh_process(self, plugins: tuple[GoPlugin, ...] = ()) -> EngineProcess:
        """A started process that serves as a new vc-scheduler: the idle one a spec of
        a :meth:`reusable` build left, else one no spec has used (and another of the
        same build started for the next spec)."""
        binary = self.binary(plugins)
        idle, self._idle = self._idle, None
        if idle is not None and idle.binary == binary and idle.alive:
            return idle
        if idle is not None:
            idle.close()
        spare = self._spare
        if spare is not None and spare.binary != binary:
            spare.close()
            spare = None
        process = spare or EngineProcess(binary)
        process.start()
        if not self.reusable(plugins):
            self._spare = EngineProcess(binary)
            self._spare.start()
        return process

    def done(self, scheduler: VolcanoScheduler, *, clean: bool) -> None:
        """``scheduler``'s spec is over: its process waits for the next spec when the
        build is :meth:`reusable` and every request was answered (a failure may have
        left Volcano's state half-changed), else it ends."""
        process = scheduler.process
        if clean and scheduler.reusable and process.alive:
            if self._idle is not None:
                self._idle.close()
            self._idle = process
        else:
            process.close()

    def linked(self) -> dict[str, str]:
        """The Volcano and Go versions the program was built with."""
        process = self.fresh_process()
        try:
            answer = process.request({"op": "hello"})
        finally:
            process.close()
        return {"volcano": str(answer.get("volcano")), "go": str(answer.get("go"))}

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
        start = now or DEFAULT_NOW
        scheduler = self.scheduler(conf, seed=seed, verbosity=verbosity)
        result = SimulationResult(logs=scheduler.logs)
        clean = False
        try:
            if probes:
                scheduler.probe(cluster, start, probes, result)
            for cycle in range(cycles):
                scheduler.cycle = cycle
                cluster = scheduler.run_once(
                    cluster, start + cycle * SCHEDULE_PERIOD, result, capture=cycle == cycles - 1
                )
            clean = True
        finally:
            self.done(scheduler, clean=clean)
        result.cluster = cluster
        return result

    def scheduler(
        self, conf: SchedulerConf, *, seed: int = 0, verbosity: int = 3
    ) -> VolcanoScheduler:
        """A vc-scheduler process of its own, for the caller to run session by session,
        with the Go plugins of the plugins dirs in scope compiled in."""
        plugins = go_plugins_for(conf)
        process = self.fresh_process(plugins)
        builtin = not plugins and self.target.source is None
        scheduler = VolcanoScheduler(
            process, conf, seed=seed, verbosity=verbosity, builtin_plugins=builtin
        )
        scheduler.program_cpu = self.program_cpu
        scheduler.reusable = self.reusable(plugins)
        return scheduler

    def close(self) -> None:
        for process in (self._spare, self._idle):
            if process is not None:
                process.close()
        self._spare = self._idle = None


class VolcanoScheduler:
    """One vc-scheduler of the Go program: its random generator is seeded once, at the
    first session, and plugins' package-level state lives in the program."""

    def __init__(
        self,
        process: EngineProcess,
        conf: SchedulerConf,
        *,
        seed: int,
        verbosity: int,
        builtin_plugins: bool = True,
    ) -> None:
        # Whether every plugin is a released Volcano's own: not with Go plugins from a
        # plugins dir or a fork's tree (which could read the clock), and then a
        # timeline's clock never jumps over a settled backlog.
        self.builtin_plugins = builtin_plugins
        self.process = process
        self.conf = conf
        self.conf_text = conf_text(conf)
        self.seed = seed
        self.verbosity = verbosity
        # The spec's cycle its sessions' lines and binds carry (the caller sets it, as
        # vspec's engine's log cycle); sessions counts them, to seed the first.
        self.cycle = 0
        self.sessions = 0
        self.requests = 0  # the first, probe or session, starts the scheduler afresh
        # Whether its process may serve the next spec (VolcanoEngine.reusable).
        self.reusable = False
        self.program_cpu: Counter[str] = Counter()  # the program's CPU by phase
        self.logs = LogRecords()

    def _session(self, cluster: Cluster, now: datetime) -> dict[str, Any]:
        """A "run" request for a session on ``cluster`` at ``now``."""
        return {
            "op": "run",
            "conf": self.conf_text,
            "options": options(self.conf.options),
            "seed": self.seed,
            "reseed": self.sessions == 0,
            "fresh": self.requests == 0,
            "verbosity": self.verbosity,
            "now": now.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "cluster": kube.cluster(cluster, self.conf.options.scheduler_names),
        }

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = self.process.request(request)
        finally:
            self.requests += 1
        self.program_cpu.update(answer.get("cost") or {})
        return answer

    def run_once(
        self, cluster: Cluster, now: datetime, result: SimulationResult, *, capture: bool
    ) -> Cluster:
        answer = self._ask({**self._session(cluster, now), "capture": capture})
        cycle = self.cycle
        self.sessions += 1
        for run in answer.get("logs") or ():
            self._add_run(run, cycle)
        failure = answer.get("error")
        if failure is not None:
            raise _failure(failure)
        return self._record(cluster, answer, result, cycle, capture=capture)

    def _add_run(self, run: dict[str, Any], cycle: int) -> None:
        """One run of lines from a call site (the program's LogRun): a line alone, or a
        block whose lines are made when read, so that a session's millions of predicate
        failures stay one list of strings."""
        verbosity, severity, source = run["v"], _SEVERITIES[run["s"]], run["source"]
        head, texts = run["head"], run["texts"]
        if len(texts) == 1:
            self.logs.append(LogLine(verbosity, severity, head + texts[0], cycle, source))
            return
        block = LogBlock(verbosity, severity, head, texts.__getitem__, len(texts), cycle, source)
        self.logs.append_block(block)

    def probe(
        self, cluster: Cluster, now: datetime, probes: Sequence[Probe], result: SimulationResult
    ) -> None:
        """The probes' answers, failures and the keys Volcano's answers cannot decide (a
        best node among ties), into ``result``, asked of a quiet session of the
        program's own on the cluster as given, before any session runs."""
        request = self._session(cluster, now)
        request.update(op="probe", reseed=False, verbosity=0, probes=[query(p) for p in probes])
        answer = self._ask(request)
        failure = answer.get("error")
        if failure is not None:
            raise _failure(failure)
        result.probe_answers = [probe_answer(raw) for raw in answer["probes"]]
        judgement = judge(probes, result.probe_answers)
        result.probe_failures = judgement.failures
        result.probe_undecided = judgement.undecided

    def skip_session(self) -> None:
        """A session that would change nothing: Volcano's generator is drawn only while
        placing tasks, so nothing is owed to it; the first session still seeds it."""

    def _record(
        self,
        cluster: Cluster,
        answer: dict[str, Any],
        result: SimulationResult,
        cycle: int,
        *,
        capture: bool,
    ) -> Cluster:
        binds = {b["task"]: b["node"] for b in answer["binds"]}
        result.binds.extend(Bind(b["task"], b["node"], cycle) for b in answer["binds"])
        result.evictions.extend(
            Eviction(e["task"], e["reason"], cycle) for e in answer["evictions"]
        )
        result.events.extend(
            RecordedEvent(e["object"], e["type"], e["reason"], e["message"], cycle)
            for e in answer["events"]
            if e["kind"].endswith("PodGroup")
        )
        written: dict[str, PodGroup] = {}
        by_key = {pg.meta.key: pg for pg in cluster.pod_groups}
        for key, status in answer["podGroups"].items():
            conditions = [_condition(c) for c in status["conditions"]]
            entry = result.pod_groups.get(key)
            if entry is None or capture:
                entry = result.pod_groups[key] = PodGroupResult(
                    status["phase"], status["sessionPhase"]
                )
            entry.phase = status["phase"]
            entry.conditions = conditions
            if key in by_key and status["written"]:  # else the API server's stays
                pg = written[key] = shallow_copy(by_key[key])
                pg.phase, pg.conditions = status["phase"], conditions
                pg.running, pg.succeeded, pg.failed = (
                    status["running"],
                    status["succeeded"],
                    status["failed"],
                )
        if capture:
            self._capture(answer, result)
        moved_on = next_cluster(
            cluster,
            binds=binds,
            evicted={e["task"] for e in answer["evictions"]},
            patched=answer.get("patched") or {},
            pod_groups=written,
        )
        for pod in cluster.held_pods:
            if pod not in moved_on.held_pods:
                result.created[pod.meta.key] = cycle + 1
        return moved_on

    @staticmethod
    def _capture(answer: dict[str, Any], result: SimulationResult) -> None:
        """Every pod Volcano's cache took, its status as Volcano read it (a pod another
        scheduler places and nobody bound is not in the cache, and not here)."""
        for key, task in answer["tasks"].items():
            node = task["node"] if task["status"] not in _UNBOUND and task["node"] else None
            result.tasks[key] = TaskResult(node, task["status"])
        for job, tasks in answer["pipelined"].items():
            result.pipelined[job] = [(t["task"], t["node"]) for t in tasks]


def _condition(raw: dict[str, Any]) -> Condition:
    at = raw.get("lastTransitionTime")
    return Condition(
        type=raw["type"],
        status=raw["status"],
        reason=raw["reason"],
        message=raw["message"],
        transition_id=raw["transitionID"],
        last_transition_time=datetime.fromisoformat(at) if at else None,
    )


def _failure(failure: dict[str, Any]) -> Exception:
    kind, message = failure["kind"], failure["message"]
    if kind == "panic":
        return EngineError(f"Volcano panicked: {message}\n{failure.get('stack', '')}".rstrip())
    if kind == "conf":
        return ConfError(f"Volcano rejects the conf: {message}")
    if kind == "object":
        return SpecError(f"Volcano cannot read an object of the cluster: {message}")
    return EngineError(message)
