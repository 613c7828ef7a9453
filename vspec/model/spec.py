"""A loaded spec: the model the loader produces and the runner consumes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from vspec.errors import Location
from vspec.model.conf import SchedulerConf
from vspec.model.objects import DEFAULT_NOW, Cluster
from vspec.model.versions import VersionRange

if TYPE_CHECKING:
    from vspec.model.probes import Probe
    from vspec.model.timeline import Timeline

# What the scheduler sees besides the declared objects (vspec.harness.deployment).
ClusterMode = Literal["deployed", "bare"]


@dataclass
class PodGroupExpect:
    """One ``expect.podGroups`` entry; None checks nothing."""

    phase: str | None = None
    session_phase: str | None = None
    unschedulable: str | None = None


@dataclass
class PodExpect:
    """One ``expect.pods`` entry; None checks nothing, but for ``node`` when
    ``node_given`` (``node: null``: the pod must not be bound)."""

    node: str | None = None
    node_given: bool = False  # `node: null` (expect unbound) differs from an omitted key
    status: str | None = None


# The resource keys of one ``expect.queues`` entry, by the QueueResult field each reads.
QUEUE_RESOURCES = {
    "deserved": "deserved",
    "allocated": "allocated",
    "request": "request",
    "guarantee": "guarantee",
    "capability": "capability",
    "realCapability": "real_capability",
}
# Its pod group counts, by the pod group phase each counts (Queue.status's fields).
QUEUE_COUNTS = {
    "pending": "Pending",
    "inqueue": "Inqueue",
    "running": "Running",
    "unknown": "Unknown",
    "completed": "Completed",
}


@dataclass
class QueueExpect:
    """One ``expect.queues`` entry: resources by key (``deserved``, ...), each by
    resource name in the units a spec writes; pod group counts by key (``running``,
    ...); the share; None or absent checks nothing."""

    resources: dict[str, dict[str, float]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    share: float | None = None
    tolerance: float | None = None  # absolute; None means relative 1e-6, as probes' scores


@dataclass
class LogsExpect:
    """``expect.logs``: substrings the log must contain, regular expressions it must
    match, and substrings no line may contain."""

    contains: list[str] = field(default_factory=list)
    matches: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MetricBound:
    """One ``expect.metrics`` entry: an expression of docs/timeline.md#metrics."""

    text: str
    location: Location


@dataclass
class Expect:
    """A spec's ``expect`` section: what the run must show; a None or empty entry checks nothing."""

    binds: dict[str, str] | None = None
    binds_include: dict[str, str] | None = None
    bind_count: int | None = None
    evictions: list[str] | None = None
    evict_count: int | None = None
    pipelined: dict[str, list[str]] | None = None
    pod_groups: dict[str, PodGroupExpect] = field(default_factory=dict)
    pods: dict[str, PodExpect] = field(default_factory=dict)
    queues: dict[str, QueueExpect] = field(default_factory=dict)
    logs: LogsExpect | None = None
    invariants: list[str] = field(default_factory=list)
    metrics: list[MetricBound] = field(default_factory=list)  # a timeline's bounds
    disabled_invariants: list[str] = field(default_factory=list)
    locations: Mapping[str, Location] = field(default_factory=dict)  # expect key -> where


@dataclass
class Spec:
    """One spec: the scheduler and cluster to run, how to run them, and what the run must show."""

    name: str
    location: Location
    scheduler: SchedulerConf
    cluster: Cluster
    expect: Expect = field(default_factory=Expect)
    probes: list[Probe] = field(default_factory=list)
    description: str = ""
    tags: list[str] = field(default_factory=list)
    skip: str | None = None
    xfail: str | None = None
    seed: int = 0
    now: datetime = DEFAULT_NOW
    cycles: int = 1
    verbosity: int = 3
    # its project's plugins-dir and its own pluginsDir, imported when the spec was loaded
    plugins_dirs: tuple[Path, ...] = ()
    replace_builtins: frozenset[str] = frozenset()  # replaceBuiltins
    cluster_mode: ClusterMode = "deployed"  # what was added to the declared cluster
    warnings: list[str] = field(default_factory=list)  # located; e.g. manifests ignored
    timeline: Timeline | None = None  # jobs that arrive and finish (vspec.timeline)
    volcano: VersionRange | None = None  # the Volcano releases it describes; else all

    @property
    def nodeid(self) -> str:
        return f"{self.location.file}::{self.name}"
