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

import dataclasses
import functools
import math
from datetime import timedelta
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from vspec.fuzz.strategies.cluster import GI, GPU, HOSTNAME
from vspec.fuzz.strategies.dice import Dice, weighted_pool
from vspec.model.corev1 import (
    Affinity,
    Condition,
    LabelSelector,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    Taint,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
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
# What Volcano's job controller writes on a vcjob's pods (vspec.harness.vcjob): the queue
# as a label and an annotation, and the pod template's uid (predicates' cache key).
VCJOB_QUEUE = "volcano.sh/queue-name"
TEMPLATE_UID = "volcano.sh/template-uid"
SCHEDULING_GATE = "example.com/quota-check"
# What the fake extender answers from (vspec.fuzz.extender).
EXTENDER_VERDICT = "extender.vspec.io/verdict"
EXTENDER_SCORE = "extender.vspec.io/score"
GPU_MEMORY = "volcano.sh/gpu-memory"
GPU_NUMBER = "volcano.sh/gpu-number"
GPU_INDEX = "volcano.sh/gpu-index"
VGPU_NUMBER = "volcano.sh/vgpu-number"
VGPU_MEMORY = "volcano.sh/vgpu-memory"
VGPU_CORES = "volcano.sh/vgpu-cores"
VGPU_REGISTER = "volcano.sh/node-vgpu-register"
VGPU_HANDSHAKE = "volcano.sh/node-vgpu-handshake"
VGPU_IDS = "volcano.sh/vgpu-ids-new"
_GPU_MEMORY = (Fraction(6000), Fraction(10000), Fraction(16001))
# What a node offers deviceshare: nothing, GPUs shared by memory or number, or HAMi vGPU
# cards registered by the device plugin (its handshake fresh, timed out, or deleted).
_GPU_KINDS = weighted_pool((6, ""), (2, "gpushare"), (3, "vgpu"))
# In a GPU cluster (one in four) every node has GPUs and most pods ask for them.
_GPU_CLUSTER_KINDS = weighted_pool((2, "gpushare"), (3, "vgpu"))
_VGPU_TYPES = ("NVIDIA-A100", "NVIDIA-T4", "Ascend-910")
# The device plugin's handshake at the spec's clock: fresh (answered now), a request
# older than Volcano's 60 s timeout, a deleted device, a report.
_HANDSHAKES = weighted_pool(
    (4, "Requesting_2025.01.01 00:00:00"),
    (1, "Requesting_2024.12.31 23:58:00"),
    (1, "Deleted_2025.01.01 00:00:00"),
    (1, "Reported 2025-01-01 00:00:00"),
)
# Shared GPUs a pod asks for in its limits (index: what ``_devices`` sets).
_POD_DEVICES = weighted_pool(
    (10, ""),
    (2, "memory"),
    (1, "number"),
    (1, "both"),
    (2, "vgpu"),
    (1, "vgpu-memory"),
)
_GPU_CLUSTER_DEVICES = weighted_pool(
    (3, ""), (2, "memory"), (1, "number"), (1, "both"), (3, "vgpu"), (1, "vgpu-memory")
)
# rank: a label some nodes lack, where the spread filter fails unresolvably.
_SPREAD_KEYS = ("zone", "kubernetes.io/hostname", "rank")

ZONE = "rz"  # the revocable zone drawn nodes are in
NODE_GROUPS = ("g0", "g1")
# Mostly single-numa-node, so that a pod of that policy has several nodes to choose from
# (numa-aware's BatchNodeOrder scores only between nodes that passed its predicate).
_TOPOLOGY_POLICIES = weighted_pool(
    (4, "single-numa-node"), (2, "best-effort"), (1, "restricted"), (1, "none")
)
_CPU_POLICIES = weighted_pool((4, "static"), (1, "none"))
_POD_NUMA = weighted_pool((2, ""), (3, "single-numa-node"), (1, "best-effort"))
# A Guaranteed pod's whole CPUs (0: its request kept, fractional or not).
_GUARANTEED_CPUS = weighted_pool((2, 1), (2, 2), (1, 3), (1, 0))
# How many of a node's CPUs kubelet has handed out already, in quarters.
_CROWDS = weighted_pool((3, 1), (2, 2), (1, 4))
_POD_NUMA_MORE = ("restricted", "none")
_PERCENTS = (0.0, 10.0, 35.5, 50.0, 79.0, 81.0, 95.0)
# Metrics fresh (the clock's), a little old, or stale (usage ignores them past 5 minutes).
_METRIC_AGES = weighted_pool((3, 0), (1, 2), (1, 30))
# The periods a node's metrics cover (cpu, memory): usage reads 10m, rescheduling its
# metricsPeriod; a source may fill fewer.
_PERIODS = weighted_pool(
    (4, (("5m", "10m"), ("5m", "10m"))),
    (1, (("5m",), ("5m",))),
    (1, (("5m", "10m"), ("5m",))),
)
_COOLDOWNS = weighted_pool((3, "10m"), (1, "30s"), (1, "1h"), (1, "soon"))
# The conditions of a pod with a cooldown, besides PodScheduled true since it was
# scheduled: Ready before it, PodScheduled false, no time, none at all.
_SCHEDULED = weighted_pool((4, "scheduled"), (1, "ready"), (1, "false"), (1, "untimed"), (1, ""))
_SCHEDULED_AGO = (timedelta(seconds=20), timedelta(minutes=5), timedelta(hours=2))
_BUDGETS = ("1", "2", "50%", "0", "x%", "3", "100%", "two")
_STATES = weighted_pool((6, "Open"), (1, "Closed"), (1, "Closing"))
# The fake extender's answers (vspec.fuzz.extender): also a refusal without a code, and
# a JSON null.
_VERDICTS = weighted_pool((6, ""), (2, "reject"), (2, "fail"), (1, "uncoded"), (1, "null"))
# What the fake extender answers when the pod is a victim (kept) or the evictor (HTTP 500).
_POD_VERDICTS = weighted_pool((6, ""), (1, "reject"), (1, "fail"))
# How a pod names its queue (nodegroup reads it): the scheduling annotation, as the job
# controller writes it (label, annotation and the template uid), or label or annotation.
_QUEUE_FORMS = weighted_pool((3, "scheduling"), (3, "vcjob"), (1, "label"), (1, "annotation"))

_NODE_BYTES = 30
_QUEUE_BYTES = 10
_GROUP_BYTES = 16
_POD_BYTES = 21
_PODS_MORE_BYTES = 6


def _numa_topology(dice: Dice, node: Node, house: str, static: bool) -> KubeObject:
    """The node's Numatopology: 2 NUMA nodes (now and then one or four), its CPUs 2 per core, some
    taken (allocatable a subset; now and then all), kubelet policies drawn, the
    topology manager's mostly the cluster's ``house`` one; with ``static``, the static
    CPU manager and the house policy always (14 bytes either way)."""
    cpus = max(2, int(Fraction(node.allocatable.get("cpu", Fraction(2)))))
    numas = min(cpus, dice.pick((1, 2, 2, 2, 4)))
    cpu_policy, own, apart = dice.pick(_CPU_POLICIES), dice.pick(_TOPOLOGY_POLICIES), dice.one_in(4)
    topology_policy = own if apart and not static else house
    cpu_policy = "static" if static else cpu_policy
    crowd = dice.pick(_CROWDS)
    taken = [dice.below(4) < crowd for _ in range(8)]
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


def _decorate_node(
    dice: Dice,
    node: Node,
    objects: list[KubeObject],
    busy: bool,
    house: str,
    gpus: bool,
    numa_everywhere: bool,
) -> str:
    """Revocable zone, node group, usage metrics (a ``busy`` node, one running pods,
    measures 79% CPU or more: what rescheduling evicts from), NUMA topology, extender
    answers, shared GPUs (always in a ``gpus`` cluster) (``_NODE_BYTES``); returns the
    kind of GPUs it offers ("" for none)."""
    labels = node.meta.labels
    if dice.one_in(3):
        labels[REVOCABLE_ZONE] = ZONE
    group, grouped = dice.pick(NODE_GROUPS), dice.one_in(2)
    if grouped:
        labels[NODE_GROUP] = group
    metered, cpu, memory = dice.one_in(2), dice.pick(_PERCENTS), dice.pick(_PERCENTS)
    age, (cpu_periods, memory_periods) = dice.pick(_METRIC_AGES), dice.pick(_PERIODS)
    if metered:
        cpu = max(cpu, 79.0) if busy else cpu
        node.usage = NodeUsage(
            cpu=dict.fromkeys(cpu_periods, cpu),
            memory=dict.fromkeys(memory_periods, memory),
            time=DEFAULT_NOW - timedelta(minutes=age),
        )
    verdict, score = dice.pick(_VERDICTS), dice.below(4)
    if verdict:
        labels[EXTENDER_VERDICT] = verdict
    if score:
        labels[EXTENDER_SCORE] = str(25 * score)
    with_numa = dice.below(3) > 0 or numa_everywhere  # two nodes in three
    numa = _numa_topology(dice, node, house, numa_everywhere)  # rolled either way (Dice's rule)
    if with_numa:
        objects.append(numa)
    kind = dice.pick(_GPU_CLUSTER_KINDS if gpus else _GPU_KINDS)
    cards, share, handshake, card_type = (
        1 + dice.below(2),
        dice.pick((2, 10)),
        dice.pick(_HANDSHAKES),
        dice.pick(_VGPU_TYPES),
    )
    if kind == "gpushare":  # GPUs deviceshare shares out by memory or by number
        shared = {GPU_NUMBER: Fraction(2), GPU_MEMORY: Fraction(16000)}
        node.allocatable.update(shared)
        node.capacity.update(shared)
    elif kind == "vgpu":  # what the HAMi device plugin registers: resources and cards
        slots = {
            VGPU_NUMBER: Fraction(cards * share),
            VGPU_MEMORY: Fraction(cards * 16000),
            VGPU_CORES: Fraction(cards * 100),
        }
        node.allocatable.update(slots)
        node.capacity.update(slots)
        node.meta.annotations[VGPU_REGISTER] = "".join(
            f"{_card_uuid(node.meta.name, i)},{share},16000,{card_type},true:" for i in range(cards)
        )
        node.meta.annotations[VGPU_HANDSHAKE] = handshake
    return kind


def _card_uuid(node: str, index: int) -> str:
    return f"GPU-{node}-{index}"


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


def _decorate_pod(
    dice: Dice, pod: Pod, pg: PodGroup | None, devices: dict[str, str], gpus: bool
) -> None:
    """Queue name (in one of the forms nodegroup reads), NUMA policy (with limits, so
    the pod may be Guaranteed), a cooldown and when it was scheduled, preemptable or
    revocable, a topology spread over zones, nodes or a label some nodes lack, a
    preferred affinity to its job, the extender's verdict, a scheduling gate (a pending
    pod), shared GPUs or vGPUs one time in three (in a ``gpus`` cluster, seven in ten)
    (``_POD_BYTES``;
    ``devices``: what each node offers, so that a bound pod holds what its node has)."""
    notes = pod.meta.annotations
    for i, container in enumerate(pod.containers):  # named as the spec file names them
        container.name = container.name or f"c{i}"
    role = pod.meta.labels.get(TASK_SPEC_KEY)
    if role:  # Volcano's job controller writes the role as an annotation too
        notes[TASK_SPEC_KEY] = role
    unnamed = dice.one_in(4)
    if pg is not None and not unnamed:
        notes[QUEUE_NAME_ANNOTATION] = pg.queue
    policy, more, other = dice.pick(_POD_NUMA), dice.pick(_POD_NUMA_MORE), dice.one_in(2)
    guaranteed, cores = dice.below(3) > 0, dice.pick(_GUARANTEED_CPUS)
    policy = more if policy == "best-effort" and other else policy
    if policy:
        notes[NUMA_POLICY] = policy
    if guaranteed and pod.containers and not pod.node_name:
        _guarantee(pod, cores)
    _cooldown(dice, pod)
    marked, value, revocable = dice.one_in(3), dice.one_in(2), dice.one_in(6)
    if marked:
        notes[PREEMPTABLE] = "false" if value else "true"
    if revocable:  # may use revocable nodes (tdm) whatever its preemptability
        notes[REVOCABLE_ZONE] = "*"
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
    device = dice.pick(_GPU_CLUSTER_DEVICES if gpus else _POD_DEVICES)
    memory, vgpu_cores = dice.pick(_GPU_MEMORY), dice.below(3)
    offered = devices.get(pod.node_name, "") if pod.node_name else None
    if device and pod.containers and offered in (None, _DEVICE_KIND[device]):
        _devices(pod, device, memory, 50 * vgpu_cores)


def _guarantee(pod: Pod, cores: int) -> None:
    """Guaranteed: limits equal to requests, memory kept (half a GiB if none); CPUs
    whole (``cores``, the request's if more: what the kubelet pins) or, with 0 cores,
    the request as it is (a fractional one gets no NUMA hint)."""
    container = pod.containers[0]
    requested = container.requests.get("cpu", Fraction(0))
    cpu = Fraction(max(cores, math.ceil(requested))) if cores else requested or Fraction(1)
    whole = {"cpu": cpu, "memory": container.requests.get("memory") or Fraction(GI // 2)}
    container.requests.update(whole)
    container.limits = dict(whole)


def _cooldown(dice: Dice, pod: Pod) -> None:
    """cdp's cooldown on a bound pod, as an annotation or (1 in 4) a label, with its
    conditions (``_SCHEDULED``); 1 in 4 still Pending on its node (Bound) (6 bytes)."""
    cooling, cooldown, ago = dice.one_in(2), dice.pick(_COOLDOWNS), dice.pick(_SCHEDULED_AGO)
    labelled, scheduled, starting = dice.one_in(4), dice.pick(_SCHEDULED), dice.one_in(4)
    if not (cooling and pod.node_name):
        return
    (pod.meta.labels if labelled else pod.meta.annotations)[COOLDOWN] = cooldown
    since = DEFAULT_NOW - ago
    conditions = {
        "scheduled": [Condition("PodScheduled", "True", last_transition_time=since)],
        "ready": [
            Condition("Ready", "True", last_transition_time=since),
            Condition("PodScheduled", "True", last_transition_time=since),
        ],
        "false": [Condition("PodScheduled", "False", last_transition_time=since)],
        "untimed": [Condition("PodScheduled", "True")],
        "": [],
    }
    pod.conditions = conditions[scheduled]
    if starting and pod.phase == "Running":  # scheduled, its containers not started
        pod.phase = "Pending"


# The kind of node each pod device request is served by.
_DEVICE_KIND = {
    "memory": "gpushare",
    "number": "gpushare",
    "both": "gpushare",
    "vgpu": "vgpu",
    "vgpu-memory": "vgpu",
}


def _devices(pod: Pod, device: str, memory: Fraction, cores: int) -> None:
    """Shared GPUs in the first container's limits, with the requests Kubernetes
    defaults from them: memory, a whole card, or both (deviceshare checks one, takes
    both); a vGPU slot with memory and cores, or vGPU memory alone (one slot). A bound
    pod also holds its card, as the allocation's patch left it."""
    container = pod.containers[0]
    wanted: dict[str, Fraction] = {}
    if device in ("memory", "both"):
        wanted[GPU_MEMORY] = memory
    if device in ("number", "both"):
        wanted[GPU_NUMBER] = Fraction(1)
    if device == "vgpu":
        wanted[VGPU_NUMBER] = Fraction(1)
    if device.startswith("vgpu"):
        wanted[VGPU_MEMORY] = memory
        if cores:
            wanted[VGPU_CORES] = Fraction(cores)
    container.requests.update(wanted)
    container.limits = {**container.limits, **wanted}
    if not pod.node_name:
        return
    if device.startswith("vgpu"):
        used = f"{_card_uuid(pod.node_name, 0)},NVIDIA,{int(memory)},{cores}:"
        pod.meta.annotations[VGPU_IDS] = used
    else:
        pod.meta.annotations[GPU_INDEX] = "0"


def _decorate_pods_more(
    dice: Dice, pods: list[Pod], groups: dict[tuple[str, str], PodGroup]
) -> None:
    """What the core's scorers and filters and the extender read of pods, drawn once per
    cluster (per pod, the extra bytes cost other plugins' reach: Hypothesis' examples
    stay within a size): the form in which every pod that names its queue names it; one
    pod preferring its job's nodes, one with the extender's verdict, one gated (a
    pending pod, one cluster in two) (``_PODS_MORE_BYTES``)."""
    form = dice.pick(_QUEUE_FORMS)
    preferring, anti = dice.below(len(pods) + 1), dice.one_in(2)
    judged, verdict = dice.below(len(pods) + 1), dice.pick(_POD_VERDICTS)
    gated = dice.below(2 * len(pods) + 1)
    for index, pod in enumerate(pods):
        pg = groups.get((pod.meta.namespace, pod.group_name))
        if pg is not None and QUEUE_NAME_ANNOTATION in pod.meta.annotations:
            del pod.meta.annotations[QUEUE_NAME_ANNOTATION]
            _name_queue(pod, pg, form, pod.meta.labels.get(TASK_SPEC_KEY))
        pending = not pod.node_name
        if index == preferring and pending:
            _prefer_job(pod, anti)
        if index == judged and verdict:
            pod.meta.annotations[EXTENDER_VERDICT] = verdict
        if index == gated and pending:  # held back until the gate is removed
            pod.scheduling_gates = [SCHEDULING_GATE]


def _prefer_job(pod: Pod, anti: bool) -> None:
    """A preferred pod affinity (or anti-affinity) to the pod's job across nodes: what
    nodeorder's inter-pod affinity score weighs."""
    job = LabelSelector(match_labels=(("job", pod.meta.labels.get("job", "")),))
    preferred = (WeightedPodAffinityTerm(10, PodAffinityTerm(HOSTNAME, job)),)
    affinity = pod.affinity or Affinity()
    kept = affinity.pod_anti_affinity if anti else affinity.pod_affinity
    terms = PodAffinity(kept.required if kept else (), preferred)
    if anti:
        pod.affinity = dataclasses.replace(affinity, pod_anti_affinity=terms)
    else:
        pod.affinity = dataclasses.replace(affinity, pod_affinity=terms)


def _name_queue(pod: Pod, pg: PodGroup, form: str, role: str | None) -> None:
    """The pod's queue in one of the forms nodegroup reads (``_QUEUE_FORMS``)."""
    notes, labels = pod.meta.annotations, pod.meta.labels
    if form == "scheduling":
        notes[QUEUE_NAME_ANNOTATION] = pg.queue
    if form in ("vcjob", "label"):
        labels[VCJOB_QUEUE] = pg.queue
    if form in ("vcjob", "annotation"):
        notes[VCJOB_QUEUE] = pg.queue
    if form == "vcjob" and role:
        notes[TEMPLATE_UID] = f"{pg.meta.name}-{role}"


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
def featured(
    draw: st.DrawFn, base: st.SearchStrategy[Cluster], *, numa_everywhere: bool = False
) -> Cluster:
    """A cluster of ``base`` with what the other plugins read drawn onto its objects
    (``numa_everywhere``: :attr:`~vspec.fuzz.strategies.cluster.ClusterBounds.numa_everywhere`)."""
    cluster = draw(base)
    objects: list[KubeObject] = []
    devices: dict[str, str] = {}
    busy = {pod.node_name for pod in cluster.pods if pod.phase == "Running"}
    # Nodes mostly share a topology manager policy (a pod of that policy then has
    # several nodes to choose from, which numa-aware scores).
    with Dice(draw, 2) as dice:
        house, gpus = dice.pick(_TOPOLOGY_POLICIES), dice.one_in(4)
    for node in cluster.nodes:
        with Dice(draw, _NODE_BYTES) as dice:
            devices[node.meta.name] = _decorate_node(
                dice, node, objects, node.meta.name in busy, house, gpus, numa_everywhere
            )
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
            _decorate_pod(
                dice, pod, groups.get((pod.meta.namespace, pod.group_name)), devices, gpus
            )
    with Dice(draw, _PODS_MORE_BYTES) as dice:
        _decorate_pods_more(dice, cluster.pods, groups)
    namespaces = sorted({pg.meta.namespace for pg in cluster.pod_groups})
    with Dice(draw, 3 * len(namespaces)) as dice:
        for namespace in namespaces:
            quota = _quota(dice, namespace)
            if quota is not None:
                objects.append(quota)
    cluster.objects.extend(objects)
    return cluster


_LARGE_BYTES = 4
_LARGE_JOB_BYTES = 6
_PREFER_NO_SCHEDULE = Taint("dedicated", "y", "PreferNoSchedule")
_PREFERRED_ZONE = NodeAffinity(
    preferred=(
        PreferredSchedulingTerm(
            5, NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("a",)),))
        ),
    )
)


@st.composite
def large_featured(draw: st.DrawFn, base: st.SearchStrategy[Cluster]) -> Cluster:
    """A large cluster of ``base`` (128 nodes or more) with what allocate's columnar path
    declines or narrows to a row: a PreferNoSchedule taint on two nodes, GPUs on two nodes
    or every other one; per job (on its pending pods) GPU requests (no columnar balanced
    score), a preferred zone, a ScheduleAnyway spread, one node by its hostname."""
    cluster = draw(base)
    nodes = cluster.nodes
    with Dice(draw, _LARGE_BYTES) as dice:
        tainted, first, gpus = dice.one_in(2), dice.below(len(nodes)), dice.below(3)
        second = dice.below(len(nodes))
    for node in nodes:  # as the kubelet labels it
        node.meta.labels[HOSTNAME] = node.meta.name
    if tainted:
        for node in {id(nodes[first]): nodes[first], id(nodes[second]): nodes[second]}.values():
            node.taints = [*node.taints, _PREFER_NO_SCHEDULE]
    shared = [nodes[first], nodes[second]] if gpus == 1 else nodes[::2] if gpus == 2 else []
    for node in shared:
        node.allocatable[GPU] = node.capacity[GPU] = Fraction(2)
        node.meta.labels["gpu"] = "true"
    pending: dict[tuple[str, str], list[Pod]] = {}
    for pod in cluster.pods:
        if not pod.node_name:
            pending.setdefault((pod.meta.namespace, pod.group_name), []).append(pod)
    for pg in cluster.pod_groups:
        with Dice(draw, _LARGE_JOB_BYTES) as dice:
            gpu, prefers, spread, pinned = (
                dice.one_in(4),
                dice.one_in(3),
                dice.one_in(5),
                dice.one_in(8),
            )
            where, together = nodes[dice.below(len(nodes))].meta.name, dice.one_in(5)
        for pod in pending.get((pg.meta.namespace, pg.meta.name), ()):
            _large_pod(pod, pg.meta.name, gpu, prefers, spread, where if pinned else "")
            if together:
                _prefer_job(pod, anti=False)
    return cluster


def _large_pod(pod: Pod, job: str, gpu: bool, prefers: bool, spread: bool, where: str) -> None:
    pod.meta.labels.setdefault("job", job)  # what the spread and the job affinity select
    if gpu and pod.containers:
        container = pod.containers[0]
        container.requests[GPU] = Fraction(1)
        container.limits = {**container.limits, GPU: Fraction(1)}
    if prefers:
        pod.affinity = dataclasses.replace(
            pod.affinity or Affinity(), node_affinity=_PREFERRED_ZONE
        )
    if spread:
        selector = LabelSelector(match_labels=(("job", job),))
        pod.topology_spread_constraints = [
            TopologySpreadConstraint(1, "zone", "ScheduleAnyway", selector)
        ]
    if where:
        pod.node_selector = {**pod.node_selector, HOSTNAME: where}


# -- arguments -------------------------------------------------------------------------------------


def _windows() -> st.SearchStrategy[str]:
    """A revocable zone's daily window: open at the spec's clock (00:00, mostly), before
    or after it, overnight, or malformed (no dash, hour or minute out of range, not a
    time)."""
    return st.sampled_from(
        [
            *["00:00-00:30"] * 4,
            "23:00-01:00",
            "01:00-02:00",
            "22:00-06:00",
            "bad",
            "24:00-01:00",
            "00:60-01:00",
            "9am-10am",
            "noon-01:00",
            "1:5-2:00",
            "00:000-01:00",
        ]
    )


GPU_SHARING_ARG = "deviceshare.GPUSharingEnable"
GPU_NUMBER_ARG = "deviceshare.GPUNumberEnable"
VGPU_ARG = "deviceshare.VGPUEnable"


def _merged(parts: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    return {**parts[0], **parts[1]}


def _thresholds(percents: list[int]) -> st.SearchStrategy[dict[str, Any]]:
    """lowNodeUtilization's (target) thresholds: cpu always (an unset resource stays at
    100%, where no node is above it), memory and the pod count (read as ``pod``) now and
    then."""
    percent = st.sampled_from(percents)
    return st.fixed_dictionaries({"cpu": percent}, optional={"memory": percent, "pod": percent})


@functools.cache
def structured_arguments(plugin: str) -> st.SearchStrategy[dict[str, Any]] | None:
    """The arguments of ``plugin`` that are strings, maps or lists (the conf strategy
    draws the numbers and flags from each plugin's documented ranges; the extender's are
    :func:`vspec.fuzz.extender.extender_arguments`); None when it has none worth drawing."""
    if plugin == "tdm":
        return st.fixed_dictionaries(
            {f"tdm.revocable-zone.{ZONE}": _windows()},
            optional={"tdm.revocable-zone.other": _windows()},
        )
    if plugin == "usage":
        # Keys usage reads (cpu, mem) and one it does not (memory); now and then
        # thresholds that are not a map (Volcano logs it and keeps 80%).
        percent = st.sampled_from([0, 50, 80, "90"])
        keyed = st.fixed_dictionaries(
            {}, optional={"cpu": percent, "mem": percent, "memory": percent}
        )
        return st.fixed_dictionaries(
            {}, optional={"thresholds": st.one_of(keyed, keyed, keyed, st.just("80"))}
        )
    if plugin == "rescheduling":
        # Mostly due at once and with a lowNodeUtilization strategy whose thresholds
        # are drawn: its node classification is what the usage metrics decide. Now and
        # then what Volcano reads past: no strategy listed (the default one runs), an
        # entry that is not a map, thresholds that are not one.
        params = st.fixed_dictionaries(
            {
                # most nodes below the thresholds, the loaded ones above the targets
                "thresholds": _thresholds([20, 50, 80, 80, 100]),
                "targetThresholds": _thresholds([0, 20, 50, 50, 80]),
            }
        )
        odd_params = st.sampled_from([{"thresholds": "50"}, {"targetThresholds": [80]}])
        strategy = st.fixed_dictionaries(
            {
                "name": st.sampled_from(["lowNodeUtilization"] * 5 + ["other"]),
                "params": st.one_of(params, params, params, odd_params),
            }
        )
        strategies = st.one_of(
            st.lists(strategy, min_size=1, max_size=2),
            st.lists(strategy, min_size=1, max_size=2),
            st.lists(strategy, min_size=1, max_size=2),
            st.sampled_from([[], ["lowNodeUtilization"]]),
        )
        return st.fixed_dictionaries(
            {
                # the first session only sets the clock the interval counts from
                "interval": st.sampled_from(["0s", "0s", "0s", "0s", "0s", "1m", "bad"]),
                "strategies": strategies,
            },
            optional={"metricsPeriod": st.sampled_from(["5m", "5m", "10m", "1h"])},
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
    if plugin == "logprint":
        # It reads none, but prints them all at V(5) as yaml.v2 decoded them: nested
        # mappings and lists are rendered as Go's map and slice types.
        return st.fixed_dictionaries(
            {},
            optional={
                "note": st.sampled_from(["x", "a b"]),
                "limits": st.fixed_dictionaries({"cpu": st.just(2), "tag": st.just("t")}),
                "list": st.lists(st.sampled_from([1, "y", True]), min_size=1, max_size=2),
            },
        )
    if plugin == "deviceshare":
        # One way of sharing on (Volcano exits on two), the others explicitly off.
        modes = (GPU_SHARING_ARG, GPU_NUMBER_ARG, VGPU_ARG)
        mode = st.sampled_from([{m: m == on for m in modes} for on in modes])
        rest = st.fixed_dictionaries(
            {"deviceshare.SchedulePolicy": st.sampled_from(["binpack", "spread", ""])},
            optional={"deviceshare.ScheduleWeight": st.integers(0, 10)},
        )
        return st.tuples(mode, rest).map(_merged)
    return None
