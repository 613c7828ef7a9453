"""The Kubernetes v1.31 score plugins Volcano's ``nodeorder`` plugin calls.

Scores are Kubernetes' int64 arithmetic: integer division truncates toward zero, and
float steps are done in the same order as in Go so that rounding matches.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from vspec.errors import GoError
from vspec.golang import go_div, go_round
from vspec.k8s.filters import (
    LABEL_HOSTNAME,
    PREFER_NO_SCHEDULE,
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    count_pods_match_selector,
    node_has_topology_keys,
    spread_constraints,
    tolerations_tolerate,
)
from vspec.k8s.labels import RequiredNodeAffinity, SelectorError
from vspec.k8s.nodeinfo import K8sNodeInfo, Snapshot
from vspec.k8s.podinfo import CPU, MEMORY, PodInfo, WeightedAffinityTerm
from vspec.model.corev1 import Taint, Toleration
from vspec.model.objects import Node, Pod

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
# ImageLocality thresholds (imagelocality.go): 23MB and 1000MB per container.
MIN_IMAGE_THRESHOLD = 23 * 1024 * 1024
MAX_CONTAINER_IMAGE_THRESHOLD = 1000 * 1024 * 1024
GPU = "nvidia.com/gpu"
_CPU_MEMORY = (CPU, MEMORY)
_BALANCED_RESOURCES = (CPU, MEMORY, GPU)


class ScoreError(GoError):
    """A Kubernetes scorer failed: Volcano drops this node's (or the batch's) score."""


# -- NodeResourcesFit and BalancedAllocation -------------------------------------------------


def _least_requested(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def _most_requested(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    # Pods without requests count minimum values, so requests may exceed capacity.
    requested = min(requested, capacity)
    return requested * MAX_NODE_SCORE // capacity


def _cpu_memory_score(pod: PodInfo, node: K8sNodeInfo, weight: int, least: bool) -> int:
    """LeastAllocated / MostAllocated over cpu and memory with equal weights, on
    non-zero requests (node's sum plus the pod's)."""
    scorer = _least_requested if least else _most_requested
    total = weight_sum = 0
    alloc_cpu = node.allocatable.get(CPU, 0)
    if alloc_cpu:
        total += scorer(node.non0_cpu + pod.non0_cpu, alloc_cpu) * weight
        weight_sum += weight
    alloc_mem = node.allocatable.get(MEMORY, 0)
    if alloc_mem:
        total += scorer(node.non0_mem + pod.non0_mem, alloc_mem) * weight
        weight_sum += weight
    return total // weight_sum if weight_sum else 0


def least_allocated(pod: PodInfo, node: K8sNodeInfo) -> int:
    """NodeResourcesFit LeastAllocated with Volcano's resources (cpu 50, memory 50)."""
    return _cpu_memory_score(pod, node, 50, least=True)


def most_allocated(pod: PodInfo, node: K8sNodeInfo) -> int:
    """NodeResourcesFit MostAllocated with Volcano's resources (cpu 1, memory 1)."""
    return _cpu_memory_score(pod, node, 1, least=False)


def balanced_allocation(pod: PodInfo, node: K8sNodeInfo) -> int:
    """BalancedAllocation over cpu, memory and nvidia.com/gpu on real requests.

    A resource the node has none of is left out, and so is the GPU when the pod does
    not request it; fractions are capped at 1.
    """
    alloc, used, req = node.allocatable, node.requested, pod.requested
    fractions: list[float] = []
    for name in _BALANCED_RESOURCES if req.get(GPU) else _CPU_MEMORY:
        capacity = alloc.get(name, 0)
        if capacity:
            fraction = float(used.get(name, 0) + req.get(name, 0)) / float(capacity)
            fractions.append(1.0 if fraction > 1 else fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


# -- ImageLocality ---------------------------------------------------------------------------


def image_locality(
    images: Sequence[str], num_containers: int, node: K8sNodeInfo, total_nodes: int
) -> int:
    total = 0
    states = node.image_states
    if states:
        for image in images:
            state = states.get(image)
            if state is not None:
                total += int(float(state.size) * (float(state.num_nodes) / float(total_nodes)))
    max_threshold = MAX_CONTAINER_IMAGE_THRESHOLD * num_containers
    if total < MIN_IMAGE_THRESHOLD:
        total = MIN_IMAGE_THRESHOLD
    elif total > max_threshold:
        total = max_threshold
    return go_div(
        MAX_NODE_SCORE * (total - MIN_IMAGE_THRESHOLD), max_threshold - MIN_IMAGE_THRESHOLD
    )


# -- TaintToleration -------------------------------------------------------------------------


def prefer_no_schedule_tolerations(tolerations: Iterable[Toleration]) -> list[Toleration]:
    """Tolerations whose effect is empty or PreferNoSchedule."""
    return [t for t in tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]


def intolerable_prefer_no_schedule_taints(
    taints: Iterable[Taint], tolerations: Sequence[Toleration]
) -> int:
    return sum(
        1
        for taint in taints
        if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate(tolerations, taint)
    )


def default_normalize_score(scores: list[int], reverse: bool) -> list[int]:
    """``helper.DefaultNormalizeScore`` to 0..100; all zero and reversed gives 100 each."""
    max_count = max(scores, default=0)
    max_count = max(max_count, 0)
    if max_count == 0:
        return [MAX_NODE_SCORE] * len(scores) if reverse else scores
    result = []
    for s in scores:
        score = go_div(MAX_NODE_SCORE * s, max_count)
        result.append(MAX_NODE_SCORE - score if reverse else score)
    return result


# -- InterPodAffinity ------------------------------------------------------------------------

TopologyScore = dict[str, dict[str, int]]


def _process_terms(
    score: TopologyScore,
    terms: Iterable[WeightedAffinityTerm],
    namespace: str,
    labels: Mapping[str, str],
    ns_labels: Mapping[str, str] | None,
    node_labels: Mapping[str, str],
    multiplier: int,
) -> None:
    for wt in terms:
        term = wt.term
        if term.matches(namespace, labels, ns_labels):
            tv = node_labels.get(term.topology_key)
            if tv is not None:
                values = score.setdefault(term.topology_key, {})
                values[tv] = values.get(tv, 0) + wt.weight * multiplier


def inter_pod_affinity_pre_score(pod: PodInfo, snapshot: Snapshot) -> TopologyScore | None:
    """InterPodAffinity PreScore; ``None`` is Skip (nothing to score).

    Volcano builds the plugin with empty args, so ``hardPodAffinityWeight`` is 0 and
    existing pods' *required* affinity terms add nothing.
    """
    has_constraints = bool(pod.preferred_affinity_terms or pod.preferred_anti_affinity_terms)
    nodes = snapshot.node_list if has_constraints else snapshot.have_pods_with_affinity
    if not nodes:
        return None
    ns_all = snapshot.namespace_labels
    preferred = [
        WeightedAffinityTerm(w.term.merged_namespaces(ns_all), w.weight)
        for w in pod.preferred_affinity_terms
    ]
    preferred_anti = [
        WeightedAffinityTerm(w.term.merged_namespaces(ns_all), w.weight)
        for w in pod.preferred_anti_affinity_terms
    ]
    ns_labels = ns_all.get(pod.namespace)
    score: TopologyScore = {}
    for ni in nodes:
        node_labels = ni.node.meta.labels
        if not node_labels:
            continue
        existing_pods = ni.pod_infos if has_constraints else ni.pods_with_affinity
        for existing in existing_pods.values():
            ens, elabels = existing.namespace, existing.labels
            _process_terms(score, preferred, ens, elabels, None, node_labels, 1)
            _process_terms(score, preferred_anti, ens, elabels, None, node_labels, -1)
            _process_terms(
                score,
                existing.preferred_affinity_terms,
                pod.namespace,
                pod.labels,
                ns_labels,
                node_labels,
                1,
            )
            _process_terms(
                score,
                existing.preferred_anti_affinity_terms,
                pod.namespace,
                pod.labels,
                ns_labels,
                node_labels,
                -1,
            )
    return score or None


def inter_pod_affinity_score(topology_score: TopologyScore, node: Node) -> int:
    labels = node.meta.labels
    total = 0
    for key, values in topology_score.items():
        tv = labels.get(key)
        if tv is not None:
            total += values.get(tv, 0)
    return total


def min_max_normalize(scores: list[int]) -> list[int]:
    """InterPodAffinity NormalizeScore: (s - min) / (max - min) scaled to 0..100."""
    if not scores:
        return scores
    lo, hi = min(scores), max(scores)
    diff = hi - lo
    if diff <= 0:
        return [0] * len(scores)
    return [int(float(MAX_NODE_SCORE) * (float(s - lo) / float(diff))) for s in scores]


# -- PodTopologySpread -----------------------------------------------------------------------


class TopologySpreadScoreState:
    """PodTopologySpread's preScoreState for ScheduleAnyway constraints."""

    __slots__ = ("constraints", "ignored_nodes", "namespace", "pair_counts", "weights")

    def __init__(
        self,
        pod: Pod,
        constraints: list[SpreadConstraint],
        candidates: Sequence[Node],
        snapshot: Snapshot,
    ) -> None:
        self.constraints = constraints
        self.namespace = pod.meta.namespace
        self.ignored_nodes: set[str] = set()
        self.pair_counts: dict[tuple[str, str], int] = {}
        topo_size = [0] * len(constraints)
        for node in candidates:
            labels = node.meta.labels
            if not node_has_topology_keys(labels, constraints):
                self.ignored_nodes.add(node.meta.name)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key == LABEL_HOSTNAME:
                    continue  # per-node counts are taken in Score
                pair = (c.topology_key, labels[c.topology_key])
                if pair not in self.pair_counts:
                    self.pair_counts[pair] = 0
                    topo_size[i] += 1
        scored = len(candidates) - len(self.ignored_nodes)
        self.weights = [
            math.log(float((scored if c.topology_key == LABEL_HOSTNAME else topo_size[i]) + 2))
            for i, c in enumerate(constraints)
        ]
        required = RequiredNodeAffinity(
            pod.node_selector, pod.affinity.node_affinity if pod.affinity else None
        )
        for ni in snapshot.node_list:
            node = ni.node
            labels = node.meta.labels
            if not node_has_topology_keys(labels, constraints):
                continue
            for c in constraints:
                if not c.matches_node_inclusion_policies(pod, node, required):
                    continue
                pair = (c.topology_key, labels[c.topology_key])
                if pair in self.pair_counts:
                    self.pair_counts[pair] += count_pods_match_selector(
                        ni.pod_infos.values(), c.selector, self.namespace
                    )

    def score(self, node: K8sNodeInfo) -> int:
        if node.name in self.ignored_nodes:
            return 0
        labels = node.node.meta.labels
        total = 0.0
        for c, weight in zip(self.constraints, self.weights, strict=True):
            tv = labels.get(c.topology_key)
            if tv is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                count = count_pods_match_selector(
                    node.pod_infos.values(), c.selector, self.namespace
                )
            else:
                count = self.pair_counts[(c.topology_key, tv)]
            total += float(count) * weight + float(c.max_skew - 1)
        return go_round(total)

    def normalize(self, names: Sequence[str], scores: list[int]) -> list[int]:
        """Fewer matching pods score higher; ignored nodes get 0."""
        valid = [s for name, s in zip(names, scores, strict=True) if name not in self.ignored_nodes]
        lo = min(valid, default=0)
        hi = max(max(valid, default=0), 0)
        result = []
        for name, s in zip(names, scores, strict=True):
            if name in self.ignored_nodes:
                result.append(0)
            elif hi == 0:
                result.append(MAX_NODE_SCORE)
            else:
                result.append(go_div(MAX_NODE_SCORE * (hi + lo - s), hi))
        return result


def pod_topology_spread_pre_score(
    pod: Pod, candidates: Sequence[Node], snapshot: Snapshot
) -> TopologySpreadScoreState | None:
    """``None`` is Skip: the pod has no ScheduleAnyway constraint."""
    try:
        constraints = spread_constraints(pod, SCHEDULE_ANYWAY)
    except SelectorError as err:
        raise ScoreError(
            f"calculating preScoreState: obtaining pod's soft topology spread constraints: {err}"
        ) from err
    if not constraints or not snapshot.node_list:
        return None
    return TopologySpreadScoreState(pod, constraints, candidates, snapshot)
