"""A drawn cluster written back in the spec format (:func:`cluster_document`),
compact and exact, so that a fuzz finding is a spec file a person can read and ``vspec
run`` loads to the same objects. Imports the model only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from vspec.model.corev1 import (
    Affinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    Toleration,
    TopologySpreadConstraint,
)
from vspec.model.objects import (
    GROUP_NAME_ANNOTATION,
    TASK_SPEC_KEY,
    ZERO_TIME,
    Cluster,
    Node,
    Pod,
    PodGroup,
    Queue,
)


def quantity(q: Fraction) -> int | str:
    """The shortest exact Kubernetes spelling (``8Gi``, ``500m``, ``3``)."""
    if q.denominator == 1:
        for suffix, unit in (("Gi", 2**30), ("Mi", 2**20)):
            if q >= unit and q % unit == 0:
                return f"{int(q // unit)}{suffix}"
        return int(q)
    milli = q * 1000
    if milli.denominator == 1:
        return f"{int(milli)}m"
    return str(float(q))


def _resources(r: Mapping[str, Fraction]) -> dict[str, int | str]:
    return {k: quantity(v) for k, v in r.items()}


def _time(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node(n: Node) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": n.meta.name, "allocatable": _resources(n.allocatable)}
    if n.capacity and n.capacity != n.allocatable:
        doc["capacity"] = _resources(n.capacity)
    if n.meta.labels:
        doc["labels"] = dict(n.meta.labels)
    if n.meta.annotations:
        doc["annotations"] = dict(n.meta.annotations)
    if n.taints:
        doc["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.taints]
    if n.unschedulable:
        doc["unschedulable"] = True
    if n.usage is not None:
        doc["usage"] = {
            "cpu": dict(n.usage.cpu),
            "memory": dict(n.usage.memory),
            "time": _time(n.usage.time),
        }
    return doc


def _queue(q: Queue) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": q.meta.name, "weight": q.weight}
    for key, value in (
        ("capability", q.capability),
        ("deserved", q.deserved),
        ("guarantee", q.guarantee),
    ):
        if value:
            doc[key] = _resources(value)
    if q.priority:
        doc["priority"] = q.priority
    if q.parent:
        doc["parent"] = q.parent
    if q.reclaimable is not None:
        doc["reclaimable"] = q.reclaimable
    if q.state != "Open":
        doc["state"] = q.state
    if q.meta.annotations:
        doc["annotations"] = dict(q.meta.annotations)
    if q.affinity:
        doc["affinity"] = q.affinity
    if q.meta.creation_timestamp != ZERO_TIME:
        doc["creationTimestamp"] = _time(q.meta.creation_timestamp)
    return doc


def _pod_group(pg: PodGroup) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": pg.meta.name, "namespace": pg.meta.namespace, "queue": pg.queue}
    doc["minMember"] = pg.min_member
    if pg.min_task_member:
        doc["minTaskMember"] = dict(pg.min_task_member)
    if pg.min_resources is not None:
        doc["minResources"] = _resources(pg.min_resources)
    if pg.priority_class_name:
        doc["priorityClassName"] = pg.priority_class_name
    doc["phase"] = pg.phase
    if pg.meta.annotations:
        doc["annotations"] = dict(pg.meta.annotations)
    if pg.meta.creation_timestamp != ZERO_TIME:
        doc["creationTimestamp"] = _time(pg.meta.creation_timestamp)
    return doc


def _toleration(t: Toleration) -> dict[str, Any]:
    doc = {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}
    return {k: v for k, v in doc.items() if v}


def _requirements(reqs: Sequence[NodeSelectorRequirement]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for r in reqs:
        doc: dict[str, Any] = {"key": r.key, "operator": r.operator}
        if r.values:
            doc["values"] = list(r.values)
        out.append(doc)
    return out


def _node_term(term: NodeSelectorTerm) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    if term.match_expressions:
        doc["matchExpressions"] = _requirements(term.match_expressions)
    if term.match_fields:
        doc["matchFields"] = _requirements(term.match_fields)
    return doc


def _pod_terms(affinity: PodAffinity) -> dict[str, Any]:
    """Required terms, and preferred ones with their weights, with matchLabels selectors
    (what :func:`clusters` and :mod:`~vspec.fuzz.strategies.features` draw)."""
    doc: dict[str, Any] = {
        "requiredDuringSchedulingIgnoredDuringExecution": [_pod_term(t) for t in affinity.required]
    }
    if affinity.preferred:
        doc["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w.weight, "podAffinityTerm": _pod_term(w.term)} for w in affinity.preferred
        ]
    return doc


def _pod_term(t: PodAffinityTerm) -> dict[str, Any]:
    term: dict[str, Any] = {"topologyKey": t.topology_key}
    if t.label_selector is not None:
        term["labelSelector"] = {"matchLabels": dict(t.label_selector.match_labels)}
    return term


def _affinity_document(a: Affinity) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    na = a.node_affinity
    if na is not None:
        body: dict[str, Any] = {}
        if na.required is not None:
            body["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [_node_term(t) for t in na.required]
            }
        if na.preferred:
            body["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": t.weight, "preference": _node_term(t.preference)} for t in na.preferred
            ]
        doc["nodeAffinity"] = body
    if a.pod_affinity is not None:
        doc["podAffinity"] = _pod_terms(a.pod_affinity)
    if a.pod_anti_affinity is not None:
        doc["podAntiAffinity"] = _pod_terms(a.pod_anti_affinity)
    return doc


def _requests_of(p: Pod) -> dict[str, Fraction]:
    requests: dict[str, Fraction] = {}
    for c in p.containers:
        for k, v in c.requests.items():
            requests[k] = requests.get(k, Fraction(0)) + v
    return requests


def _pod(p: Pod) -> dict[str, Any]:
    if p.conditions or p.scheduling_gates or any(c.ports or c.limits for c in p.containers):
        return _pod_manifest(p)
    doc: dict[str, Any] = {"name": p.meta.name, "namespace": p.meta.namespace}
    if p.group_name:
        doc["podGroup"] = p.group_name
    labels = dict(p.meta.labels)
    role = labels.pop(TASK_SPEC_KEY, None)
    if role is not None:
        doc["taskSpec"] = role
    if labels:
        doc["labels"] = labels
    annotations = {k: v for k, v in p.meta.annotations.items() if k != GROUP_NAME_ANNOTATION}
    if annotations:
        doc["annotations"] = annotations
    doc["phase"] = p.phase
    if p.node_name:
        doc["nodeName"] = p.node_name
    requests = _requests_of(p)
    if requests:
        doc["requests"] = _resources(requests)
    doc.update(_pod_scheduling(p))
    if p.meta.deletion_timestamp is not None:
        doc["deletionTimestamp"] = _time(p.meta.deletion_timestamp)
    if p.meta.creation_timestamp != ZERO_TIME:
        doc["creationTimestamp"] = _time(p.meta.creation_timestamp)
    return doc


def _pod_scheduling(p: Pod) -> dict[str, Any]:
    """The keys the compact form and a Pod manifest's spec share."""
    doc: dict[str, Any] = {}
    if p.priority is not None:
        doc["priority"] = p.priority
    if p.priority_class_name:
        doc["priorityClassName"] = p.priority_class_name
    if p.node_selector:
        doc["nodeSelector"] = dict(p.node_selector)
    if p.tolerations:
        doc["tolerations"] = [_toleration(t) for t in p.tolerations]
    if p.affinity is not None:
        doc["affinity"] = _affinity_document(p.affinity)
    if p.topology_spread_constraints:
        doc["topologySpreadConstraints"] = [_spread(c) for c in p.topology_spread_constraints]
    return doc


def _spread(c: TopologySpreadConstraint) -> dict[str, Any]:
    """What :mod:`~vspec.fuzz.strategies.features` draws: a matchLabels selector."""
    doc: dict[str, Any] = {
        "maxSkew": c.max_skew,
        "topologyKey": c.topology_key,
        "whenUnsatisfiable": c.when_unsatisfiable,
    }
    if c.label_selector is not None:
        doc["labelSelector"] = {"matchLabels": dict(c.label_selector.match_labels)}
    return doc


def _pod_manifest(p: Pod) -> dict[str, Any]:
    """A Pod manifest: the compact form has no containers (so no host ports or limits),
    no conditions and no scheduling gates."""
    meta: dict[str, Any] = {"name": p.meta.name, "namespace": p.meta.namespace}
    if p.meta.labels:
        meta["labels"] = dict(p.meta.labels)
    if p.meta.annotations:
        meta["annotations"] = dict(p.meta.annotations)
    if p.meta.creation_timestamp != ZERO_TIME:
        meta["creationTimestamp"] = _time(p.meta.creation_timestamp)
    if p.meta.deletion_timestamp is not None:
        meta["deletionTimestamp"] = _time(p.meta.deletion_timestamp)
    containers = []
    for i, c in enumerate(p.containers):
        container: dict[str, Any] = {"name": c.name or f"c{i}"}
        if c.requests:
            container["resources"] = {"requests": _resources(c.requests)}
        if c.limits:
            container.setdefault("resources", {})["limits"] = _resources(c.limits)
        if c.ports:
            container["ports"] = [
                {"containerPort": port.container_port, "hostPort": port.host_port}
                for port in c.ports
            ]
        containers.append(container)
    spec: dict[str, Any] = {"containers": containers, **_pod_scheduling(p)}
    if p.scheduling_gates:
        spec["schedulingGates"] = [{"name": gate} for gate in p.scheduling_gates]
    if p.node_name:
        spec["nodeName"] = p.node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": _pod_status(p),
    }


def _pod_status(p: Pod) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": p.phase}
    if p.conditions:
        status["conditions"] = [
            {
                "type": c.type,
                "status": c.status,
                **(
                    {"lastTransitionTime": _time(c.last_transition_time)}
                    if c.last_transition_time is not None
                    else {}
                ),
            }
            for c in p.conditions
        ]
    return status


def cluster_document(cluster: Cluster) -> dict[str, Any]:
    """The ``cluster`` key of a spec that the loader turns back into ``cluster``.

    Covers what the strategies and the generator produce (compact nodes, queues, pod
    groups and single-container pods); other fields are not written.
    """
    doc: dict[str, Any] = {
        "priorityClasses": [
            {"name": pc.meta.name, "value": pc.value} for pc in cluster.priority_classes
        ],
        "queues": [_queue(q) for q in cluster.queues],
        "nodes": [_node(n) for n in cluster.nodes],
        "podGroups": [_pod_group(pg) for pg in cluster.pod_groups],
        "pods": [_pod(p) for p in cluster.pods],
    }
    if cluster.objects:
        doc["objects"] = [dict(o.body) for o in cluster.objects]
    return doc
