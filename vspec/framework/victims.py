"""The order in which preempt and reclaim evict victims (``Session.BuildVictimsPriorityQueue``).

The heap pops first the victim the session would schedule *last*: within one job the task
TaskOrder places last; across queues the one VictimQueueOrder prefers for the preemptor's
queue; otherwise the task of the job JobOrder places last. The comparator is not a strict
order across those three cases, so ties depend on the push order (the order the victims
were found in, i.e. node task order) exactly as in Volcano's ``container/heap``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vspec.api.task_info import TaskInfo
from vspec.util.priority_queue import PriorityQueue

if TYPE_CHECKING:
    from vspec.framework.session import Session


def build_victims_priority_queue(
    ssn: Session, victims: list[TaskInfo], preemptor: TaskInfo
) -> PriorityQueue[TaskInfo]:
    """Victims in eviction order. Every victim and the preemptor belong to session jobs
    (both actions only offer tasks of session jobs), so the job lookups cannot fail."""
    jobs, queues = ssn.jobs, ssn.queues
    preemptor_queue = queues[jobs[preemptor.job].queue]

    def evict_first(left: TaskInfo, right: TaskInfo) -> bool:
        if left.job == right.job:
            return not ssn.task_order_fn(left, right)
        left_job, right_job = jobs[left.job], jobs[right.job]
        if left_job.queue != right_job.queue:
            return ssn.victim_queue_order_fn(
                queues[left_job.queue], queues[right_job.queue], preemptor_queue
            )
        return not ssn.job_order_fn(left_job, right_job)

    return PriorityQueue(evict_first, victims)
