"""The ``preempt`` action (``actions/preempt/preempt.go``): evict lower-priority work
of the same queue to make room for starving jobs.

Two passes per queue: *between jobs* (a starving job's tasks evict tasks of other jobs
of its queue, in one statement per job, committed only if the job is then pipelined)
and *within jobs* (a starving job's tasks evict tasks of the same job, one statement per
task, always committed). Preemptors are pipelined onto the node, never bound: they are
bound by a later session's allocate once the victims are gone.

Quirks of v1.11.0 kept here (each is marked where it happens):
- the within-job pass sits inside the queue loop, so it runs once per queue, over the
  starving jobs of *every* queue, and rebuilds the task heaps the between-jobs pass of
  the next queues then reads;
- evictions made on a node that finally could not host the preemptor stay in the
  statement, and are committed with it;
- victims are evicted one by one only until the preemptor fits (queue allocatable and
  request within the node's future idle), so fewer tasks than Preemptable returned may go;
- after both passes, whatever the VictimTasks plugins return for an empty task list is
  evicted (reason "evict").
Go iterates maps where order matters: the queues (vspec: the order jobs first name them)
and a node's tasks when collecting preemptees (vspec: the node's task order).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from vspec.actions._node_choice import ErrorCacheAction
from vspec.actions._pending_heaps import PREEMPT_NEVER, JobHeaps, TaskHeaps, pending_task_heap
from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import ZERO, Resource
from vspec.api.task_info import TaskInfo
from vspec.api.types import preemptable_status
from vspec.errors import GoError
from vspec.framework.interface import Trace
from vspec.framework.registry import register_action
from vspec.framework.session import Session
from vspec.framework.statement import Statement
from vspec.framework.victims import build_victims_priority_queue
from vspec.util.predicate_helper import PredicateHelper
from vspec.util.priority_queue import PriorityQueue
from vspec.util.scheduler_helper import (
    job_valid_for,
    preferred_node,
    prioritize_nodes,
    sort_nodes,
    validate_victims,
)

TaskFilter = Callable[[TaskInfo], bool]


def may_be_preempted_by(preemptor: TaskInfo, task: TaskInfo) -> bool:
    """What both passes require of a preemptee: Bound or Running, marked preemptable,
    and not a non-best-effort task when the preemptor is best-effort."""
    if not preemptable_status(task.status):
        return False
    if preemptor.best_effort and not task.best_effort:
        return False
    return task.preemptable


@dataclass
class Preemptors:
    """The starving jobs preempt serves, found once at the start of the action."""

    # Queues of the session's non-pending valid jobs. A Go map (random iteration order)
    # in Volcano; vspec: the order in which jobs first name them.
    queues: dict[str, QueueInfo] = field(default_factory=dict)
    jobs: JobHeaps = field(default_factory=dict)
    tasks: TaskHeaps = field(default_factory=dict)
    starving: list[JobInfo] = field(default_factory=list)  # Volcano's underRequest


def collect_preemptors(ssn: Session) -> Preemptors:
    log = ssn.log
    found = Preemptors()
    for job in ssn.jobs.values():
        if job.is_pending():
            continue
        if not job_valid_for(ssn, job, "preemption"):
            continue
        queue = ssn.queues.get(job.queue)
        if queue is None:
            continue
        if queue.uid not in found.queues:
            log.v(3, f"Added Queue <{queue.name}> for Job <{job.namespace}/{job.name}>")
            found.queues[queue.uid] = queue
        if ssn.job_starving(job):
            found.jobs.setdefault(job.queue, PriorityQueue(ssn.job_order_fn)).push(job)
            found.starving.append(job)
            found.tasks[job.uid] = pending_task_heap(ssn, job)
    return found


@register_action
class Preempt(ErrorCacheAction):
    """Evict lower-priority tasks of the same queue for starving jobs (pipelines them)."""

    name = "preempt"
    carries_jobs = True
    trace = Trace("Enter Preempt ...", "preempt.go:54", "Leaving Preempt ...", "preempt.go:224")

    def execute(self, ssn: Session) -> None:
        self.read_error_cache_flag(ssn)
        found = collect_preemptors(ssn)
        helper = PredicateHelper()  # one error cache for the whole action
        for queue in found.queues.values():
            self._preempt_between_jobs(ssn, queue, found.jobs.get(queue.uid), found.tasks, helper)
            # Quirk kept: Volcano nests the within-job pass in the queue loop, so it runs
            # once per queue over the starving jobs of all queues.
            self._preempt_within_jobs(ssn, found.starving, found.tasks, helper)
        evict_victim_tasks(ssn)

    def _preempt_between_jobs(
        self,
        ssn: Session,
        queue: QueueInfo,
        preemptors: PriorityQueue[JobInfo] | None,
        preemptor_tasks: TaskHeaps,
        helper: PredicateHelper,
    ) -> None:
        """Starving jobs of ``queue``, best first, evict tasks of other jobs of the queue."""
        log = ssn.log
        while True:
            if preemptors is None or preemptors.empty():
                log.v(4, f"No preemptors in Queue <{queue.name}>, break.")
                return
            job = preemptors.pop()
            stmt = ssn.statement()
            tasks = preemptor_tasks[job.uid]
            assigned = False
            while ssn.job_starving(job):
                if tasks.empty():
                    log.v(3, f"No preemptor task in job <{job.namespace}/{job.name}>.")
                    break
                preemptor = tasks.pop()
                assigned = self._preempt(
                    ssn, stmt, preemptor, self._other_job_filter(ssn, job, preemptor), helper
                )
            if not ssn.job_pipelined(job):
                stmt.discard()
                continue
            stmt.commit()
            # Only the last task's outcome decides whether the job gets another turn.
            if assigned:
                preemptors.push(job)

    @staticmethod
    def _other_job_filter(ssn: Session, job: JobInfo, preemptor: TaskInfo) -> TaskFilter:
        def accept(task: TaskInfo) -> bool:
            if not may_be_preempted_by(preemptor, task):
                return False
            victim_job = ssn.jobs.get(task.job)
            if victim_job is None:
                return False
            return victim_job.queue == job.queue and task.job != preemptor.job

        return accept

    def _preempt_within_jobs(
        self,
        ssn: Session,
        under_request: list[JobInfo],
        preemptor_tasks: TaskHeaps,
        helper: PredicateHelper,
    ) -> None:
        """Each starving job's pending tasks evict lower tasks of the same job; every
        attempt is committed, even one that evicted but did not fit (quirk kept)."""
        for job in under_request:
            # The rebuilt heap replaces the shared one that later queues' between-jobs
            # passes pop from (quirk kept).
            tasks = preemptor_tasks[job.uid] = pending_task_heap(ssn, job)
            while not tasks.empty():
                preemptor = tasks.pop()
                stmt = ssn.statement()
                assigned = self._preempt(
                    ssn, stmt, preemptor, self._same_job_filter(preemptor), helper
                )
                stmt.commit()
                if not assigned:
                    break

    @staticmethod
    def _same_job_filter(preemptor: TaskInfo) -> TaskFilter:
        def accept(task: TaskInfo) -> bool:
            return may_be_preempted_by(preemptor, task) and task.job == preemptor.job

        return accept

    def _preempt(
        self,
        ssn: Session,
        stmt: Statement,
        preemptor: TaskInfo,
        accept: TaskFilter,
        helper: PredicateHelper,
    ) -> bool:
        """Try to make room for ``preemptor`` on one node and pipeline it there."""
        ssn.recorder.attempt(ssn, preemptor)
        error = self._candidate_error(ssn, preemptor)
        if error is not None:
            ssn.log.v(
                3,
                f"Preemptor <{preemptor.namespace}/{preemptor.name}> failed to preempt Task , "
                f"err: {error}",
            )
            return False
        nodes, _ = helper.predicate_nodes(
            ssn,
            preemptor,
            ssn.unschedulable_and_unresolvable_filtered_nodes(preemptor),
            ssn.predicate_for_preempt_action,
            self.enable_predicate_error_cache,
        )
        # The preemptor's job is in the session: it was popped from a session job's heap.
        queue = ssn.queues[ssn.jobs[preemptor.job].queue]
        scores = prioritize_nodes(ssn, preemptor, nodes)
        for node in sort_nodes(scores, preferred_node(ssn, preemptor)):
            if self._preempt_on_node(ssn, stmt, preemptor, queue, node, accept):
                # Those of the node's score were as likely to come first in Volcano.
                ssn.recorder.chose(ssn, preemptor, node)
                return True
        return False

    @staticmethod
    def _candidate_error(ssn: Session, preemptor: TaskInfo) -> str | None:
        """Why ``preemptor`` may not preempt at all: its preemption policy or PrePredicate."""
        # v1.10.0 let a task whose PreemptionPolicy is Never preempt (gate
        # preemption_policy, upstream 1d432afc4).
        if ssn.gates.preemption_policy and preemptor.pod.preemption_policy == PREEMPT_NEVER:
            return "not eligible to preempt other tasks due to preemptionPolicy is Never"
        try:
            ssn.pre_predicate_fn(preemptor)
        except GoError as exc:  # any error PrePredicate returns rejects the task
            return f"PrePredicate for task {preemptor.namespace}/{preemptor.name} failed for: {exc}"
        return None

    @staticmethod
    def _preempt_on_node(
        ssn: Session,
        stmt: Statement,
        preemptor: TaskInfo,
        queue: QueueInfo,
        node: NodeInfo,
        accept: TaskFilter,
    ) -> bool:
        """Evict victims on ``node`` one by one until the preemptor fits, then pipeline it."""
        log = ssn.log
        who = f"{preemptor.namespace}/{preemptor.name}"
        log.v(3, f"Considering Task <{who}> on Node <{node.name}>.")
        # Go ranges over the node's task map; vspec uses the node's task order.
        preemptees = [task.clone() for task in node.tasks.values() if accept(task)]
        victims = ssn.preemptable(preemptor, preemptees)
        error = validate_victims(preemptor, node, victims)
        ssn.recorder.victims(ssn, preemptor, node, preemptees, victims, error)
        if error is not None:
            log.v(3, f"No validated victims on Node <{node.name}>: {error}")
            return False

        def fits() -> bool:
            return ssn.allocatable(queue, preemptor) and preemptor.init_resreq.less_equal(
                node.future_idle(), ZERO
            )

        victims_queue = build_victims_priority_queue(ssn, victims, preemptor)
        preempted = Resource()
        while not victims_queue.empty() and not fits():
            preemptee = victims_queue.pop()
            log.v(
                3,
                f"Try to preempt Task <{preemptee.namespace}/{preemptee.name}> for Task <{who}>",
            )
            stmt.evict(preemptee, "preempt")
            ssn.recorder.evicted(ssn, preemptor, preemptee)
            preempted.add(preemptee.resreq)
        log.v(3, f"Preempted <{preempted}> for Task <{who}> requested <{preemptor.init_resreq}>.")
        if not fits():
            # Quirk kept: the evictions above stay in the statement; the next node is tried.
            return False
        # Quirk kept: IsEmpty ignores pods, so evicting only best-effort victims leaves
        # EvictionOccurred false (no nominatedNodeName is written for the preemptor).
        stmt.pipeline(preemptor, node.name, not preempted.is_empty())
        return True


def evict_victim_tasks(ssn: Session) -> None:
    """``victimTasks``: evict what the VictimTasks plugins (tdm, pdb, rescheduling)
    return for an empty task list, in one committed statement."""
    stmt = ssn.statement()
    for victim in ssn.victim_tasks([]):
        stmt.evict(victim.clone(), "evict")
    stmt.commit()
