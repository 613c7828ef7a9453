"""The event-driven clock: Volcano's sessions at the schedule period on a cluster where
jobs arrive, run for their time and finish, and nodes come and go (docs/timeline.md).

Between two sessions the cluster moves on by the cycles rules (``advance``: bound pods
run, evicted pods are gone one period later); on top of them the timeline applies its
own events at the first session at or after their time: arrivals join Pending, a pod
whose run time is over has ``Succeeded`` (it holds no node resources, as Volcano's cache
keeps completed tasks off their node), a job whose pods all succeeded is deleted (a
Volcano Job with ``ttlSecondsAfterFinished: 0``), and an evicted pod is created again,
Pending, by its job's controller, to run its whole time again.

**Jumping over idle periods.** A session can change the cluster only through what its
actions do. ``enqueue`` acts on Pending pod groups, ``allocate``, ``backfill``,
``preempt`` and ``reclaim`` on Pending tasks (preempt and reclaim evict only for a
pending preemptor), ``print`` only logs. So when every pod is bound (none Pending, none
terminating) and every pod group is Running, such a session binds, evicts and enqueues
nothing; its plugins re-stamp conditions with its own session id and clock, but no
status changed, so its job updater writes no pod group back (and ``Unknown`` needs an
Unschedulable condition of the *current* session). What outlives the session is
unchanged but for the uid it draws from the generator, and node rotation
moves only when a task is examined. Until the next arrival, completion or node event the
cluster stays as it is, so every session until then is such a session: the clock jumps
to that event, drawing the skipped sessions' uids so that the generator is where it
would have been. A conf with any other action (``shuffle`` evicts with nothing pending,
a user action is unknown) never jumps.

**Jumping over stuck periods.** With a backlog, a session can change nothing for a long
time: every pending task is too big for every node. The clock also jumps then, to the
next event, when all of this holds: the last session ran on the cluster as it is now and
changed nothing (no bind, eviction or phase); no pod is terminating and no pending pod is
best-effort; no pending pod's requests (cpu, memory, scalars; the pods count is left out,
which only makes the test stricter) fit in any node's idle resources; the actions are
among enqueue, allocate, backfill and print (preempt and reclaim may evict for a task
that fits nowhere); and every plugin is built in and reads no clock (sla, tdm, cdp,
usage, rescheduling and deviceshare do). Then allocate can place or pipeline nothing
whatever its node order, rotation or random tie-breaks (its first test is the request
against the node's future idle, equal to idle with nothing releasing), backfill has no
best-effort task, and enqueue decides as it did on the same cluster, as nothing it reads
(phases, requests, queue state) moved and no plugin reads the time.
"""

from __future__ import annotations

import heapq
import math
import time
from bisect import bisect_left, insort
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import count
from operator import attrgetter, is_
from typing import TypeVar

from vspec.model.changes import changed, changes_of, list_changes
from vspec.model.conf import SchedulerConf
from vspec.model.corev1 import Container
from vspec.model.engine import Engine, SchedulerProcess
from vspec.model.objects import (
    DEFAULT_NOW,
    ZERO_TIME,
    Cluster,
    Node,
    Pod,
    PodGroup,
    Queue,
    shallow_copy,
)
from vspec.model.resources import ResourceVector, pod_request
from vspec.model.result import Bind, Eviction, SimulationResult
from vspec.model.timeline import Arrival, NodeEvent, Timeline
from vspec.timeline.records import JobRecord, PodRecord, Tick, TimelineResult
from vspec.timeline.shares import fair_shares
from vspec.util.collector import tuned_collector

# Actions that change nothing when nothing is pending (see the module docstring).
PENDING_DRIVEN_ACTIONS = frozenset(
    {"enqueue", "allocate", "backfill", "preempt", "reclaim", "print"}
)

STUCK_SAFE_ACTIONS = frozenset({"enqueue", "allocate", "backfill", "print"})
CLOCK_READING_PLUGINS = frozenset({"sla", "tdm", "cdp", "usage", "rescheduling", "deviceshare"})

_FINISHED = ("Succeeded", "Failed")  # pod phases whose requests no longer count
_KEY = attrgetter("meta.key")

# The nodes, each one's allocatable, their total and its resource names (pods aside).
_Allocatable = tuple[list[Node], dict[str, ResourceVector], ResourceVector, list[str]]

# Called after each session with the cluster it saw and what it did (invariant checks).
SessionHook = Callable[[datetime, Cluster, SimulationResult], None]


@dataclass(frozen=True)
class Progress:
    """How far a run's clock has come, for an observer that shows it (``vspec compare``'s
    progress display): the clock only reports, it never waits on what is done with it.

    ``span`` is the timeline's ``until`` or, without one, the last arrival's time plus its
    longest run time (or the last node event's, if later): a lower bound where jobs wait,
    so it grows to ``reached`` when the clock passes it, and is the run's own length in
    the last report (``done``)."""

    reached: timedelta  # simulated time since the start
    span: timedelta
    sessions: int  # run so far
    skipped: int  # periods jumped so far
    done: bool = False


# Called after each session and each jump, and once when the run ends (``done``).
ProgressHook = Callable[[Progress], None]


def run_timeline(
    conf: SchedulerConf,
    cluster: Cluster,
    timeline: Timeline,
    *,
    seed: int = 0,
    now: datetime | None = None,
    verbosity: int = 0,
    on_session: SessionHook | None = None,
    engine: Engine,
    keep_logs: bool = True,
    on_progress: ProgressHook | None = None,
) -> TimelineResult:
    """Run ``timeline`` on ``cluster`` under ``conf`` on ``engine`` and record what
    happened. The clock asks the engine for a scheduler process and runs its sessions;
    everything else it knows of the cluster it reads from the model. Without
    ``keep_logs`` the result's log holds the last session's lines only (``on_session``
    sees each session's): a day at verbosity 3 logs gigabytes nobody reads.
    ``on_progress`` is told where the clock is after each session and jump (:class:`Progress`).

    Raises what the engine raises (:meth:`vspec.model.engine.Engine.scheduler`): a
    :class:`vspec.errors.PluginError` naming the plugin or action when one raises.
    """
    started = time.process_time()
    with tuned_collector():
        start = now or DEFAULT_NOW
        clock = Clock(conf, cluster, timeline, seed, start, verbosity, on_session, engine)
        clock.keep_logs = keep_logs
        clock.on_progress = on_progress
        clock.run()
    clock.result.cpu_seconds = time.process_time() - started
    if on_progress is not None:
        ran = clock.result.end - start
        on_progress(Progress(ran, ran, clock.result.sessions, clock.result.skipped, done=True))
    return clock.result


@dataclass
class _Pending:
    """Future events, each list sorted by time."""

    arrivals: list[Arrival]
    node_events: list[NodeEvent]
    completions: list[tuple[datetime, int, str]] = field(default_factory=list)  # heap
    next_arrival: int = 0
    next_node_event: int = 0

    def next_time(self, start: datetime) -> datetime | None:
        times = []
        if self.next_arrival < len(self.arrivals):
            times.append(start + self.arrivals[self.next_arrival].at)
        if self.next_node_event < len(self.node_events):
            times.append(start + self.node_events[self.next_node_event].at)
        if self.completions:
            times.append(self.completions[0][0])
        return min(times) if times else None


class Clock:
    """The clock of one run, which can also be driven step by step: :meth:`run` up to a
    moment, :meth:`submit` more, run on (the stateful property tests do)."""

    def __init__(
        self,
        conf: SchedulerConf,
        cluster: Cluster,
        timeline: Timeline,
        seed: int,
        start: datetime,
        verbosity: int,
        on_session: SessionHook | None,
        engine: Engine,
    ) -> None:
        self.conf = conf
        self.timeline = timeline
        self.start = start
        # The engine's scheduler, run session by session: the clock's decisions (when a
        # session runs, what changed between two) are the same whatever runs them.
        self.scheduler = engine.scheduler(conf, seed=seed, verbosity=verbosity)
        self.on_session = on_session
        self.names = frozenset(conf.options.scheduler_names)
        self.can_jump = timeline.skip == "idle" and set(conf.actions) <= PENDING_DRIVEN_ACTIONS
        self.can_jump_stuck = self.can_jump and _clock_free(conf, self.scheduler)
        self.gang_ready = _gang_ready(conf)
        self.settled = False  # the last session ran on this very cluster and changed nothing
        self.keep_logs = True  # else each session's lines replace the last's (run_timeline)
        self.on_progress: ProgressHook | None = None
        self.span = expected_span(timeline)
        self.k = 0  # the clock is at start + k periods
        self.allocatable_of: _Allocatable | None = None  # of the nodes last read
        self.cluster = Cluster(
            nodes=list(cluster.nodes),
            pods=list(cluster.pods),
            pod_groups=list(cluster.pod_groups),
            queues=cluster.queues,
            priority_classes=cluster.priority_classes,
            objects=cluster.objects,
            held_pods=list(cluster.held_pods),
        )
        self.events = _Pending(list(timeline.arrivals), list(timeline.node_events))
        self.result = TimelineResult(start=start, end=start)
        self.result.simulation.logs = self.scheduler.logs
        self.run_for: dict[str, timedelta] = {}
        self.originals: dict[str, Pod] = {}  # what an evicted pod is created again from
        self.serial: dict[str, int] = {}  # bind count, to drop stale completions
        self.bound_of: dict[str, set[str]] = defaultdict(set)  # job -> pods bound now
        self.alive_of: dict[str, set[str]] = defaultdict(set)  # job -> pods not finished
        self.members: dict[str, list[str]] = defaultdict(list)  # job -> its pods
        # pod -> its requests: vectors shared among pods (_Shared), never changed
        self.requests: dict[str, ResourceVector] = {}
        self.shared = _Shared()
        self.loads: dict[str, _Load] = {}  # pod -> what a tick counts of it
        self.tallied: _Tally | None = None  # the sums over the last pods counted (_tally)
        # What the last tick's fair shares were worked out from, and them (_deserved).
        self.deserved_of: tuple[Hashable, tuple[Queue, ...], dict[str, dict[str, float]]] | None
        self.deserved_of = None
        self.places = _Places()  # where each pod is in cluster.pods (_complete)
        self.group_places = _Places()  # and each pod group in cluster.pod_groups
        self.unready: _Unready | None = None  # the pod groups not Running (_idle)
        self.tags = timeline.tags_of()
        self._record_objects(
            self.cluster.pod_groups, [*self.cluster.pods, *self.cluster.held_pods], start
        )
        for pod in self.cluster.pods:
            if pod.node_name and pod.phase not in _FINISHED:
                self._bound(pod.meta.key, pod.node_name, start)

    # -- the loop ---------------------------------------------------------------------------
    def submit(self, arrival: Arrival) -> None:
        """One more arrival (due at once if its time has passed)."""
        events = self.events
        insort(events.arrivals, arrival, lo=events.next_arrival, key=lambda a: a.at)

    def add_node_event(self, event: NodeEvent) -> None:
        events = self.events
        insort(events.node_events, event, lo=events.next_node_event, key=lambda e: e.at)

    @property
    def now(self) -> datetime:
        return self.start + self.k * self.timeline.period

    def run(self, limit: datetime | None = None) -> None:
        """Run until ``limit`` (or the timeline's ``until``), or until nothing is left to
        happen."""
        period = self.timeline.period
        until = None if self.timeline.until is None else self.start + self.timeline.until
        if limit is not None:
            until = limit if until is None else min(until, limit)
        k = self.k
        while True:
            self.k = k
            now = self.start + k * period
            if until is not None and now > until:
                break
            self.result.end = now
            if self._apply_due(now):
                self.settled = False
            upcoming = self.events.next_time(self.start)
            idle = self._idle()
            if idle or (self.settled and upcoming is None):
                if idle:
                    self._tick(now, session=False)
                if upcoming is None:
                    break  # nothing left to happen, and no session would change anything
            if (idle and self.can_jump) or (self.settled and self._stuck()):
                assert upcoming is not None
                target = max(k + 1, math.ceil((upcoming - self.start) / period))
                for _ in range(target - k):
                    self.scheduler.skip_session()
                self.result.skipped += target - k
                k = target
                self._report(now)
                continue
            self.settled = not self._session(now)
            k += 1
            self._report(now)
        self.k = k

    def _report(self, now: datetime) -> None:
        """Tell ``on_progress`` the clock has run the session (or jumped from) ``now``:
        the run's end, as far as is known, so that reports never pass the last one."""
        if self.on_progress is None:
            return
        reached = now - self.start
        result = self.result
        span = max(self.span, reached)
        self.on_progress(Progress(reached, span, result.sessions, result.skipped))

    def _session(self, now: datetime) -> bool:
        """One session at ``now``; whether it changed the cluster."""
        logs = self.scheduler.logs
        if not self.keep_logs:
            logs.clear()
        first_line = len(logs)
        before = self.cluster
        session = SimulationResult()
        after = self.scheduler.run_once(before, now, session, capture=self.on_session is not None)
        # A walk over the records makes the lines at a quarter of a slice's cost (which
        # finds each line by its index): the log holds this session's alone unless kept.
        session.logs = list(logs) if first_line == 0 else logs[first_line:]
        session.cluster = after
        index = self.result.sessions
        self.result.sessions += 1
        total = self.result.simulation
        # Built directly: dataclasses.replace reads every field's definition per call.
        total.binds.extend([Bind(b.task, b.node, index) for b in session.binds])
        total.evictions.extend([Eviction(e.task, e.reason, index) for e in session.evictions])
        if self.on_session is not None:
            self.on_session(now, before, session)
        self.cluster = after
        changes = changes_of(after.pod_groups_changed, before.pod_groups, after.pod_groups)
        if changes is None:
            changes = list_changes(before.pod_groups, after.pod_groups)
        if changes is not None:
            self._regrouped(before.pod_groups, *changes)
        for bind in session.binds:
            self._bound(bind.task, bind.node, now)
        self._evicted([e.task for e in session.evictions], now)
        self._tick(now, session=True, binds=len(session.binds), evictions=len(session.evictions))
        return bool(session.binds or session.evictions or _phase_moved(before, after, changes))

    def _idle(self) -> bool:
        """Nothing pending: every pod bound and alive, every pod group Running."""
        tally = self._tally()
        if tally.terminating or tally.waiting:
            return False
        return self._unready() == 0

    def _unready(self) -> int:
        """How many pod groups are not Running: kept from call to call and brought up to
        date with the pod groups the clock took out or put in, and those a session
        wrote back (``_session``); counted again over every pod group otherwise."""
        groups = self.cluster.pod_groups
        kept = self.unready
        if kept is None or kept.groups is not groups:
            kept = self.unready = _Unready(groups, _not_running(groups))
        return kept.count

    def _regrouped(self, was: list[PodGroup], gone: list[PodGroup], added: list[PodGroup]) -> None:
        """The cluster's pod groups, ``was`` until now, are that list less ``gone`` (each
        an element of it) plus ``added``: the kept count of those not Running follows."""
        kept = self.unready
        if kept is not None and kept.groups is was:
            kept.groups = self.cluster.pod_groups
            kept.count += _not_running(added) - _not_running(gone)

    def _stuck(self) -> bool:
        """No pending job can get a pod placed, or (with gang's JobReady) enough of them
        to be ready; see the module docstring."""
        if not self.can_jump_stuck:
            return False
        idle = {name: room.clone() for name, room in self._allocatable().items()}
        pending: dict[str, list[ResourceVector]] = defaultdict(list)
        placed: dict[str, int] = defaultdict(int)
        for pod in self.cluster.pods:
            if pod.meta.deletion_timestamp is not None:
                return False
            request = self.requests.get(pod.meta.key) or self.shared.request(pod)
            job = pod.job_id or pod.meta.key
            if pod.node_name:
                placed[job] += 1
                if pod.phase not in _FINISHED and pod.node_name in idle:
                    idle[pod.node_name].sub_without_assert(request)
            elif pod.scheduled_by(self.names) and pod.phase == "Pending":
                if request.is_empty():
                    return False  # best-effort: backfill's
                pending[job].append(request)
        groups = {pg.meta.key: pg for pg in self.cluster.pod_groups}
        rooms = list(idle.values())
        for job, requests in pending.items():
            group = groups.get(job)
            if group is not None and group.phase == "Pending":
                continue  # only enqueue moves it, and it did not on this same cluster
            needed = 1
            if self.gang_ready and group is not None:
                needed = max(1, group.min_member - placed[job])
            if _placeable(requests, rooms, needed) >= needed:
                return False
        return True

    # -- events -------------------------------------------------------------------------------
    def _apply_due(self, now: datetime) -> bool:
        """Apply the events due by ``now``; whether there were any."""
        events = self.events
        before = (events.next_node_event, events.next_arrival)
        while events.next_node_event < len(events.node_events):
            event = events.node_events[events.next_node_event]
            if self.start + event.at > now:
                break
            events.next_node_event += 1
            self._node_event(event, now)
        while events.next_arrival < len(events.arrivals):
            arrival = events.arrivals[events.next_arrival]
            if self.start + arrival.at > now:
                break
            events.next_arrival += 1
            self._arrive(arrival)
        done: set[str] = set()
        while events.completions and events.completions[0][0] <= now:
            finish, serial, key = heapq.heappop(events.completions)
            if self.serial.get(key) == serial:
                done.add(key)
                self.result.pods[key].finished = finish
        if done:
            self._complete(done)
        return bool(done) or before != (events.next_node_event, events.next_arrival)

    def _arrive(self, arrival: Arrival) -> None:
        submitted = self.start + arrival.at
        groups = [_created(pg, submitted) for pg in arrival.pod_groups]
        pods = [_created(pod, submitted) for pod in arrival.pods]
        held = [_created(pod, submitted) for pod in arrival.held_pods]
        self.run_for.update(arrival.run_for)
        was_groups, was = self.cluster.pod_groups, self.cluster.pods
        self.group_places.appended([pg.meta.key for pg in groups], len(was_groups))
        self._set_pod_groups([*was_groups, *groups], [], groups)
        self._regrouped(was_groups, [], groups)
        self.places.appended([pod.meta.key for pod in pods], len(was))
        self._set_pods([*was, *pods], [], pods)
        self.cluster.held_pods = [*self.cluster.held_pods, *held]
        self._record_objects(groups, [*pods, *held], submitted)
        self._counted(was, [], pods)  # their loads recorded

    def _complete(self, done: set[str]) -> None:
        """Pods whose time is over have succeeded; a job whose pods all have is deleted."""
        finished: set[str] = set()
        for key in done:
            record = self.result.pods[key]
            self.bound_of[record.job].discard(key)
            alive = self.alive_of[record.job]
            alive.discard(key)
            if not alive:
                finished.add(record.job)
        for key in finished:
            del self.alive_of[key]
            self.result.jobs[key].completed = max(
                f for p in self.members[key] if (f := self.result.pods[p].finished) is not None
            )
        gone = {key for job in finished for key in self.members[job]}
        was = self.cluster.pods
        pods, changes = _pods_completed(was, done, gone, self.places)
        self._set_pods(pods, *(changes or (None, None)))
        if changes is not None:
            self._counted(was, *changes)
        if finished:
            was_groups = self.cluster.pod_groups
            groups, taken = _taken_out(was_groups, finished, self.group_places)
            self._set_pod_groups(groups, taken, [])
            self._regrouped(was_groups, taken, [])

    def _set_pods(self, pods: list[Pod], gone: list[Pod] | None, added: list[Pod] | None) -> None:
        """The cluster's pods are now ``pods``, a new list: the last less ``gone`` plus
        ``added``, the rest in order, as reported to the next session's cache and the
        tally (vspec.model.changes, "Change reports"); not known when None."""
        cluster = self.cluster
        if gone is None or added is None:
            cluster.pods_changed = None
        else:
            cluster.pods_changed = changed(cluster.pods_changed, cluster.pods, pods, gone, added)
        cluster.pods = pods

    def _set_pod_groups(
        self, groups: list[PodGroup], gone: list[PodGroup], added: list[PodGroup]
    ) -> None:
        """As :meth:`_set_pods`, for the cluster's pod groups."""
        cluster = self.cluster
        was = cluster.pod_groups
        cluster.pod_groups_changed = changed(cluster.pod_groups_changed, was, groups, gone, added)
        cluster.pod_groups = groups

    def _node_event(self, event: NodeEvent, now: datetime) -> None:
        nodes = self.cluster.nodes
        if event.kind == "add":
            assert event.added is not None
            self.cluster.nodes = [*nodes, event.added]
            return
        if event.kind == "remove":
            self.cluster.nodes = [n for n in nodes if n.meta.name != event.node]
        else:
            unschedulable = event.kind != "uncordon"
            self.cluster.nodes = [_cordoned(n, unschedulable, event.node) for n in nodes]
        if event.kind in ("drain", "remove"):
            gone = [
                p.meta.key
                for p in self.cluster.pods
                if p.node_name == event.node and p.phase not in _FINISHED
            ]
            drained = set(gone)
            kept = [p for p in self.cluster.pods if p.meta.key not in drained]
            self._set_pods(kept, [p for p in self.cluster.pods if p.meta.key in drained], [])
            self._evicted(gone, now)

    # -- bookkeeping ------------------------------------------------------------------------
    def _record_objects(self, groups: list[PodGroup], pods: list[Pod], submitted: datetime) -> None:
        records = self.result
        for pg in groups:
            records.jobs[pg.meta.key] = JobRecord(
                pg.meta.key, pg.queue, self.tags.get(pg.meta.key, ()), pg.min_member, 0, submitted
            )
        # A pod's queue is its pod group's, the last of that key in the cluster. ``groups``
        # end the cluster's list, so they are looked at first; the rest only for pods of
        # an earlier group (reading every pod group per arrival cost a day a CPU-second).
        queue_of = {pg.meta.key: pg.queue for pg in groups}
        earlier: dict[str, str] | None = None
        for pod in pods:
            key = pod.meta.key
            job = pod.job_id or key
            if job not in records.jobs:
                records.jobs[job] = JobRecord(job, "", self.tags.get(job, ()), 1, 0, submitted)
            records.jobs[job].pods += 1
            self.alive_of[job].add(key)
            self.members[job].append(key)
            queue = queue_of.get(job)
            if queue is None:
                if earlier is None:
                    earlier = {pg.meta.key: pg.queue for pg in self.cluster.pod_groups}
                queue = earlier.get(job, "")
            records.pods[key] = PodRecord(key, job, queue, submitted)
            self.originals[key] = pod
            request = self.requests[key] = self.shared.request(pod)
            self.loads[key] = self.shared.load(request, queue)

    def _bound(self, key: str, node: str, now: datetime) -> None:
        record = self.result.pods[key]
        record.bound, record.node = now, node
        record.binds += 1
        self.serial[key] = serial = self.serial.get(key, 0) + 1
        if key in self.run_for:
            heapq.heappush(self.events.completions, (now + self.run_for[key], serial, key))
        job = self.result.jobs[record.job]
        bound = self.bound_of[record.job]
        bound.add(key)
        if job.started is None and len(bound) >= max(job.min_available, 1):
            job.started = now

    def _evicted(self, keys: list[str], now: datetime) -> None:
        """Evicted pods are created again, Pending, by their jobs' controllers."""
        again = []
        for key in keys:
            record = self.result.pods[key]
            record.evictions += 1
            self.result.jobs[record.job].evictions += 1
            self.serial[key] = self.serial.get(key, 0) + 1  # its completion is void
            self.bound_of[record.job].discard(key)
            original = self.originals[key]
            if original.node_name:  # a pod of the starting cluster
                original = shallow_copy(original)
                original.node_name, original.phase = "", "Pending"
            again.append(original)
        if again:
            present = {p.meta.key for p in self.cluster.pods}
            created = [p for p in again if p.meta.key not in present]
            self._set_pods([*self.cluster.pods, *created], [], created)

    def _allocatable(self) -> dict[str, ResourceVector]:
        """Each node's allocatable; read again only when the nodes change (a node event:
        sessions pass the same list on)."""
        nodes = self.cluster.nodes
        if self.allocatable_of is None or self.allocatable_of[0] is not nodes:
            rooms = {node.meta.name: ResourceVector.from_list(node.allocatable) for node in nodes}
            total = ResourceVector()
            for room in rooms.values():
                total.add(room)
            self.allocatable_of = (nodes, rooms, total, _resource_names(total))
        return self.allocatable_of[1]

    def _capacity(self) -> tuple[ResourceVector, list[str]]:
        """The nodes' total allocatable and the resources a tick reports."""
        self._allocatable()
        assert self.allocatable_of is not None
        return self.allocatable_of[2], self.allocatable_of[3]

    def _tick(self, now: datetime, *, session: bool, binds: int = 0, evictions: int = 0) -> None:
        capacity, names = self._capacity()
        tally = self._tally()
        used, sums, pending, running = tally.used, tally.sums, tally.pending, tally.running
        deserved = self._deserved(capacity, sums, names)
        none = _Sums(ResourceVector(), ResourceVector())
        self.result.ticks.append(
            Tick(
                time=now,
                session=session,
                used={n: used.get(n) for n in names},
                capacity={n: capacity.get(n) for n in names},
                queue_used={
                    q.meta.name: {n: sums.get(q.meta.name, none).used.get(n) for n in names}
                    for q in self.cluster.queues
                },
                queue_deserved=deserved,
                pending=pending,
                running=running,
                binds=binds,
                evictions=evictions,
            )
        )

    def _deserved(
        self, capacity: ResourceVector, sums: dict[str, _Sums], names: list[str]
    ) -> dict[str, dict[str, float]]:
        """:func:`fair_shares` of the cluster's queues, worked out again only when what
        it reads moved (the queues, the capacity, a queue's demand): the tick that
        follows a session often sees the demand that session saw."""
        queues = self.cluster.queues
        key = (
            tuple(names),
            tuple([capacity.get(n) for n in names]),
            tuple([(q, tuple([s.demand.get(n) for n in names])) for q, s in sums.items()]),
        )
        last = self.deserved_of
        if (
            last is not None
            and last[0] == key
            and len(last[1]) == len(queues)
            and all(map(is_, last[1], queues))
        ):
            return {queue: dict(shares) for queue, shares in last[2].items()}
        demand = {name: queue.demand for name, queue in sums.items()}
        deserved = fair_shares(queues, capacity, demand, names)
        kept = {queue: dict(shares) for queue, shares in deserved.items()}
        self.deserved_of = (key, tuple(queues), kept)
        return deserved

    def _tally(self) -> _Tally:
        """What the cluster's pods not finished request, per queue and bound or not. Kept
        from tick to tick and brought up to date with the pods that are not the same
        objects as at the last tick (the model is copy-on-write), when every pod counted
        requests whole units of cpu and memory alone: sums of such integers are exact
        in any order, so they come to what adding every pod up again gives."""
        pods = self.cluster.pods
        last = self.tallied
        if last is not None and last.pods is pods:
            return last
        if last is not None and last.exact:
            changes = changes_of(self.cluster.pods_changed, last.pods, pods)
            if changes is None:
                changes = list_changes(last.pods, pods)
            if changes is not None:
                gone, new = changes
                for pod in gone:
                    last.count(pod, self._known_load(pod), -1.0)
                for pod in new:
                    last.count(pod, self._known_load(pod), 1.0)
                if last.exact and last.bounded():
                    last.pods = pods
                    return last
        tally = self.tallied = _Tally(pods, self.names)
        for pod in pods:
            tally.count(pod, self._known_load(pod), 1.0)
        return tally

    def _counted(self, was: list[Pod], gone: list[Pod], added: list[Pod]) -> None:
        """The cluster's pods, ``was`` until now, are that list less ``gone`` (each an
        element of it) plus ``added``: a tally of ``was`` is brought up to date with them
        as :meth:`_tally` would with the changes it finds, the clock paying for what it
        changed rather than for finding it again among every pod."""
        last = self.tallied
        if last is None or last.pods is not was or not last.exact:
            return
        for pod in gone:
            last.count(pod, self._known_load(pod), -1.0)
        for pod in added:
            last.count(pod, self._known_load(pod), 1.0)
        if last.exact and last.bounded():
            last.pods = self.cluster.pods
        else:
            self.tallied = None

    def _known_load(self, pod: Pod) -> _Load:
        return self.loads.get(pod.meta.key) or self._load(pod)

    def _load(self, pod: Pod) -> _Load:
        """What a tick counts of ``pod``: its queue, and its requests less the pods count
        (which no tick reports)."""
        record = self.result.pods.get(pod.meta.key)
        request = self.requests.get(pod.meta.key) or self.shared.request(pod)
        return _load_of(request, record.queue if record is not None else "")


def _load_of(request: ResourceVector, queue: str) -> _Load:
    """What a tick counts of a pod of ``queue`` requesting ``request``."""
    scalars = tuple((n, q) for n, q in request.scalars.items() if n != "pods")
    cpu, memory = request.milli_cpu, request.memory
    exact = not scalars and all(q.is_integer() and abs(q) < _EXACT for q in (cpu, memory))
    return _Load(queue, cpu, memory, scalars, exact)


class _Shared:
    """A pod's requests and load, worked out once per containers list: the loader's
    copies of an arrival (``count``) share their template's, and a day records 50,000
    pods at about 4 us each. Only pods with no init containers and no overhead are
    shared (:func:`pod_request` reads nothing else of them), as the invariants' requests
    are (vspec.invariants.history); each list is kept with its answer, so its id names
    no other list while the answer is kept. The model's objects are never written once
    built (copy-on-write), and neither are the answers, which pods share."""

    __slots__ = ("loads", "requests")

    def __init__(self) -> None:
        self.requests: dict[int, tuple[list[Container], ResourceVector]] = {}
        self.loads: dict[tuple[int, str], tuple[ResourceVector, _Load]] = {}

    def request(self, pod: Pod) -> ResourceVector:
        """:func:`pod_request` of ``pod``."""
        if pod.init_containers or pod.overhead:
            return pod_request(pod, ResourceVector)
        kept = self.requests.get(id(pod.containers))
        if kept is None:
            kept = (pod.containers, pod_request(pod, ResourceVector))
            self.requests[id(pod.containers)] = kept
        return kept[1]

    def load(self, request: ResourceVector, queue: str) -> _Load:
        """:func:`_load_of` ``request`` and ``queue``."""
        kept = self.loads.get((id(request), queue))
        if kept is None:
            kept = self.loads[id(request), queue] = (request, _load_of(request, queue))
        return kept[1]


@dataclass(frozen=True, slots=True)
class _Load:
    queue: str
    milli_cpu: float
    memory: float
    scalars: tuple[tuple[str, float], ...]
    exact: bool  # whole units of cpu and memory alone, well within a float's integers

    def add_scalars(self, *totals: ResourceVector) -> None:
        for total in totals:
            for name, q in self.scalars:
                total.scalars[name] = total.scalars.get(name, 0.0) + q


# Below this every pod's and every sum's quantities are integers a float holds exactly.
_EXACT = float(2**50)


@dataclass(slots=True)
class _Tally:
    """A tick's sums over ``pods``, each element counted (an object listed twice, twice)."""

    pods: list[Pod]
    names: frozenset[str]  # the scheduler's names
    used: ResourceVector = field(default_factory=ResourceVector)
    sums: dict[str, _Sums] = field(default_factory=dict)  # queue -> its pods' requests
    pending: int = 0
    running: int = 0
    terminating: int = 0  # pods with a deletion timestamp, finished or not
    waiting: int = 0  # Pending pods of this scheduler on no node
    exact: bool = True  # every pod counted requests whole cpu and memory units alone, once

    def count(self, pod: Pod, load: _Load, sign: float) -> None:
        """Add (``sign`` 1) or take off (-1) what ``pod`` requests, if not finished:
        ResourceVector.add inline, with the same additions in the same order as a tick
        adding every pod up."""
        if pod.meta.deletion_timestamp is not None:
            self.terminating += int(sign)
        if not pod.node_name and pod.phase == "Pending" and pod.scheduled_by(self.names):
            self.waiting += int(sign)
        if pod.phase in _FINISHED:
            return
        self.exact = self.exact and load.exact
        queue = self.sums.get(load.queue)
        if queue is None:
            queue = self.sums[load.queue] = _Sums(ResourceVector(), ResourceVector())
        cpu, memory = sign * load.milli_cpu, sign * load.memory
        queue.demand.milli_cpu += cpu
        queue.demand.memory += memory
        bound = pod.node_name
        if bound:
            self.running += int(sign)
            used = self.used
            used.milli_cpu += cpu
            used.memory += memory
            queue.used.milli_cpu += cpu
            queue.used.memory += memory
        else:
            self.pending += int(sign)
        if load.scalars:
            load.add_scalars(queue.demand, *((self.used, queue.used) if bound else ()))

    def bounded(self) -> bool:
        """Every sum below ``_EXACT``, where integer sums stay exact."""
        values = [self.used.milli_cpu, self.used.memory]
        for queue in self.sums.values():
            values += (queue.demand.milli_cpu, queue.demand.memory)
        return all(abs(v) < _EXACT for v in values)


@dataclass(slots=True)
class _Unready:
    """How many of ``groups`` are not Running."""

    groups: list[PodGroup]
    count: int


def _not_running(groups: list[PodGroup]) -> int:
    return sum(pg.phase != "Running" for pg in groups)


@dataclass(frozen=True, slots=True)
class _Sums:
    demand: ResourceVector  # requests of its pods not finished
    used: ResourceVector  # of those on a node


def _fits(request: ResourceVector, room: ResourceVector) -> bool:
    """The request fits in the room, pods count aside, with a unit of slack per resource
    (a looser test than allocate's: it may only say "fits" more often)."""
    if request.milli_cpu > room.milli_cpu + 1 or request.memory > room.memory + 1:
        return False
    return all(q <= room.scalars.get(n, 0.0) + 1 for n, q in request.scalars.items() if n != "pods")


def _placeable(requests: list[ResourceVector], rooms: list[ResourceVector], needed: int) -> int:
    """An upper bound on how many of a job's pending pods fit at once (up to ``needed``):
    one when any fits anywhere, else per node as many copies of the job's smallest
    request (resource by resource) as its room holds."""
    if needed <= 1:
        distinct = {r.signature(): r for r in requests}.values()
        return int(any(_fits(r, room) for r in distinct for room in rooms))
    names = {n for r in requests for n in r.resource_names() if n != "pods"}
    sizes = [(n, min(r.get(n) for r in requests)) for n in names]
    sizes = [(n, q) for n, q in sizes if q > 1]
    if not sizes:
        return needed
    total = 0
    for room in rooms:
        total += max(0, min(math.floor((room.get(n) + 1) / q) for n, q in sizes))
        if total >= needed:
            break
    return total


def expected_span(timeline: Timeline) -> timedelta:
    """The simulated time a run of ``timeline`` is expected to cover (:class:`Progress`)."""
    ends = [a.at + max(a.run_for.values(), default=timedelta(0)) for a in timeline.arrivals]
    ends += [e.at for e in timeline.node_events]
    last = max(ends, default=timedelta(0))
    return last if timeline.until is None else min(timeline.until, last)


def _gang_ready(conf: SchedulerConf) -> bool:
    """Gang's JobReady is on: a job short of minAvailable placements is discarded."""
    return any(
        option.name == "gang" and option.enabled("job_ready")
        for tier in conf.tiers
        for option in tier.plugins
    )


def _clock_free(conf: SchedulerConf, scheduler: SchedulerProcess) -> bool:
    """The conf's sessions depend on the cluster alone, not the clock (module docstring):
    the engine's own plugins, none of those that read the clock."""
    if not set(conf.actions) <= STUCK_SAFE_ACTIONS:
        return False
    if not scheduler.builtin_plugins:
        return False
    return not any(
        option.name in CLOCK_READING_PLUGINS for tier in conf.tiers for option in tier.plugins
    )


def _resource_names(capacity: ResourceVector) -> list[str]:
    return [n for n in capacity.resource_names() if n != "pods"]


_Object = TypeVar("_Object", PodGroup, Pod)


def _created(obj: _Object, submitted: datetime) -> _Object:
    """An arrival's object as the API server holds it: created when it was submitted."""
    if obj.meta.creation_timestamp != ZERO_TIME:
        return obj
    new = shallow_copy(obj)
    new.meta = shallow_copy(obj.meta)
    new.meta.creation_timestamp = submitted
    return new


def _pods_completed(
    pods: list[Pod], done: set[str], gone: set[str], places: _Places
) -> tuple[list[Pod], tuple[list[Pod], list[Pod]] | None]:
    """``pods`` with those of ``gone`` taken out and those of ``done`` succeeded, in order,
    and the pods of ``pods`` no longer in it and those new in it (None: not known).
    A batch touches a few pods of a cluster of thousands, so only their places are
    written, found in ``places`` (kept from batch to batch), where a pass over every pod
    for each batch cost a day several CPU-seconds. A cluster whose keys repeat (never a
    loaded one) is rebuilt in full."""
    found = places.find(pods, done | gone)
    if found is None:
        rebuilt = [
            _succeeded(pod) if key in done else pod
            for pod in pods
            if (key := pod.meta.key) not in gone
        ]
        return rebuilt, None
    new = pods.copy()
    taken: list[Pod] = []
    put: list[Pod] = []
    for i in sorted(found, reverse=True):
        pod = pods[i]
        key = pod.meta.key
        taken.append(pod)
        if key in gone:
            del new[i]  # from the end, so the places still to write stay where they are
            places.taken_out(key)
        else:
            new[i] = _succeeded(pod)
            put.append(new[i])
    return new, (taken, put)


def _taken_out(
    groups: list[PodGroup], keys: set[str], places: _Places
) -> tuple[list[PodGroup], list[PodGroup]]:
    """``groups`` without those of ``keys``, in order, and those taken out: found in
    ``places`` as :func:`_pods_completed` finds pods (a pass over every pod group for
    each finished batch cost a day a CPU-second)."""
    found = places.find(groups, keys)
    if found is None:
        return [pg for pg in groups if pg.meta.key not in keys], [
            pg for pg in groups if pg.meta.key in keys
        ]
    new = groups.copy()
    taken = []
    for i in sorted(found, reverse=True):
        taken.append(groups[i])
        del new[i]
        places.taken_out(groups[i].meta.key)
    return new, taken


class _Places:
    """Where each pod is in the cluster's pod list (or each pod group in its list), kept
    from batch to batch: a session keeps the order, arrivals append, and a batch takes
    out the pods (and pod groups) of finished jobs. ``at`` holds each key's place in the
    list as it was when the places were found, ``out`` (sorted) the places taken out
    since, so a pod's place now is its place then less the places taken out before it.
    A place is used only where the list holds that very key; any other (a key not kept,
    pods moved by a session) has the places found again, by C loops alone. Pod keys are
    unique in a cluster (the loader's rule, and the clock's records are keyed by them),
    so the place holding a key is its only one; ``find`` answers None when they are not
    (checked each time the places are found)."""

    __slots__ = ("at", "out")

    def __init__(self) -> None:
        self.at: dict[str, int] = {}
        self.out: list[int] = []

    def find(self, pods: Sequence[Pod] | Sequence[PodGroup], keys: set[str]) -> list[int] | None:
        """The places in ``pods`` of the pods (or pod groups) of ``keys`` it holds."""
        size, at, out = len(pods), self.at, self.out
        found = []
        for key in keys:
            then = at.get(key)
            if then is None:
                break
            i = then - bisect_left(out, then)
            if i >= size or pods[i].meta.key != key:
                break
            found.append(i)
        else:
            return found
        at.clear()
        out.clear()
        at.update(zip(map(_KEY, pods), count()))
        if len(at) != size:
            at.clear()
            return None
        return [at[key] for key in keys if key in at]

    def appended(self, keys: list[str], first: int) -> None:
        """Pods of ``keys`` appended to the list at ``first`` on: after every place
        taken out, so their place then is their place now plus all taken out."""
        base = first + len(self.out)
        self.at.update(zip(keys, count(base)))

    def taken_out(self, key: str) -> None:
        then = self.at.pop(key, None)
        if then is not None:
            insort(self.out, then)


def _phase_moved(
    before: Cluster, after: Cluster, changes: tuple[list[PodGroup], list[PodGroup]] | None
) -> bool:
    """Whether a pod group's phase differs between the clusters, or one is new; only
    the pod groups a session wrote back are other objects (``changes``: found by
    identity, :func:`list_changes`)."""
    if changes is None:
        was = {pg.meta.key: pg.phase for pg in before.pod_groups}
        return any(was.get(pg.meta.key) != pg.phase for pg in after.pod_groups)
    gone, added = changes
    was = {pg.meta.key: pg.phase for pg in gone}
    return any(was.get(pg.meta.key) != pg.phase for pg in added)


def _succeeded(pod: Pod) -> Pod:
    new = shallow_copy(pod)
    new.phase = "Succeeded"
    return new


def _cordoned(node: Node, unschedulable: bool, name: str) -> Node:
    if node.meta.name != name:
        return node
    new = shallow_copy(node)
    new.unschedulable = unschedulable
    return new
