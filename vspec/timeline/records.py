"""What a timeline run records: one line per pod and per job, one tick per moment the
cluster changed. Metrics, exports and plots are computed from these alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from vspec.model.result import SimulationResult


@dataclass
class PodRecord:
    key: str  # ns/name
    job: str  # the job's key (its pod group, or the pod itself)
    queue: str
    submitted: datetime
    bound: datetime | None = None  # the last bind
    node: str = ""
    finished: datetime | None = None
    binds: int = 0
    evictions: int = 0  # preempted, reclaimed, drained or on a removed node


@dataclass
class JobRecord:
    key: str
    queue: str
    tags: tuple[str, ...]
    min_available: int
    pods: int
    submitted: datetime
    started: datetime | None = None  # first moment minAvailable pods were bound
    completed: datetime | None = None  # every pod succeeded
    evictions: int = 0


@dataclass
class Tick:
    """The cluster from ``time`` until the next tick."""

    time: datetime
    session: bool  # a session ran at this moment
    used: dict[str, float]  # resource -> requests of the pods on nodes
    capacity: dict[str, float]  # resource -> allocatable of the nodes
    queue_used: dict[str, dict[str, float]]
    queue_deserved: dict[str, dict[str, float]]  # vspec's fair-share reference
    pending: int  # pods waiting for a node
    running: int  # pods holding a node
    binds: int = 0
    evictions: int = 0


@dataclass
class TimelineResult:
    start: datetime
    end: datetime  # the last moment the clock reached
    pods: dict[str, PodRecord] = field(default_factory=dict)
    jobs: dict[str, JobRecord] = field(default_factory=dict)
    ticks: list[Tick] = field(default_factory=list)
    sessions: int = 0  # sessions run
    skipped: int = 0  # periods jumped over (sessions that could change nothing)
    simulation: SimulationResult = field(default_factory=SimulationResult)  # all binds, ...
    cpu_seconds: float = 0.0
