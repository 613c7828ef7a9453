"""Hypothesis strategies for clusters, scheduler configurations and whole specs.

For property tests of plugins and actions (``@given(strategies.specs())``) and for
``vspec fuzz``. Clusters are drawn as explicit, small objects so that Hypothesis shrinks
them object by object and a failure can be written back as a readable spec file
(:meth:`GeneratedSpec.document`). Configurations are drawn from the action and plugin
registries: random action lists, tiers, enable flags, and plugin arguments within the
ranges of :data:`ARGUMENT_RANGES` (else a small range per documented type).

:func:`register_profiles` registers the Hypothesis profiles ``dev``, ``ci`` and ``fuzz``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from vspec.errors import Location
from vspec.framework.registry import registered_actions, registered_plugins
from vspec.generate import generate_cluster
from vspec.model.conf import FLAG_KEYS, SchedulerConf, load_conf
from vspec.model.corev1 import Container, Taint, Toleration
from vspec.model.objects import (
    DEFAULT_NOW,
    GROUP_NAME_ANNOTATION,
    TASK_SPEC_KEY,
    ZERO_TIME,
    Cluster,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)
from vspec.model.spec import Spec

GI = 2**30
ZONES = ("a", "b")
TAINT = Taint("dedicated", "x", "NoSchedule")
TOLERATION = Toleration("dedicated", "Equal", "x", "NoSchedule")
PRIORITY_CLASSES = (("high", 100), ("low", 10))

# Documented ranges of plugin arguments (inclusive); others get a small range per type.
ARGUMENT_RANGES: dict[str, tuple[float, float]] = {
    "overcommit-factor": (1.0, 3.0),
    "binpack.weight": (0, 10),
    "binpack.cpu": (0, 5),
    "binpack.memory": (0, 5),
    "usage.weight": (0, 10),
    "cpu.weight": (0, 5),
    "memory.weight": (0, 5),
    "leastrequested.weight": (0, 5),
    "mostrequested.weight": (0, 5),
    "nodeaffinity.weight": (0, 5),
    "podaffinity.weight": (0, 5),
    "balancedresource.weight": (0, 5),
    "tainttoleration.weight": (0, 5),
    "imagelocality.weight": (0, 5),
    "podtopologyspread.weight": (0, 5),
}
_TYPE_RANGES: dict[str, tuple[float, float]] = {"int": (0, 10), "float": (0.0, 3.0)}
# Arguments a plugin rejects together (its documented "can not define both"): at most
# one of each group is drawn true.
EXCLUSIVE_ARGUMENTS: tuple[frozenset[str], ...] = (
    frozenset(
        {"deviceshare.GPUSharingEnable", "deviceshare.GPUNumberEnable", "deviceshare.VGPUEnable"}
    ),
)


# -- clusters ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterBounds:
    """How big drawn clusters get (the config space file's ``cluster`` key)."""

    max_nodes: int = 4
    max_queues: int = 3
    max_jobs: int = 5
    max_roles: int = 2
    max_replicas: int = 3
    # Queue guarantees easily make Volcano's proportion panic
    # (specs/findings/proportion-guarantee-panics.yaml): drawn only when asked.
    guarantees: bool = False


# Strategies are built once: Hypothesis labels each strategy object, and building fresh
# ones inside every draw dominates the cost of a small example.
_CPU = st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(3)])
_MEMORY = st.sampled_from([Fraction(0), Fraction(GI // 2), Fraction(GI), Fraction(2 * GI)])
_NODE_CPU = st.sampled_from([Fraction(1), Fraction(2), Fraction(4), Fraction(8)])
_NODE_MEMORY = st.sampled_from([Fraction(2 * GI), Fraction(4 * GI), Fraction(8 * GI)])
_NODE_PODS = st.sampled_from([Fraction(110), Fraction(2), Fraction(4)])
_ZONE = st.sampled_from(ZONES)
_BOOL = st.booleans()
_ONE_IN = {n: st.integers(0, n - 1).map(lambda v: v == 0) for n in (3, 4, 5, 6, 10)}
_SMALL = {(lo, hi): st.integers(lo, hi) for lo in (0, 1) for hi in range(1, 9)}
_TASK_PRIORITY = st.none() | st.integers(0, 3)
_NAMESPACE = st.sampled_from(["ns0", "ns1"])
_CLASS_NAME = st.sampled_from(["", *(n for n, _ in PRIORITY_CLASSES)])
_WAITING_PHASE = st.sampled_from(["Pending", "Inqueue"])
_FLAG = st.sampled_from([None, True, False])


def _int(lo: int, hi: int) -> st.SearchStrategy[int]:
    cached = _SMALL.get((lo, hi))
    return cached if cached is not None else st.integers(lo, hi)


@st.composite
def nodes(draw: st.DrawFn, index: int = 0) -> Node:
    allocatable = {"cpu": draw(_NODE_CPU), "memory": draw(_NODE_MEMORY), "pods": draw(_NODE_PODS)}
    if draw(_BOOL):
        allocatable["nvidia.com/gpu"] = Fraction(draw(_int(1, 2)))
    return Node(
        ObjectMeta(f"n{index}", labels={"zone": draw(_ZONE)}),
        allocatable=allocatable,
        capacity=dict(allocatable),
        taints=[TAINT] if draw(_ONE_IN[5]) else [],
        unschedulable=draw(_ONE_IN[10]),
    )


@st.composite
def queues(draw: st.DrawFn, index: int = 0) -> Queue:
    capability: dict[str, Fraction] = {}
    if draw(_BOOL):
        capability["cpu"] = Fraction(draw(_int(1, 8)))
    guarantee: dict[str, Fraction] = {}
    if draw(_ONE_IN[5]):
        guarantee["cpu"] = Fraction(draw(_int(1, 2)))
    return Queue(
        ObjectMeta(f"q{index}"),
        weight=draw(_int(1, 4)),
        capability=capability,
        guarantee=guarantee,
        priority=draw(_int(0, 1)),
    )


def _pods(
    draw: st.DrawFn,
    job: str,
    namespace: str,
    role: str,
    node_names: Sequence[str],
    bounds: ClusterBounds,
) -> list[Pod]:
    """One role's replicas: same requests, selector, tolerations and priority."""
    requests = {"cpu": draw(_CPU), "memory": draw(_MEMORY)}
    if draw(_ONE_IN[6]):
        requests["nvidia.com/gpu"] = Fraction(1)
    requests = {k: v for k, v in requests.items() if v}
    selector = {"zone": draw(_ZONE)} if draw(_ONE_IN[4]) else {}
    tolerations = [TOLERATION] if draw(_ONE_IN[4]) else []
    priority = draw(_TASK_PRIORITY)
    where = st.none() | st.sampled_from(node_names) if node_names else st.none()
    pods = []
    for i in range(draw(_int(1, bounds.max_replicas))):
        name = f"{job}-{role}-{i}"
        node = draw(where)
        releasing = node is not None and draw(_ONE_IN[6])
        pods.append(
            Pod(
                ObjectMeta(
                    name,
                    namespace,
                    uid=f"{namespace}-{name}",
                    labels={TASK_SPEC_KEY: role},
                    annotations={GROUP_NAME_ANNOTATION: job},
                    deletion_timestamp=DEFAULT_NOW if releasing else None,
                ),
                phase="Running" if node else "Pending",
                node_name=node or "",
                priority=priority,
                node_selector=selector,
                tolerations=tolerations,
                containers=[Container(requests=requests)],
            )
        )
    return pods


@st.composite
def _job(
    draw: st.DrawFn,
    index: int,
    queue_names: Sequence[str],
    node_names: Sequence[str],
    bounds: ClusterBounds,
) -> tuple[PodGroup, list[Pod]]:
    namespace = draw(_NAMESPACE)
    name = f"j{index}"
    queue = "missing" if draw(_ONE_IN[10]) else queue_names[draw(_int(0, len(queue_names) - 1))]
    pods: list[Pod] = []
    min_task_member: dict[str, int] = {}
    for r in range(draw(_int(1, bounds.max_roles))):
        role_pods = _pods(draw, name, namespace, f"r{r}", node_names, bounds)
        if draw(_ONE_IN[4]):
            min_task_member[f"r{r}"] = draw(_int(0, len(role_pods)))
        pods.extend(role_pods)
    running = any(p.node_name for p in pods)
    pg = PodGroup(
        ObjectMeta(name, namespace),
        queue=queue,
        min_member=draw(_int(0, len(pods))),
        min_task_member=min_task_member,
        priority_class_name=draw(_CLASS_NAME),
        phase="Running" if running else draw(_WAITING_PHASE),
    )
    if draw(_ONE_IN[4]):
        total: dict[str, Fraction] = {}
        for pod in pods[: max(pg.min_member, 1)]:
            for k, v in pod.containers[0].requests.items():
                total[k] = total.get(k, Fraction(0)) + v
        pg.min_resources = total
    return pg, pods


@st.composite
def clusters(draw: st.DrawFn, bounds: ClusterBounds = ClusterBounds()) -> Cluster:
    """Small explicit clusters: nodes with labels, taints and pod limits, weighted queues
    with capabilities, gang jobs with roles, priorities, best-effort and running pods."""
    node_list = [draw(nodes(i)) for i in range(draw(_int(1, bounds.max_nodes)))]
    queue_list = [draw(queues(i)) for i in range(draw(_int(1, bounds.max_queues)))]
    if not bounds.guarantees:
        for q in queue_list:
            q.guarantee = {}
    names = [n.meta.name for n in node_list]
    qnames = [q.meta.name for q in queue_list]
    cluster = Cluster(
        nodes=node_list,
        queues=queue_list,
        priority_classes=[PriorityClass(ObjectMeta(n), v) for n, v in PRIORITY_CLASSES],
    )
    for j in range(draw(_int(0, bounds.max_jobs))):
        pg, pods = draw(_job(j, qnames, names, bounds))
        cluster.pod_groups.append(pg)
        cluster.pods.extend(pods)
    return cluster


def generate_params(max_nodes: int = 50, max_jobs: int = 50) -> st.SearchStrategy[dict[str, Any]]:
    """Parameters in the ``cluster.generate`` vocabulary (docs/generate.md)."""
    node_shape = st.fixed_dictionaries(
        {
            "count": st.integers(1, max_nodes),
            "allocatable": st.fixed_dictionaries(
                {"cpu": st.sampled_from([2, 4, 16]), "memory": st.sampled_from(["4Gi", "64Gi"])}
            ),
            "labels": st.just({"zone": {"cycle": list(ZONES)}}),
        }
    )
    job = st.fixed_dictionaries(
        {
            "count": st.integers(0, max_jobs),
            "running": st.sampled_from([0.0, 0.2, 0.5]),
            "minAvailable": st.sampled_from(["all", 1, {"choice": ["all", 1]}]),
            "priorityClassName": st.just({"choice": ["high", "low"]}),
            "tasks": st.lists(
                st.fixed_dictionaries(
                    {
                        "name": st.sampled_from(["ps", "worker", "chief"]),
                        "replicas": st.integers(1, 4),
                        "requests": st.fixed_dictionaries(
                            {"cpu": st.sampled_from([1, "500m", {"choice": [1, 2]}])}
                        ),
                        "bestEffort": st.sampled_from([0.0, 0.3]),
                    }
                ),
                min_size=1,
                max_size=2,
                unique_by=lambda t: t["name"],
            ),
        }
    )
    return st.fixed_dictionaries(
        {
            "priorityClasses": st.just([{"name": n, "value": v} for n, v in PRIORITY_CLASSES]),
            "queues": st.lists(
                st.fixed_dictionaries({"count": st.integers(1, 3), "weight": st.integers(1, 4)}),
                min_size=1,
                max_size=1,
            ),
            "nodes": st.lists(node_shape, min_size=1, max_size=2),
            "jobs": st.lists(job, max_size=2),
        }
    )


def generated_clusters(max_nodes: int = 50, max_jobs: int = 50) -> st.SearchStrategy[Cluster]:
    """Clusters from the generator, for properties that need size more than shrinkability."""
    return st.builds(generate_cluster, generate_params(max_nodes, max_jobs), st.integers(0, 2**16))


# -- scheduler configurations ------------------------------------------------------------------


@dataclass(frozen=True)
class ConfSpace:
    """Which configurations to draw (the config space file's ``scheduler`` part).

    ``fixed`` pins the whole conf. Otherwise actions are drawn from ``actions`` (an
    ordered selection; repeats only with ``repeat_actions``), plugins from ``plugins``
    spread over 1..``max_tiers`` tiers, each flag unset/true/false when ``flags`` is
    ``"random"`` (unset when ``"default"``), each documented argument set with
    probability 1/2 when ``arguments`` is true.
    """

    fixed: Mapping[str, Any] | None = None
    actions: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    max_tiers: int = 3
    flags: str = "random"
    arguments: bool = True
    repeat_actions: bool = False
    default_plugin_flags: tuple[bool, ...] = (True, False)

    def action_pool(self) -> list[str]:
        return list(self.actions) or sorted(e.name for e in registered_actions())

    def plugin_pool(self) -> list[str]:
        return list(self.plugins) or sorted(e.name for e in registered_plugins())


def _argument_value(name: str, kind: str) -> st.SearchStrategy[Any] | None:
    lo, hi = ARGUMENT_RANGES.get(name, _TYPE_RANGES.get(kind, (0, 0)))
    if kind == "bool":
        return st.booleans()
    if kind == "int":
        return st.integers(int(lo), int(hi))
    if kind == "float":
        return st.floats(float(lo), float(hi)).map(lambda v: round(v, 2))
    if kind == "duration":
        return st.sampled_from(["0s", "30s", "5m"])
    return None  # strings, lists and maps have no documented range to draw from


@st.composite
def _plugin_entry(draw: st.DrawFn, name: str, space: ConfSpace) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name}
    if space.flags == "random":
        for key in FLAG_KEYS:
            flag = draw(_FLAG)
            if flag is not None:
                entry[key] = flag
    if space.arguments:
        specs = {e.name: e.arguments for e in registered_plugins()}.get(name, ())
        arguments: dict[str, Any] = {}
        for spec in specs:
            values = _argument_value(spec.name, spec.type)
            if values is not None and "<" not in spec.name and draw(_BOOL):
                arguments[spec.name] = draw(values)
        for group in EXCLUSIVE_ARGUMENTS:
            for extra in [k for k in arguments if k in group and arguments[k] is True][1:]:
                arguments[extra] = False
        if arguments:
            entry["arguments"] = arguments
    return entry


@st.composite
def scheduler_confs(draw: st.DrawFn, space: ConfSpace = ConfSpace()) -> dict[str, Any]:
    """A ``volcano-scheduler.conf`` mapping that Volcano accepts."""
    if space.fixed is not None:
        return dict(space.fixed)
    pool = space.action_pool()
    actions = draw(
        st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool) + 1)
        if space.repeat_actions
        else st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True)
    )
    plugins = draw(st.lists(st.sampled_from(space.plugin_pool()), min_size=1, unique=True))
    tier_count = draw(st.integers(1, max(1, min(space.max_tiers, len(plugins)))))
    cuts = (
        sorted(
            draw(st.lists(st.integers(1, len(plugins) - 1), max_size=tier_count - 1, unique=True))
        )
        if len(plugins) > 1
        else []
    )
    tiers = []
    for start, end in zip([0, *cuts], [*cuts, len(plugins)], strict=True):
        entries = [draw(_plugin_entry(name, space)) for name in plugins[start:end]]
        if any(e["name"] == "proportion" for e in entries):
            for e in entries:  # Volcano rejects drf hierarchy next to proportion in one tier
                if e["name"] == "drf":
                    e["enableHierarchy"] = False
        tiers.append({"plugins": entries})
    conf: dict[str, Any] = {"actions": ", ".join(actions), "tiers": tiers}
    if draw(st.booleans()):
        conf["configurations"] = [
            {"name": a, "arguments": {"predicateErrorCacheEnable": draw(st.booleans())}}
            for a in sorted(set(actions) & {"allocate", "backfill", "preempt"})
        ]
    if len(space.default_plugin_flags) > 1:
        conf["defaultPluginFlags"] = draw(st.sampled_from(space.default_plugin_flags))
    elif space.default_plugin_flags != (True,):
        conf["defaultPluginFlags"] = space.default_plugin_flags[0]
    return conf


def conf_from_document(raw: Mapping[str, Any]) -> SchedulerConf:
    """The conf a spec's ``scheduler`` mapping means (``defaultPluginFlags`` honoured)."""
    body = {k: v for k, v in raw.items() if k != "defaultPluginFlags"}
    return load_conf(body, default_plugin_flags=bool(raw.get("defaultPluginFlags", True)))


# -- whole specs ---------------------------------------------------------------------------------


@dataclass
class GeneratedSpec:
    """A drawn spec: the conf as written, the cluster, the run parameters."""

    scheduler: dict[str, Any]
    cluster: Cluster
    seed: int = 0
    cycles: int = 1
    verbosity: int = 3
    name: str = "generated"
    conf: SchedulerConf = field(init=False)

    def __post_init__(self) -> None:
        self.conf = conf_from_document(self.scheduler)

    def spec(self) -> Spec:
        return Spec(
            self.name,
            Location("<generated>"),
            self.conf,
            self.cluster,
            seed=self.seed,
            cycles=self.cycles,
            verbosity=self.verbosity,
        )

    def document(self, **extra: Any) -> dict[str, Any]:
        """The spec as a YAML-ready mapping in the spec format (compact objects). In
        ``bare`` cluster mode: the generated cluster is what the engine ran, nothing added."""
        doc: dict[str, Any] = {"name": self.name, **extra}
        doc.update(
            clusterMode="bare",
            seed=self.seed,
            cycles=self.cycles,
            verbosity=self.verbosity,
            scheduler=self.scheduler,
            cluster=cluster_document(self.cluster),
        )
        return doc


def specs(
    space: ConfSpace = ConfSpace(),
    bounds: ClusterBounds = ClusterBounds(),
    max_cycles: int = 2,
) -> st.SearchStrategy[GeneratedSpec]:
    return st.builds(
        GeneratedSpec,
        scheduler_confs(space),
        clusters(bounds),
        seed=st.integers(0, 2**16),
        cycles=st.integers(1, max_cycles),
        verbosity=st.sampled_from([1, 3]),
    )


# -- writing a cluster back in the spec format ------------------------------------------------


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
    if n.taints:
        doc["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.taints]
    if n.unschedulable:
        doc["unschedulable"] = True
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
    return doc


def _toleration(t: Toleration) -> dict[str, Any]:
    doc = {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}
    return {k: v for k, v in doc.items() if v}


def _pod(p: Pod) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": p.meta.name, "namespace": p.meta.namespace}
    if p.group_name:
        doc["podGroup"] = p.group_name
    labels = dict(p.meta.labels)
    role = labels.pop(TASK_SPEC_KEY, None)
    if role is not None:
        doc["taskSpec"] = role
    if labels:
        doc["labels"] = labels
    doc["phase"] = p.phase
    if p.node_name:
        doc["nodeName"] = p.node_name
    requests: dict[str, Fraction] = {}
    for c in p.containers:
        for k, v in c.requests.items():
            requests[k] = requests.get(k, Fraction(0)) + v
    if requests:
        doc["requests"] = _resources(requests)
    if p.priority is not None:
        doc["priority"] = p.priority
    if p.node_selector:
        doc["nodeSelector"] = dict(p.node_selector)
    if p.tolerations:
        doc["tolerations"] = [_toleration(t) for t in p.tolerations]
    if p.meta.deletion_timestamp is not None:
        doc["deletionTimestamp"] = _time(p.meta.deletion_timestamp)
    if p.meta.creation_timestamp != ZERO_TIME:
        doc["creationTimestamp"] = _time(p.meta.creation_timestamp)
    return doc


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
    return doc


# -- Hypothesis profiles ---------------------------------------------------------------------------


def register_profiles() -> None:
    """``dev`` (quick, the local default), ``ci`` (Hypothesis' own CI profile with few
    examples, loaded by Hypothesis itself when ``CI`` is set) and ``fuzz`` (long runs).

    Loads ``dev`` unless a profile was chosen explicitly (``HYPOTHESIS_PROFILE`` or
    ``--hypothesis-profile``, which the pytest plugin applies after this) or ``CI`` is set.
    """
    slow = [HealthCheck.too_slow, HealthCheck.data_too_large]
    settings.register_profile("dev", max_examples=15, deadline=None, suppress_health_check=slow)
    settings.register_profile(
        "ci", settings.get_profile("ci"), max_examples=25, suppress_health_check=slow
    )
    settings.register_profile(
        "fuzz", max_examples=2000, deadline=None, suppress_health_check=slow, print_blob=True
    )
    explicit = os.environ.get("HYPOTHESIS_PROFILE")
    if explicit:
        settings.load_profile(explicit)
    elif settings.get_current_profile_name() == "ci":
        settings.load_profile("ci")  # Hypothesis chose it (CI is set): re-load ours
    else:
        settings.load_profile("dev")
