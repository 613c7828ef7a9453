"""What the plugins beyond the core read, drawn onto a cluster (:func:`featured`), and
their structured arguments (:func:`structured_arguments`): the ``plugins`` space.

A cluster drawn by :mod:`~vspec.fuzz.strategies.cluster` holds what priority, gang, drf,
proportion, capacity, predicates, nodeorder and binpack read. The other plugins read
annotations, labels, node metrics and objects of their own: NUMA topologies
(``numa-aware``), task-topology affinities, revocable zones and disruption budgets
(``tdm``), ResourceQuotas (``resourcequota``), cooldowns (``cdp``), node usage
(``usage``, ``rescheduling``), PodDisruptionBudgets (``pdb``), node groups
(``nodegroup``), queue hierarchies (``drf``), queue states; and answers of an
extender (:mod:`vspec.fuzz.extender`, driven by annotations, the ``extender`` plugin).
Each is drawn per object with one :class:`Dice`, so Hypothesis shrinks it decision by
decision like the rest of the cluster. Imports the cluster vocabulary and the model.
"""

from __future__ import annotations

import functools
import math
from datetime import timedelta
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from vspec.fuzz.strategies.cluster import GI
from vspec.fuzz.strategies.dice import Dice, weighted_pool
from vspec.model.corev1 import Condition, LabelSelector, TopologySpreadConstraint
from vspec.model.objects import (
    DEFAULT_NOW,
    QUEUE_NAME_ANNOTATION,
    TASK_SPEC_KEY,
    Cluster,
    KubeObject,
    Node,
    NodeUsage,
    ObjectMeta,
    Pod,
    PodGroup,
    Queue,
)

# The keys the plugins read (named here, not imported from them: a strategy knows the
# spec vocabulary, not a plugin's module).
NUMA_POLICY = "volcano.sh/numa-topology-policy"
PREEMPTABLE = "volcano.sh/preemptable"
REVOCABLE_ZONE = "volcano.sh/revocable-zone"
JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
COOLDOWN = "volcano.sh/cooldown-time"
NODE_GROUP = "volcano.sh/nodegroup-name"
HIERARCHY = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS = "volcano.sh/hierarchy-weights"
TOPOLOGY_AFFINITY = "volcano.sh/task-topology-affinity"
TOPOLOGY_ANTI_AFFINITY = "volcano.sh/task-topology-anti-affinity"
TOPOLOGY_ORDER = "volcano.sh/task-topology-task-order"
# What the fake extender answers from (vspec.fuzz.extender).
EXTENDER_VERDICT = "extender.vspec.io/verdict"
EXTENDER_SCORE = "extender.vspec.io/score"
GPU_MEMORY = "volcano.sh/gpu-memory"
GPU_NUMBER = "volcano.sh/gpu-number"
_GPU_MEMORY = (Fraction(6000), Fraction(10000), Fraction(16001))
_SPREAD_KEYS = ("zone", "kubernetes.io/hostname")

ZONE = "rz"  # the revocable zone drawn nodes are in
NODE_GROUPS = ("g0", "g1")
_TOPOLOGY_POLICIES = ("single-numa-node", "best-effort", "restricted", "none")
_CPU_POLICIES = weighted_pool((4, "static"), (1, "none"))
_POD_NUMA = weighted_pool((2, ""), (2, "single-numa-node"), (1, "best-effort"))
_POD_NUMA_MORE = ("restricted", "none")
_PERCENTS = (0.0, 10.0, 35.5, 50.0, 79.0, 81.0, 95.0)
# Metrics fresh (the clock's), a little old, or stale (usage ignores them past 5 minutes).
_METRIC_AGES = weighted_pool((3, 0), (1, 2), (1, 30))
_COOLDOWNS = weighted_pool((3, "10m"), (1, "30s"), (1, "1h"), (1, "soon"))
_SCHEDULED_AGO = (timedelta(seconds=20), timedelta(minutes=5), timedelta(hours=2))
_BUDGETS = ("1", "2", "50%", "0", "x%")
_STATES = weighted_pool((6, "Open"), (1, "Closed"), (1, "Closing"))
_VERDICTS = weighted_pool((4, ""), (1, "reject"), (1, "fail"))

_NODE_BYTES = 23
_QUEUE_BYTES = 10
_GROUP_BYTES = 16
_POD_BYTES = 15


def _numa_topology(dice: Dice, node: Node) -> KubeObject:
    """The node's Numatopology: 2 NUMA nodes (1 in 4: one), its CPUs 2 per core, some
    taken (allocatable a subset), kubelet policies drawn (12 bytes)."""
    cpus = max(2, int(Fraction(node.allocatable.get("cpu", Fraction(2)))))
    numas = 1 if dice.one_in(4) else 2
    cpu_policy, topology_policy = dice.pick(_CPU_POLICIES), dice.pick(_TOPOLOGY_POLICIES)
    taken = [dice.one_in(4) for _ in range(8)]
    reserved = dice.one_in(5)
    free = [c for c in range(cpus) if not taken[c % 8]]
    detail = {
        str(c): {"numa": c * numas // cpus, "socket": c * numas // cpus, "core": c // 2}
        for c in range(cpus)
    }
    spec: dict[str, Any] = {
        "policies": {"CPUManagerPolicy": cpu_policy, "TopologyManagerPolicy": topology_policy},
        "numares": {"cpu": {"allocatable": _cpuset(free), "capacity": cpus}},
        "cpuDetail": detail,
    }
    if reserved:
        spec["resReserved"] = {"cpu": "1"}
    version = "nodeinfo.volcano.sh/v1alpha1"
    body = {
        "apiVersion": version,
        "kind": "Numatopology",
        "metadata": {"name": node.meta.name},
        "spec": spec,
    }
    return KubeObject(version, "Numatopology", ObjectMeta(node.meta.name), body)


def _cpuset(cpus: list[int]) -> str:
    return ",".join(str(c) for c in cpus)


def _decorate_node(dice: Dice, node: Node, objects: list[KubeObject]) -> None:
    """Revocable zone, node group, usage metrics, NUMA topology, extender answers,
    shared GPUs (``_NODE_BYTES``)."""
    labels = node.meta.labels
    if dice.one_in(3):
        labels[REVOCABLE_ZONE] = ZONE
    group, grouped = dice.pick(NODE_GROUPS), dice.one_in(2)
    if grouped:
        labels[NODE_GROUP] = group
    metered, cpu, memory = dice.one_in(2), dice.pick(_PERCENTS), dice.pick(_PERCENTS)
    age = dice.pick(_METRIC_AGES)
    if metered:
        node.usage = NodeUsage(
            cpu={"5m": cpu, "10m": cpu},
            memory={"5m": memory, "10m": memory},
            time=DEFAULT_NOW - timedelta(minutes=age),
        )
    verdict, score = dice.pick(_VERDICTS), dice.below(4)
    if verdict:
        labels[EXTENDER_VERDICT] = verdict
    if score:
        labels[EXTENDER_SCORE] = str(25 * score)
    with_numa = dice.one_in(2)
    numa = _numa_topology(dice, node)  # rolled either way (Dice's rule)
    if with_numa:
        objects.append(numa)
    if dice.one_in(3):  # GPUs deviceshare shares out by memory or by number
        shared = {GPU_NUMBER: Fraction(2), GPU_MEMORY: Fraction(16000)}
        node.allocatable.update(shared)
        node.capacity.update(shared)


def _decorate_queue(dice: Dice, queue: Queue, root: bool) -> None:
    """State, hDRF path and weights, node-group affinity (``_QUEUE_BYTES``)."""
    state = dice.pick(_STATES)
    if not root:
        queue.state = state
    deep, weight, inner = dice.one_in(3), 1 + dice.below(4), 1 + dice.below(3)
    if dice.one_in(2) and not root:
        path = f"root/sci/{queue.meta.name}" if deep else f"root/{queue.meta.name}"
        weights = f"1/{inner}/{weight}" if deep else f"1/{weight}"
        queue.meta.annotations.update({HIERARCHY: path, HIERARCHY_WEIGHTS: weights})
    kinds = [dice.below(3) for _ in range(4)]
    if dice.one_in(2) and not root:
        queue.affinity = _group_affinity(kinds)


def _group_affinity(kinds: list[int]) -> dict[str, Any]:
    """nodeGroupAffinity and nodeGroupAntiAffinity, each group required (2), preferred (1)
    or absent (0), per section."""
    out: dict[str, Any] = {}
    for section, picks in (
        ("nodeGroupAffinity", kinds[:2]),
        ("nodeGroupAntiAffinity", kinds[2:]),
    ):
        required = [g for g, k in zip(NODE_GROUPS, picks, strict=True) if k == 2]
        preferred = [g for g, k in zip(NODE_GROUPS, picks, strict=True) if k == 1]
        body: dict[str, Any] = {}
        if required:
            body["requiredDuringSchedulingIgnoredDuringExecution"] = required
        if preferred:
            body["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
        if body:
            out[section] = body
    return out


def _decorate_group(dice: Dice, pg: PodGroup, roles: list[str]) -> None:
    """Preemptable and revocable-zone annotations, tdm's disruption budget, task-topology
    affinities, an extender's enqueue verdict, Pending for enqueue, minResources for
    resourcequota (13 bytes;
    ``_budget`` takes the other 3 of ``_GROUP_BYTES``)."""
    notes = pg.meta.annotations
    preemptable, value = dice.one_in(3), dice.one_in(3)
    if preemptable:
        notes[PREEMPTABLE] = "false" if value else "true"
    if dice.one_in(4):
        notes[REVOCABLE_ZONE] = "*"
    budget_kind, budget = dice.below(4), dice.pick(_BUDGETS)
    if budget_kind == 1:
        notes[JDB_MIN_AVAILABLE] = budget
    elif budget_kind == 2:
        notes[JDB_MAX_UNAVAILABLE] = budget
    topology, pattern, anti, order_too = (
        dice.one_in(2),
        dice.below(4),
        dice.below(3),
        dice.one_in(2),
    )
    if topology and roles:
        _topology(notes, roles, pattern, anti)
        if order_too:
            notes[TOPOLOGY_ORDER] = ",".join(reversed(roles))
    if dice.one_in(6):
        notes[EXTENDER_VERDICT] = "reject"
    waiting = dice.one_in(3)
    if waiting and pg.phase == "Inqueue":  # enqueue's business
        pg.phase = "Pending"
    floor, cpu = dice.one_in(2), 1 + dice.below(4)
    if floor and pg.min_resources is None:
        pg.min_resources = {"cpu": Fraction(cpu), "memory": Fraction(cpu * GI // 2)}


def _topology(notes: dict[str, str], roles: list[str], pattern: int, anti: int) -> None:
    """Task-topology rules over the job's roles: all together, each alone (self-affinity),
    one group per role, or a role twice (which the plugin refuses); as affinity (0),
    anti-affinity (1) or one of each (2)."""
    groups = [
        ",".join(roles),
        roles[0],
        ";".join(roles),
        f"{roles[0]},{roles[0]}",
    ][pattern]
    if anti in (0, 2):
        notes[TOPOLOGY_AFFINITY] = groups
    if anti in (1, 2):
        notes[TOPOLOGY_ANTI_AFFINITY] = roles[-1] if anti == 2 else groups


def _decorate_pod(dice: Dice, pod: Pod, pg: PodGroup | None) -> None:
    """Queue name, NUMA policy (with limits, so the pod may be Guaranteed), a cooldown
    and when it was scheduled, preemptable, a topology spread over zones or nodes (a
    pending pod), shared GPUs one time in four (``_POD_BYTES``)."""
    notes = pod.meta.annotations
    role = pod.meta.labels.get(TASK_SPEC_KEY)
    if role:  # Volcano's job controller writes the role as an annotation too
        notes[TASK_SPEC_KEY] = role
    unnamed = dice.one_in(4)
    if pg is not None and not unnamed:
        notes[QUEUE_NAME_ANNOTATION] = pg.queue
    policy, more, other = dice.pick(_POD_NUMA), dice.pick(_POD_NUMA_MORE), dice.one_in(2)
    guaranteed = dice.one_in(2)
    policy = more if policy == "best-effort" and other else policy
    if policy:
        notes[NUMA_POLICY] = policy
    if guaranteed and pod.containers and not pod.node_name:
        # Guaranteed, whole CPUs (what the kubelet pins): the request rounded up to one
        # or more cores, memory kept (half a GiB if none), limits the same.
        container = pod.containers[0]
        cpu = max(Fraction(1), Fraction(math.ceil(container.requests.get("cpu", Fraction(0)))))
        whole = {"cpu": cpu, "memory": container.requests.get("memory") or Fraction(GI // 2)}
        container.requests.update(whole)
        container.limits = dict(whole)
    cooling, cooldown, ago = dice.one_in(2), dice.pick(_COOLDOWNS), dice.pick(_SCHEDULED_AGO)
    if cooling and pod.node_name:
        notes[COOLDOWN] = cooldown
        pod.conditions = [Condition("PodScheduled", "True", last_transition_time=DEFAULT_NOW - ago)]
    marked, value = dice.one_in(5), dice.one_in(2)
    if marked:
        notes[PREEMPTABLE] = "false" if value else "true"
    spread, key, hard = dice.one_in(4), dice.pick(_SPREAD_KEYS), dice.one_in(2)
    if spread and not pod.node_name:
        job = pod.meta.labels.get("job", "")
        pod.topology_spread_constraints = [
            TopologySpreadConstraint(
                1,
                key,
                "DoNotSchedule" if hard else "ScheduleAnyway",
                LabelSelector(match_labels=(("job", job),)),
            )
        ]
    device, memory = dice.below(8), dice.pick(_GPU_MEMORY)
    if device >= 6 and pod.containers:  # a limit, and the request Kubernetes defaults from it
        wanted = {GPU_MEMORY: memory} if device == 6 else {GPU_NUMBER: Fraction(1)}
        container = pod.containers[0]
        container.requests.update(wanted)
        container.limits = {**container.limits, **wanted}


def _quota(dice: Dice, namespace: str) -> KubeObject | None:
    """A ResourceQuota of ``namespace``, or none (3 bytes)."""
    present, cpu, memory = dice.one_in(2), 1 + dice.below(6), dice.below(3)
    if not present:
        return None
    hard: dict[str, Any] = {"cpu": str(cpu)}
    if memory:
        hard["memory"] = f"{memory}Gi"
    used = {"cpu": str(cpu // 2)}
    body = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": f"quota-{namespace}", "namespace": namespace},
        "spec": {"hard": hard},
        "status": {"hard": hard, "used": used},
    }
    return KubeObject("v1", "ResourceQuota", ObjectMeta(f"quota-{namespace}", namespace), body)


def _budget(dice: Dice, pg: PodGroup) -> KubeObject | None:
    """A PodDisruptionBudget over the job's pods (their ``job`` label), or none (3 bytes)."""
    present, allowed, disrupted = dice.one_in(3), dice.below(3), dice.one_in(4)
    if not present:
        return None
    name = f"pdb-{pg.meta.name}"
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {f"{pg.meta.name}-r0-0": "2025-01-01T00:00:00Z"}
    body = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": pg.meta.namespace},
        "spec": {"selector": {"matchLabels": {"job": pg.meta.name}}},
        "status": status,
    }
    return KubeObject("policy/v1", "PodDisruptionBudget", ObjectMeta(name, pg.meta.namespace), body)


@st.composite
def featured(draw: st.DrawFn, base: st.SearchStrategy[Cluster]) -> Cluster:
    """A cluster of ``base`` with what the other plugins read drawn onto its objects."""
    cluster = draw(base)
    objects: list[KubeObject] = []
    for node in cluster.nodes:
        with Dice(draw, _NODE_BYTES) as dice:
            _decorate_node(dice, node, objects)
    for queue in cluster.queues:
        with Dice(draw, _QUEUE_BYTES) as dice:
            _decorate_queue(dice, queue, queue.meta.name == "root")
    groups = {(pg.meta.namespace, pg.meta.name): pg for pg in cluster.pod_groups}
    roles: dict[tuple[str, str], set[str]] = {}
    for pod in cluster.pods:
        role = pod.meta.labels.get(TASK_SPEC_KEY)
        if role:
            roles.setdefault((pod.meta.namespace, pod.group_name), set()).add(role)
    for pg in cluster.pod_groups:
        with Dice(draw, _GROUP_BYTES) as dice:
            _decorate_group(dice, pg, sorted(roles.get((pg.meta.namespace, pg.meta.name), ())))
            pdb = _budget(dice, pg)
        if pdb is not None:
            objects.append(pdb)
    for pod in cluster.pods:
        with Dice(draw, _POD_BYTES) as dice:
            _decorate_pod(dice, pod, groups.get((pod.meta.namespace, pod.group_name)))
    namespaces = sorted({pg.meta.namespace for pg in cluster.pod_groups})
    with Dice(draw, 3 * len(namespaces)) as dice:
        for namespace in namespaces:
            quota = _quota(dice, namespace)
            if quota is not None:
                objects.append(quota)
    cluster.objects.extend(objects)
    return cluster


# -- arguments -------------------------------------------------------------------------------------


def _windows() -> st.SearchStrategy[str]:
    """A revocable zone's daily window: around the spec's clock (00:00), before or after
    it, overnight, or malformed."""
    return st.sampled_from(["23:00-01:00", "00:00-00:30", "01:00-02:00", "22:00-06:00", "bad"])


def _thresholds() -> st.SearchStrategy[dict[str, Any]]:
    percent = st.sampled_from([0, 20, 50, 80, 100])
    return st.fixed_dictionaries({}, optional={"cpu": percent, "memory": percent, "pod": percent})


@functools.cache
def structured_arguments(plugin: str) -> st.SearchStrategy[dict[str, Any]] | None:
    """The arguments of ``plugin`` that are strings, maps or lists (the conf strategy
    draws the numbers and flags from each plugin's documented ranges; the extender's are
    :func:`vspec.fuzz.extender.extender_arguments`); None when it has none worth drawing."""
    if plugin == "tdm":
        return st.fixed_dictionaries(
            {},
            optional={
                f"tdm.revocable-zone.{ZONE}": _windows(),
                "tdm.revocable-zone.other": _windows(),
            },
        )
    if plugin == "usage":
        percent = st.sampled_from([0, 50, 80, "90"])
        return st.fixed_dictionaries(
            {},
            optional={
                "thresholds": st.fixed_dictionaries({}, optional={"cpu": percent, "mem": percent})
            },
        )
    if plugin == "rescheduling":
        # Mostly due at once and with a lowNodeUtilization strategy whose thresholds
        # are drawn: its node classification is what the usage metrics decide.
        params = st.fixed_dictionaries(
            {"thresholds": _thresholds(), "targetThresholds": _thresholds()}
        )
        strategy = st.fixed_dictionaries(
            {"name": st.sampled_from(["lowNodeUtilization"] * 3 + ["other"])},
            optional={"params": params},
        )
        return st.fixed_dictionaries(
            {
                # the first session only sets the clock the interval counts from
                "interval": st.sampled_from(["0s", "0s", "0s", "1m", "bad"]),
                "strategies": st.lists(strategy, min_size=1, max_size=2),
            },
            optional={"metricsPeriod": st.sampled_from(["5m", "10m", "1h"])},
        )
    if plugin == "predicates":
        per_unit = st.sampled_from([0.5, 1, 4])
        return st.fixed_dictionaries(
            {
                "predicate.ProportionalEnable": st.booleans(),
                "predicate.resources": st.sampled_from(["nvidia.com/gpu", GPU_NUMBER, ""]),
            },
            optional={
                "predicate.resources.nvidia.com/gpu.cpu": per_unit,
                "predicate.resources.nvidia.com/gpu.memory": per_unit,
            },
        )
    if plugin == "deviceshare":
        return st.fixed_dictionaries(
            {},
            optional={
                "deviceshare.SchedulePolicy": st.sampled_from(["binpack", "spread", ""]),
                "deviceshare.ScheduleWeight": st.integers(0, 10),
            },
        )
    return None
