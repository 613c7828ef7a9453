"""Builders for the Kubernetes-layer unit tests: pods and nodes in their Kubernetes form,
parsed by the same ``parse_*`` functions the spec loader uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vspec.api.task_info import TaskInfo
from vspec.k8s.nodeinfo import K8sNodeInfo, Snapshot
from vspec.model.corev1 import (
    Container,
    ContainerImage,
    parse_affinity,
    parse_container,
    parse_resource_list,
    parse_taint,
    parse_toleration,
    parse_topology_spread_constraint,
)
from vspec.model.objects import Cluster, KubeObject, Node, ObjectMeta, Pod


def k8s_pod(
    name: str,
    *,
    namespace: str = "ns1",
    labels: Mapping[str, str] | None = None,
    requests: Mapping[str, Any] | None = None,
    containers: list[dict[str, Any]] | None = None,
    affinity: dict[str, Any] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    node_selector: Mapping[str, str] | None = None,
    spread: list[dict[str, Any]] | None = None,
    node_name: str = "",
    deleting: bool = False,
) -> Pod:
    if containers is not None:
        parsed = [parse_container(c) for c in containers]
    else:
        parsed = [Container(requests=parse_resource_list(requests or {}))]
    meta = ObjectMeta(name, namespace, uid=f"{namespace}-{name}", labels=dict(labels or {}))
    if deleting:
        from datetime import UTC, datetime

        meta.deletion_timestamp = datetime(2025, 1, 1, tzinfo=UTC)
    return Pod(
        meta,
        phase="Running" if node_name else "Pending",
        node_name=node_name,
        containers=parsed,
        affinity=parse_affinity(affinity),
        tolerations=[parse_toleration(t) for t in tolerations or ()],
        node_selector=dict(node_selector or {}),
        topology_spread_constraints=[parse_topology_spread_constraint(c) for c in spread or ()],
    )


def k8s_node(
    name: str,
    allocatable: Mapping[str, Any] | None = None,
    *,
    labels: Mapping[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
    images: list[tuple[list[str], int]] | None = None,
) -> Node:
    resources = parse_resource_list(allocatable or {"cpu": 4, "memory": "8Gi", "pods": 110})
    return Node(
        ObjectMeta(name, labels=dict(labels or {})),
        allocatable=resources,
        capacity=dict(resources),
        taints=[parse_taint(t) for t in taints or ()],
        unschedulable=unschedulable,
        images=[ContainerImage(tuple(names), size) for names, size in images or ()],
    )


def node_info(node: Node, *pods: Pod) -> K8sNodeInfo:
    info = K8sNodeInfo(node)
    for pod in pods:
        info.add_task(TaskInfo(pod))
    return info


def snapshot(
    *infos: K8sNodeInfo, namespaces: Mapping[str, Mapping[str, str]] | None = None
) -> Snapshot:
    labels = {name: dict(lbls) for name, lbls in (namespaces or {}).items()}
    return Snapshot({i.name: i for i in infos}, labels)


def namespace_object(name: str, labels: Mapping[str, str]) -> KubeObject:
    return KubeObject("v1", "Namespace", ObjectMeta(name, labels=dict(labels)), {})


def cluster_with_namespaces(*objects: KubeObject) -> Cluster:
    return Cluster(objects=list(objects))
