"""The ``reclaim`` action (``actions/reclaim/reclaim.go``): take resources back from
other queues for starving jobs of queues that are not overused.

Queues take turns in QueueOrder, one task of their best starving job per turn. Unlike
preempt there is no statement: victims are evicted at once with ``ssn.evict`` and the
reclaimer is pipelined with ``ssn.pipeline``, nothing is ever rolled back.

Quirks of v1.11.0 kept here (each is marked where it happens):
- only Running tasks are reclaimed (Bound ones are not), and only from jobs of *other*
  queues whose queue is reclaimable;
- nodes are tried in order without scoring; victims are evicted until the *evicted
  resources alone* cover the request (the node's idle resources do not count), and a node
  that still falls short keeps its evictions while the next node is tried;
- a queue is dropped for the rest of the action when it is overused, when its popped job
  is no longer starving or has no task left (its other jobs are abandoned), when the
  queue is not Preemptive for the task, or when the task fails PrePredicate;
- "Try to reclaim Task ..." is logged at Error level.
"""

from __future__ import annotations

from vspec.actions._pending_heaps import PREEMPT_NEVER, JobHeaps, TaskHeaps, pending_task_heap
from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import ZERO, Resource
from vspec.api.task_info import TaskInfo
from vspec.api.types import TaskStatus
from vspec.errors import GoError
from vspec.framework.interface import Action, Trace
from vspec.framework.registry import register_action
from vspec.framework.session import Session
from vspec.framework.victims import build_victims_priority_queue
from vspec.util.priority_queue import PriorityQueue
from vspec.util.scheduler_helper import job_valid_for, validate_victims


def collect_reclaimers(ssn: Session) -> tuple[PriorityQueue[QueueInfo], JobHeaps, TaskHeaps]:
    """The queues of non-pending valid jobs (QueueOrder), their starving jobs (JobOrder,
    per queue) and those jobs' pending tasks (TaskOrder, per job)."""
    log = ssn.log
    queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_order_fn)
    seen: set[str] = set()
    jobs: JobHeaps = {}
    tasks: TaskHeaps = {}
    for job in ssn.jobs.values():
        if job.is_pending():
            continue
        if not job_valid_for(ssn, job, "reclaim"):
            continue
        queue = ssn.queues.get(job.queue)
        if queue is None:
            log.error(f"Failed to find Queue <{job.queue}> for Job <{job.namespace}/{job.name}>")
            continue
        if queue.uid not in seen:
            log.v(4, f"Added Queue <{queue.name}> for Job <{job.namespace}/{job.name}>")
            seen.add(queue.uid)
            queues.push(queue)
        # v1.11.0 reclaims for the starving jobs, v1.10.0 for those with pending tasks
        # (gate reclaim_starving_jobs, upstream a561215e0).
        if ssn.job_starving(job) if ssn.gates.reclaim_starving_jobs else job.has_pending_tasks():
            jobs.setdefault(job.queue, PriorityQueue(ssn.job_order_fn)).push(job)
            tasks[job.uid] = pending_task_heap(ssn, job)
    return queues, jobs, tasks


@register_action
class Reclaim(Action):
    """Evict tasks of other (reclaimable) queues for starving jobs and pipeline them."""

    name = "reclaim"
    carries_jobs = True
    trace = Trace("Enter Reclaim ...", "reclaim.go:41", "Leaving Reclaim ...", "reclaim.go:228")

    def execute(self, ssn: Session) -> None:
        log = ssn.log
        log.v(
            3,
            f"There are <{len(ssn.jobs)}> Jobs and <{len(ssn.queues)}> Queues in total "
            "for scheduling.",
        )
        queues, preemptors_map, preemptor_tasks = collect_reclaimers(ssn)
        gates = ssn.gates
        while not queues.empty():
            queue = queues.pop()
            if ssn.overused(queue):
                log.v(3, f"Queue <{queue.name}> is overused, ignore it.")
                continue
            jobs = preemptors_map.get(queue.uid)
            if jobs is None or jobs.empty():
                continue
            job = jobs.pop()
            tasks = preemptor_tasks.get(job.uid)
            # Quirk kept: a job without tasks or no longer starving drops its whole queue.
            # v1.10.0 did not ask again whether the job starves (gate
            # reclaim_starving_jobs, upstream a561215e0).
            if tasks is None or tasks.empty():
                continue
            if gates.reclaim_starving_jobs and not ssn.job_starving(job):
                continue
            task = tasks.pop()
            # v1.10.0 let a task whose PreemptionPolicy is Never reclaim (gate
            # preemption_policy, upstream 1d432afc4).
            if gates.preemption_policy and task.pod.preemption_policy == PREEMPT_NEVER:
                log.v(
                    3,
                    f"Task {task.namespace}/{task.name} is not eligible to preempt other tasks "
                    "due to preemptionPolicy is Never",
                )
                jobs.push(job)
                queues.push(queue)
                continue
            if not self._may_reclaim(ssn, queue, task):
                continue
            if self._reclaim_for(ssn, job, task):
                jobs.push(job)
            queues.push(queue)

    @staticmethod
    def _may_reclaim(ssn: Session, queue: QueueInfo, task: TaskInfo) -> bool:
        """Preemptive and PrePredicate; a refusal drops the queue (quirk kept)."""
        log = ssn.log
        ssn.recorder.attempt(ssn, task)
        # v1.10.0 asked Allocatable first; v1.11.0 asks only Preemptive, which proportion
        # answers with its allocatable check (gate reclaim_preemptive_only, 61f9c9d62).
        if not ssn.gates.reclaim_preemptive_only and not ssn.allocatable(queue, task):
            log.v(
                3,
                f"Queue <{queue.name}> is overused when considering task <{task.name}>, ignore it.",
            )
            return False
        if not ssn.preemptive(queue, task):
            log.v(
                3,
                f"Queue <{queue.name}> can not reclaim by preempt others when considering "
                f"task <{task.name}> , ignore it.",
            )
            return False
        try:
            ssn.pre_predicate_fn(task)
        except GoError as exc:  # any error PrePredicate returns rejects the task
            log.v(3, f"PrePredicate for task {task.namespace}/{task.name} failed for: {exc}")
            return False
        return True

    def _reclaim_for(self, ssn: Session, job: JobInfo, task: TaskInfo) -> bool:
        """Nodes in order, no scoring: the first node where reclaiming works gets the task."""
        log = ssn.log
        for node in ssn.unschedulable_and_unresolvable_filtered_nodes(task):
            error = ssn.predicate_for_preempt_action(task, node)
            if error is not None:
                log.v(
                    4,
                    f"Reclaim predicate for task {task.namespace}/{task.name} on node "
                    f"{node.name} return error {error} ",
                )
                continue
            log.v(3, f"Considering Task <{task.namespace}/{task.name}> on Node <{node.name}>.")
            if self._reclaim_on_node(ssn, job, task, node):
                return True
        return False

    @staticmethod
    def _reclaimees(ssn: Session, job: JobInfo, node: NodeInfo) -> list[TaskInfo]:
        """Running (not merely Bound), preemptable tasks of jobs in other, reclaimable
        queues; Go ranges over the node's task map, vspec uses the node's task order."""
        found = []
        for task in node.tasks.values():
            if task.status is not TaskStatus.Running or not task.preemptable:
                continue
            victim_job = ssn.jobs.get(task.job)
            if victim_job is None or victim_job.queue == job.queue:
                continue
            if ssn.queues[victim_job.queue].reclaimable():
                found.append(task.clone())
        return found

    def _reclaim_on_node(self, ssn: Session, job: JobInfo, task: TaskInfo, node: NodeInfo) -> bool:
        log = ssn.log
        reclaimees = self._reclaimees(ssn, job, node)
        if not reclaimees:
            log.v(4, f"No reclaimees on Node <{node.name}>.")
            return False
        victims = ssn.reclaimable(task, reclaimees)
        error = validate_victims(task, node, victims)
        ssn.recorder.victims(ssn, task, node, reclaimees, victims, error)
        if error is not None:
            log.v(3, f"No validated victims on Node <{node.name}>: {error}")
            return False
        who = f"{task.namespace}/{task.name}"
        victims_queue = build_victims_priority_queue(ssn, victims, task)
        reclaimed = Resource()
        while not victims_queue.empty():
            reclaimee = victims_queue.pop()
            log.error(
                f"Try to reclaim Task <{reclaimee.namespace}/{reclaimee.name}> for Tasks <{who}>"
            )
            ssn.evict(reclaimee, "reclaim")  # at once, no statement: never undone
            ssn.recorder.evicted(ssn, task, reclaimee)
            reclaimed.add(reclaimee.resreq)
            if task.init_resreq.less_equal(reclaimed, ZERO):
                break
        log.v(3, f"Reclaimed <{reclaimed}> for task <{who}> requested <{task.init_resreq}>.")
        # Quirk kept: only the evicted resources count, not the node's idle ones; when
        # they fall short the evictions stand and the caller tries the next node.
        if not task.init_resreq.less_equal(reclaimed, ZERO):
            return False
        ssn.pipeline(task, node.name)
        return True
