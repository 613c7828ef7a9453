"""The ``backfill`` action (``actions/backfill/backfill.go``): place best-effort tasks.

Best-effort tasks request nothing but a pod slot, so no resource check happens here;
the predicates plugin's pod-count check is what stops them. The first task that fits
no node (or fails PrePredicate) ends the whole action (quirk kept).
"""

from __future__ import annotations

from vspec.actions._node_choice import ErrorCacheAction, choose_node
from vspec.api.job_info import JobInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import TaskStatus
from vspec.api.unschedule_info import FitErrors
from vspec.errors import EngineError, GoError
from vspec.framework.interface import Trace
from vspec.framework.job_answers import OpenGroups, in_session_order
from vspec.framework.registry import register_action
from vspec.framework.session import Session
from vspec.util.predicate_helper import PredicateHelper
from vspec.util.priority_queue import PriorityQueue
from vspec.util.scheduler_helper import job_valid_for

# The statuses of the tasks backfill takes: best-effort Pending ones, and Pipelined
# best-effort ones it unpipelines first.
_PENDING, _PIPELINED = TaskStatus.Pending, TaskStatus.Pipelined


class _Filled(OpenGroups):
    """Backfill's jobs with work as they opened: those that hold a Pending or a
    Pipelined task, under ``_WORK`` (the pending ones among them are left out where
    Volcano's loop leaves them out, the rule's one place)."""


_WORK = "backfill: work"


def _work(job: JobInfo) -> str | None:
    index = job.task_status_index
    if _PENDING in index or _PIPELINED in index:
        return _WORK
    return None


def _jobs_with_work(ssn: Session) -> list[JobInfo]:
    """The jobs with a Pending or Pipelined task, in the session's order: the others
    add nothing, and when their JobValid has no effect (``reads_own_state``)
    and its V(4) line does not print, they are not asked. Filed by the job feed when the
    conf keeps the job contract (:class:`_Filled`), else found among every job."""
    jobs = ssn.jobs
    if not ssn.cache.carries_jobs:
        return [job for job in jobs.values() if _work(job) is not None]
    filed = ssn.state.memo(_Filled).groups(ssn, _work).get(_WORK, {})
    return [jobs[uid] for uid in in_session_order(ssn, filed)]


@register_action
class Backfill(ErrorCacheAction):
    """Place pending best-effort tasks of non-pending jobs."""

    name = "backfill"
    carries_jobs = True
    trace = Trace("Enter Backfill ...", "backfill.go:53", "Leaving Backfill ...", "backfill.go:108")

    def execute(self, ssn: Session) -> None:
        self.read_error_cache_flag(ssn)
        log = ssn.log
        predicate = ssn.predicate_for_allocate_action
        for task in self._pick_up_pending_tasks(ssn):
            job = ssn.jobs[task.job]
            ssn.recorder.attempt(ssn, task)
            helper = PredicateHelper()
            fe = FitErrors()
            try:
                ssn.pre_predicate_fn(task)
            except GoError as err:
                log.v(
                    3,
                    f"PrePredicate for task {task.namespace}/{task.name} failed in backfill "
                    f"for: {err}",
                )
                for name in ssn.nodes:
                    fe.set_node_error(name, err)
                job.nodes_fit_errors[task.uid] = fe
                break
            nodes, fit_errors = helper.predicate_nodes(
                ssn, task, ssn.node_list, predicate, self.enable_predicate_error_cache
            )
            if not nodes:
                job.nodes_fit_errors[task.uid] = fit_errors
                break
            node = choose_node(ssn, task, nodes)
            if node is None:
                raise EngineError(
                    f"no best node for task {task.namespace}/{task.name}: Volcano panics here"
                )
            log.v(3, f"Binding Task <{task.namespace}/{task.name}> to node <{node.name}>")
            try:
                ssn.allocate(task, node)
            except EngineError as err:
                log.error(f"Failed to bind Task {task.uid} on {node.name} in Session {ssn.uid}")
                fe.set_node_error(node.name, err)

    @staticmethod
    def _pick_up_pending_tasks(ssn: Session) -> list[TaskInfo]:
        """Order computed once, up front: queues, then jobs, then tasks."""
        queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_order_fn)
        jobs: dict[str, PriorityQueue[JobInfo]] = {}
        tasks: dict[str, PriorityQueue[TaskInfo]] = {}
        # A job with no Pending nor Pipelined task adds nothing; when its JobValid has
        # no effect (``reads_own_state``) and its V(4) line does not print, it is not asked.
        leave_out_idle = not ssn.log.enabled(4) and ssn.reads_own_state("job_valid")
        for job in _jobs_with_work(ssn) if leave_out_idle else ssn.jobs.values():
            if job.is_pending():
                continue
            if not job_valid_for(ssn, job, "backfill"):
                continue
            queue = ssn.queues.get(job.queue)
            if queue is None:
                continue
            for task in job.tasks_in(TaskStatus.Pending):
                if task.best_effort and not task.sch_gated:
                    tasks.setdefault(job.uid, PriorityQueue(ssn.task_order_fn)).push(task)
            for task in job.tasks_in(TaskStatus.Pipelined):
                if not task.best_effort:
                    continue
                ssn.statement().unpipeline(task)
                tasks.setdefault(job.uid, PriorityQueue(ssn.task_order_fn)).push(task)
            if job.uid not in tasks:
                continue
            if queue.uid not in jobs:
                queues.push(queue)
                jobs[job.queue] = PriorityQueue(ssn.job_order_fn)
            jobs[job.queue].push(job)
        pending: list[TaskInfo] = []
        while not queues.empty():
            queue = queues.pop()
            queue_jobs = jobs[queue.uid]
            while not queue_jobs.empty():
                job_tasks = tasks[queue_jobs.pop().uid]
                while not job_tasks.empty():
                    pending.append(job_tasks.pop())
        return pending
