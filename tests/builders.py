"""The test suite's one set of builders, for the Kubernetes layer, plugin, property and
invariant tests.

They mirror Volcano's ``util.Build*`` test helpers and share their argument order,
namespace and name first (``pod(namespace, name, group, requests)``, as ``BuildPod``), pod
UID ``<ns>-<name>``, zero creation timestamps, node capacity = allocatable, so a unit test
reads like its Go counterpart. ``session`` opens a real session (plugins' OnSessionOpen
run, no action) the way Volcano's ``uthelper`` does.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from vspec.api.job_info import JobInfo
from vspec.api.task_info import TaskInfo
from vspec.engines import get_engine
from vspec.framework.cache import SchedulerCache
from vspec.framework.framework import open_session
from vspec.framework.log import Klog
from vspec.framework.scheduler import simulate
from vspec.framework.session import SchedulerState, Session
from vspec.invariants import InvariantInputs, get
from vspec.k8s.nodeinfo import K8sNodeInfo, Snapshot
from vspec.model.changes import Changed
from vspec.model.conf import SchedulerOptions, load_conf
from vspec.model.corev1 import (
    Condition,
    Container,
    ContainerImage,
    Taint,
    Toleration,
    parse_affinity,
    parse_container,
    parse_resource_list,
    parse_taint,
    parse_toleration,
    parse_topology_spread_constraint,
)
from vspec.model.objects import (
    GROUP_NAME_ANNOTATION,
    Cluster,
    KubeObject,
    Node,
    NodeUsage,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)
from vspec.model.result import SimulationResult
from vspec.plugins.logprint import pending_text, ready_text

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def node(
    name: str,
    allocatable: Mapping[str, Any] | None = None,
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    usage: NodeUsage | None = None,
    taints: Sequence[Taint | Mapping[str, Any]] = (),
    unschedulable: bool = False,
    images: list[tuple[list[str], int]] | None = None,
) -> Node:
    """A node with ``allocatable`` (4 CPUs, 8Gi, 110 pods unless given) as its capacity too."""
    resources = parse_resource_list(allocatable or {"cpu": 4, "memory": "8Gi", "pods": 110})
    return Node(
        ObjectMeta(name, labels=dict(labels or {}), annotations=dict(annotations or {})),
        allocatable=resources,
        capacity=dict(resources),
        usage=usage,
        taints=[t if isinstance(t, Taint) else parse_taint(t) for t in taints],
        unschedulable=unschedulable,
        images=[ContainerImage(tuple(names), size) for names, size in images or ()],
    )


def pod(
    namespace: str,
    name: str,
    group: str = "",
    requests: Mapping[str, Any] | None = None,
    *,
    phase: str | None = None,
    node_name: str = "",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    priority: int | None = None,
    conditions: list[Condition] | None = None,
    limits: Mapping[str, Any] | None = None,
    containers: list[dict[str, Any]] | None = None,
    tolerations: Sequence[Toleration | Mapping[str, Any]] = (),
    affinity: dict[str, Any] | None = None,
    node_selector: Mapping[str, str] | None = None,
    spread: list[dict[str, Any]] | None = None,
    deleting: bool = False,
    preemption_policy: str = "",
) -> Pod:
    """A pod of job ``<namespace>/<group>`` (none when ``group`` is empty); Running when
    placed on ``node_name``, Pending otherwise, unless ``phase`` says."""
    notes = dict(annotations or {})
    if group:
        notes[GROUP_NAME_ANNOTATION] = group
    if containers is not None:
        parsed = [parse_container(c) for c in containers]
    else:
        reqs, lims = parse_resource_list(requests), parse_resource_list(limits)
        parsed = [Container(requests=reqs, limits=lims)]
    meta = ObjectMeta(
        name, namespace, uid=f"{namespace}-{name}", labels=dict(labels or {}), annotations=notes
    )
    if deleting:
        meta.deletion_timestamp = NOW
    return Pod(
        meta,
        phase=phase or ("Running" if node_name else "Pending"),
        node_name=node_name,
        priority=priority,
        preemption_policy=preemption_policy,
        containers=parsed,
        conditions=list(conditions or []),
        affinity=parse_affinity(affinity),
        tolerations=[t if isinstance(t, Toleration) else parse_toleration(t) for t in tolerations],
        node_selector=dict(node_selector or {}),
        topology_spread_constraints=[parse_topology_spread_constraint(c) for c in spread or ()],
    )


def pod_group(
    namespace: str,
    name: str,
    queue: str,
    *,
    min_member: int = 0,
    phase: str = "Pending",
    priority_class: str = "",
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
        priority_class_name=priority_class,
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
    reclaimable: bool | None = None,
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
        reclaimable=reclaimable,
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


def printed(ssn: Session) -> list[str]:
    """The job lines of one ``print`` of every session job (logprint's tests)."""
    before = len(ssn.log.lines)
    ssn.print_jobs(list(ssn.jobs.values()))
    return [line.text for line in list(ssn.log.lines)[before:]]


def printed_afresh(*jobs: JobInfo) -> list[str]:
    """The lines logprint prints for ``jobs``, rendered from scratch (nothing kept)."""
    lines = []
    for job in jobs:
        if job.is_pending():
            lines.append(pending_text(job.namespace, job.name))
        if job.is_ready():
            lines.append(ready_text(job.namespace, job.name, job.go_string()))
    return lines


def group_of(job: JobInfo) -> PodGroup:
    """The job's pod group, which the test gave it."""
    assert job.pod_group is not None
    return job.pod_group


def task(ssn: Session, key: str) -> Any:
    """The session's TaskInfo of pod ``ns/name``."""
    for job in ssn.jobs.values():
        for t in job.tasks.values():
            if t.key == key:
                return t
    raise KeyError(key)


def cluster(
    nodes: list[Node],
    pods: list[Pod],
    groups: list[PodGroup],
    *,
    queues: list[Queue] | None = None,
    classes: list[PriorityClass] | None = None,
) -> Cluster:
    """A cluster of the given objects; with no queues given, one queue ``q``."""
    return Cluster(
        nodes=nodes,
        pods=pods,
        pod_groups=groups,
        queues=queues if queues is not None else [Queue(ObjectMeta("q"))],
        priority_classes=classes or [],
    )


def node_info(node: Node, *pods: Pod) -> K8sNodeInfo:
    info = K8sNodeInfo(node)
    for p in pods:
        info.add_task(TaskInfo(p))
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


def run(
    conf: dict[str, Any],
    world: Cluster,
    *,
    default_flags: bool = True,
    cycles: int = 1,
    verbosity: int = 3,
) -> tuple[InvariantInputs, SimulationResult]:
    """A run of the Python engine (seed 3) and the inputs an invariant checks it against."""
    c = load_conf(conf, default_plugin_flags=default_flags)
    result = simulate(c, world, seed=3, cycles=cycles, verbosity=verbosity)
    return InvariantInputs(c, world, 3, None, cycles, verbosity, engine=get_engine()), result


def violations(name: str, inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    inv = get(name)
    assert inv is not None
    return inv.check(inputs, result)


def less_once(items: Sequence[Any], taken: Sequence[Any]) -> list[Any]:
    """``items`` less one occurrence (by identity) of each of ``taken``, in order: what a
    change of a list of model objects left in place."""
    left: dict[int, int] = {}
    for item in taken:
        left[id(item)] = left.get(id(item), 0) + 1
    kept = []
    for item in items:
        if left.get(id(item)):
            left[id(item)] -= 1
        else:
            kept.append(item)
    return kept


def check_changes(
    before: Sequence[Any], after: Sequence[Any], gone: Sequence[Any], added: Sequence[Any]
) -> None:
    """``after`` is ``before`` less ``gone`` (each an element of it) plus ``added``, by
    identity, the elements left in place in the same order (what a change report says)."""
    counted = Counter(map(id, before))
    counted.subtract(map(id, gone))
    assert all(n >= 0 for n in counted.values())
    counted.update(map(id, added))
    assert +counted == Counter(map(id, after))
    assert list(map(id, less_once(before, gone))) == list(map(id, less_once(after, added)))


T = TypeVar("T")
# How a drawn change report errs (:func:`told_report`): as its maker would tell it, or not.
REPORT_LIES = ("none", "drop gone", "extra gone", "extra added", "drop added", "reversed")


def told_report(before: list[T], after: list[T], lie: str, at: int) -> Changed[T]:
    """The change report (vspec.model.changes) of ``before`` to ``after``, by identity in
    each list's order, as its maker would tell it (``lie`` "none"), or naming a gone
    object less or one that did not go, an unchanged object as added or an added one
    less (the ``at``-th), or listing them backwards: what a consumer that checks a
    report instead of trusting it must come through unchanged."""
    gone = [x for x in before if all(x is not y for y in after)]
    added = [x for x in after if all(x is not y for y in before)]
    if lie == "drop gone" and gone:
        del gone[at % len(gone)]
    elif lie == "extra gone" and before:
        gone.append(before[at % len(before)])
    elif lie == "extra added" and after:
        added.append(after[at % len(after)])
    elif lie == "drop added" and added:
        del added[at % len(added)]
    elif lie == "reversed":
        gone.reverse()
        added.reverse()
    return Changed(before, after, len(after), gone, {id(x): x for x in added})
