"""Builders for the plugin unit tests of capacity, resourcequota, sla, tdm, cdp, usage,
pdb, nodegroup, rescheduling, task-topology, numa-aware, deviceshare and extender.

They mirror Volcano's ``util.Build*`` test helpers (pod UID ``<ns>-<name>``, zero
creation timestamps, node capacity = allocatable) so a unit test reads like its Go
counterpart, and open a real session (plugins' OnSessionOpen run, no action) the way
Volcano's ``uthelper`` does.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from vspec.framework.cache import SchedulerCache
from vspec.framework.framework import open_session
from vspec.framework.log import Klog
from vspec.framework.session import SchedulerState, Session
from vspec.model.conf import SchedulerOptions, load_conf
from vspec.model.corev1 import Condition, Container, parse_resource_list
from vspec.model.objects import (
    GROUP_NAME_ANNOTATION,
    Cluster,
    KubeObject,
    Node,
    NodeUsage,
    ObjectMeta,
    Pod,
    PodGroup,
    Queue,
)

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def node(
    name: str,
    allocatable: Mapping[str, Any],
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    usage: NodeUsage | None = None,
) -> Node:
    resources = parse_resource_list(allocatable)
    return Node(
        ObjectMeta(name, labels=dict(labels or {}), annotations=dict(annotations or {})),
        allocatable=resources,
        capacity=dict(resources),
        usage=usage,
    )


def pod(
    namespace: str,
    name: str,
    group: str,
    requests: Mapping[str, Any],
    *,
    phase: str = "Pending",
    node_name: str = "",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    priority: int | None = None,
    conditions: list[Condition] | None = None,
    limits: Mapping[str, Any] | None = None,
) -> Pod:
    notes = dict(annotations or {})
    if group:
        notes[GROUP_NAME_ANNOTATION] = group
    container = Container(
        requests=parse_resource_list(requests), limits=parse_resource_list(limits or {})
    )
    return Pod(
        ObjectMeta(
            name,
            namespace,
            uid=f"{namespace}-{name}",
            labels=dict(labels or {}),
            annotations=notes,
        ),
        phase=phase,
        node_name=node_name,
        priority=priority,
        containers=[container],
        conditions=list(conditions or []),
    )


def pod_group(
    namespace: str,
    name: str,
    queue: str,
    *,
    min_member: int = 0,
    phase: str = "Pending",
    min_resources: Mapping[str, Any] | None = None,
    annotations: Mapping[str, str] | None = None,
    creation: datetime | None = None,
) -> PodGroup:
    meta = ObjectMeta(name, namespace, annotations=dict(annotations or {}))
    if creation is not None:
        meta.creation_timestamp = creation
    return PodGroup(
        meta,
        queue=queue,
        min_member=min_member,
        phase=phase,
        min_resources=None if min_resources is None else parse_resource_list(min_resources),
    )


def queue(
    name: str,
    *,
    weight: int = 1,
    capability: Mapping[str, Any] | None = None,
    deserved: Mapping[str, Any] | None = None,
    guarantee: Mapping[str, Any] | None = None,
    parent: str = "",
    priority: int = 0,
    affinity: dict[str, Any] | None = None,
) -> Queue:
    return Queue(
        ObjectMeta(name, uid=name),
        weight=weight,
        capability=parse_resource_list(capability),
        deserved=parse_resource_list(deserved),
        guarantee=parse_resource_list(guarantee),
        parent=parent,
        priority=priority,
        affinity=affinity,
    )


def kube_object(kind: str, namespace: str, name: str, body: dict[str, Any]) -> KubeObject:
    api_version = "policy/v1" if kind == "PodDisruptionBudget" else "v1"
    manifest = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **body}
    manifest["metadata"]["namespace"] = namespace
    return KubeObject(api_version, kind, ObjectMeta(name, namespace), manifest)


def session(
    cluster: Cluster,
    plugins: list[dict[str, Any]] | list[list[dict[str, Any]]],
    *,
    now: datetime = NOW,
    verbosity: int = 5,
    state: SchedulerState | None = None,
) -> Session:
    """A session with the given tier(s), flags as Go tests set them (unset = disabled)."""
    tiers = plugins if plugins and isinstance(plugins[0], list) else [plugins]
    conf = load_conf(
        {"actions": "", "tiers": [{"plugins": tier} for tier in tiers]},
        default_plugin_flags=False,
    )
    log = Klog(verbosity)
    cache = SchedulerCache(cluster, SchedulerOptions(), log)
    return open_session(
        cache, conf, log=log, rng=random.Random(0), now=now, uid="test", state=state
    )


def task(ssn: Session, key: str) -> Any:
    """The session's TaskInfo of pod ``ns/name``."""
    for job in ssn.jobs.values():
        for t in job.tasks.values():
            if t.key == key:
                return t
    raise KeyError(key)
