"""The pending work preempt and reclaim walk: each queue's starving jobs and each job's
pending tasks, in the session's orders. In Volcano each action is a package of its own
and repeats these lines; here they live once, below the actions, so that no action
imports another. Not an action: the leading underscore keeps the registry from importing
it as one. Imports the api, the session and the priority queue.
"""

from __future__ import annotations

from vspec.api.job_info import JobInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import TaskStatus
from vspec.framework.session import Session
from vspec.util.priority_queue import PriorityQueue

PREEMPT_NEVER = "Never"
JobHeaps = dict[str, PriorityQueue[JobInfo]]  # queue -> its starving jobs in JobOrder
TaskHeaps = dict[str, PriorityQueue[TaskInfo]]  # job -> its pending tasks in TaskOrder


def pending_task_heap(ssn: Session, job: JobInfo) -> PriorityQueue[TaskInfo]:
    """The job's Pending tasks that are not scheduling-gated, in TaskOrder."""
    return PriorityQueue(
        ssn.task_order_fn, (t for t in job.tasks_in(TaskStatus.Pending) if not t.sch_gated)
    )
