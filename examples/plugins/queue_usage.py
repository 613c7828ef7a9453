"""Example action: log each queue's allocated resources and pending task count.

Put it between actions (``actions: "enqueue, allocate, queue-usage"``) to see what an
action left behind, the way Volcano users add a custom ``print`` action.
"""

from __future__ import annotations

from vspec.extension import Action, Resource, Session, TaskStatus, register_action


@register_action
class QueueUsage(Action):
    """Log per-queue usage (allocated resources, pending tasks) at V(1)."""

    name = "queue-usage"

    def execute(self, ssn: Session) -> None:
        allocated = {name: Resource() for name in ssn.queues}
        pending = dict.fromkeys(ssn.queues, 0)
        for job in ssn.jobs.values():
            if job.queue in allocated:
                allocated[job.queue].add(job.allocated)
                pending[job.queue] += job.count(TaskStatus.Pending)
        for name in sorted(ssn.queues):
            usage = f"allocated <{allocated[name]}>, pending tasks {pending[name]}"
            ssn.log.v(1, f"Queue {name} usage: {usage}")
