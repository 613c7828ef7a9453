"""pdb: never pick a victim whose eviction would break a PodDisruptionBudget
(``plugins/pdb/pdb.go``).

One filter serves Preemptable, Reclaimable and VictimTasks: walking the candidates in
order, each matching budget's ``status.disruptionsAllowed`` is spent one per task, and
a task that would overdraw any budget is dropped. As a VictimTasks function it *is* a
selector, so shuffle with pdb evicts every running task a budget does not protect.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT
from vspec.errors import SpecError
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.registry import register_plugin
from vspec.k8s.labels import Selector, SelectorError, selector_from_label_selector
from vspec.model.corev1 import parse_label_selector

if TYPE_CHECKING:
    from vspec.framework.session import Session


@dataclass(frozen=True)
class Budget:
    """What the filter reads of one PodDisruptionBudget."""

    namespace: str
    selector: Selector | None  # None: the selector does not parse (matches nothing)
    disruptions_allowed: int
    disrupted_pods: frozenset[str]


def _budget(namespace: str, body: Mapping[str, Any]) -> Budget:
    spec = body.get("spec") or {}
    status = body.get("status") or {}
    try:
        selector: Selector | None = selector_from_label_selector(
            parse_label_selector(spec.get("selector"))
        )
    except SelectorError:
        selector = None
    allowed = status.get("disruptionsAllowed", 0)
    if not isinstance(allowed, int) or isinstance(allowed, bool):
        raise ValueError(f"status.disruptionsAllowed must be an integer, got {allowed!r}")
    return Budget(namespace, selector, allowed, frozenset(status.get("disruptedPods") or ()))


def disruption_budgets(ssn: Session) -> list[Budget]:
    budgets = []
    for obj in ssn.cluster.objects_of_kind("PodDisruptionBudget"):
        try:
            budgets.append(_budget(obj.meta.namespace, obj.body))
        except ValueError as exc:
            raise SpecError(
                f"PodDisruptionBudget {obj.meta.key}: {exc}", obj.meta.location
            ) from exc
    return budgets


def filter_victims(budgets: list[Budget], tasks: list[TaskInfo], ssn: Session) -> list[TaskInfo]:
    """The tasks that can go without any budget going below zero (spent in order)."""
    allowed = [b.disruptions_allowed for b in budgets]
    victims: list[TaskInfo] = []
    for task in tasks:
        meta = task.pod.meta
        # A pod without labels matches no budget, and Volcano skips it entirely.
        if not meta.labels:
            continue
        violated = False
        for i, budget in enumerate(budgets):
            selector = budget.selector
            if budget.namespace != meta.namespace or selector is None:
                continue
            # A budget with an empty (or nil) selector protects nothing.
            if selector.empty or not selector.matches(meta.labels):
                continue
            # Already being disrupted: the API server counted it.
            if meta.name in budget.disrupted_pods:
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                violated = True
        if violated:
            ssn.log.v(
                4,
                f"The pod <{task.name}> of task <{meta.name}> violates the pdb constraint, "
                "so filter it from the victim list",
            )
        else:
            victims.append(task)
    return victims


@register_plugin
class PdbPlugin(Plugin):
    """Preemptable, Reclaimable and VictimTasks that respect PodDisruptionBudgets."""

    name: ClassVar[str] = "pdb"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def on_session_open(self, ssn: Session) -> None:
        ssn.log.v(4, "Enter pdb plugin ...")
        budgets = disruption_budgets(ssn)

        def victim_tasks(tasks: list[TaskInfo]) -> list[TaskInfo]:
            return filter_victims(budgets, tasks, ssn)

        def evictable(_: TaskInfo, preemptees: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
            return filter_victims(budgets, preemptees, ssn), PERMIT

        ssn.add_victim_tasks_fns(self.name, [victim_tasks])
        ssn.add_reclaimable_fn(self.name, evictable)
        ssn.add_preemptable_fn(self.name, evictable)
        ssn.log.v(4, "Leaving pdb plugin.")
