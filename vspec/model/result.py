"""What a simulation returns: the observable outcome a spec's ``expect`` checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster


class Severity(Enum):
    INFO = "I"
    WARNING = "W"
    ERROR = "E"


@dataclass(frozen=True)
class LogLine:
    verbosity: int  # the V level; warnings and errors are 0
    severity: Severity
    text: str
    cycle: int = 0
    # ``file.go:line`` of the Volcano (or seed plugin) call that logs it, where vspec
    # knows it; the klog header (``--klog-header``) prints it.
    source: str = ""

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Bind:
    task: str  # namespace/name
    node: str
    cycle: int = 0


@dataclass(frozen=True)
class Eviction:
    task: str  # namespace/name
    reason: str
    cycle: int = 0


@dataclass(frozen=True)
class RecordedEvent:
    """A Kubernetes event the scheduler recorded on a pod group."""

    object: str  # the job, namespace/name
    type: str  # Normal | Warning
    reason: str
    message: str
    cycle: int = 0


@dataclass
class PodGroupResult:
    """A job's pod group after the last session: close-time and in-session phases."""

    phase: str  # written by the job updater at close
    session_phase: str  # held in the session after the last action, before close
    conditions: list[Condition] = field(default_factory=list)


@dataclass
class TaskResult:
    node: str | None
    status: str  # TaskStatus name, in-session after the last action


@dataclass
class ProbeFailure:
    """One probe key whose value differs from what the engine computed."""

    probe: int  # index in the spec's probes list
    key: str
    message: str


@dataclass
class SimulationResult:
    binds: list[Bind] = field(default_factory=list)
    evictions: list[Eviction] = field(default_factory=list)
    pipelined: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # job -> (task, node)
    pod_groups: dict[str, PodGroupResult] = field(default_factory=dict)
    tasks: dict[str, TaskResult] = field(default_factory=dict)
    logs: list[LogLine] = field(default_factory=list)
    events: list[RecordedEvent] = field(default_factory=list)
    probe_failures: list[ProbeFailure] = field(default_factory=list)
    cluster: Cluster | None = None  # the cluster after the last cycle
    # held pods (a Volcano Job's) that a controller created: ns/name -> the cycle at whose
    # start they first exist
    created: dict[str, int] = field(default_factory=dict)

    def bind_map(self) -> dict[str, str]:
        return {b.task: b.node for b in self.binds}
