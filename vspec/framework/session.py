"""A scheduling session (``framework/session.go``).

A session is one snapshot of the cache plus the functions the configured plugins
registered. Actions read it and change it through allocate/pipeline/evict (directly
or through a :class:`~vspec.framework.statement.Statement`); only committed
operations reach the cache.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import Resource
from vspec.api.task_info import TaskInfo
from vspec.api.types import Code, TaskStatus
from vspec.api.unschedule_info import FitError
from vspec.errors import EngineError, GoError
from vspec.framework.cache import JobFeed, PodGroupStatus, SchedulerCache
from vspec.framework.interface import Event, EventHandler, Plugin
from vspec.framework.log import Klog
from vspec.framework.recorder import NO_RECORDER, Recorder
from vspec.framework.session_plugins import SessionPlugins
from vspec.framework.statement import Statement
from vspec.k8s.nodeinfo import K8sNodeInfo, build_node_map
from vspec.k8s.nodeinfo import Snapshot as K8sSnapshot
from vspec.k8s.podinfo import PodInfo
from vspec.model.conf import Configuration, SchedulerOptions, Tier
from vspec.model.corev1 import Condition
from vspec.model.engine import Prefer
from vspec.model.objects import Cluster, Pod
from vspec.model.versions import V1_11_0, Gates
from vspec.util.node_memo import NodeMemo

if TYPE_CHECKING:
    from vspec.framework.columns import NodeColumns

# The codes with which a FitError rejects a node in allocate (others let it pass).
ALLOCATE_FAILS = (
    Code.Unschedulable,
    Code.UnschedulableAndUnresolvable,
    Code.Error,
    Code.Skip,
    Code.Wait,
)
_PREEMPT_FAILS = (Code.UnschedulableAndUnresolvable, Code.Error, Code.Skip, Code.Wait)


_Memo = TypeVar("_Memo")


@dataclass(frozen=True)
class Stamped:
    """What gang's close left unwritten (``vspec.framework.job_updater.settled_jobs``):
    each of ``jobs`` closes with its pod group as it opened but for the first condition,
    the session's one Scheduled ``condition`` (gang stamps every ready job alike), which
    is what the job updater would find held and the result records. Its value: the
    phase the job opened and closes with."""

    jobs: Mapping[str, str]
    condition: Condition


@dataclass
class SchedulerState:
    """What outlives a session in Volcano's process: global counters and action state."""

    last_processed_node_index: int = 0
    # Plugins' Go package-level variables (tdm's lastEvictAt...), keyed "<plugin>.<name>".
    plugin_memory: dict[str, object] = field(default_factory=dict)
    # Not Volcano's: what a plugin keeps between sessions only to work less, one object
    # of each class asked for (:meth:`memo`), keyed by that class.
    memos: dict[type, object] = field(default_factory=dict)

    def memo(self, kind: type[_Memo]) -> _Memo:
        """The scheduler's one ``kind()``, made when first asked. What it holds must be
        checked against each session before use (by object identity, as the carried
        jobs are), so that keeping it never changes what a session decides; a session
        opened without the scheduler's state starts with an empty one."""
        found = self.memos.get(kind)
        if not isinstance(found, kind):
            found = self.memos[kind] = kind()
        return found


class Session(SessionPlugins):
    def __init__(
        self,
        uid: str,
        cache: SchedulerCache,
        tiers: list[Tier],
        configurations: list[Configuration],
        *,
        log: Klog,
        rng: random.Random,
        now: datetime,
        state: SchedulerState | None = None,
        recorder: Recorder = NO_RECORDER,
        gates: Gates = V1_11_0,
    ) -> None:
        self.tiers = tiers
        super().__init__()
        self.uid = uid
        self.cache = cache
        self.configurations = configurations
        self.log = log
        self.rng = rng
        self.now = now
        # Which Volcano release is modelled: read as fields where behaviour differs.
        self.gates = gates
        self.state = state or SchedulerState()
        # Told of each decision; the default keeps nothing (see vspec.framework.recorder).
        self.recorder = recorder
        # Another run's node per (session, task), taken where it tied (vspec diff).
        self.prefer: Prefer | None = None
        # conf.EnabledActionMap: the configured action names (allocate reads it).
        self.enabled_actions: frozenset[str] = frozenset()
        self.options: SchedulerOptions = cache.options
        self.cluster: Cluster = cache.cluster
        snapshot = cache.snapshot()
        self.jobs: dict[str, JobInfo] = snapshot.jobs
        self.nodes: dict[str, NodeInfo] = snapshot.nodes
        self.node_list: list[NodeInfo] = snapshot.node_list
        self.revocable_nodes: dict[str, NodeInfo] = snapshot.revocable_nodes
        self.queues: dict[str, QueueInfo] = snapshot.queues
        # Each job's pod group status as the session opened (``podGroupStatus``).
        self.pod_group_status: dict[str, PodGroupStatus] = snapshot.pod_group_status
        # Which jobs may open otherwise than at the cache's last snapshot (JobFeed), and
        # whether they still hold what they opened with: no action has run yet (no
        # plugin that keeps the job contract changes a job at open).
        self.job_feed: JobFeed = snapshot.feed
        self.jobs_as_opened = True
        self.total_resource = snapshot.total_allocatable
        self.total_guarantee = Resource()
        self.node_map: dict[str, K8sNodeInfo] = build_node_map(self.node_list, cache.k8s)
        self.plugins: dict[str, Plugin] = {}
        self.event_handlers: list[EventHandler] = []
        # Shared per-session state plugins hand each other (e.g. the K8s CycleState).
        self.plugin_state: dict[str, object] = {}
        # Summed scores of node-local NodeOrder functions (see node_local_key).
        self.score_memo: NodeMemo[float] = NodeMemo()
        # The nodes as columns, once an action asked (vspec.framework.columnar).
        self.columns: NodeColumns | None = None
        self._closing_fit_errors: dict[str, str] = {}
        # The jobs whose close is the stamp alone, left unstamped (set by gang's close).
        self.stamped: Stamped | None = None

    def release(self) -> None:
        """What Volcano's ``closeSession`` sets to nil (jobs, nodes, plugins, event
        handlers, the registered functions), done once the scheduler has read the
        session's outcome. The plugins' functions hold the session or their plugin,
        which the session holds: without this every session was left to the cyclic
        collector, and on a 1,000-node timeline collecting them took half the CPU."""
        self.jobs = {}
        self.nodes = {}
        self.revocable_nodes = {}
        self.plugins = {}
        self.event_handlers = []
        self.clear()

    def closing_fit_error(self, job: JobInfo) -> str:
        """``job.FitError()`` once the actions are done: gang's condition and the job
        updater's event both print it at close, and nothing in between changes a job's
        tasks or fit errors, so it is worked out once (it was a fortieth of a small spec's
        engine time)."""
        found = self._closing_fit_errors.get(job.uid)
        if found is None:
            found = self._closing_fit_errors[job.uid] = job.fit_error()
        return found

    def k8s_snapshot(self) -> K8sSnapshot:
        """The Kubernetes plugins' ``Snapshot`` of this session's node map, as each makes
        it at its open (shared while no node changed since: see K8sMemo.snapshot)."""
        return self.cache.k8s.snapshot(self.node_map, self.cluster)

    def pod_info(self, pod: Pod) -> PodInfo:
        """What Kubernetes derives from ``pod`` alone, derived once for every plugin (and
        for later sessions while the pod object lives)."""
        return self.cache.k8s.pod_info(pod)

    # -- event handlers ----------------------------------------------------------------------
    def add_event_handler(self, handler: EventHandler) -> None:
        self.event_handlers.append(handler)

    def _fire_allocate(self, task: TaskInfo) -> None:
        for handler in self.event_handlers:
            if handler.allocate_func is not None:
                handler.allocate_func(Event(task))

    def _fire_deallocate(self, task: TaskInfo) -> None:
        for handler in self.event_handlers:
            if handler.deallocate_func is not None:
                handler.deallocate_func(Event(task))

    # -- predicates as actions use them --------------------------------------------------------
    def _predicate_error(self, task: TaskInfo, node: NodeInfo) -> FitError | None:
        """``PredicateFn`` with another GoError wrapped as a FitError with code Error."""
        try:
            for fn in self._flat("predicate"):
                fn(task, node)
        except FitError as fe:
            return fe.with_traceback(None)
        except GoError as exc:  # an error the Go predicate returns; anything else is a bug
            return FitError.of(task, node.name, str(exc))
        return None

    def predicate_for_allocate_action(self, task: TaskInfo, node: NodeInfo) -> FitError | None:
        fe = self._predicate_error(task, node)
        if fe is not None and fe.has_code(*ALLOCATE_FAILS):
            return fe
        return None

    def predicate_for_preempt_action(self, task: TaskInfo, node: NodeInfo) -> FitError | None:
        """Plain Unschedulable (pod count, ports) is ignored: preemption may cure it."""
        fe = self._predicate_error(task, node)
        if fe is not None and fe.has_code(*_PREEMPT_FAILS):
            return fe
        return None

    def unschedulable_and_unresolvable_filtered_nodes(self, task: TaskInfo) -> list[NodeInfo]:
        """``GetUnschedulableAndUnresolvableNodesForTask``: the nodes worth trying."""
        job = self.jobs.get(task.job)
        if job is None:
            return self.node_list
        fit_errors = job.nodes_fit_errors.get(task.uid)
        if fit_errors is None:
            return self.node_list
        skip = fit_errors.unschedulable_and_unresolvable_nodes()
        if not skip:
            return self.node_list
        # Go iterates the node map here (random order); vspec keeps NodeList order.
        return [n for n in self.nodes.values() if n.name not in skip]

    # -- operations without a statement ---------------------------------------------------------
    def _job_of(self, task: TaskInfo, what: str) -> JobInfo:
        job = self.jobs.get(task.job)
        if job is None:
            raise EngineError(f"failed to find job {task.job} when {what}")
        return job

    def _node_of(self, name: str, what: str) -> NodeInfo:
        node = self.nodes.get(name)
        if node is None:
            raise EngineError(f"failed to find node {name} when {what}")
        return node

    def pipeline(self, task: TaskInfo, hostname: str) -> None:
        """``ssn.Pipeline`` (reclaim): no statement, no undo."""
        self._job_of(task, "pipeline").update_task_status(task, TaskStatus.Pipelined)
        task.node_name = hostname
        node = self._node_of(hostname, "pipeline")
        node.add_task(task)
        if self.log.enabled(3):
            self.log.v(
                3,
                f"After pipelined Task <{task.namespace}/{task.name}> to Node <{node.name}>: "
                f"idle <{node.idle}>, used <{node.used}>, releasing <{node.releasing}>",
            )
        self._fire_allocate(task)

    def allocate(self, task: TaskInfo, node: NodeInfo) -> None:
        """``ssn.Allocate`` (backfill): allocate, and dispatch the job's tasks if it is ready."""
        job = self._job_of(task, "binding")
        job.update_task_status(task, TaskStatus.Allocated)
        task.node_name = node.name
        self._node_of(node.name, "binding").add_task(task)
        if self.log.enabled(3):
            self.log.v(
                3,
                f"After allocated Task <{task.namespace}/{task.name}> to Node <{node.name}>: "
                f"idle <{node.idle}>, used <{node.used}>, releasing <{node.releasing}>",
            )
        self._fire_allocate(task)
        if self.job_ready(job):
            for allocated in job.tasks_in(TaskStatus.Allocated):
                self.dispatch(allocated)

    def dispatch(self, task: TaskInfo) -> None:
        """Send the bind: the cache records it, the task becomes Binding."""
        self.cache.add_bind_task(task)
        self._job_of(task, "binding").update_task_status(task, TaskStatus.Binding)

    def evict(self, reclaimee: TaskInfo, reason: str) -> None:
        """``ssn.Evict`` (reclaim, shuffle): reaches the cache at once."""
        self.cache.evict(reclaimee, reason)
        self._job_of(reclaimee, "evicting").update_task_status(reclaimee, TaskStatus.Releasing)
        node = self.nodes.get(reclaimee.node_name)
        if node is not None:
            node.update_task(reclaimee)
        self._fire_deallocate(reclaimee)

    def update_pod_group_condition(self, job: JobInfo, cond: Condition) -> None:
        """Replace the condition of the same type, else append."""
        found = self.jobs.get(job.uid)
        if found is None or found.pod_group is None:
            raise EngineError(f"failed to find job <{job.namespace}/{job.name}>")
        conditions = found.pod_group.conditions
        for i, existing in enumerate(conditions):
            if existing.type == cond.type:
                conditions[i] = cond
                return
        conditions.append(cond)

    def settled_jobs(self) -> Mapping[str, str]:
        """The jobs of :attr:`stamped` (none when gang's close stamped them all)."""
        return {} if self.stamped is None else self.stamped.jobs

    def stamp_pod_group_conditions(self, jobs: Iterable[JobInfo], cond: Condition) -> None:
        """:meth:`update_pod_group_condition` of each of ``jobs``, which are values of
        :attr:`jobs` (gang stamps every ready job with one condition at every close).
        Where the first condition is of ``cond``'s type it is the one replaced, without
        the look-up: most pod groups hold that one condition alone."""
        kind = cond.type
        for job in jobs:
            pg = job.pod_group
            conditions = pg.conditions if pg is not None else None
            if conditions and conditions[0].type == kind:
                conditions[0] = cond
            else:
                self.update_pod_group_condition(job, cond)

    def record_pod_group_event(self, job: JobInfo, type_: str, reason: str, message: str) -> None:
        if job.pod_group is None:
            return
        self.cache.record_event(job.uid, type_, reason, message)

    def statement(self) -> Statement:
        return Statement(self)

    def __repr__(self) -> str:
        return f"Session({self.uid}: {len(self.jobs)} jobs, {len(self.nodes)} nodes)"
