"""Liveness and order of allocate, judged on the first cycle (whose state is the input).

Both invariants look at a job that allocate must be able to place whole: all its pods
Pending, none with inter-pod affinity, host ports or spread constraints, and one node
whose idle resources, pod slots and filters take every one of them. Allocate places a
job task by task on the best-scored nodes; tasks that went elsewhere only leave that
node freer, so such a job is placed whatever the scores, unless a plugin vetoes it.
Only plugins whose vetoes are restated here may be on (:data:`KNOWN_PLUGINS`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, cmp_to_key
from itertools import compress, pairwise
from operator import attrgetter

import numpy as np

from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.invariants.base import Invariant, InvariantInputs, register
from vspec.invariants.history import (
    HOLDING,
    CycleView,
    Jobs,
    NodeFilter,
    Requests,
    cluster_total,
    conf_answer,
    cycles,
    dims,
    enabled,
    exceeds,
    node_filters,
    plugin_entries,
    pod_index,
    pod_slots,
    pods_by_job,
    requests,
    session_jobs,
    task_facts,
)
from vspec.invariants.nodetable import NodeTable, node_columns, node_fits, node_loads
from vspec.invariants.outside import (
    PLACED,
    TOLERANCE,
    resources_of,
    task_priority,
    task_role,
)
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Node, Pod, PodGroup, Queue
from vspec.model.result import SimulationResult

# Plugins that veto nothing allocate does here, or whose vetoes are restated below.
KNOWN_PLUGINS = frozenset(
    {"priority", "gang", "conformance", "drf", "predicates", "proportion", "nodeorder"}
    | {"binpack", "logprint"}
)
# Arguments of predicates that add filters not restated here.
_UNKNOWN_PREDICATES = ("predicate.ProportionalEnable",)
_QUEUE_VETO = ("proportion",)  # plugins whose Allocatable/Overused judge queue shares


@dataclass
class FirstCycle:
    """What allocate sees in the first cycle."""

    inputs: InvariantInputs
    view: CycleView
    jobs: Jobs
    by_job: dict[str, list[Pod]]  # job -> its pods placed by us, any job (pods_by_job)
    request: Requests
    # What :meth:`pending` and :func:`_ready` found, by job: both invariants ask them
    # of every job, allocate-order once per comparison.
    _pending: dict[str, list[Pod]] = field(default_factory=dict, init=False)
    readiness: dict[str, int] = field(default_factory=dict, init=False)
    # What :meth:`placeable` found, by job: :meth:`takers` and allocate-order's first
    # bind ask it of the same job.
    _placeable: dict[str, list[Pod]] = field(default_factory=dict, init=False)

    @classmethod
    def of(cls, inputs: InvariantInputs, result: SimulationResult) -> FirstCycle:
        """The first cycle of ``result``, found once for both invariants: shared, so
        neither may change it."""
        return inputs.derived("first cycle", result, lambda: cls._of(inputs, result))

    @classmethod
    def _of(cls, inputs: InvariantInputs, result: SimulationResult) -> FirstCycle:
        view = cycles(inputs, result)[0]
        jobs = session_jobs(inputs)
        return cls(inputs, view, jobs, pods_by_job(inputs, view), requests(inputs))

    @cached_property
    def members(self) -> dict[str, list[Pod]]:
        """The pods of each of the session's jobs (:meth:`pods_of` of each), found when
        first asked: most sessions ask a few jobs' pods alone."""
        groups = self.jobs.pod_groups
        return {uid: pods for uid, pods in self.by_job.items() if uid in groups}

    def pods_of(self, uid: str) -> list[Pod]:
        """The job's pods placed by us, none unless it is one of the session's jobs."""
        return self.by_job.get(uid, []) if uid in self.jobs.pod_groups else []

    @property
    def table(self) -> NodeTable:
        """The nodes as columns, and which take what: built at the first question (most
        sessions' pending jobs are passed over before one is asked), shared."""
        inputs, view = self.inputs, self.view

        def build() -> NodeTable:
            columns = node_columns(inputs)
            return NodeTable.of(
                inputs.cluster.nodes,
                view.pods,
                view.statuses,
                self.request,
                columns,
                node_loads(inputs),
                pod_index(inputs).step,
            )

        return inputs.derived("node table", view, build)

    @cached_property
    def waiting(self) -> set[str]:
        """The jobs with a Pending pod at the cycle's start, from the view's Pending pods
        (patched with the pods' facts, not found among every pod's status): only these
        can have pods allocate tries (most of a timeline's jobs run)."""
        return set(map(self.view.job_ids.__getitem__, self.view.pending))

    @cached_property
    def waiting_jobs(self) -> dict[str, PodGroup]:
        """The session's jobs of :attr:`waiting`, in the session's order, with their pod
        groups: the only ones :meth:`pending` and :meth:`takers` find anything for, picked
        in one pass in C (a timeline's session holds hundreds of jobs, a few waiting)."""
        groups, waiting = self.jobs.pod_groups, self.waiting
        return {uid: groups[uid] for uid in compress(groups, map(waiting.__contains__, groups))}

    def pending(self, uid: str) -> list[Pod]:
        """The job's pods allocate tries: Pending, not best-effort."""
        if uid not in self.waiting:
            return []
        kept = self._pending.get(uid)
        if kept is None:
            statuses = self.view.statuses
            kept = self._pending[uid] = [
                p
                for p in self.pods_of(uid)
                if statuses[p.meta.key] is TaskStatus.Pending and not self.best_effort(p)
            ]
        return kept

    def best_effort(self, pod: Pod) -> bool:
        return self.request.nothing(pod)

    @cached_property
    def demanding_queues(self) -> set[str]:
        """Queues whose session jobs have Pending pods that request resources (asked for
        every job that fits: found once)."""
        return {self.jobs.queue(uid) for uid in self.waiting_jobs if self.pending(uid)}

    def reaches_allocate(self, pg: PodGroup) -> bool | None:
        """Whether the job is past Pending when allocate first runs (None: unknown)."""
        actions = self.inputs.conf.actions
        if "allocate" not in actions:
            return False  # a spec may ask for liveness where allocate never runs
        if pg.phase not in ("Pending", ""):
            return True
        if "enqueue" not in actions:
            return True  # allocate moves it to Inqueue itself
        if actions.index("enqueue") < actions.index("allocate") and pg.min_resources is None:
            return True  # enqueue admits a job without minResources whatever the plugins
        return None if actions.index("enqueue") < actions.index("allocate") else False

    def whole(self, uid: str) -> Node | None:
        """A node that takes every pod of the job at once, if the job is simple enough."""
        return next(self.takers(uid), None)

    def takers(self, uid: str) -> Iterator[Node]:
        """The nodes that take at once every pod of the job allocate places (see
        :meth:`placeable`), if the job is simple enough, in the nodes' order: a caller
        wants the first that suits it, not all of them (most nodes take a small job)."""
        if not self.pending(uid):
            return iter(())
        queue = self._queue(uid)
        if queue is None or queue.state != "Open":
            return iter(())
        pg = self.jobs.pod_groups[uid]
        members = self.pods_of(uid)
        if any(self.view.status(p.meta.key) is not TaskStatus.Pending for p in members):
            return iter(())
        if len(members) < pg.min_member or any(complex_pod(p) for p in members):
            return iter(())  # gang's JobValid refuses it, or a filter not restated here may
        pods = self.placeable(uid)
        if all(self.best_effort(p) for p in pods):
            return iter(())  # allocate places none of them
        if len(pods) < pg.min_member or any(
            sum(1 for p in pods if task_role(p) == role) < n
            for role, n in pg.min_task_member.items()
        ):
            return iter(())
        table = self.table
        return map(table.nodes.__getitem__, np.flatnonzero(table.takers(pods)).tolist())

    def placeable(self, uid: str) -> list[Pod]:
        """The job's pods allocate places when there is room: all of them, or, when some
        of its Pending pods fit no node at all, the others, where Volcano goes on past
        such a pod (else none).

        Restated from allocate.go and JobInfo.NeedContinueAllocating (v1.11.0): after a
        task that no node takes, allocate goes on with the job's other tasks unless
        minMember equals the job's pod count, or that task's role has its own minimum
        the job cannot reach any more; the later tasks of that role (and of no role,
        when the failed task has none) are skipped or no longer count towards
        minMember. So the others are placed when no role is shared with a pod that fits
        nowhere and such pods' roles set no minimum."""
        kept = self._placeable.get(uid)
        if kept is None:
            kept = self._placeable[uid] = self._placed(uid)
        return kept

    def _placed(self, uid: str) -> list[Pod]:
        pods = self.pods_of(uid)
        nowhere = [p for p in self.pending(uid) if self._fits_nowhere(p)]
        if not nowhere:
            return pods
        pg = self.jobs.pod_groups[uid]
        failed = {task_role(p) for p in nowhere}
        refused = set(map(id, nowhere))  # a view's pods are distinct objects, one a key
        rest = [p for p in pods if id(p) not in refused]
        if pg.min_member >= len(pods) or any(pg.min_task_member.get(r, 0) for r in failed):
            return []
        return [] if any(task_role(p) in failed for p in rest) else rest

    def _fits_nowhere(self, pod: Pod) -> bool:
        """Every node refuses the pod whatever runs on it: it asks more than the node's
        allocatable in some resource (FutureIdle never exceeds it), or one of the
        configured node filters refuses it."""
        return not node_fits(self.inputs, self.view).fits_somewhere(pod, self._filters)

    @cached_property
    def _filters(self) -> tuple[NodeFilter, ...]:
        return tuple(node_filters(self.inputs.conf))

    def _queue(self, uid: str) -> Queue | None:
        name = self.jobs.queue(uid)
        return next((q for q in self.inputs.cluster.queues if q.meta.name == name), None)


def complex_pod(pod: Pod) -> bool:
    """Features whose filters are not restated: inter-pod affinity, host ports, spread
    constraints, scheduling gates."""
    affinity = pod.affinity
    inter = affinity is not None and (
        affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None
    )
    ports = any(port.host_port for c in pod.containers for port in c.ports)
    return inter or ports or bool(pod.topology_spread_constraints) or bool(pod.scheduling_gates)


def allocate_conf_known(inputs: InvariantInputs) -> bool:
    """Allocate runs, after nothing but enqueue and print, every plugin that is on is a
    known one, and no queue sets a guarantee."""
    if not conf_answer(inputs, _allocate_known):
        return False
    return not any(map(_GUARANTEE, inputs.cluster.queues))


_GUARANTEE = attrgetter("guarantee")


def _allocate_known(conf: SchedulerConf) -> bool:
    """What :func:`allocate_conf_known` asks of the conf."""
    if "allocate" not in conf.actions:
        return False
    first = conf.actions.index("allocate")
    if any(a not in ("enqueue", "print") for a in conf.actions[:first]):
        return False
    for tier in conf.tiers:
        for option in tier.plugins:
            if option.name not in KNOWN_PLUGINS:
                return False
            if option.name == "predicates" and any(
                option.arguments.get(k) is True for k in _UNKNOWN_PREDICATES
            ):
                return False
    return True


def _queue_allows(first: FirstCycle, uid: str, taken: Resource | None = None) -> bool:
    """Proportion's deserved share covers the job: its queue is the only one whose jobs
    have Pending pods that request resources or pods on a node (the others then deserve
    nothing and the queue gets the whole cluster), and the cluster's total and the
    queue's capability take what its pods hold plus the job, plus ``taken`` (what jobs
    whose turn came before it were given in the cycle)."""
    conf = first.inputs.conf
    if not any(plugin_entries(conf, p) for p in _QUEUE_VETO):
        return True
    queue = first._queue(uid)
    if queue is None or first.demanding_queues != {queue.meta.name}:
        return False
    used = Resource() if taken is None else taken.clone()
    for other, pods in first.members.items():
        for p in pods:
            if first.view.status(p.meta.key) not in HOLDING:
                continue
            if first.jobs.queue(other) != queue.meta.name:
                return False
            used.add(first.request(p))
    for p in first.placeable(uid):
        used.add(first.request(p))
    total = cluster_total(first.inputs)
    names = set(dims(used)) - {"pods"}
    if exceeds(used, total, names):
        return False
    capability = resources_of([queue.capability])
    # A zero cpu or memory capability means none to proportion; a zero scalar is a limit.
    limited = {n for n in queue.capability if n != "pods"} - {
        n for n in ("cpu", "memory") if capability.get(n) < TOLERANCE
    }
    return not exceeds(used, capability, limited)


def _placeable(first: FirstCycle, held: set[str]) -> list[tuple[str, Node]]:
    """The jobs allocate could have placed whole, each with a node that takes it, of the
    nodes not in ``held``."""
    out = []
    for uid, pg in first.waiting_jobs.items():  # the others have no pod to take
        if first.reaches_allocate(pg) is not True:
            continue
        node = next((n for n in first.takers(uid) if n.meta.name not in held), None)
        if node is not None and _queue_allows(first, uid):
            out.append((uid, node))
    return out


def _liveness_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    first = FirstCycle.of(inputs, result)
    if not first.view.binds:
        # A task pipelined onto a node's releasing resources holds that node's pod slots
        # and future idle: a job allocate tried after it may find no room left there.
        held = {node for tasks in result.pipelined.values() for _, node in tasks}
        owners = _kept_allocations(first, result)
        if owners is not None and len(owners) > 1:
            return []  # each may hold nodes another fitted; the result names none of them
        return [
            f"cycle 0: nothing was bound, but job {uid} could have been placed whole on "
            f"{node.meta.name}"
            for uid, node in _placeable(first, held)
            if owners is None or uid in owners
        ]
    if inputs.cycles != 1 or _kept(inputs, result):
        return []  # another cycle's, or a kept statement's, allocations are not known
    return _untouched_messages(first)


def _kept_allocations(first: FirstCycle, result: SimulationResult) -> set[str] | None:
    """The jobs of a one-cycle run whose statement, kept and not committed (a pipelined
    job's), left Allocated tasks; None when none did or that is not known (more cycles).
    Their allocations take their nodes' idle from every job allocate tries after them,
    and the result names no node for a task that is not bound, so only such a job itself
    can still be judged: its own allocations do not stand in its way."""
    if first.inputs.cycles != 1:
        return None
    job_ids = first.view.job_ids
    kept = task_facts(first.inputs, result).kept - _pipelined_tasks(result)
    return {job_ids[task] for task in kept if task in job_ids} or None


def _pipelined_tasks(result: SimulationResult) -> set[str]:
    return {task for tasks in result.pipelined.values() for task, _ in tasks}


def _kept(inputs: InvariantInputs, result: SimulationResult) -> bool:
    """Whether the session kept allocations no bind shows (a pipelined job's statement)."""
    return any(result.pipelined.values()) or bool(task_facts(inputs, result).kept)


def _untouched_messages(first: FirstCycle) -> list[str]:
    """A job that fits whole on a node that got no bind, in a queue that got none: allocate
    found that node as the input left it when the job's turn came, and nothing of the
    queue's share had been taken."""
    busy_nodes = {b.node for b in first.view.binds}
    job_ids = first.view.job_ids
    busy_queues = {
        first.jobs.queue(job_ids[b.task])
        for b in first.view.binds
        if job_ids.get(b.task, "") in first.jobs.pod_groups
    }
    messages = []
    for uid, pg in first.waiting_jobs.items():  # the others have no pod to take
        if first.jobs.queue(uid) in busy_queues or first.reaches_allocate(pg) is not True:
            continue
        free = next((n.meta.name for n in first.takers(uid) if n.meta.name not in busy_nodes), None)
        if free is not None and _queue_allows(first, uid):
            messages.append(
                f"cycle 0: job {uid} could have been placed whole on {free}, which got no "
                "bind, and no pod of its queue was bound"
            )
    return messages


register(
    Invariant(
        "liveness",
        "allocate binds something when a job fits whole on one node",
        "In the first cycle, if nothing is bound, no job of the session could have been "
        "placed whole: a job past Pending when allocate runs (or without minResources "
        "when enqueue runs first, or any job when there is no enqueue), in an Open queue, "
        "whose pods are all Pending, at least minMember and minTaskMember per role, "
        "without inter-pod affinity, host ports, spread constraints or scheduling gates, "
        "at least one of them not best-effort, and one node whose idle resources (its "
        "allocatable minus what its pods hold), free pod slots and unschedulable, affinity "
        "and taint filters take all of them (or, where some of its Pending pods fit no "
        "node at all and allocate goes on past them, the others: minMember below the pod "
        "count, no role shared with them, no minTaskMember for their roles), a node that "
        "got a pipelined task aside (the task holds its pod slots and future idle); with "
        "proportion on, its queue must be the "
        "only one whose jobs have Pending pods that request resources or pods on a node, "
        "and the cluster's total and the queue's capability must take what its pods hold "
        "plus the job; a node already beyond its allocatable in a resource takes nothing. "
        "When something is bound, in a one-cycle run that ends with no "
        "pipelined or allocated-but-unbound task: no such job stays without a bind while "
        "one of the nodes that take it whole got no bind and no pod of its queue was bound.",
        "Configurations where allocate runs after nothing but enqueue and print, every "
        "plugin entry is one of priority, gang, conformance, drf, predicates (without "
        "predicate.ProportionalEnable), proportion, nodeorder, binpack, logprint, and no "
        "queue has a guarantee.",
        allocate_conf_known,
        _liveness_check,
    )
)


# -- order -----------------------------------------------------------------------------------------

Compare = Callable[[str, str], int]  # negative: the left job goes first


def _job_compare(first: FirstCycle) -> Compare | None:
    """The configured JobOrder, tier by tier (the first plugin that tells them apart
    decides), then creation time and name; None for a plugin not restated here."""
    conf = first.inputs.conf
    steps: list[Compare] = []
    for tier in conf.tiers:
        for option in tier.plugins:
            if not option.enabled("job_order"):
                continue
            if option.name == "priority":
                steps.append(lambda a, b: first.jobs.priority[b] - first.jobs.priority[a])
            elif option.name == "gang":
                steps.append(lambda a, b: _ready(first, a) - _ready(first, b))
            elif option.name == "drf":
                steps.append(_by_share(DominantShares(first)))
            elif option.name in ("sla", "tdm"):
                return None

    def compare(a: str, b: str) -> int:
        for step in steps:
            c = step(a, b)
            if c:
                return c
        ta = first.jobs.pod_groups[a].meta.creation_timestamp
        tb = first.jobs.pod_groups[b].meta.creation_timestamp
        if ta != tb:
            return -1 if ta < tb else 1
        return -1 if a < b else (1 if a > b else 0)

    return compare


def _by_share(shares: DominantShares) -> Compare:
    def compare(a: str, b: str) -> int:
        sa, sb = shares[a], shares[b]
        return (sa > sb) - (sa < sb)

    return compare


_HELD = (TaskStatus.Running, TaskStatus.Bound)  # the statuses drf's share counts here


class DominantShares:
    """Each job's dominant share: the largest fraction of the cluster's total (its nodes'
    allocatable) that its Running and Bound pods request in one resource, pod slots
    counted as Volcano counts them (one, plus any a pod requests itself). Worked out for
    the jobs the order compares only (the pending ones and those bound in the cycle,
    not every job of a timeline's session)."""

    def __init__(self, first: FirstCycle) -> None:
        self.first = first
        total = cluster_total(first.inputs)
        self.total = total
        self.names = ["cpu", "memory", *total.scalars]
        self._of: dict[str, float] = {}

    def __getitem__(self, uid: str) -> float:
        kept = self._of.get(uid)
        if kept is None:
            kept = self._of[uid] = self._share(uid)
        return kept

    def _share(self, uid: str) -> float:
        statuses = self.first.view.statuses
        held = [p for p in self.first.pods_of(uid) if statuses[p.meta.key] in _HELD]
        if not held:
            return 0.0  # nothing held is no share of any total, zero or not
        used = Resource()
        for p in held:
            used.add(self.first.request(p))
            used.scalars["pods"] += pod_slots(p) - 1
        return max((_share(used.get(n), self.total.get(n)) for n in self.names), default=0.0)


def _share(held: float, total: float) -> float:
    if total == 0:
        return 0.0 if held == 0 else 1.0
    return held / total


def _ready(first: FirstCycle, uid: str) -> int:
    """Gang orders jobs by the count rule alone (placed plus pending best-effort tasks
    reach minMember): unlike its JobReady, v1.11's JobOrderFn ignores the per-role
    minimums, so a job short of one role's minimum still sorts as ready."""
    kept = first.readiness.get(uid)
    if kept is None:
        counted = 0
        statuses = first.view.statuses
        for pod in first.pods_of(uid):
            status = statuses[pod.meta.key]
            if status in PLACED or (status is TaskStatus.Pending and first.best_effort(pod)):
                counted += 1
        kept = first.readiness[uid] = 1 if counted >= first.jobs.pod_groups[uid].min_member else 0
    return kept


def _task_compare(first: FirstCycle) -> Callable[[Pod, Pod], int] | None:
    return task_compare(first.inputs.conf)


def task_compare(conf: SchedulerConf) -> Callable[[Pod, Pod], int]:
    """The configured TaskOrder when priority's is the only one that may be on: the
    higher task priority first (when it is on), then the replica index, creation time
    and UID (Volcano's default order)."""
    by_priority = False
    for tier in conf.tiers:
        for option in tier.plugins:
            if option.name == "priority" and option.enabled("task_order"):
                by_priority = True  # the only known plugin with a TaskOrder

    # id -> (the pod, its task priority, its replica index), found once per pod: a
    # check compares each bound pod with the one before and the one after it.
    keys: dict[int, tuple[Pod, int, int | None]] = {}

    def key(pod: Pod) -> tuple[Pod, int, int | None]:
        kept = keys.get(id(pod))
        if kept is None:
            kept = keys[id(pod)] = (pod, task_priority(pod), _index(pod.meta.name))
        return kept

    def compare(a: Pod, b: Pod) -> int:
        _, pa, ia = key(a)
        _, pb, ib = key(b)
        if by_priority and pa != pb:
            return pb - pa
        if ia is not None and ib is not None and ia != ib:
            return ia - ib
        ta, tb = a.meta.creation_timestamp, b.meta.creation_timestamp
        if ta != tb:
            return -1 if ta < tb else 1
        return -1 if a.meta.uid < b.meta.uid else (1 if a.meta.uid > b.meta.uid else 0)

    return compare


def _index(name: str) -> int | None:
    """The replica index Volcano reads from a pod name ``<job>-<task>-<n>``."""
    parts = name.split("-")
    return int(parts[-1]) if len(parts) >= 3 and parts[-1].isdigit() else None


def _order_applies(inputs: InvariantInputs) -> bool:
    return allocate_conf_known(inputs) and conf_answer(inputs, _priority_orders_jobs)


def _priority_orders_jobs(conf: SchedulerConf) -> bool:
    return enabled(conf, "priority", "job_order")


def _order_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    first = FirstCycle.of(inputs, result)
    jobs_cmp, tasks_cmp = _job_compare(first), _task_compare(first)
    if jobs_cmp is None or tasks_cmp is None:
        return []
    messages = _turn_order_messages(first, jobs_cmp, _bindless_turns(first, result))
    if len(first.demanding_queues) != 1:
        return messages
    candidates = [
        uid
        for uid, pg in first.waiting_jobs.items()
        if first.pending(uid) and first.reaches_allocate(pg) is not False
    ]
    if not candidates:
        return messages
    ordered = sorted(candidates, key=cmp_to_key(jobs_cmp))
    messages += _first_bind_messages(first, ordered[0], tasks_cmp)
    if inputs.cycles == 1 and not _kept(inputs, result):
        messages += _passed_over_messages(first, ordered)
    return messages


def _first_bind_messages(
    first: FirstCycle, top: str, tasks_cmp: Callable[[Pod, Pod], int]
) -> list[str]:
    pg = first.jobs.pod_groups[top]
    if first.reaches_allocate(pg) is not True:
        return []
    pending = set(map(id, first.pending(top)))  # a view's pods: one object a key
    tried = [p for p in first.placeable(top) if id(p) in pending]
    got = first.view.binds[0].task if first.view.binds else None
    want = sorted(tried, key=cmp_to_key(tasks_cmp))[0].meta.key if tried else None
    # The first bind is compared before the job is placed: one that is the job's first
    # task is right whether or not it fits whole (the question that sums the cycle's
    # loads over the nodes).
    if want is not None and got == want:
        return []
    if first.whole(top) is None or not _queue_allows(first, top):
        return []
    return [
        f"cycle 0: job {top} comes first in the configured job order and fits whole, so "
        f"its first task {want} should be bound first; the first bind was {got}"
    ]


_PLACED_LINE = re.compile(r"^After (pipelined|allocated) Task <([^>]*)> to Node <")


def _bindless_turns(first: FirstCycle, result: SimulationResult) -> set[str] | None:
    """The jobs whose turn in the first cycle may have ended without a bind, or None when
    that is not known. Such a turn changes the job's key all the same: a pipelined task,
    and the allocations of a pipelined job's statement (kept, not committed), fire the
    allocate events that raise drf's share, and count in gang's readiness
    (framework/statement.go, Pipeline and Allocate). In one cycle: the jobs with tasks
    Pipelined or Allocated after the last action (a discarded statement gives its
    placements back). Over more: the jobs of the first cycle's `After pipelined Task`
    and `After allocated Task` lines (verbosity 3) whose task was not bound in it."""
    job_ids = first.view.job_ids
    if first.inputs.cycles == 1:
        kept = set(task_facts(first.inputs, result).kept)
        kept |= _pipelined_tasks(result)
        return {job_ids[k] for k in kept if k in job_ids}
    if first.inputs.verbosity < 3:
        return None
    bound = {b.task for b in first.view.binds}
    found: set[str] = set()
    for line in result.logs:
        if line.cycle != 0 or not line.startswith("After "):
            continue
        match = _PLACED_LINE.match(line.text)
        if match is not None and match[2] not in bound and match[2] in job_ids:
            found.add(job_ids[match[2]])
    return found


def _turn_order_messages(
    first: FirstCycle, jobs_cmp: Compare, bindless: set[str] | None
) -> list[str]:
    """Allocate pops each queue's jobs in JobOrder and commits a job's allocations at the
    end of its turn; a job's key changes only once it has had its turn. So within a queue
    the jobs' first binds (of pods that request resources) come in JobOrder, but for a
    job whose turn may have ended without a bind (``bindless``: its first bind may come
    in a later turn, after the key moved; None: any job's may have)."""
    if bindless is None:
        return []
    firsts: dict[str, dict[str, None]] = {}  # queue -> its jobs in the order of their first bind
    job_ids = first.view.job_ids
    for b in first.view.binds:
        pod = first.view.pods.get(b.task)
        if pod is None or job_ids[b.task] not in first.jobs.pod_groups or first.best_effort(pod):
            continue
        uid = job_ids[b.task]
        firsts.setdefault(first.jobs.queue(uid), {}).setdefault(uid)
    return [
        f"cycle 0: job {later} got its first bind after job {earlier}, which comes after it "
        "in the configured job order"
        for jobs in firsts.values()
        for earlier, later in pairwise(jobs)
        if later not in bindless and jobs_cmp(later, earlier) < 0
    ]


def _passed_over_messages(first: FirstCycle, ordered: list[str]) -> list[str]:
    """A job that got no bind though a job after it in the order did, while it fits whole
    on a node that only jobs after it got binds on. Allocate pops the queue's jobs in
    JobOrder (a job's key changes only once it has had its turn), so that node was as
    the input left it when the job's turn came; the queue's capability, though, had
    lost what the jobs before it were given."""
    nodes_of: dict[str, set[str]] = {}
    given: dict[str, Resource] = {}
    for b in first.view.binds:
        pod = first.view.pods.get(b.task)
        if pod is not None and not first.best_effort(pod):  # backfill binds after allocate
            nodes_of.setdefault(pod.job_id, set()).add(b.node)
            given.setdefault(pod.job_id, Resource()).add(first.request(pod))
    messages = []
    for i, uid in enumerate(ordered):
        later = set(ordered[i + 1 :])
        if uid in nodes_of or not later & set(nodes_of):
            continue
        if first.reaches_allocate(first.jobs.pod_groups[uid]) is not True:
            continue
        earlier = {n for job, nodes in nodes_of.items() if job not in later for n in nodes}
        free = next((n.meta.name for n in first.takers(uid) if n.meta.name not in earlier), None)
        taken = Resource()
        for job, got in given.items():
            if job not in later:
                taken.add(got)
        if free is not None and _queue_allows(first, uid, taken):
            after = ", ".join(sorted(later & set(nodes_of)))
            messages.append(
                f"cycle 0: job {uid} got no bind though it fits whole on {free}, where "
                f"only jobs after it in the configured job order ({after}) were bound"
            )
    return messages


register(
    Invariant(
        "allocate-order",
        "allocate places the first job of the configured order first, its first task first",
        "In the first cycle, when one queue alone has Pending pods that request resources: "
        "order its jobs with such pods by the configured JobOrder (tier by tier, the first "
        "of priority (higher first), gang (not ready first) and drf (the smaller dominant "
        "share of the cluster's allocatable held by Running and Bound pods first) that "
        "tells two jobs apart decides; then the older pod group, then the name). "
        "If the first job fits whole (as `liveness` defines it), the first bind of the "
        "cycle is its first task by TaskOrder (priority's higher task priority first when "
        "on, then the replica index, creation time and UID). Within every queue, the jobs' "
        "first binds (of pods that request resources) come in that JobOrder, but for a "
        "job whose turn may have ended without a bind (it pipelined a task or kept a "
        "pipelined job's allocations: tasks Pipelined or Allocated after the last action "
        "of a one-cycle run, or named by the first cycle's `After pipelined Task` and "
        "`After allocated Task` lines and not bound in it; over more cycles at a "
        "verbosity below 3 no turn is judged). In a "
        "one-cycle run with no kept statement, no such job stays without a bind while a "
        "job after it got one and it fits whole (as for `liveness`) on a node where only "
        "jobs after it were bound.",
        "Configurations where `liveness` applies, priority's JobOrder is on, and the "
        "JobOrder and TaskOrder plugins that are on are among priority, gang and drf "
        "(priority alone for TaskOrder).",
        _order_applies,
        _order_check,
    )
)


# -- task-order ----------------------------------------------------------------------------------

# Volcano v1.11's plugins that register a TaskOrderFn: priority (restated in
# task_compare) and task-topology (not restated). Others may be on.
_NO_TASK_ORDER = frozenset(
    {"binpack", "capacity", "cdp", "conformance", "deviceshare", "drf", "extender", "gang"}
    | {"logprint", "nodegroup", "nodeorder", "numa-aware", "overcommit", "pdb", "predicates"}
    | {"proportion", "rescheduling", "resourcequota", "sla", "tdm", "usage"}
)


def _task_order_applies(inputs: InvariantInputs) -> bool:
    return conf_answer(inputs, _task_order_known)


def _task_order_known(conf: SchedulerConf) -> bool:
    """Allocate runs once, and priority orders the tasks, if any plugin does."""
    if conf.actions.count("allocate") != 1:
        return False
    return all(
        option.name in _NO_TASK_ORDER or option.name == "priority"
        for tier in conf.tiers
        for option in tier.plugins
        if option.enabled("task_order")
    )


def _task_order_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    """Allocate pops each job's Pending tasks from one TaskOrder heap kept for the whole
    action and commits a statement's allocations in the order they were made, so a
    job's binds of tasks that request resources come in TaskOrder."""
    compare = task_compare(inputs.conf)
    request = requests(inputs)
    messages: list[str] = []
    for view in cycles(inputs, result):
        last: dict[str, Pod] = {}
        job_ids = view.job_ids
        for bind in view.binds:
            pod = view.pods.get(bind.task)
            if pod is None or not job_ids[bind.task] or request.nothing(pod):
                continue  # backfill binds best-effort pods, in an order of its own
            uid = job_ids[bind.task]
            before = last.get(uid)
            if before is not None and compare(before, pod) > 0:
                messages.append(
                    f"cycle {view.cycle}: job {uid}: {bind.task} was bound after "
                    f"{before.meta.key}, which comes later in the configured task order"
                )
            last[uid] = pod
    return messages


register(
    Invariant(
        "task-order",
        "allocate binds a job's tasks in the configured task order",
        "For every cycle and every job: its binds of pods that request resources (all "
        "of them allocate's) come in TaskOrder: the higher task priority first when "
        "priority's TaskOrder is on (the pod's priority, 1 when unset, or a "
        "volcano.sh/task-priority annotation), then the smaller replica index, the older "
        "pod, the smaller UID.",
        "Configurations that list allocate once and have no TaskOrder on but priority's "
        "(task-topology's is not restated).",
        _task_order_applies,
        _task_order_check,
    )
)
