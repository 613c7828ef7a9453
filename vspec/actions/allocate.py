"""The ``allocate`` action (``actions/allocate/allocate.go``).

Queues by QueueOrder, one job per queue turn by JobOrder, tasks by TaskOrder; each job
turn is one Statement that is committed when the job is ready, kept (holding resources,
never bound) when it is only pipelined, and discarded otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

from vspec.actions._node_choice import ErrorCacheAction, choose_node, choose_row
from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import ZERO
from vspec.api.task_info import TaskInfo
from vspec.api.types import Code, Status, TaskStatus
from vspec.api.unschedule_info import FitError, FitErrors, insufficient_resource_reason
from vspec.errors import EngineError, GoError
from vspec.framework import columnar
from vspec.framework.interface import Trace
from vspec.framework.job_answers import OpenGroups, in_session_order
from vspec.framework.registry import register_action
from vspec.framework.session import Session
from vspec.framework.session_plugins import Kind
from vspec.framework.statement import Statement
from vspec.util.node_memo import NodeMemo, NodeTable
from vspec.util.predicate_helper import PredicateFn, PredicateHelper, Verdict
from vspec.util.priority_queue import PriorityQueue
from vspec.util.scheduler_helper import job_valid_for

if TYPE_CHECKING:
    from vspec.framework.columns import Column, NodeColumns, Verdicts


_PENDING = TaskStatus.Pending
# What a job left out of allocate's heaps would have met: the heaps' orders, JobValid,
# and the queue's Overused test at each pop.
_HEAP_KINDS: tuple[Kind, ...] = ("job_order", "queue_order", "job_valid", "overused")
_TURN_HEAD = "Try to allocate resource to Jobs in Queue <"


def _turn_line(queue: str) -> Callable[[int], str]:
    """The rest of a queue's turn line, the same for every line of its block."""
    rest = f"{queue}>"
    return lambda _: rest


class _IdleJobs:
    """A queue's jobs with nothing pending, left out of its heap at V(3). Volcano pushes
    those that pass JobValid and pops each when it is the least of the heap (an order
    that is total and keys that hold, ``reads_own_state``), printing its queue's turn
    line. Most sessions pop few jobs with pending work, each usually ahead of every
    idle one: the idle jobs' least is found by one scan and compared with each job
    popped. When it comes first, one pass takes out the idle jobs ahead of the popped
    one (often many at once) and finds the least of the rest; passes over twice as
    many jobs as there were idle ones make the rest a heap, which bounds the count's
    comparisons where jobs with pending work are many and interleave with idle ones.
    Volcano's pushes and pops compare some twenty times per job. JobValid, which has no
    effect (``reads_own_state``) and reads a state that holds, is asked only of the
    jobs taken out (most are never reached: their queue is overused first), or
    answered for all by the job feed (:class:`_Filed`)."""

    __slots__ = ("_budget", "_heap", "_least", "_less", "_valid", "jobs")

    def __init__(
        self, less: Callable[[JobInfo, JobInfo], bool], valid: Callable[[JobInfo], bool] | None
    ) -> None:
        self.jobs: list[JobInfo] = []
        self._less = less
        self._valid = valid  # None: all are valid
        self._least: JobInfo | None = None
        self._heap: PriorityQueue[JobInfo] | None = None
        self._budget = 0  # jobs the passes may still go over, once the least is known

    def keep_valid(self) -> bool:
        """Drop the jobs JobValid rejects (before any count); whether any is left."""
        valid = self._valid
        if valid is not None:
            self.jobs = [job for job in self.jobs if valid(job)]
            self._valid = None
        return bool(self.jobs)

    def taken_before(self, job: JobInfo | None) -> int:
        """How many of them Volcano pops before ``job``, the least of the queue's heap
        (all of them when the heap is empty: None); they are taken out."""
        heap, less = self._heap, self._less
        if heap is None:
            jobs = self.jobs
            if job is None or not jobs:
                self.jobs = []
                return self._count(jobs)
            least = self._least
            if least is None:
                least = self._least = self._least_of(jobs)
                self._budget = 2 * len(jobs)
            if not less(least, job):
                return 0
            if self._budget >= len(jobs):
                return self._pass(jobs, job)
            heap = self._heap = PriorityQueue.heapified(less, jobs)
            self.jobs = []
        if job is None:
            self._heap = PriorityQueue(less)
            return self._count(heap.items())
        ahead = []
        while not heap.empty() and less(heap.peek(), job):
            ahead.append(heap.pop())
        return self._count(ahead)

    def _count(self, jobs: list[JobInfo]) -> int:
        valid = self._valid
        return len(jobs) if valid is None else sum(1 for job in jobs if valid(job))

    def _least_of(self, jobs: list[JobInfo]) -> JobInfo:
        less = self._less
        least = jobs[0]
        for other in jobs[1:]:
            if less(other, least):
                least = other
        return least

    def _pass(self, jobs: list[JobInfo], job: JobInfo) -> int:
        """Take out the jobs ahead of ``job``, keeping the least of the others."""
        less = self._less
        ahead: list[JobInfo] = []
        kept: list[JobInfo] = []
        least: JobInfo | None = None
        for other in jobs:
            if less(other, job):
                ahead.append(other)
                continue
            kept.append(other)
            if least is None or less(other, least):
                least = other
        self._budget -= len(jobs)
        self.jobs, self._least = kept, least
        return self._count(ahead)


def predicate(ssn: Session, task: TaskInfo, node: NodeInfo) -> FitError | None:
    """Allocate's predicate: the task must fit the node's FutureIdle, then the plugins'."""
    short = _short_of_resources(task, node)
    if short is not None:
        return short
    return ssn.predicate_for_allocate_action(task, node)


def _short_of_resources(task: TaskInfo, node: NodeInfo) -> FitError | None:
    shortage = _shortage(task, node)
    return None if shortage is None else FitError.with_status(task, node.name, *shortage)


def _shortage(task: TaskInfo, node: NodeInfo) -> list[Status] | None:
    """The statuses of the FitError of a task that does not fit the node's FutureIdle."""
    future_idle = node.future_idle_view()
    if task.init_resreq.less_equal(future_idle, ZERO):
        return None
    short = task.init_resreq.less_equal_with_resources_name(future_idle, ZERO)
    return [Status(Code.Unschedulable, insufficient_resource_reason(short))]


def _no_best_node(task: TaskInfo) -> EngineError:
    return EngineError(
        f"no best node for task {task.namespace}/{task.name}: Volcano dereferences a nil "
        "node here and panics (every score <= -1 or a failing batch scorer)"
    )


class _Filed(OpenGroups):
    """Allocate's jobs as they opened: those with work (a Pending task, or the Pending
    phase) under ``_WORK``, those with nothing pending that pass JobValid under their
    queue, the others left out. JobValid reads the job's own state alone
    (``reads_own_state``), which is what a kept answer may read."""


_WORK = object()  # the key of the jobs with work, which no queue's name is


def _filed(
    ssn: Session, idle: dict[str, _IdleJobs] | None, valid: Callable[[JobInfo], bool]
) -> list[tuple[JobInfo, bool]]:
    """The jobs to push, in the session's order, each with whether it is pending, from
    the jobs filed by the job feed (:class:`_Filed`); ``idle`` filled, when given, with
    each known queue's jobs with nothing pending, all passing JobValid. Those lists are
    not in the session's order: the heaps' orders are total (``reads_own_state``), so
    what :class:`_IdleJobs` counts does not depend on it. An idle job of an unknown
    queue is pushed as the full pass pushes it."""
    queued = ssn.queues

    def answer(job: JobInfo) -> Hashable | None:
        if _PENDING in job.task_status_index or job.is_pending():
            return _WORK
        return job.queue if valid(job) else None

    groups = ssn.state.memo(_Filed).groups(ssn, answer)
    work: list[str] = []
    for key, members in groups.items():
        if key is _WORK or key not in queued:
            work.extend(members)
        elif idle is not None and members:
            left_out = idle[key] = _IdleJobs(ssn.job_order_fn, None)
            left_out.jobs = list(members.values())
    jobs = ssn.jobs
    return [(jobs[uid], jobs[uid].is_pending()) for uid in in_session_order(ssn, work)]


def _push(
    ssn: Session,
    job: JobInfo,
    pending: bool,
    queues: PriorityQueue[QueueInfo],
    jobs_map: dict[str, PriorityQueue[JobInfo]],
) -> None:
    """Push a job with work into its queue's heap, as Volcano's pick-up does (a pending
    job is skipped, or made Inqueue where no enqueue action runs)."""
    log = ssn.log
    if pending:
        if "enqueue" in ssn.enabled_actions:
            log.v(
                4,
                f"Job <{job.namespace}/{job.name}> Queue <{job.queue}> skip allocate, "
                "reason: job status is pending.",
            )
            return
        log.v(
            4,
            f"Job <{job.namespace}/{job.name}> Queue <{job.queue}> status update from "
            "pending to inqueue, reason: no enqueue action is configured.",
        )
        job.set_phase("Inqueue")
    if not job_valid_for(ssn, job, "allocate"):
        return
    if job.queue not in ssn.queues:
        log.warning(
            f"Skip adding Job <{job.namespace}/{job.name}> because its queue "
            f"{job.queue} is not found"
        )
        return
    if job.queue not in jobs_map:
        jobs_map[job.queue] = PriorityQueue(ssn.job_order_fn)
        queues.push(ssn.queues[job.queue])
    if log.enabled(4):  # klog.V(4): formatted only when kept (once per job)
        log.v(4, f"Added Job <{job.namespace}/{job.name}> into Queue <{job.queue}>")
    jobs_map[job.queue].push(job)


@register_action
class Allocate(ErrorCacheAction):
    """Place pending tasks of inqueue jobs, gang by gang."""

    name = "allocate"
    carries_jobs = True
    trace = Trace("Enter Allocate ...", "allocate.go:56", "Leaving Allocate ...", "allocate.go:77")

    def __init__(self) -> None:
        super().__init__()
        # This session's verdicts of node-local predicates (None: fits), see _predicate_fn:
        # of the whole predicate per request and plugins' key, and of the plugins alone
        # per plugins' key (tasks that differ only in their requests share it).
        self._verdicts: NodeMemo[list[Status] | None] = NodeMemo()
        self._plugin_verdicts: NodeMemo[list[Status] | None] = NodeMemo()
        # Per request: the shortage statuses on the node's FutureIdle (None: fits), and
        # whether it fits the node's Idle.
        self._shortages: NodeMemo[list[Status] | None] = NodeMemo()
        self._fits_idle: NodeMemo[bool] = NodeMemo()

    def execute(self, ssn: Session) -> None:
        self.read_error_cache_flag(ssn)
        self._verdicts, self._plugin_verdicts = NodeMemo(), NodeMemo()
        self._shortages, self._fits_idle = NodeMemo(), NodeMemo()
        queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_order_fn)
        jobs_map: dict[str, PriorityQueue[JobInfo]] = {}
        idle = self._pick_up_queues_and_jobs(ssn, queues, jobs_map)
        ssn.log.v(3, f"Try to allocate resource to {len(jobs_map)} Queues")
        self._allocate_resources(ssn, queues, jobs_map, idle)

    def _pick_up_queues_and_jobs(
        self,
        ssn: Session,
        queues: PriorityQueue[QueueInfo],
        jobs_map: dict[str, PriorityQueue[JobInfo]],
    ) -> dict[str, _IdleJobs] | None:
        """Fill the heaps; when jobs with nothing pending are left out of them but their
        pops print (V(3)), those that pass JobValid, per queue."""
        log = ssn.log
        queued = ssn.queues
        # A job with no Pending task would only be popped and put back: its queue's next
        # pop is the same queue again and its own place holds (``reads_own_state``), so
        # leaving it out changes nothing but lines. Below V(3) none prints; at V(3) each
        # pop's "Try to allocate resource to Jobs in Queue" line does, so such jobs are
        # counted instead (_IdleJobs); at V(4) and above every job is pushed ("Added Job",
        # the orders' lines).
        leave_out_idle = not log.enabled(4) and ssn.reads_own_state(*_HEAP_KINDS)
        idle: dict[str, _IdleJobs] | None = {} if leave_out_idle and log.enabled(3) else None

        def valid(job: JobInfo) -> bool:
            return job_valid_for(ssn, job, "allocate")

        work: list[tuple[JobInfo, bool]]  # the jobs pushed if they pass, pending or not
        if leave_out_idle and ssn.cache.carries_jobs:
            work = _filed(ssn, idle, valid)
        else:
            work = []
            for job in ssn.jobs.values():
                pending = job.is_pending()
                if (
                    leave_out_idle
                    and _PENDING not in job.task_status_index
                    and job.queue in queued
                    and not pending
                ):
                    if idle is not None:
                        if job.queue not in idle:
                            idle[job.queue] = _IdleJobs(ssn.job_order_fn, valid)
                        idle[job.queue].jobs.append(job)
                    continue
                work.append((job, pending))
        for job, is_pending in work:
            _push(ssn, job, is_pending, queues, jobs_map)
        for name, left_out in (idle or {}).items():
            # Volcano pushes a queue when one of its jobs passes JobValid.
            if name not in jobs_map and left_out.keep_valid():
                jobs_map[name] = PriorityQueue(ssn.job_order_fn)
                queues.push(queued[name])
        return idle

    def _allocate_resources(
        self,
        ssn: Session,
        queues: PriorityQueue[QueueInfo],
        jobs_map: dict[str, PriorityQueue[JobInfo]],
        idle: dict[str, _IdleJobs] | None,
    ) -> None:
        log = ssn.log
        pending_tasks: dict[str, PriorityQueue[TaskInfo]] = {}
        while not queues.empty():
            queue = queues.pop()
            if ssn.overused(queue):
                log.v(3, f"Queue <{queue.name}> is overused, ignore it.")
                continue
            jobs = jobs_map.get(queue.uid)
            job = None if jobs is None or jobs.empty() else jobs.pop()
            idle_jobs = None if idle is None else idle.get(queue.uid)
            if idle_jobs is None:
                log.v(3, f"Try to allocate resource to Jobs in Queue <{queue.name}>")
            else:
                # The line of this pop, then one per job left out that Volcano would pop
                # first (each putting the queue back, which pops again at once, its
                # Overused answer unchanged).
                turns = 1 + idle_jobs.taken_before(job)
                log.block(3, _TURN_HEAD, _turn_line(queue.name), turns)
            if job is None or jobs is None:
                log.v(4, f"Can not find jobs for queue {queue.name}.")
                continue
            tasks = pending_tasks.get(job.uid)
            if tasks is None:
                tasks = pending_tasks[job.uid] = self._pending_tasks(ssn, job)
            if tasks.empty():
                queues.push(queue)
                continue
            log.v(
                3,
                f"Try to allocate resource to {len(tasks)} tasks of "
                f"Job <{job.namespace}/{job.name}>",
            )
            self._allocate_for_tasks(ssn, tasks, job, jobs, queue)
            queues.push(queue)

    @staticmethod
    def _pending_tasks(ssn: Session, job: JobInfo) -> PriorityQueue[TaskInfo]:
        tasks: PriorityQueue[TaskInfo] = PriorityQueue(ssn.task_order_fn)
        for task in job.tasks_in(TaskStatus.Pending):
            if task.sch_gated:
                continue
            if task.resreq.is_empty():
                ssn.log.v(4, f"Task <{task.namespace}/{task.name}> is BestEffort task, skip it.")
                continue
            tasks.push(task)
        return tasks

    def _allocate_for_tasks(
        self,
        ssn: Session,
        tasks: PriorityQueue[TaskInfo],
        job: JobInfo,
        jobs: PriorityQueue[JobInfo],
        queue: QueueInfo,
    ) -> None:
        log = ssn.log
        stmt = ssn.statement()
        helper = PredicateHelper()
        all_nodes = ssn.node_list
        while not tasks.empty():
            task = tasks.pop()
            ssn.recorder.attempt(ssn, task)
            if not ssn.allocatable(queue, task):
                log.v(
                    3,
                    f"Queue <{queue.name}> is overused when considering task <{task.name}>, "
                    "ignore it.",
                )
                continue
            if job.task_has_fit_errors(task):
                log.v(
                    5,
                    f"Task {task.name} with role spec {task.task_role} has already "
                    "predicated failed, skip",
                )
                continue
            log.v(3, f"There are <{len(ssn.nodes)}> nodes for Job <{job.namespace}/{job.name}>")
            try:
                ssn.pre_predicate_fn(task)
            except GoError as err:
                log.v(3, f"PrePredicate for task {task.namespace}/{task.name} failed for: {err}")
                fit_errors = FitErrors()
                for node in all_nodes:
                    fit_errors.set_node_error(node.name, err)
                job.nodes_fit_errors[task.uid] = fit_errors
                break
            cols = columnar.session_columns(ssn)
            answers = None if cols is None else self._allocate_verdicts(ssn, task, cols)
            if cols is not None and answers is not None:
                rows, fit_errors = helper.predicate_rows(
                    ssn, task, cols, answers[0], self.enable_predicate_error_cache
                )
                found = len(rows) > 0
            else:
                fn, memo = self._predicate_fn(ssn, task)
                nodes, fit_errors = helper.predicate_nodes(
                    ssn, task, all_nodes, fn, self.enable_predicate_error_cache, memo
                )
                found = bool(nodes)
            if not found:
                job.nodes_fit_errors[task.uid] = fit_errors
                if job.need_continue_allocating():
                    continue
                break
            if cols is not None and answers is not None:
                best = self._best_row(ssn, task, cols, rows, answers[1])
            else:
                best = self._best_node(ssn, task, nodes)
            self._place(ssn, stmt, task, best)
            if ssn.job_ready(job) and not tasks.empty():
                jobs.push(job)
                break
        if ssn.job_ready(job):
            stmt.commit()
        elif not ssn.job_pipelined(job):
            stmt.discard()

    def _predicate_fn(
        self, ssn: Session, task: TaskInfo
    ) -> tuple[PredicateFn, NodeTable[list[Status] | None] | None]:
        """The resource check, then the plugins' predicates; memoised per node when every
        predicate is node-local for the task (asked after its PrePredicate ran), with
        the memo's table."""
        plugins_key = ssn.node_local_key("predicate", task)
        if plugins_key is None:
            return (lambda task, node: predicate(ssn, task, node)), None
        signature = task.init_resreq.signature()
        table = self._verdicts.table((signature, plugins_key))
        plugins_table = self._plugin_verdicts.table(plugins_key)
        # Many more tasks share a request than a request and a plugins' key.
        shortages = self._shortages.table(signature)

        def memoised(task: TaskInfo, node: NodeInfo) -> Verdict:
            hit = table.get(node.name)
            if hit is not None and hit[0] == node.version:
                # The statuses of the task's FitError (shared, never mutated), or None.
                return hit[1]
            # A shortage is returned as its statuses: no FitError is built for the
            # nodes a task is too big for (most of them, once the cluster fills up).
            hit = shortages.get(node.name)
            if hit is None or hit[0] != node.version:
                hit = shortages[node.name] = (node.version, _shortage(task, node))
            if hit[1] is not None:
                table[node.name] = hit
                return hit[1]
            hit = plugins_table.get(node.name)
            if hit is not None and hit[0] == node.version:
                table[node.name] = hit
                return hit[1]
            fe = ssn.predicate_for_allocate_action(task, node)
            table[node.name] = plugins_table[node.name] = (
                node.version,
                None if fe is None else fe.statuses,
            )
            return fe

        return memoised, table

    def _best_node(self, ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> NodeInfo:
        """Nodes where the task fits Idle first; nodes that fit only FutureIdle second.
        Whether a request fits a node's Idle is memoised per node version."""
        request = task.init_resreq
        fits = self._fits_idle.table(request.signature())
        idle: list[NodeInfo] = []
        future: list[NodeInfo] = []
        for n in nodes:
            hit = fits.get(n.name)
            if hit is not None and hit[0] == n.version:
                fit = hit[1]
            else:
                fit = request.less_equal(n.idle, ZERO)
                fits[n.name] = (n.version, fit)
            if fit:
                idle.append(n)
            elif request.less_equal(n.future_idle_view(), ZERO):
                future.append(n)
        for gradient in (idle, future):
            if gradient:
                best = choose_node(ssn, task, gradient)
                if best is not None:
                    return best
        raise _no_best_node(task)

    @staticmethod
    def _allocate_verdicts(
        ssn: Session, task: TaskInfo, cols: NodeColumns
    ) -> tuple[Verdicts, Column] | None:
        return columnar.allocate_verdicts(
            ssn, task, cols, lambda node: ssn.predicate_for_allocate_action(task, node)
        )

    @staticmethod
    def _best_row(
        ssn: Session, task: TaskInfo, cols: NodeColumns, rows: Column, fits_idle_at: Column
    ) -> NodeInfo:
        """:meth:`_best_node` over the feasible rows of the node columns. Every feasible
        row fits FutureIdle (the resource fit is part of their verdict, and nothing has
        changed since), so the second gradient is the rows that do not fit Idle
        (``fits_idle_at``: per row of the columns), gathered only when the first yields
        no node."""
        fits_idle = fits_idle_at[rows]
        idle = rows[fits_idle]
        if len(idle):
            best = choose_row(ssn, task, cols, idle)
            if best is not None:
                return best
        if len(idle) < len(rows):
            best = choose_row(ssn, task, cols, rows[~fits_idle])
            if best is not None:
                return best
        raise _no_best_node(task)

    @staticmethod
    def _place(ssn: Session, stmt: Statement, task: TaskInfo, node: NodeInfo) -> None:
        log = ssn.log
        if task.init_resreq.less_equal(node.idle, ZERO):
            log.v(3, f"Binding Task <{task.namespace}/{task.name}> to node <{node.name}>")
            stmt.allocate(task, node)
            return
        log.v(
            3,
            f"Predicates failed in allocate for task <{task.namespace}/{task.name}> on node "
            f"<{node.name}> with limited resources",
        )
        if task.init_resreq.less_equal(node.future_idle_view(), ZERO):
            log.v(
                3,
                f"Pipelining Task <{task.namespace}/{task.name}> to node <{node.name}> for "
                f"<{task.init_resreq}> on <{node.releasing}>",
            )
            stmt.pipeline(task, node.name, False)
