"""Fit errors and the messages users see for them (``api/unschedule_info.go``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from vspec.api.types import Code, Status
from vspec.errors import GoError

NODE_POD_NUMBER_EXCEEDED = "node(s) pod number exceeded"
NODE_RESOURCE_FIT_FAILED = "node(s) resource fit failed"
ALL_NODE_UNAVAILABLE_MSG = "all nodes are unavailable"
POD_REASON_UNSCHEDULABLE = "Unschedulable"
POD_REASON_SCHEDULABLE = "Schedulable"


def histogram(reasons: Iterable[str]) -> list[str]:
    """``"<count> <reason>"`` entries sorted as strings, as Volcano sorts them."""
    return sorted(f"{n} {reason}" for reason, n in Counter(reasons).items())


class FitError(GoError):
    """Why one task does not fit one node: a set of statuses."""

    def __init__(
        self, task_namespace: str, task_name: str, node_name: str, statuses: list[Status]
    ) -> None:
        super().__init__()
        self.task_namespace = task_namespace
        self.task_name = task_name
        self.node_name = node_name
        self.statuses = statuses

    @classmethod
    def of(cls, task: _Named, node_name: str, *messages: str) -> FitError:
        """``NewFitError``: every message becomes a status with code Error."""
        return cls(task.namespace, task.name, node_name, [Status(Code.Error, m) for m in messages])

    @classmethod
    def with_status(cls, task: _Named, node_name: str, *statuses: Status) -> FitError:
        return cls(task.namespace, task.name, node_name, list(statuses))

    def reasons(self) -> list[str]:
        return [s.reason for s in self.statuses if s.reason]

    def has_code(self, *codes: Code) -> bool:
        for status in self.statuses:  # noqa: SIM110 - a loop is faster here
            if status.code in codes:
                return True
        return False

    def __str__(self) -> str:
        return fit_error_text(self.task_namespace, self.task_name, self.node_name, self.statuses)


def fit_error_text(namespace: str, name: str, node_name: str, statuses: list[Status]) -> str:
    """``FitError.Error()``, from the error's parts (a deferred log line keeps only these)."""
    reasons = ", ".join([s.reason for s in statuses if s.reason])
    return f"task {namespace}/{name} on node {node_name} fit failed: {reasons}"


class _Named(Protocol):
    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...


class FitErrors:
    """All nodes' fit errors for one task (``FitErrors``)."""

    def __init__(self) -> None:
        self.nodes: dict[str, FitError] = {}
        self.err = ""

    def set_node_error(self, node_name: str, err: Exception) -> None:
        if isinstance(err, FitError):
            err.node_name = node_name
            fe = err
        else:
            fe = FitError("", "", node_name, [Status(Code.Error, str(err))])
        self.nodes[node_name] = fe

    def unschedulable_and_unresolvable_nodes(self) -> set[str]:
        return {
            name
            for name, fe in self.nodes.items()
            if fe.has_code(Code.UnschedulableAndUnresolvable)
        }

    def __str__(self) -> str:
        if not self.err:
            # Quirk: N counts the nodes that have an error, not the cluster size.
            self.err = f"0/{len(self.nodes)} nodes are unavailable"
        if not self.nodes:
            return self.err
        reasons = [r for fe in self.nodes.values() for r in fe.reasons()]
        return f"{self.err}: {', '.join(histogram(reasons))}."


def insufficient_resource_reason(resources: list[str]) -> str:
    """``WrapInsufficientResourceReason``: only the first short dimension is named."""
    return f"Insufficient {resources[0]}" if resources else ""
