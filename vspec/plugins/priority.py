"""priority: order jobs and tasks by priority, and preempt only lower priorities
(``plugins/priority/priority.go``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from vspec.api.job_info import JobInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.registry import register_plugin
from vspec.plugins._job_accounting import format_tasks

if TYPE_CHECKING:
    from vspec.framework.session import Session


def _descending(left: int, right: int) -> int:
    """Higher value first: -1 when left wins, 1 when right wins, 0 on a tie."""
    if left == right:
        return 0
    return -1 if left > right else 1


@register_plugin
class PriorityPlugin(Plugin):
    """Higher priority first; preemptees must have strictly lower priority."""

    name: ClassVar[str] = "priority"
    carries_jobs: ClassVar[bool] = True
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log
        # Asked once: the task and job heaps compare many times per pop.
        verbose = log.enabled(4)

        def task_order(left: TaskInfo, right: TaskInfo) -> int:
            if verbose:
                log.v(
                    4,
                    f"Priority TaskOrder: <{left.namespace}/{left.name}> priority is "
                    f"{left.priority}, <{right.namespace}/{right.name}> priority is "
                    f"{right.priority}",
                )
            return _descending(left.priority, right.priority)

        def job_order(left: JobInfo, right: JobInfo) -> int:
            if verbose:
                log.v(
                    4,
                    f"Priority JobOrderFn: <{left.namespace}/{left.name}> priority: "
                    f"{left.priority}, <{right.namespace}/{right.name}> priority: "
                    f"{right.priority}",
                )
            return _descending(left.priority, right.priority)

        def preemptable(
            preemptor: TaskInfo, preemptees: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            preemptor_job = ssn.jobs[preemptor.job]
            victims: list[TaskInfo] = []
            for preemptee in preemptees:
                preemptee_job = ssn.jobs[preemptee.job]
                if preemptee_job.uid != preemptor_job.uid:
                    # Between jobs the job priorities decide ...
                    what, theirs, ours = "job", preemptee_job.priority, preemptor_job.priority
                else:
                    # ... within one job the task priorities.
                    what, theirs, ours = "task", preemptee.priority, preemptor.priority
                if theirs < ours:
                    victims.append(preemptee)
                elif log.enabled(4):
                    log.v(
                        4,
                        f"Can not preempt task <{preemptee.namespace}/{preemptee.name}>"
                        f"because preemptee {what} has greater or equal {what} priority "
                        f"({theirs}) than preemptor ({ours})",
                    )
            if log.enabled(4):
                log.v(4, f"Victims from Priority plugins are {format_tasks(victims)}")
            return victims, PERMIT

        def job_starving(job: JobInfo) -> bool:
            # Every task counts, so a job with a Failed or Releasing task stays starving.
            return job.ready_task_num() + job.waiting_task_num() < len(job.tasks)

        ssn.add_task_order_fn(self.name, task_order)
        ssn.add_job_order_fn(self.name, job_order, own_state=True)
        ssn.add_preemptable_fn(self.name, preemptable)
        ssn.add_job_starving_fns(self.name, job_starving)
