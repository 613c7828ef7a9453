"""Task statuses and predicate status codes (``pkg/scheduler/api/types.go``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class TaskStatus(IntEnum):
    """Bit flags as in Go (``1 << iota``); the name is what Volcano prints."""

    Pending = 1 << 0
    Allocated = 1 << 1
    Pipelined = 1 << 2
    Binding = 1 << 3
    Bound = 1 << 4
    Running = 1 << 5
    Releasing = 1 << 6
    Succeeded = 1 << 7
    Failed = 1 << 8
    Unknown = 1 << 9

    def __str__(self) -> str:
        return self.name


ALLOCATED_STATUSES = frozenset(
    {TaskStatus.Bound, TaskStatus.Binding, TaskStatus.Running, TaskStatus.Allocated}
)
PREEMPTABLE_STATUSES = frozenset({TaskStatus.Bound, TaskStatus.Running})
COMPLETED_STATUSES = frozenset({TaskStatus.Succeeded, TaskStatus.Failed})


def allocated_status(status: TaskStatus) -> bool:
    return status in ALLOCATED_STATUSES


def preemptable_status(status: TaskStatus) -> bool:
    return status in PREEMPTABLE_STATUSES


def completed_status(status: TaskStatus) -> bool:
    return status in COMPLETED_STATUSES


class Code(IntEnum):
    """Predicate status codes (Volcano's copy of the Kubernetes framework codes)."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5


@dataclass(frozen=True)
class Status:
    """``api.Status``: a plugin's answer (``code``) for a task on a node, and why."""

    code: Code
    reason: str = ""
    plugin: str = ""


# Vote values of the voting session functions (JobEnqueueable, JobPipelined...).
PERMIT = 1
ABSTAIN = 0
REJECT = -1


@dataclass(frozen=True)
class ValidateResult:
    """``api.ValidateResult``: whether a job passed a plugin's ``JobValid`` check, and why not."""

    passed: bool
    reason: str = ""
    message: str = ""
