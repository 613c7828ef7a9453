"""The model's cluster written back as the Kubernetes objects Volcano's cache takes.

The spec loader has already applied the cluster mode and the webhooks' defaults, so
what is written here is exactly what vspec's own engine schedules: the real engine and
the model see one cluster. Only the fields the model keeps are written; a field the
model drops (because no scheduler code reads it) is dropped here too.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from vspec.model.corev1 import (
    Affinity,
    Condition,
    Container,
    LabelSelector,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    ResourceList,
    Toleration,
    TopologySpreadConstraint,
)
from vspec.model.objects import (
    ZERO_TIME,
    Cluster,
    KubeObject,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)

Json = dict[str, Any]

# Quantity suffixes by the power of ten they stand for, largest first.
_DECIMAL_SUFFIXES = ((Fraction(1), ""), (Fraction(1, 1000), "m"), (Fraction(1, 10**9), "n"))


def quantity(value: Fraction) -> str:
    """The canonical text of a quantity the model holds exactly: whole units, millis or
    nanos; anything finer is rounded up to a nano, as the API server would round it."""
    for unit, suffix in _DECIMAL_SUFFIXES:
        scaled = value / unit
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    nanos = -(-value.numerator * 10**9 // value.denominator)
    return f"{nanos}n"


def resources(rl: ResourceList) -> dict[str, str]:
    return {name: quantity(value) for name, value in rl.items()}


def timestamp(at: datetime) -> str:
    """RFC 3339 in UTC, as Go reads metav1.Time. The year is written with its four
    digits: strftime's %Y drops them for Go's zero time (year 1)."""
    if at.tzinfo is not None:
        at = at.astimezone(UTC)
    fraction = f".{at.microsecond:06d}" if at.microsecond else ""
    return f"{at.year:04d}{at.strftime('-%m-%dT%H:%M:%S')}{fraction}Z"


def metadata(meta: ObjectMeta) -> Json:
    out: Json = {"name": meta.name}
    if meta.namespace:
        out["namespace"] = meta.namespace
    if meta.uid:
        out["uid"] = meta.uid
    if meta.labels:
        out["labels"] = dict(meta.labels)
    if meta.annotations:
        out["annotations"] = dict(meta.annotations)
    if meta.creation_timestamp != ZERO_TIME:
        out["creationTimestamp"] = timestamp(meta.creation_timestamp)
    if meta.deletion_timestamp is not None:
        out["deletionTimestamp"] = timestamp(meta.deletion_timestamp)
    return out


def _label_selector(sel: LabelSelector | None) -> Json | None:
    if sel is None:
        return None
    out: Json = {}
    if sel.match_labels:
        out["matchLabels"] = dict(sel.match_labels)
    if sel.match_expressions:
        out["matchExpressions"] = [
            {"key": r.key, "operator": r.operator, "values": list(r.values)}
            for r in sel.match_expressions
        ]
    return out


def _requirements(reqs: Iterable[NodeSelectorRequirement]) -> list[Json]:
    return [{"key": r.key, "operator": r.operator, "values": list(r.values)} for r in reqs]


def _node_term(term: NodeSelectorTerm) -> Json:
    out: Json = {}
    if term.match_expressions:
        out["matchExpressions"] = _requirements(term.match_expressions)
    if term.match_fields:
        out["matchFields"] = _requirements(term.match_fields)
    return out


def _node_affinity(na: NodeAffinity) -> Json:
    out: Json = {}
    if na.required is not None:
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [_node_term(t) for t in na.required]
        }
    if na.preferred:
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": p.weight, "preference": _node_term(p.preference)} for p in na.preferred
        ]
    return out


def _pod_term(term: PodAffinityTerm) -> Json:
    out: Json = {"topologyKey": term.topology_key}
    optional = {
        "labelSelector": _label_selector(term.label_selector),
        "namespaceSelector": _label_selector(term.namespace_selector),
        "namespaces": list(term.namespaces),
        "matchLabelKeys": list(term.match_label_keys),
        "mismatchLabelKeys": list(term.mismatch_label_keys),
    }
    out.update({k: v for k, v in optional.items() if v is not None and v != []})
    return out


def _pod_affinity(pa: PodAffinity) -> Json:
    out: Json = {}
    if pa.required:
        out["requiredDuringSchedulingIgnoredDuringExecution"] = [_pod_term(t) for t in pa.required]
    if pa.preferred:
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w.weight, "podAffinityTerm": _pod_term(w.term)} for w in pa.preferred
        ]
    return out


def affinity(aff: Affinity) -> Json:
    out: Json = {}
    if aff.node_affinity is not None:
        out["nodeAffinity"] = _node_affinity(aff.node_affinity)
    if aff.pod_affinity is not None:
        out["podAffinity"] = _pod_affinity(aff.pod_affinity)
    if aff.pod_anti_affinity is not None:
        out["podAntiAffinity"] = _pod_affinity(aff.pod_anti_affinity)
    return out


def _toleration(t: Toleration) -> Json:
    out: Json = {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def _spread(c: TopologySpreadConstraint) -> Json:
    out: Json = {
        "maxSkew": c.max_skew,
        "topologyKey": c.topology_key,
        "whenUnsatisfiable": c.when_unsatisfiable,
        "nodeAffinityPolicy": c.node_affinity_policy,
        "nodeTaintsPolicy": c.node_taints_policy,
    }
    if c.label_selector is not None:
        out["labelSelector"] = _label_selector(c.label_selector)
    if c.min_domains is not None:
        out["minDomains"] = c.min_domains
    if c.match_label_keys:
        out["matchLabelKeys"] = list(c.match_label_keys)
    return out


def _container(c: Container, index: int) -> Json:
    out: Json = {"name": c.name or f"c{index}", "image": c.image}
    res: Json = {}
    if c.requests:
        res["requests"] = resources(c.requests)
    if c.limits:
        res["limits"] = resources(c.limits)
    if res:
        out["resources"] = res
    if c.ports:
        out["ports"] = [
            {
                "containerPort": p.container_port,
                "hostPort": p.host_port,
                "protocol": p.protocol,
                "hostIP": p.host_ip,
            }
            for p in c.ports
        ]
    if c.restart_policy is not None:
        out["restartPolicy"] = c.restart_policy
    return out


def _pod_condition(c: Condition) -> Json:
    out: Json = {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
    if c.last_transition_time is not None:
        out["lastTransitionTime"] = timestamp(c.last_transition_time)
    return out


def pod(p: Pod) -> Json:
    spec: Json = {"containers": [_container(c, i) for i, c in enumerate(p.containers)]}
    optional: Json = {
        "nodeName": p.node_name,
        "schedulerName": p.scheduler_name,
        "priorityClassName": p.priority_class_name,
        "preemptionPolicy": p.preemption_policy,
        "nodeSelector": dict(p.node_selector),
        "tolerations": [_toleration(t) for t in p.tolerations],
        "affinity": affinity(p.affinity) if p.affinity is not None else None,
        "topologySpreadConstraints": [_spread(c) for c in p.topology_spread_constraints],
        "initContainers": [_container(c, i) for i, c in enumerate(p.init_containers)],
        "overhead": resources(p.overhead),
        "schedulingGates": [{"name": g} for g in p.scheduling_gates],
    }
    spec.update({k: v for k, v in optional.items() if v not in ("", None, [], {})})
    if p.priority is not None:
        spec["priority"] = p.priority
    status: Json = {"phase": p.phase}
    if p.conditions:
        status["conditions"] = [_pod_condition(c) for c in p.conditions]
    if p.nominated_node_name:
        status["nominatedNodeName"] = p.nominated_node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata(p.meta),
        "spec": spec,
        "status": status,
    }


def node(n: Node) -> Json:
    spec: Json = {}
    if n.taints:
        spec["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.taints]
    if n.unschedulable:
        spec["unschedulable"] = True
    status: Json = {"allocatable": resources(n.allocatable), "capacity": resources(n.capacity)}
    if n.images:
        status["images"] = [{"names": list(i.names), "sizeBytes": i.size_bytes} for i in n.images]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata(n.meta),
        "spec": spec,
        "status": status,
    }


def _pod_group_condition(c: Condition) -> Json:
    out: Json = {
        "type": c.type,
        "status": c.status,
        "reason": c.reason,
        "message": c.message,
        "transitionID": c.transition_id,
    }
    if c.last_transition_time is not None:
        out["lastTransitionTime"] = timestamp(c.last_transition_time)
    return out


def pod_group(pg: PodGroup) -> Json:
    spec: Json = {"minMember": pg.min_member, "queue": pg.queue}
    if pg.min_task_member:
        spec["minTaskMember"] = dict(pg.min_task_member)
    if pg.min_resources is not None:
        spec["minResources"] = resources(pg.min_resources)
    if pg.priority_class_name:
        spec["priorityClassName"] = pg.priority_class_name
    status: Json = {
        "phase": pg.phase,
        "running": pg.running,
        "succeeded": pg.succeeded,
        "failed": pg.failed,
    }
    if pg.conditions:
        status["conditions"] = [_pod_group_condition(c) for c in pg.conditions]
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": metadata(pg.meta),
        "spec": spec,
        "status": status,
    }


def queue(q: Queue) -> Json:
    spec: Json = {"weight": q.weight}
    optional: Json = {
        "capability": resources(q.capability),
        "deserved": resources(q.deserved),
        "guarantee": {"resource": resources(q.guarantee)} if q.guarantee else None,
        "priority": q.priority,
        "parent": q.parent,
        "affinity": q.affinity,
    }
    spec.update({k: v for k, v in optional.items() if v not in ("", None, {}, 0)})
    if q.reclaimable is not None:
        spec["reclaimable"] = q.reclaimable
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": metadata(q.meta),
        "spec": spec,
        "status": {"state": q.state},
    }


def priority_class(pc: PriorityClass) -> Json:
    out: Json = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": metadata(pc.meta),
        "value": pc.value,
        "preemptionPolicy": pc.preemption_policy,
    }
    if pc.global_default:
        out["globalDefault"] = True
    return out


def other(obj: KubeObject) -> Json:
    body = dict(obj.body)
    body.update(apiVersion=obj.api_version, kind=obj.kind, metadata=metadata(obj.meta))
    return body


def usage(nodes: Iterable[Node]) -> dict[str, Json]:
    """The nodes' measured load, which Volcano's metrics source would set on its cache."""
    return {
        n.meta.name: {
            "cpu": dict(n.usage.cpu),
            "memory": dict(n.usage.memory),
            "time": timestamp(n.usage.time),
        }
        for n in nodes
        if n.usage is not None
    }


def cluster(c: Cluster, scheduler_names: Iterable[str]) -> Json:
    """The request's cluster. Pods another scheduler places enter Volcano's cache only
    when bound (its informer's filter): the others are left out, as the cache would."""
    names = frozenset(scheduler_names)
    return {
        "nodes": [node(n) for n in c.nodes],
        "pods": [pod(p) for p in c.pods if p.scheduled_by(names) or p.node_name],
        "podGroups": [pod_group(pg) for pg in c.pod_groups],
        "queues": [queue(q) for q in c.queues],
        "priorityClasses": [priority_class(pc) for pc in c.priority_classes],
        "objects": [other(o) for o in c.objects],
        "usage": usage(c.nodes),
    }
