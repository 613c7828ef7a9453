"""What a simulation returns: the observable outcome a spec's ``expect`` checks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster


class Severity(Enum):
    INFO = "I"
    WARNING = "W"
    ERROR = "E"


class LogLine:
    """One captured line. A line logged with :meth:`deferred` keeps its literal head and
    how to render the rest, and is formatted when ``text`` is first read: a session at
    verbosity 3 logs a line per failing (task, node) pair and almost none is read. Its
    arguments are kept as plain values (strings, shared lists), never the objects that
    produced them, so that the log holds as few objects as the texts would."""

    __slots__ = ("_args", "_message", "_render", "cycle", "severity", "source", "verbosity")

    def __init__(
        self,
        verbosity: int,  # the V level; warnings and errors are 0
        severity: Severity,
        text: str,
        cycle: int = 0,
        # ``file.go:line`` of the Volcano (or seed plugin) call that logs it, where vspec
        # knows it; the klog header (``--klog-header``) prints it.
        source: str = "",
    ) -> None:
        self.verbosity = verbosity
        self.severity = severity
        self._message = text
        self._render: Callable[..., str] | None = None
        self._args: tuple[Any, ...] = ()
        self.cycle = cycle
        self.source = source

    @classmethod
    def deferred(
        cls,
        verbosity: int,
        severity: Severity,
        head: str,
        render: Callable[..., str],
        args: tuple[Any, ...],
        cycle: int = 0,
        source: str = "",
    ) -> LogLine:
        """The line ``head + render(*args)`` (trailing newlines dropped), formatted on
        first read; ``args`` must not change afterwards."""
        line = cls(verbosity, severity, head, cycle, source)
        line._render, line._args = render, args
        return line

    @property
    def text(self) -> str:
        render = self._render
        if render is not None:
            self._message = (self._message + render(*self._args)).rstrip("\n")
            self._render, self._args = None, ()
        return self._message

    def startswith(self, prefix: str) -> bool:
        """``text.startswith(prefix)``, without rendering a deferred line whose literal
        head already decides it (the log invariants scan every line)."""
        if self._render is not None:
            head = self._message
            if len(head) >= len(prefix) or not prefix.startswith(head):
                return head.startswith(prefix)
        return self.text.startswith(prefix)

    def _key(self) -> tuple[int, Severity, str, int, str]:
        return (self.verbosity, self.severity, self.text, self.cycle, self.source)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LogLine) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"LogLine(verbosity={self.verbosity!r}, severity={self.severity!r}, "
            f"text={self.text!r}, cycle={self.cycle!r}, source={self.source!r})"
        )

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
