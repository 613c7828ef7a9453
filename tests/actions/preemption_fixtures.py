"""Tiny plugins for the preempt, reclaim and shuffle action tests (their clusters come
from tests/builders.py, in namespace ``c1``).

The plugins decide victims and verdicts in the simplest way that exercises an action's
own logic (so a failing test points at the action, not at a real plugin): job and task
priority order, "lower job priority" victims, gang-style starving/pipelined, and queue
verdicts listed in the plugin arguments. Names start with ``tpre-`` so they cannot clash
with real plugins in the global registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT, REJECT, Code, Status
from vspec.api.unschedule_info import FitError
from vspec.framework.interface import Plugin
from vspec.framework.registry import register_plugin
from vspec.framework.scheduler import simulate
from vspec.framework.session import Session
from vspec.model.conf import load_conf
from vspec.model.objects import (
    Cluster,
    ObjectMeta,
    PriorityClass,
)
from vspec.model.result import Severity, SimulationResult

VICTIM_LABEL = "tpre/victim"


def _order(left: int, right: int) -> int:
    """Higher value first, as Volcano's priority plugin orders."""
    return -1 if left > right else (1 if left < right else 0)


@register_plugin
class PriorityLike(Plugin):
    """Priority order; victims of lower job priority (other jobs) or lower task priority
    (same job); reclaims every candidate; starving while some task is neither ready nor
    pipelined (priority's rule); pipelined as gang decides."""

    name = "tpre-priority"

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_job_order_fn(self.name, lambda a, b: _order(a.priority, b.priority))
        ssn.add_task_order_fn(self.name, lambda a, b: _order(a.priority, b.priority))

        def preemptable(
            preemptor: TaskInfo, preemptees: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            job = ssn.jobs[preemptor.job]
            victims = [
                t
                for t in preemptees
                if (t.job == preemptor.job and t.priority < preemptor.priority)
                or (t.job != preemptor.job and ssn.jobs[t.job].priority < job.priority)
            ]
            return victims, PERMIT

        ssn.add_preemptable_fn(self.name, preemptable)
        ssn.add_reclaimable_fn(self.name, lambda _, reclaimees: (list(reclaimees), PERMIT))
        ssn.add_job_starving_fns(
            self.name, lambda job: job.ready_task_num() + job.waiting_task_num() < len(job.tasks)
        )
        ssn.add_job_pipelined_fn(self.name, lambda job: PERMIT if job.is_pipelined() else REJECT)


@register_plugin
class QueueVerdicts(Plugin):
    """Queue verdicts from the arguments: lists of queue names that are ``overused``,
    ``notAllocatable`` or ``notPreemptive``."""

    name = "tpre-queue"

    def _listed(self, key: str, queue: QueueInfo) -> bool:
        return queue.name in self.arguments.get(key, ())

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_overused_fn(self.name, lambda q: self._listed("overused", q))
        ssn.add_allocatable_fn(self.name, lambda q, _: not self._listed("notAllocatable", q))
        ssn.add_preemptive_fn(self.name, lambda q, _: not self._listed("notPreemptive", q))


@register_plugin
class LabelVictims(Plugin):
    """VictimTasks: the offered tasks labelled ``tpre/victim`` (with no task offered, as
    preempt calls it, every such Running task of the session)."""

    name = "tpre-victims"

    def on_session_open(self, ssn: Session) -> None:
        def victims(tasks: list[TaskInfo]) -> list[TaskInfo]:
            if not tasks:
                tasks = [t for job in ssn.jobs.values() for t in job.tasks.values()]
            return [t for t in tasks if t.pod.meta.labels.get(VICTIM_LABEL) == "true"]

        ssn.add_victim_tasks_fns(self.name, [victims])


@register_plugin
class RejectNodes(Plugin):
    """Predicate: the nodes listed in argument ``unresolvable`` fail every task with
    UnschedulableAndUnresolvable (what preempt and reclaim do not try to cure)."""

    name = "tpre-nodes"

    def on_session_open(self, ssn: Session) -> None:
        def predicate(task: TaskInfo, node: NodeInfo) -> None:
            if node.name in self.arguments.get("unresolvable", ()):
                status = Status(Code.UnschedulableAndUnresolvable, "node(s) rejected by test")
                raise FitError.with_status(task, node.name, status)

        ssn.add_predicate_fn(self.name, predicate)


def reject_nodes(*names: str) -> dict[str, Any]:
    return {"name": "tpre-nodes", "enablePredicate": True, "arguments": {"unresolvable": names}}


PRIORITY_FLAGS = {
    "enableJobOrder": True,
    "enableTaskOrder": True,
    "enablePreemptable": True,
    "enableReclaimable": True,
    "enableJobStarving": True,
    "enableJobPipelined": True,
}
QUEUE_FLAGS = {"enabledOverused": True, "enabledAllocatable": True, "enablePreemptive": True}


def conf(actions: str, *plugins: Mapping[str, Any]) -> Any:
    """A one-tier conf with Go-test flag semantics (unset flags disabled)."""
    return load_conf(
        {"actions": actions, "tiers": [{"plugins": list(plugins)}]}, default_plugin_flags=False
    )


def priority(**flags: bool) -> dict[str, Any]:
    return {"name": "tpre-priority", **PRIORITY_FLAGS, **flags}


def queue_verdicts(**arguments: list[str]) -> dict[str, Any]:
    return {"name": "tpre-queue", **QUEUE_FLAGS, "arguments": arguments}


# Job priority classes of the action tests' clusters ("high" 100, "low" 10).
PRIORITY_CLASSES = [
    PriorityClass(ObjectMeta("high"), value=100),
    PriorityClass(ObjectMeta("low"), value=10),
]


def run(sched: Any, world: Cluster, *, cycles: int = 1, verbosity: int = 3) -> SimulationResult:
    return simulate(sched, world, cycles=cycles, verbosity=verbosity)


def evicted(result: SimulationResult) -> list[tuple[str, str]]:
    return [(e.task, e.reason) for e in result.evictions]


def lines(result: SimulationResult, severity: Severity | None = None) -> list[str]:
    return [line.text for line in result.logs if severity in (None, line.severity)]
