"""Where binds go: the pod limit the predicates plugin keeps, and the best-scored node.

``pod-limit`` counts pods as the Kubernetes NodeInfo that the predicates plugin keeps:
every pod on the node that has not completed (terminating ones included), the tasks the
session binds or pipelines there, minus those it evicts. ``best-score`` restates the
score formulas of ``nodeorder`` (Kubernetes' LeastAllocated, MostAllocated,
BalancedAllocation, preferred node affinity and TaintToleration as Volcano weighs them)
and ``binpack`` from their documentation, and replays allocate's binds one by one.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.invariants.base import Invariant, InvariantInputs, register
from vspec.invariants.checks import DETERMINISTIC_MAX_PAIRS
from vspec.invariants.history import (
    HOLDING,
    CycleView,
    NodeFilter,
    Requests,
    allocatable,
    conf_answer,
    cycles,
    node_filters,
    node_rows,
    node_term_matches,
    plugin_entries,
    pod_slots,
    requests,
    tolerates,
)
from vspec.invariants.liveness import allocate_conf_known, complex_pod
from vspec.invariants.outside import OVERSUBSCRIPTION, TOLERANCE, best_effort
from vspec.model.conf import PluginOption
from vspec.model.corev1 import PodAffinityTerm
from vspec.model.objects import Node, Pod
from vspec.model.result import SimulationResult

_DONE = frozenset({TaskStatus.Succeeded, TaskStatus.Failed})


def _pod_limit(node: Node) -> int:
    """The node's ``pods`` allocatable as Volcano's MaxTaskNum (0 when not declared)."""
    return int(node.allocatable.get("pods", Fraction(0)))


def _on_nodes(view: CycleView, names: Container[str]) -> dict[str, list[str]]:
    """The pods the Kubernetes NodeInfo of each node of ``names`` holds at the start of
    the cycle: all but the completed ones (Succeeded and Failed pods are never added to a
    node). One pass over the pods, not one per node: W2 has 1,000 nodes and 11,000 pods."""
    held: dict[str, list[str]] = {}
    statuses = view.statuses
    for key, pod in view.pods.items():
        if pod.node_name in names and statuses[key] not in _DONE:
            held.setdefault(pod.node_name, []).append(key)
    return held


# -- pod-limit ---------------------------------------------------------------------------------


def _pod_limit_applies(inputs: InvariantInputs) -> bool:
    return bool(conf_answer(inputs, node_filters))


def _pod_limit_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    """Each bind or pipeline passed the filter ``pods on the node < limit`` when it was
    made, and evictions only lower the count: so at the end of a cycle the count is at
    most the limit, or what the node held at the start when that was more."""
    views = cycles(inputs, result)
    pipelined: dict[str, list[str]] = {}
    # Volcano v1.11 quirk: preempt and reclaim pick nodes with PredicateForPreemptAction,
    # which passes a node whose only failures are Unschedulable (resolvable) ones, and the
    # pod count's NodePodNumberExceeded is one (predicates.go:403-411). With no victims
    # needed (the node's releasing pods free enough), preempt.go:277-322 then pipelines onto
    # a node at its pod limit. So only allocate's pipelines are held to the filter.
    evicting = any(action in inputs.conf.actions for action in ("preempt", "reclaim"))
    for pairs in () if evicting else result.pipelined.values():
        for key, where in pairs:
            pipelined.setdefault(where, []).append(key)
    messages: list[str] = []
    rows = node_rows(inputs)
    for view in views:
        last = view.cycle == views[-1].cycle
        binds: dict[str, list[str]] = {}
        for b in view.binds:
            if b.task in view.pods:
                binds.setdefault(b.node, []).append(b.task)
        judged = binds.keys() | (pipelined.keys() if last else set())
        if not judged:
            continue
        statuses = view.statuses
        # The judged nodes alone, in the cluster's order, not every node.
        for row in sorted(rows[name] for name in judged if name in rows):
            node = inputs.cluster.nodes[row]
            name = node.meta.name
            bound = binds.get(name, [])
            if not bound and not (last and pipelined.get(name)):
                continue
            start = [k for k in view.on_node.get(name, ()) if statuses[k] not in _DONE]
            here = set(start) | set(bound)
            evicted = {e.task for e in view.evictions if e.task in here}
            added = bound + (pipelined.get(name, []) if last else [])
            count = len(start) + len(added) - len(evicted)
            limit = _pod_limit(node)
            if count > max(limit, len(start)):
                messages.append(
                    f"cycle {view.cycle}: node {name} ends with {count} pods ({len(start)} at "
                    f"the start, {', '.join(added)} bound or pipelined, {len(evicted)} "
                    f"evicted), above its pod limit {limit}"
                )
    return messages


register(
    Invariant(
        "pod-limit",
        "with predicates on, no node gets a pod while it holds its pod limit",
        "For every cycle and every node that got a bind (or, in the last cycle, a "
        "pipelined task): the pods on it at the start of the cycle that are not "
        "Succeeded or Failed (terminating ones included), plus the pods bound to it in the "
        "cycle and, in the last cycle, the tasks pipelined to it (unless preempt or reclaim "
        "runs: they pipeline past the pod count, a v1.11 quirk), minus the pods evicted "
        "from it in the cycle, number at most its `pods` allocatable, or what it held at "
        "the start when that was more. Each bind and pipeline passes the predicates "
        "plugin's filter `len(nodeInfo.Pods) < allocatable pods` (predicates.go:403), and "
        "an eviction removes its pod from that NodeInfo.",
        "Configurations with a `predicates` entry whose enablePredicate is on (its pod "
        "count check is not switched off by any argument).",
        _pod_limit_applies,
        _pod_limit_check,
    )
)


# -- best-score ----------------------------------------------------------------------------------

MAX_SCORE = 100
# Kubernetes' defaults for a container without a request (schedutil.DefaultMilliCPURequest,
# DefaultMemoryRequest), used by LeastAllocated and MostAllocated.
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024
GPU = "nvidia.com/gpu"
# nodeorder's argument defaults (nodeorder.go calculateWeight) for the scores restated.
_NODEORDER_DEFAULTS = {
    "leastrequested.weight": 1,
    "mostrequested.weight": 0,
    "balancedresource.weight": 1,
    "nodeaffinity.weight": 2,
    "tainttoleration.weight": 3,
}
# Scores equal on every node here (no images, no inter-pod affinity, no spread), so
# they cannot change the choice; their weights only need to be integers.
_NODEORDER_CONSTANT = ("imagelocality.weight", "podaffinity.weight", "podtopologyspread.weight")
_BINPACK_DEFAULTS = {"binpack.weight": 1, "binpack.cpu": 1, "binpack.memory": 1}
# Above this many pods x nodes a spec run skips best-score (as `deterministic`).
SCORE_MAX_PAIRS = DETERMINISTIC_MAX_PAIRS
# Relative slack for float sums done in another order than the engine's.
_EPSILON = 1e-9


def _int_arguments(option: PluginOption, defaults: Mapping[str, int]) -> dict[str, int] | None:
    """``Arguments.GetInt``: the values of ``defaults``' keys; None when one is written
    as something else than an integer (not restated)."""
    out = dict(defaults)
    for key in defaults:
        if key in option.arguments:
            value = option.arguments[key]
            if not isinstance(value, int) or isinstance(value, bool):
                return None
            out[key] = value
    return out


@dataclass
class _Scorer:
    """One NodeOrder plugin entry with its weights."""

    plugin: str
    weights: dict[str, int]
    resources: dict[str, int] = field(default_factory=dict)  # binpack's resource weights


def _binpack_scorer(option: PluginOption) -> _Scorer | None:
    weights = _int_arguments(option, _BINPACK_DEFAULTS)
    if weights is None:
        return None
    # binpack.go calculateWeight: negative resource weights become 1; the listed extra
    # resources first, cpu and memory's own weights win over a listed entry of their name.
    resources: dict[str, int] = {}
    listed = option.arguments.get("binpack.resources", "")
    for raw in (listed if isinstance(listed, str) else "").split(","):
        name = raw.strip()
        if name:
            value = option.arguments.get(f"binpack.resources.{name}", 1)
            if not isinstance(value, int) or isinstance(value, bool):
                return None
            resources[name] = 1 if value < 0 else value
    resources["cpu"] = 1 if weights["binpack.cpu"] < 0 else weights["binpack.cpu"]
    resources["memory"] = 1 if weights["binpack.memory"] < 0 else weights["binpack.memory"]
    return _Scorer("binpack", weights, resources)


def _scorers(inputs: InvariantInputs) -> list[_Scorer] | None:
    """The NodeOrder entries that are on, in tier order; None when one is not restated."""
    out: list[_Scorer] = []
    for tier in inputs.conf.tiers:
        for option in tier.plugins:
            if not option.enabled("node_order"):
                continue
            if option.name == "nodeorder":
                weights = _int_arguments(option, _NODEORDER_DEFAULTS)
                if (
                    weights is None
                    or _int_arguments(option, dict.fromkeys(_NODEORDER_CONSTANT, 0)) is None
                ):
                    return None
                out.append(_Scorer("nodeorder", weights))
            elif option.name == "binpack":
                scorer = _binpack_scorer(option)
                if scorer is None:
                    return None
                out.append(scorer)
    return out


def _score_applies(inputs: InvariantInputs) -> bool:
    conf, cluster = inputs.conf, inputs.cluster
    # Scoring every node for every bind costs about as much as the session itself (0.55
    # CPU-s on W1, whose session takes 0.72): spec runs check it on small clusters only.
    if not inputs.thorough and len(cluster.pods) * len(cluster.nodes) > SCORE_MAX_PAIRS:
        return False
    if not allocate_conf_known(inputs) or conf.actions.count("allocate") != 1:
        return False
    predicates = plugin_entries(conf, "predicates")
    if len(predicates) > 1:
        return False  # each entry's AllocateFunc adds the task to ssn.NodeMap again
    for _, option in predicates:
        if option.enabled("predicate") and option.arguments.get("predicate.CacheEnable") is True:
            return False  # verdicts cached per pod template, not per pod
    # Volcano stops looking after numFeasibleNodesToFind nodes; at most minNodesToFind
    # nodes it looks at them all (scheduler_helper.go CalculateNumOfFeasibleNodesToFind).
    if len(cluster.nodes) > conf.options.min_nodes_to_find:
        return False
    if any(n.images or n.meta.annotations.get(OVERSUBSCRIPTION) for n in cluster.nodes):
        return False
    if any(p.init_containers or p.overhead for p in cluster.pods):
        return False
    scorers = _scorers(inputs)
    return bool(scorers)


def _milli(q: Fraction) -> int:
    return math.ceil(q * 1000)


def _non_zero(pod: Pod) -> tuple[int, int]:
    """The pod's cpu (milli) and memory (bytes) with Kubernetes' default for a container
    that leaves one unset (an explicit zero stays zero)."""
    cpu = memory = 0
    for c in pod.containers:
        cpu += _milli(c.requests["cpu"]) if "cpu" in c.requests else DEFAULT_MILLI_CPU
        memory += math.ceil(c.requests["memory"]) if "memory" in c.requests else DEFAULT_MEMORY
    return cpu, memory


def _k8s_quantity(node: Node, name: str) -> int:
    """The node's allocatable in Kubernetes units (MilliValue for cpu, Value else)."""
    q = node.allocatable.get(name, Fraction(0))
    return _milli(q) if name == "cpu" else math.ceil(q)


def _requested(pod: Pod) -> dict[str, int]:
    """Actual requests in Kubernetes units: cpu in milli, memory in bytes, others counts."""
    out: dict[str, int] = {}
    for c in pod.containers:
        for name, q in c.requests.items():
            value = _milli(q) if name == "cpu" else math.ceil(q)
            out[name] = out.get(name, 0) + value
    return out


@dataclass(frozen=True)
class _Facts:
    """What the filters and scores read of the pod being placed, computed once."""

    pod: Pod
    need: Resource  # Volcano's request, pod slots as Volcano counts them
    non_zero: tuple[int, int]
    requested: dict[str, int]

    @classmethod
    def of(cls, pod: Pod, request: Requests) -> _Facts:
        need = request(pod).clone()  # the shared request stays as it is
        need.scalars["pods"] = pod_slots(pod)
        return cls(pod, need, _non_zero(pod), _requested(pod))


class _NodeState:
    """One node as the scorers see it before a bind, kept as running sums: Volcano's
    NodeInfo (``used``, pod ``slots``) and the session's Kubernetes NodeInfo
    (ssn.NodeMap: its pod count, non-zero and actual requests)."""

    def __init__(self, node: Node, pods: Sequence[Pod], request: Requests) -> None:
        self.node = node
        self.request = request
        self.limit = allocatable(node)
        self.used = Resource()
        self.slots = 0
        self.k8s_pods = 0
        self.non_zero = (0, 0)
        self.requested: dict[str, int] = {}
        self.k8s_allocatable = {name: _k8s_quantity(node, name) for name in ("cpu", "memory", GPU)}
        for pod in pods:
            self.add(pod, tracked=True)

    def add(self, pod: Pod, *, tracked: bool) -> None:
        self.used.add(self.request(pod))
        self.slots += pod_slots(pod)
        if not tracked:
            return
        self.k8s_pods += 1
        cpu, memory = _non_zero(pod)
        self.non_zero = (self.non_zero[0] + cpu, self.non_zero[1] + memory)
        for name, value in _requested(pod).items():
            self.requested[name] = self.requested.get(name, 0) + value


def _least(requested: int, capacity: int) -> int:
    """LeastAllocated for one resource (Kubernetes' leastRequestedScore)."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_SCORE // capacity


def _most(requested: int, capacity: int) -> int:
    """MostAllocated for one resource: requested past capacity counts as full."""
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_SCORE // capacity


def _allocated_score(facts: _Facts, state: _NodeState, weight: int, least: bool) -> int:
    """NodeResourcesFit's cpu and memory score, both resources of the same weight
    (Volcano passes cpu and memory, 50 and 50 for least, 1 and 1 for most): the
    integer mean over the resources the node has."""
    pod_cpu, pod_memory = facts.non_zero
    node_cpu, node_memory = state.non_zero
    total = count = 0
    for name, requested in (("cpu", node_cpu + pod_cpu), ("memory", node_memory + pod_memory)):
        capacity = state.k8s_allocatable[name]
        if capacity:
            total += (_least if least else _most)(requested, capacity) * weight
            count += weight
    return total // count if count else 0


def _balanced(facts: _Facts, state: _NodeState) -> int:
    """BalancedAllocation: 100 x (1 - the standard deviation of requested/allocatable)
    over cpu, memory and, when the pod asks for one, nvidia.com/gpu (Volcano's list),
    actual requests, fractions capped at 1, resources the node lacks left out."""
    own = facts.requested
    names = ["cpu", "memory"] + ([GPU] if own.get(GPU) else [])
    fractions = []
    for name in names:
        capacity = state.k8s_allocatable[name]
        if capacity:
            fraction = float(state.requested.get(name, 0) + own.get(name, 0)) / float(capacity)
            fractions.append(min(fraction, 1.0))
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * float(MAX_SCORE))


def _node_affinity(pod: Pod, node: Node) -> int:
    """The raw sum of the weights of the pod's preferred terms that the node matches
    (Volcano calls no NormalizeScore; an empty term matches nothing)."""
    affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    if affinity is None:
        return 0
    preferred = affinity.preferred
    return sum(t.weight for t in preferred if t.weight and node_term_matches(t.preference, node))


def _intolerable(pod: Pod, node: Node) -> int:
    """PreferNoSchedule taints that no toleration of effect "" or PreferNoSchedule takes."""
    tolerations = [t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule")]
    return sum(
        1
        for taint in node.taints
        if taint.effect == "PreferNoSchedule" and not tolerates(tolerations, taint)
    )


def _taint_scores(pod: Pod, nodes: Sequence[Node]) -> list[int]:
    """TaintToleration normalised over the candidates (DefaultNormalizeScore, reversed):
    100 - 100 x count / the largest count, 100 everywhere when no candidate has one."""
    counts = [_intolerable(pod, n) for n in nodes]
    top = max(counts, default=0)
    if top == 0:
        return [MAX_SCORE] * len(nodes)
    return [MAX_SCORE - MAX_SCORE * c // top for c in counts]


def _binpack(facts: _Facts, state: _NodeState, scorer: _Scorer) -> float:
    """The weighted mean of (used + request) / allocatable over the task's requested
    resources that have a weight, times 100 x binpack.weight; 0 when one would not fit.
    A resource the node lacks scores 0 but its weight counts."""
    need, used, limit = facts.need, state.used, state.limit
    score, weight_sum = 0.0, 0
    for name in ["cpu", "memory", *need.scalars]:
        wanted = need.get(name)
        weight = scorer.resources.get(name)
        if wanted < TOLERANCE or weight is None:
            continue
        capacity = limit.get(name)
        part = 0.0
        if capacity != 0 and weight != 0:
            final = wanted + used.get(name)
            if final > capacity:
                return 0.0
            part = final * weight / capacity
        score += part
        weight_sum += weight
    if weight_sum > 0:
        score /= weight_sum
    return score * float(MAX_SCORE * scorer.weights["binpack.weight"])


def _scores(facts: _Facts, states: list[_NodeState], scorers: list[_Scorer]) -> list[float]:
    pod = facts.pod
    totals = [0.0] * len(states)
    nodes = [s.node for s in states]
    for scorer in scorers:
        if scorer.plugin == "binpack":
            if scorer.weights["binpack.weight"] == 0:
                continue  # binpack registers no NodeOrder function then
            for i, state in enumerate(states):
                totals[i] += _binpack(facts, state, scorer)
            continue
        w = scorer.weights
        taints = _taint_scores(pod, nodes)
        for i, state in enumerate(states):
            totals[i] += (
                w["leastrequested.weight"] * _allocated_score(facts, state, 50, least=True)
                + w["mostrequested.weight"] * _allocated_score(facts, state, 1, least=False)
                + w["balancedresource.weight"] * _balanced(facts, state)
                + w["nodeaffinity.weight"] * _node_affinity(pod, state.node)
                + w["tainttoleration.weight"] * taints[i]
            )
    return totals


def _fits_idle(facts: _Facts, state: _NodeState) -> bool:
    """Volcano's ``LessEqual(Idle, Zero)``: cpu, memory and every scalar the task
    requests (pod slots as Volcano counts them), within 0.1 of a unit."""
    need = facts.need
    for name in ["cpu", "memory", *need.scalars]:
        held = state.slots if name == "pods" else state.used.get(name)
        idle = state.limit.get(name) - held
        left = need.get(name)
        if not (left < idle or abs(left - idle) < TOLERANCE):
            return False
    return True


def _feasible(filters: list[NodeFilter], facts: _Facts, state: _NodeState) -> bool:
    if any(fails(facts.pod, state.node) is not None for fails in filters):
        return False
    if filters and state.k8s_pods >= _pod_limit(state.node):
        return False
    return _fits_idle(facts, state)


def _score_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    if any(result.pipelined.values()) or any(
        t.status in ("Allocated", "Pipelined") for t in result.tasks.values()
    ):
        return []  # kept statements hold resources no bind shows
    scorers = _scorers(inputs)
    if not scorers:
        return []
    view = cycles(inputs, result)[-1]
    request = requests(inputs)
    states = {}
    on_nodes = _on_nodes(view, {n.meta.name for n in inputs.cluster.nodes})
    for n in inputs.cluster.nodes:
        held = [view.pods[k] for k in on_nodes.get(n.meta.name, ()) if view.status(k) in HOLDING]
        states[n.meta.name] = _NodeState(n, held, request)
    # Quirk kept: only the predicates plugin's AllocateFunc (predicates.go:216) adds a
    # task to ssn.NodeMap, so without a predicates entry nodeorder scores every task
    # against the nodes as the session opened them.
    tracked = bool(plugin_entries(inputs.conf, "predicates"))
    filters = node_filters(inputs.conf)
    terms = [term for other in inputs.cluster.pods for term in _terms(other)]
    messages: list[str] = []
    for bind in view.binds:
        pod = view.pods.get(bind.task)
        if pod is None or bind.node not in states:
            continue
        # Allocate's binds (backfill's take no resources), of pods whose filters and
        # scores are all restated here.
        if not best_effort(pod) and not _unrestated(pod, terms):
            message = _judge(
                filters, _Facts.of(pod, request), bind.node, list(states.values()), scorers
            )
            if message:
                messages.append(f"cycle {view.cycle}: {bind.task} bound to {bind.node}: {message}")
        states[bind.node].add(pod, tracked=tracked)
    return messages


def _may_select(term: PodAffinityTerm, pod: Pod) -> bool:
    """Whether a pod (anti-)affinity term may select the pod: its matchLabels hold
    (expressions, namespaces and namespace selectors are not looked at: "may")."""
    selector = term.label_selector
    if selector is None:
        return False
    return all(pod.meta.labels.get(k) == v for k, v in selector.match_labels)


def _terms(pod: Pod) -> list[PodAffinityTerm]:
    affinity = pod.affinity
    out: list[PodAffinityTerm] = []
    for group in (affinity.pod_affinity, affinity.pod_anti_affinity) if affinity else ():
        if group is not None:
            out.extend(group.required)
            out.extend(w.term for w in group.preferred)
    return out


def _unrestated(pod: Pod, terms: Sequence[PodAffinityTerm]) -> bool:
    """A pod whose node choice reads what is not restated: its own inter-pod affinity,
    host ports or spread constraints, or another pod's (anti-)affinity term that may
    select it (InterPodAffinity's filter and its score of existing pods' terms)."""
    if complex_pod(pod):
        return True
    return any(_may_select(term, pod) for term in terms)


def _judge(
    filters: list[NodeFilter],
    facts: _Facts,
    chosen: str,
    states: list[_NodeState],
    scorers: list[_Scorer],
) -> str | None:
    candidates = [s for s in states if _feasible(filters, facts, s)]
    names = [s.node.meta.name for s in candidates]
    if len(candidates) < 2 or chosen not in names:
        return None  # one candidate is taken unscored; a bind outside them is another check's
    scores = _scores(facts, candidates, scorers)
    best = max(scores)
    got = scores[names.index(chosen)]
    if got >= best - _EPSILON * max(1.0, abs(best)):
        return None
    table = ", ".join(f"{n} {s:g}" for n, s in zip(names, scores, strict=True))
    return f"its score {got:g} is below the best {best:g} among the candidates ({table})"


register(
    Invariant(
        "best-score",
        "allocate binds each task to a node of the highest nodeorder + binpack score",
        "In the last cycle, replaying its binds in order (each bound pod joins its node): "
        "every bind of a pod that requests resources goes to a node whose score is the "
        "highest among the candidates, the nodes that pass the predicates plugin's "
        "unschedulable, affinity, taint and pod-count filters and whose idle resources "
        "(allocatable minus the requests of the pods on it) take the pod. The score is the "
        "sum, over the NodeOrder entries that are on, of nodeorder's leastrequested x "
        "LeastAllocated + mostrequested x MostAllocated (cpu and memory, Kubernetes' "
        "defaults for unset requests) + balancedresource x BalancedAllocation + "
        "nodeaffinity x the raw sum of matching preferred weights + tainttoleration x the "
        "normalised PreferNoSchedule score, and binpack's weighted fill of the node's used "
        "plus the request, times 100 x binpack.weight. Ties are Volcano's random choice: "
        "any node of the best score passes (within 1e-9, for float sums).",
        "Configurations where `liveness` applies, allocate is listed once, nodeorder or "
        "binpack orders nodes, there is one predicates entry at most and its "
        "predicate.CacheEnable is off, there are at most "
        "minNodesToFind nodes (Volcano then examines them all), no node has images or "
        "oversubscription, no pod has init containers or overhead, and the weights are "
        "integers; judged only when the last cycle ends with no pipelined or "
        "allocated-but-unbound task, and only for pods without inter-pod affinity, host "
        "ports or spread constraints that no pod's (anti-)affinity term may select. It "
        "costs about a session, so a spec run checks it only when pods x nodes is at most "
        f"{SCORE_MAX_PAIRS:,} (or when the spec or project requests it); vspec fuzz "
        "checks it on every example.",
        _score_applies,
        _score_check,
    )
)
