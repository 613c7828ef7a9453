"""conformance: never evict critical system pods (``plugins/conformance/conformance.go``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.registry import register_plugin

if TYPE_CHECKING:
    from vspec.framework.session import Session

CRITICAL_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
NAMESPACE_SYSTEM = "kube-system"


def evictable(evictor: TaskInfo, evictees: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
    """Every evictee except critical-class pods and pods in kube-system."""
    victims = [
        evictee
        for evictee in evictees
        if evictee.pod.priority_class_name not in CRITICAL_PRIORITY_CLASSES
        and evictee.namespace != NAMESPACE_SYSTEM
    ]
    return victims, PERMIT


@register_plugin
class ConformancePlugin(Plugin):
    """Protects kube-system and system-critical pods from preemption and reclaim."""

    name: ClassVar[str] = "conformance"
    carries_jobs: ClassVar[bool] = True
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_preemptable_fn(self.name, evictable)
        ssn.add_reclaimable_fn(self.name, evictable)
