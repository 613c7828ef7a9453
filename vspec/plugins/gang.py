"""gang: all-or-nothing scheduling of a job's minMember tasks (``plugins/gang/gang.go``)."""

from __future__ import annotations

from itertools import filterfalse
from typing import ClassVar

from vspec.api.job_info import JobInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT, REJECT, TaskStatus, ValidateResult, allocated_status
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.job_answers import ready_jobs
from vspec.framework.job_updater import settled_jobs
from vspec.framework.registry import register_plugin
from vspec.framework.session import Session, Stamped
from vspec.model.corev1 import Condition
from vspec.plugins._job_accounting import format_tasks

# PodGroup condition types and reasons (volcano.sh/apis scheduling/v1beta1).
UNSCHEDULABLE = "Unschedulable"
SCHEDULED = "Scheduled"
NOT_ENOUGH_RESOURCES = "NotEnoughResources"
NOT_ENOUGH_PODS_OF_TASK = "NotEnoughPodsOfTask"
NOT_ENOUGH_TASKS = "NotEnoughTasks"
READY_REASON = "tasks in gang are ready to be scheduled"


def valid_job(job: JobInfo) -> ValidateResult | None:
    """JobValid: enough valid pods per role, then enough valid tasks overall."""
    if not job.check_task_valid():
        return ValidateResult(
            False,
            NOT_ENOUGH_PODS_OF_TASK,
            "Not enough valid pods of each task for gang-scheduling",
        )
    valid = job.valid_task_num()
    if valid < job.min_available:
        return ValidateResult(
            False,
            NOT_ENOUGH_TASKS,
            f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: {job.min_available}",
        )
    return None


def job_ready(job: JobInfo) -> bool:
    # Volcano asks CheckTaskReady && IsReady; both are pure, and the count comes first
    # here as it is the cheap one (allocate asks after every placement).
    return job.is_ready() and job.check_task_ready()


def job_pipelined(job: JobInfo) -> int:
    return PERMIT if job.is_pipelined() and job.check_task_pipelined() else REJECT


def job_starving(job: JobInfo) -> bool:
    # Preemption only looks at minMember, not at the per-role minimums.
    return job.is_starving()


def schedulable_task_num(job: JobInfo) -> int:
    """Ready tasks plus Pending tasks whose last (discarded) transaction was an allocation."""
    num = job.ready_task_num()
    for task in job.tasks_in(TaskStatus.Pending):
        ctx = task.last_transaction or task.transaction_context()
        if allocated_status(ctx.status):
            num += 1
    return num


@register_plugin
class GangPlugin(Plugin):
    """A job's tasks are placed only when minMember of them can be."""

    name: ClassVar[str] = "gang"
    carries_jobs: ClassVar[bool] = True
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log

        def evictable(
            preemptor: TaskInfo, preemptees: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            """A job gives up tasks only while it keeps more than minMember ready ones."""
            victims: list[TaskInfo] = []
            occupied: dict[str, int] = {}
            for preemptee in preemptees:
                job = ssn.jobs[preemptee.job]
                if job.uid not in occupied:
                    occupied[job.uid] = job.ready_task_num()
                if occupied[job.uid] > job.min_available:
                    occupied[job.uid] -= 1
                    victims.append(preemptee)
                elif log.enabled(4):
                    log.v(
                        4,
                        f"Can not preempt task <{preemptee.namespace}/{preemptee.name}> because "
                        f"job {job.name} ready num({occupied[job.uid]}) <= "
                        f"MinAvailable({job.min_available}) for gang-scheduling",
                    )
            if log.enabled(4):
                log.v(
                    4,
                    f"Victims from Gang plugins, victims={format_tasks(victims)} "
                    f"preemptor={preemptor}",
                )
            return victims, PERMIT

        # Asked once: allocate's job heaps call job_order about 20 times per job popped.
        verbose = log.enabled(4)

        def job_order(left: JobInfo, right: JobInfo) -> int:
            """Jobs that are not ready yet go first."""
            l_ready, r_ready = left.is_ready(), right.is_ready()
            if verbose:
                log.v(
                    4,
                    f"Gang JobOrderFn: <{left.namespace}/{left.name}> is ready: "
                    f"{str(l_ready).lower()}, <{right.namespace}/{right.name}> is ready: "
                    f"{str(r_ready).lower()}",
                )
            if l_ready == r_ready:
                return 0
            return 1 if l_ready else -1

        ssn.add_job_valid_fn(self.name, valid_job, own_state=True)
        ssn.add_reclaimable_fn(self.name, evictable)
        ssn.add_preemptable_fn(self.name, evictable)
        ssn.add_job_order_fn(self.name, job_order, own_state=True)
        ssn.add_job_ready_fn(self.name, job_ready)
        ssn.add_job_pipelined_fn(self.name, job_pipelined)
        ssn.add_job_starving_fns(self.name, job_starving)

    def on_session_close(self, ssn: Session) -> None:
        """Write each job's gang condition; the job updater reads it for the phase.

        PodGroup events ("<n>/<m> tasks in gang unschedulable", "pod group is ready") are
        recorded by the job updater (``RecordJobStatusEvent``), not here. Every ready
        job's condition is the same value, stamped by this session: one frozen condition
        serves them all (most live jobs are ready ones, and this runs at every close).
        When gang is the only plugin that closes, nothing reads a pod group between its
        close and the job updater's, which finds the settled jobs' status held
        (``settled_jobs``): those are left unstamped, their stamp given by the session
        (``Session.stamped``) to the updater, the result and the cache's hand-back.
        """
        scheduled = Condition(
            type=SCHEDULED,
            status="True",
            reason=READY_REASON,
            message="",
            transition_id=ssn.uid,
            last_transition_time=ssn.now,
        )
        # Each job's condition is its own (nothing here reads another job's), so the
        # ready ones are stamped together, after the others.
        ready = []
        is_ready = ready_jobs(ssn)
        jobs = ssn.jobs
        settled = settled_jobs(ssn) if self._closes_alone(ssn) else None
        for uid in jobs if not settled else filterfalse(settled.__contains__, jobs):
            job = jobs[uid]
            if is_ready[uid]:
                ready.append(job)
            else:
                ssn.update_pod_group_condition(job, self.unschedulable(ssn, job))
        ssn.stamp_pod_group_conditions(ready, scheduled)
        if settled is not None:
            ssn.stamped = Stamped(settled, scheduled)

    def _closes_alone(self, ssn: Session) -> bool:
        """No other plugin of the session closes (reads or writes a pod group there)."""
        return all(
            plugin is self or type(plugin).on_session_close is Plugin.on_session_close
            for plugin in ssn.plugins.values()
        )

    @staticmethod
    def unschedulable(ssn: Session, job: JobInfo) -> Condition:
        unready = job.min_available - schedulable_task_num(job)
        why = ssn.closing_fit_error(job)
        return Condition(
            type=UNSCHEDULABLE,
            status="True",
            reason=NOT_ENOUGH_RESOURCES,
            message=f"{unready}/{len(job.tasks)} tasks in gang unschedulable: {why}",
            transition_id=ssn.uid,
            last_transition_time=ssn.now,
        )
