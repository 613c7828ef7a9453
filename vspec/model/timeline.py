"""A timeline as loaded (vspec.timeline): arrivals and node events at offsets from the start."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

from vspec.errors import Location
from vspec.model.objects import Cluster, Node, Pod, PodGroup

DEFAULT_PERIOD = timedelta(seconds=1)  # vc-scheduler's --schedule-period default

NodeEventKind = Literal["add", "cordon", "uncordon", "drain", "remove"]
SkipMode = Literal["idle", "none"]


@dataclass
class Arrival:
    """Objects submitted together at ``at``: a job's pod group and pods (or bare pods)."""

    at: timedelta
    pod_groups: list[PodGroup]
    pods: list[Pod]
    run_for: dict[str, timedelta]  # pod ns/name -> how long it runs once started
    held_pods: list[Pod] = field(default_factory=list)  # a Volcano Job's, until enqueued
    tags: tuple[str, ...] = ()
    location: Location | None = None


@dataclass
class NodeEvent:
    at: timedelta
    kind: NodeEventKind
    node: str
    added: Node | None = None  # the node an ``add`` brings
    location: Location | None = None


@dataclass
class Timeline:
    period: timedelta = DEFAULT_PERIOD
    until: timedelta | None = None  # None: until nothing is left to happen
    skip: SkipMode = "idle"
    arrivals: list[Arrival] = field(default_factory=list)
    node_events: list[NodeEvent] = field(default_factory=list)
    location: Location | None = None

    def everything(self, cluster: Cluster) -> Cluster:
        """The cluster with every object the timeline ever brings: the names a spec's
        expectations may use."""
        return Cluster(
            nodes=[*cluster.nodes, *(e.added for e in self.node_events if e.added)],
            pods=[*cluster.pods, *(p for a in self.arrivals for p in a.pods)],
            pod_groups=[*cluster.pod_groups, *(g for a in self.arrivals for g in a.pod_groups)],
            queues=cluster.queues,
            priority_classes=cluster.priority_classes,
            objects=cluster.objects,
            held_pods=[*cluster.held_pods, *(p for a in self.arrivals for p in a.held_pods)],
        )

    def tags_of(self) -> dict[str, tuple[str, ...]]:
        """Job key (pod group ``ns/name``, or a bare pod's) -> the tags of its arrival."""
        tags: dict[str, tuple[str, ...]] = {}
        for arrival in self.arrivals:
            for pg in arrival.pod_groups:
                tags[pg.meta.key] = arrival.tags
            for pod in arrival.pods:
                if not pod.group_name:
                    tags[pod.meta.key] = arrival.tags
        return tags
