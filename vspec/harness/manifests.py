"""Full Kubernetes manifests (as ``kubectl get -o yaml`` prints them) -> model objects.

Any entry of ``nodes``, ``pods``, ``podGroups``, ``queues`` and ``priorityClasses`` may be
a manifest instead of the compact form; ``kind: List`` is expanded. Only what the
scheduler reads is converted; the rest of a manifest (managedFields, container statuses,
volumes, ...) is accepted by the schema and ignored. The value converters here
(quantities, times, conditions) are shared with the compact forms, so both report a bad
value at its own file:line and key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from fractions import Fraction
from functools import lru_cache
from typing import Any

from vspec.harness.yamlload import At, copied
from vspec.model.corev1 import (
    Condition,
    Container,
    ContainerImage,
    ResourceList,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    parse_affinity,
    parse_container,
    parse_taint,
    parse_toleration,
    parse_topology_spread_constraint,
)
from vspec.model.objects import (
    ZERO_TIME,
    KubeObject,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)
from vspec.model.quantity import QuantityError, parse_quantity

DEFAULT_NAMESPACE = "default"
_FRACTION = re.compile(r"\.(\d+)")


def is_manifest(raw: Any) -> bool:
    """An entry is a manifest when it names an ``apiVersion`` or a ``kind``."""
    return isinstance(raw, dict) and ("apiVersion" in raw or "kind" in raw)


def expand(raw: Any, at: At, kind: str | None) -> Iterator[tuple[Any, At]]:
    """The entry itself, or each item of a ``kind: List`` manifest (or ``<kind>List``, as
    the API server returns a list of ``kind``), with its place. Where any kind may stand
    (``kind`` None: an included file, ``objects``), every list kind is expanded, lists in
    lists too, as ``kubectl apply -f`` flattens them."""
    if not is_list(raw, kind):
        yield raw, at
        return
    for index, item in enumerate(raw["items"]):
        if kind is None:
            yield from expand(item, at / "items" / index, None)
        else:
            yield item, at / "items" / index


def is_list(raw: Any, kind: str | None = None) -> bool:
    """A list manifest: ``List``, or ``<kind>List`` (any ``...List`` when ``kind`` is
    None), holding ``items``."""
    if not isinstance(raw, dict) or "items" not in raw:
        return False
    list_kind = raw.get("kind")
    if kind is not None:
        return list_kind in ("List", f"{kind}List")
    return isinstance(list_kind, str) and list_kind.endswith("List")


# -- values ----------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _quantity(raw: str | int | float, kind: str) -> Fraction:
    """``parse_quantity`` memoized: a big cluster repeats a handful of values ("500m")
    thousands of times, and building a Fraction is the dearest step of loading a pod.
    ``kind`` (the type's name) keeps 1 and 1.0 apart."""
    return parse_quantity(raw)


def resource_list(raw: Mapping[str, Any] | None, at: At) -> ResourceList:
    """Quantities by resource name; an absurd one is an error at its own key."""
    out: ResourceList = {}
    for name, value in (raw or {}).items():
        try:
            out[name] = _quantity(value, type(value).__name__)
        except QuantityError as exc:
            raise (at / name).error(f"absurd quantity: {exc}") from None
    return out


LAST_YEAR = 9999  # a time in the last year of datetime's range leaves no room to add to


def timestamp(raw: Any, at: At) -> datetime | None:
    """An RFC 3339 time (the schema checked its shape); None for null."""
    if raw is None:
        return None
    text = str(raw).strip().replace("t", "T").replace("z", "Z").replace(" ", "T", 1)
    # Kubernetes may print nanoseconds; datetime keeps microseconds.
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), text, count=1)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise at.error(f"{raw!r} is not an RFC 3339 time: {exc}") from None
    if parsed.tzinfo is not None and parsed.year >= LAST_YEAR:
        # Sessions add durations to times (cycles, windows): 9999-12-31 + 1 s overflows.
        raise at.error(f"{raw!r} is too late: vspec computes with times before {LAST_YEAR}")
    return parsed


def creation_time(raw: Any, at: At) -> datetime:
    return timestamp(raw, at) or ZERO_TIME


def conditions(raw: list[Any] | None, at: At) -> list[Condition]:
    return [
        Condition(
            type=str(c["type"]),
            status=str(c.get("status", "True")),
            reason=str(c.get("reason", "")),
            message=str(c.get("message", "")),
            transition_id=str(c.get("transitionID", "")),
            last_transition_time=timestamp(
                c.get("lastTransitionTime"), at / i / "lastTransitionTime"
            ),
        )
        for i, c in enumerate(raw or ())
    ]


def tolerations(raw: list[Any] | None) -> list[Toleration]:
    return [parse_toleration(t) for t in raw or ()]


def taints(raw: list[Any] | None) -> list[Taint]:
    return [parse_taint(t) for t in raw or ()]


def spread_constraints(raw: list[Any] | None) -> list[TopologySpreadConstraint]:
    return [parse_topology_spread_constraint(c) for c in raw or ()]


def container(raw: Mapping[str, Any], at: At) -> Container:
    resources = raw.get("resources") or {}
    out = parse_container({k: v for k, v in raw.items() if k != "resources"})
    out.requests = resource_list(resources.get("requests"), at / "resources" / "requests")
    out.limits = resource_list(resources.get("limits"), at / "resources" / "limits")
    return out


def strings(raw: Mapping[str, Any] | None) -> dict[str, str]:
    return dict(raw) if raw else {}


# -- manifests -------------------------------------------------------------------------


def object_meta(
    raw: Mapping[str, Any], at: At, *, namespaced: bool, uid: str | None = None
) -> ObjectMeta:
    """``metadata`` of the manifest ``raw``; a namespaced object without a namespace is in
    "default". ``uid`` is the default when the manifest gives none (None: the builders'
    ``<namespace>-<name>``)."""
    meta, m = raw["metadata"], at / "metadata"
    name = str(meta["name"])
    namespace = str(meta.get("namespace") or DEFAULT_NAMESPACE) if namespaced else ""
    default_uid = f"{namespace}-{name}" if uid is None else uid
    return ObjectMeta(
        name=name,
        namespace=namespace,
        uid=str(meta.get("uid") or default_uid),
        labels=strings(meta.get("labels")),
        annotations=strings(meta.get("annotations")),
        creation_timestamp=creation_time(meta.get("creationTimestamp"), m / "creationTimestamp"),
        deletion_timestamp=timestamp(meta.get("deletionTimestamp"), m / "deletionTimestamp"),
        location=at.location(),
    )


def pod_from_manifest(raw: Mapping[str, Any], at: At) -> Pod:
    """A Pod; its UID defaults to ``<namespace>-<name>`` as in Volcano's test builders."""
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    s, st = at / "spec", at / "status"
    pod = Pod(
        meta=object_meta(raw, at, namespaced=True),
        phase=str(status.get("phase") or "Pending"),
        node_name=str(spec.get("nodeName") or ""),
        priority=None if spec.get("priority") is None else int(spec["priority"]),
        priority_class_name=str(spec.get("priorityClassName") or ""),
        preemption_policy=str(spec.get("preemptionPolicy") or ""),
        node_selector=strings(spec.get("nodeSelector")),
        tolerations=tolerations(spec.get("tolerations")),
        affinity=parse_affinity(spec.get("affinity")),
        topology_spread_constraints=spread_constraints(spec.get("topologySpreadConstraints")),
        containers=[
            container(c, s / "containers" / i) for i, c in enumerate(spec.get("containers") or ())
        ],
        init_containers=[
            container(c, s / "initContainers" / i)
            for i, c in enumerate(spec.get("initContainers") or ())
        ],
        overhead=resource_list(spec.get("overhead"), s / "overhead"),
        scheduling_gates=[str(g["name"]) for g in spec.get("schedulingGates") or ()],
        conditions=conditions(status.get("conditions"), st / "conditions"),
        nominated_node_name=str(status.get("nominatedNodeName") or ""),
    )
    if spec.get("schedulerName"):
        pod.scheduler_name = str(spec["schedulerName"])
    return pod


def node_from_manifest(raw: Mapping[str, Any], at: At) -> Node:
    """A Node exactly as written: no ``pods`` default, capacity not copied."""
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    st = at / "status"
    return Node(
        meta=object_meta(raw, at, namespaced=False, uid=""),
        allocatable=resource_list(status.get("allocatable"), st / "allocatable"),
        capacity=resource_list(status.get("capacity"), st / "capacity"),
        taints=taints(spec.get("taints")),
        unschedulable=bool(spec.get("unschedulable", False)),
        images=[
            ContainerImage(tuple(str(n) for n in i.get("names") or ()), int(i.get("sizeBytes", 0)))
            for i in status.get("images") or ()
        ],
    )


def pod_group_from_manifest(
    raw: Mapping[str, Any], at: At, *, default_queue: str = "default"
) -> PodGroup:
    """A PodGroup; without ``status.phase`` its phase is "" (Go's zero value), as a
    PodGroup no controller has touched; without a queue it is in the scheduler's
    ``--default-queue``."""
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    min_resources = spec.get("minResources")
    return PodGroup(
        meta=object_meta(raw, at, namespaced=True, uid=""),
        queue=str(spec.get("queue") or default_queue),
        min_member=int(spec.get("minMember") or 0),
        min_task_member={str(k): int(v) for k, v in (spec.get("minTaskMember") or {}).items()},
        min_resources=None
        if min_resources is None
        else resource_list(min_resources, at / "spec" / "minResources"),
        priority_class_name=str(spec.get("priorityClassName") or ""),
        phase=str(status.get("phase") or ""),
        conditions=conditions(status.get("conditions"), at / "status" / "conditions"),
        running=int(status.get("running") or 0),
        succeeded=int(status.get("succeeded") or 0),
        failed=int(status.get("failed") or 0),
    )


def queue_from_manifest(raw: Mapping[str, Any], at: At) -> Queue:
    """A Queue; an unset weight is 1 and an unset state Open, as Volcano's admission and
    queue controller leave every stored Queue (an explicit ``weight: 0`` is kept)."""
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    s = at / "spec"
    affinity = spec.get("affinity")
    return Queue(
        meta=object_meta(raw, at, namespaced=False, uid=""),
        weight=int(spec["weight"]) if spec.get("weight") is not None else 1,
        capability=resource_list(spec.get("capability"), s / "capability"),
        deserved=resource_list(spec.get("deserved"), s / "deserved"),
        guarantee=resource_list(
            (spec.get("guarantee") or {}).get("resource"), s / "guarantee" / "resource"
        ),
        priority=int(spec.get("priority") or 0),
        parent=str(spec.get("parent") or ""),
        state=str(status.get("state") or "Open"),
        reclaimable=spec.get("reclaimable"),
        affinity=None if affinity is None else copied(affinity),
    )


def priority_class_from_manifest(raw: Mapping[str, Any], at: At) -> PriorityClass:
    return PriorityClass(
        meta=object_meta(raw, at, namespaced=False, uid=""),
        value=int(raw.get("value") or 0),
        global_default=bool(raw.get("globalDefault", False)),
        preemption_policy=str(raw.get("preemptionPolicy") or "PreemptLowerPriority"),
    )


def object_from_manifest(raw: Mapping[str, Any], at: At) -> KubeObject:
    """Any other manifest, kept whole for the plugins that read it; its namespace is as
    written ("" when none: vspec does not know which kinds are namespaced)."""
    meta_raw = raw["metadata"]
    meta = ObjectMeta(
        name=str(meta_raw["name"]),
        namespace=str(meta_raw.get("namespace") or ""),
        uid=str(meta_raw.get("uid") or ""),
        labels=strings(meta_raw.get("labels")),
        annotations=strings(meta_raw.get("annotations")),
        creation_timestamp=creation_time(
            meta_raw.get("creationTimestamp"), at / "metadata" / "creationTimestamp"
        ),
        location=at.location(),
    )
    return KubeObject(str(raw["apiVersion"]), str(raw["kind"]), meta, copied(dict(raw)))
