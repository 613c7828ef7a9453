"""The ``shuffle`` action (``actions/shuffle/shuffle.go``): evict what the VictimTasks
plugins select among all Running tasks.

The selection is entirely the plugins' (tdm, pdb, rescheduling); with pdb it evicts
every Running task that does not exhaust a disruption budget, because pdb's victim
function is a filter. Evictions reach the cache at once (no statement). Go collects the
tasks by ranging over the job and task maps; vspec uses session job and task order.
"""

from __future__ import annotations

from vspec.api.types import TaskStatus
from vspec.framework.interface import Action
from vspec.framework.registry import register_action
from vspec.framework.session import Session


@register_action
class Shuffle(Action):
    """Evict the Running tasks the VictimTasks plugins select."""

    name = "shuffle"

    def execute(self, ssn: Session) -> None:
        running = [
            task
            for job in ssn.jobs.values()
            for task in job.tasks.values()
            if task.status is TaskStatus.Running
        ]
        for victim in ssn.victim_tasks(running):
            # Volcano's format ends in "\n"; Klog drops it (one call, one line).
            ssn.log.v(
                3,
                f"pod {victim.name} from namespace {victim.namespace} and job {victim.job} "
                "will be evicted.\n",
            )
            ssn.evict(victim, "shuffle")
