"""Running sessions on a cluster: Volcano's ``runOnce`` loop, as a pure function.

``simulate`` is the engine's one entry point: conf + cluster in, :class:`SimulationResult`
out. Between cycles the cluster moves on as a real one would (binds run, evicted pods
leave, pod group statuses are those written at close), producing a new model.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import compress, filterfalse
from typing import TYPE_CHECKING

from vspec.errors import ConfError, PluginError, VspecError, culprit
from vspec.framework.cache import SchedulerCache
from vspec.framework.capture import TaskCapture, capture_session_state
from vspec.framework.framework import close_session, open_session, plugin_classes
from vspec.framework.interface import Action, Plugin
from vspec.framework.log import Klog
from vspec.framework.recorder import NO_RECORDER, Recorder
from vspec.framework.registry import (
    RESOLUTIONS,
    Kind,
    action_names,
    conflict,
    get_action,
    go_plugins_in_scope,
    is_builtin,
    plugin_names,
    registered_actions,
    registered_plugins,
)
from vspec.framework.session import SchedulerState, Session
from vspec.model.conf import SchedulerConf
from vspec.model.cycles import next_cluster
from vspec.model.engine import Prefer
from vspec.model.objects import DEFAULT_NOW, Cluster
from vspec.model.result import (
    Bind,
    Eviction,
    LogRecords,
    PodGroupResult,
    RecordedEvent,
    SimulationResult,
)
from vspec.model.versions import V1_11_0, Gates
from vspec.util.collector import long_lived_frozen

if TYPE_CHECKING:
    from vspec.model.probes import Probe

SCHEDULE_PERIOD = timedelta(seconds=1)


def _unknown(kind: Kind, name: str, known: set[str]) -> str:
    """Said plainly: a did-you-mean only for a near-certain typo (one letter off or two
    swapped), never a far-fetched guess at a name that is simply not loaded."""
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    if close:
        return f"unknown {kind} {name!r} (did you mean {close[0]!r}?)"
    return f"no {kind} {name!r} is registered; is --plugins-dir missing?"


@dataclass(frozen=True)
class Resolved:
    """The classes of a checked conf's actions (in order) and plugins (by name)."""

    actions: tuple[type[Action], ...]
    plugins: Mapping[str, type[Plugin]]


def check_conf(conf: SchedulerConf) -> Resolved:
    """Every action and plugin the conf names must be registered, once, in the current
    registry scope (a plugins dir that clashes with a built-in is an error naming both);
    returns their classes, which a scheduler keeps. Checked once per distinct list of
    names while the registries stay the same (:class:`~vspec.framework.registry.Resolutions`):
    only a conf that fails is checked every time, to be told where."""
    names = (tuple(conf.actions), tuple(conf.plugin_names()))
    return RESOLUTIONS.get(names, lambda: _check_conf(conf))


def _check_conf(conf: SchedulerConf) -> Resolved:
    actions = []
    for name in conf.actions:
        cls = get_action(name)
        if cls is None:
            raise ConfError(_unknown("action", name, action_names()))
        if conflict("action", name):
            raise ConfError(conflict("action", name))
        actions.append(cls)
    classes = plugin_classes(conf)
    go = {p.name: p.origin for p in go_plugins_in_scope()}
    for tier in conf.tiers:
        for option in tier.plugins:
            if option.name in go:
                raise ConfError(
                    f"plugin {option.name!r} is Go source ({go[option.name]}): it runs on the "
                    "real Volcano (--engine volcano); vspec's engine runs Python plugins",
                    option.location,
                )
            if option.name not in classes:
                raise ConfError(_unknown("plugin", option.name, plugin_names()), option.location)
            why = conflict("plugin", option.name)
            if why:
                raise ConfError(why, option.location)
    return Resolved(tuple(actions), classes)


def plugin_error(exc: Exception) -> PluginError:
    """``exc``, raised by engine or plugin code, as the run's error: named after the action
    or plugin whose code raised (else "engine"), with the names it registered, the
    callback vspec called and the line that raised."""
    found = culprit(exc)
    text = f"{type(exc).__name__}: {exc}"
    if found is None:
        import traceback

        frames = traceback.extract_tb(exc.__traceback__)
        where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
        return PluginError("engine", text + where)
    names = [
        e.name for e in (*registered_plugins(), *registered_actions()) if e.module == found.module
    ]
    parts = []
    if names and names != [found.name]:
        parts.append(f"registered as {', '.join(repr(n) for n in names)}")
    parts.append(f"in {found.callback} at {found.file}:{found.line}")
    return PluginError(found.name, f"{text} ({'; '.join(parts)})", culprit=found)


def _session_uid(rng: random.Random) -> str:
    """``str(uuid.UUID(int=bits, version=4))`` of the generator's next 128 bits, formatted
    here: importing uuid (and the platform module it imports) cost every vspec process
    about 6 CPU-ms, two small specs' sessions."""
    bits = rng.getrandbits(128)
    bits = (bits & ~(0xC000 << 48)) | (0x8000 << 48)  # the RFC 4122 variant
    bits = (bits & ~(0xF000 << 64)) | (4 << 76)  # version 4
    h = f"{bits:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Scheduler:
    """One vc-scheduler process: what outlives its sessions (the actions, the random
    generator seeded once, node rotation and plugins' package-level state).

    ``simulate`` runs it for a fixed number of cycles; a timeline
    (:mod:`vspec.timeline`) runs it at the times its clock chooses, changing the
    cluster between sessions.
    """

    def __init__(
        self,
        conf: SchedulerConf,
        *,
        seed: int = 0,
        verbosity: int = 3,
        recorder: Recorder = NO_RECORDER,
        session_opened: Callable[[], None] = lambda: None,
        gates: Gates = V1_11_0,
        prefer: Prefer | None = None,
    ) -> None:
        """``session_opened`` is called once each session is open, before its actions
        (:func:`simulate` freezes what is alive then out of the collector's way)."""
        resolved = check_conf(conf)
        self.plugin_classes = resolved.plugins
        self.conf = conf
        self.log = Klog(verbosity)
        self.rng = random.Random(seed)
        with engine_errors():  # an action's constructor may be a user's code
            self.actions = [cls() for cls in resolved.actions]
        self.state = SchedulerState()
        self.recorder = recorder
        self.session_opened = session_opened
        self.gates = gates  # the Volcano release modelled (vspec.model.versions)
        self.prefer = prefer  # another run's tie-breaks to replay (vspec diff)
        # Sessions may be handed their jobs' last clones (SchedulerCache, "Carried jobs"):
        # every action and plugin keeps the job contract, and no recorder keeps a job.
        # False runs the plain path, a fresh clone of every job every session.
        self.carries_jobs = recorder is NO_RECORDER and all(
            vars(cls).get("carries_jobs") is True
            for cls in (*resolved.actions, *resolved.plugins.values())
        )
        # Every action and plugin is vspec's own: those write a session pod group's
        # status only through JobInfo.set_phase (a touch the cache is told of) and at the
        # close (SchedulerCache.own_code).
        self.own_code = all(map(is_builtin, (*resolved.actions, *resolved.plugins.values())))
        # Volcano's cache lives as long as the process, fed the cluster's changes.
        self.cache: SchedulerCache | None = None
        # Not Volcano's: the last session's captured tasks, which the next patches.
        self.captured = TaskCapture()

    @property
    def logs(self) -> LogRecords:
        return self.log.lines

    @property
    def builtin_plugins(self) -> bool:
        """Every plugin of the conf is one of vspec's own (none from a plugins dir or an
        entry point, which may read anything, the clock included)."""
        return all(map(is_builtin, self.plugin_classes.values()))

    def run_once(
        self, cluster: Cluster, now: datetime, result: SimulationResult, *, capture: bool
    ) -> Cluster:
        """One session at ``now``, its effects recorded in ``result`` (with the log's
        current cycle); returns the cluster one period later. ``capture`` records the
        in-session task and pod group states, as for a spec's last cycle."""
        with engine_errors():
            log = self.log
            log.v(4, "Start scheduling ...")
            if self.cache is None:
                self.cache = SchedulerCache(cluster, self.conf.options, log)
            else:
                self.cache.update(cluster)
            self.cache.carries_jobs = self.carries_jobs
            self.cache.own_code = self.own_code
            return _run_once(self, self.cache, result, now, last=capture)

    def skip_session(self) -> None:
        """What a session that changes nothing leaves behind: its uid drawn from the
        generator. Node rotation and plugin state move only when a task is examined."""
        _session_uid(self.rng)


@contextmanager
def engine_errors() -> Iterator[None]:
    """An exception from engine code becomes the run's :class:`PluginError`
    (:func:`plugin_error`); vspec's own errors pass as they are."""
    try:
        yield
    except VspecError:
        raise
    except Exception as exc:
        raise plugin_error(exc) from exc


def simulate(
    conf: SchedulerConf,
    cluster: Cluster,
    *,
    seed: int = 0,
    now: datetime | None = None,
    cycles: int = 1,
    verbosity: int = 3,
    probes: Sequence[Probe] = (),
    recorder: Recorder = NO_RECORDER,
    gates: Gates = V1_11_0,
    prefer: Prefer | None = None,
) -> SimulationResult:
    """Run ``cycles`` scheduling sessions and return what happened; ``recorder`` is
    told why (``vspec explain``) and never changes what happens; ``gates`` say which
    Volcano release is modelled.

    Raises :class:`vspec.errors.PluginError` naming the plugin or action when one raises,
    :class:`vspec.errors.EngineError` where Volcano would panic.
    """
    start = now or DEFAULT_NOW
    with engine_errors(), long_lived_frozen() as freeze:
        scheduler = Scheduler(
            conf,
            seed=seed,
            verbosity=verbosity,
            recorder=recorder,
            session_opened=freeze,
            gates=gates,
            prefer=prefer,
        )
        result = SimulationResult(logs=scheduler.log.lines)
        if probes:
            _probe(scheduler, cluster, seed, start, probes, result)
        for cycle in range(cycles):
            scheduler.log.cycle = cycle
            cluster = scheduler.run_once(
                cluster, start + cycle * SCHEDULE_PERIOD, result, capture=cycle == cycles - 1
            )
    result.cluster = cluster
    return result


def _probe(
    scheduler: Scheduler,
    cluster: Cluster,
    seed: int,
    start: datetime,
    probes: Sequence[Probe],
    result: SimulationResult,
) -> None:
    """The probes' answers and failures, asked of a quiet session of their own on the
    cluster as the run starts."""
    from vspec.framework.probing import evaluate

    log = Klog(verbosity=0)
    conf = scheduler.conf
    ssn = open_session(
        SchedulerCache(cluster, conf.options, log),
        conf,
        log=log,
        rng=random.Random(seed),
        now=start,
        uid="probe",
        classes=scheduler.plugin_classes,
        gates=scheduler.gates,
    )
    try:
        evaluate(ssn, probes, result)
    finally:
        ssn.release()  # no cycle left (see _run_once)


def _run_once(
    scheduler: Scheduler,
    cache: SchedulerCache,
    result: SimulationResult,
    now: datetime,
    *,
    last: bool,
) -> Cluster:
    cluster = cache.cluster
    log, rng, recorder = scheduler.log, scheduler.rng, scheduler.recorder
    ssn = open_session(
        cache,
        scheduler.conf,
        log=log,
        rng=rng,
        now=now,
        uid=_session_uid(rng),
        state=scheduler.state,
        recorder=recorder,
        classes=scheduler.plugin_classes,
        gates=scheduler.gates,
    )
    ssn.prefer = scheduler.prefer
    # The plugins' functions hold the session: it is released when an action raises too,
    # or it stays a cycle that the collector finds (if ever, after a frozen simulation).
    try:
        moved_on = _run_session(scheduler, ssn, result, last=last)
    except BaseException:
        recorder.session_failed(ssn)
        ssn.release()
        raise
    cache.hand_back(moved_on, ssn.settled_jobs())
    ssn.release()
    for pod in cluster.held_pods:
        if pod not in moved_on.held_pods:
            result.created[pod.meta.key] = log.cycle + 1
    return moved_on


def _run_session(
    scheduler: Scheduler, ssn: Session, result: SimulationResult, *, last: bool
) -> Cluster:
    """An open session's actions, then its close and what it leaves: the effects in
    ``result``, and the cluster one period later."""
    cache, log, recorder = ssn.cache, scheduler.log, scheduler.recorder
    cluster = cache.cluster
    scheduler.session_opened()
    for action in scheduler.actions:
        trace = action.trace
        if trace is not None:
            log.v(5, trace.enter, trace.enter_at)
        recorder.action_started(ssn, action.name)
        action.initialize()
        action.execute(ssn)
        ssn.jobs_as_opened = False
        action.uninitialize()
        if trace is not None:
            log.v(5, trace.leaving, trace.leaving_at)
    session_phases = capture_session_state(ssn, cluster, result, scheduler.captured) if last else {}
    recorder.session_closing(ssn)
    written = close_session(ssn)
    log.v(4, "End scheduling ...")
    for task, node in cache.effects.binds:
        result.binds.append(Bind(task, node, log.cycle))
    for task, reason in cache.effects.evictions:
        result.evictions.append(Eviction(task, reason, log.cycle))
    for obj, type_, reason, message in cache.effects.events:
        result.events.append(RecordedEvent(obj, type_, reason, message, log.cycle))
    _record_pod_groups(ssn, result.pod_groups, session_phases)
    return advance(cluster, ssn, written)


def _record_pod_groups(
    ssn: Session, results: dict[str, PodGroupResult], session_phases: dict[str, str]
) -> None:
    """Each job's pod group as the session closed it: a new result for a job the capture
    read (``session_phases``: its in-session phase, :func:`capture_session_state`; the
    dict is used up) or the run had none for, else the last one moved on (a new one in
    its place: a result may serve several jobs). A settled job (``Session.stamped``)
    closes as it opened, with the session's stamp: into a session's own result, one
    result serves every settled job of a phase (a result's readers read it, never change
    it), put in place by C loops."""
    settled = ssn.settled_jobs()
    if settled and not results:
        _record_settled(ssn, results, session_phases)
        return
    stamp = ssn.stamped
    for uid, job in ssn.jobs.items():
        pg = job.pod_group
        if pg is None:
            continue
        if stamp is not None and uid in settled:
            conditions = [stamp.condition]
        else:
            conditions = list(pg.conditions)
        captured = session_phases.pop(uid, None)
        entry = results.get(uid) if captured is None else None
        if entry is None:
            phase = pg.phase
            in_session = phase if captured is None else captured
            results[uid] = PodGroupResult(phase, in_session, conditions)
        else:
            results[uid] = PodGroupResult(pg.phase, entry.session_phase, conditions)
    _record_taken(results, session_phases, list(session_phases))


def _record_settled(
    ssn: Session, results: dict[str, PodGroupResult], session_phases: dict[str, str]
) -> None:
    """:func:`_record_pod_groups` into an empty ``results``, with settled jobs."""
    stamp = ssn.stamped
    assert stamp is not None
    settled, jobs = stamp.jobs, ssn.jobs
    entries = {
        phase: PodGroupResult(phase, phase, [stamp.condition]) for phase in set(settled.values())
    }
    found = dict(zip(settled, map(entries.__getitem__, settled.values()), strict=True))
    for uid in filterfalse(settled.__contains__, jobs):
        pg = jobs[uid].pod_group
        if pg is not None:
            phase = pg.phase
            in_session = session_phases.pop(uid, phase)
            found[uid] = PodGroupResult(phase, in_session, list(pg.conditions))
    order = list(filter(found.__contains__, jobs))
    results.update(zip(order, map(found.__getitem__, order), strict=True))
    _record_taken(results, session_phases, list(filterfalse(results.__contains__, session_phases)))


def _record_taken(
    results: dict[str, PodGroupResult], session_phases: dict[str, str], uids: list[str]
) -> None:
    """Jobs of ``uids`` captured that the close no longer holds with a pod group (a
    plugin's close took it): as captured, no condition written."""
    for uid in uids:
        phase = session_phases[uid]
        results[uid] = PodGroupResult(phase, phase)


def advance(cluster: Cluster, ssn: Session, written: Mapping[str, bool]) -> Cluster:
    """The cluster one schedule period later, by the one rule every engine shares
    (:func:`vspec.model.cycles.next_cluster`), from what ``ssn`` did. Only the pod groups
    the job updater wrote (``written``: their status changed, stamps aside) change: the
    others stay as the API server holds them, their conditions stamped by the session
    that last wrote them, which is what the next session's clones (and logprint's
    lines) show in Volcano."""
    effects, jobs = ssn.cache.effects, ssn.jobs
    return next_cluster(
        cluster,
        binds=dict(effects.binds),
        evicted={task for task, _ in effects.evictions},
        patched=effects.annotations,
        # Found by the updater's answers alone (every job with a pod group has one),
        # not by reading every job.
        pod_groups={
            uid: pg
            for uid in compress(written, written.values())
            if (pg := jobs[uid].pod_group) is not None
        },
        known=ssn.cache.known_pods(),
    )
