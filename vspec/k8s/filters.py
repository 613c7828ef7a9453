"""The Kubernetes v1.31 filter plugins Volcano's ``predicates`` plugin calls.

Each filter returns ``None`` for success or a :class:`~vspec.api.types.Status` carrying
the Kubernetes code and reason (what ``api.ConvertPredicateStatus`` makes of it). The
PreFilter halves return their state, ``None`` for Kubernetes' "Skip", or raise
:class:`PreFilterError`. Plugins call these directly, as Volcano does, so the status's
plugin name stays empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from vspec.api.types import Code, Status
from vspec.errors import GoError
from vspec.k8s.labels import (
    RequiredNodeAffinity,
    Selector,
    SelectorError,
    equals_requirement,
    selector_from_label_selector,
)
from vspec.k8s.nodeinfo import K8sNodeInfo, Snapshot
from vspec.k8s.podinfo import AffinityTerm, HostPort, PodInfo
from vspec.model.corev1 import Taint, Toleration, TopologySpreadConstraint
from vspec.model.objects import Node, Pod

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
ERR_REASON_AFFINITY_RULES = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules"
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
LABEL_HOSTNAME = "kubernetes.io/hostname"
_DO_NOT_SCHEDULE_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)

TopologyPair = tuple[str, str]


class PreFilterError(GoError):
    """A PreFilter failure other than Skip (Volcano: "plugin <n> pre-predicates failed <msg>")."""


# -- taints ----------------------------------------------------------------------------------


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint``: empty effect/key match all; Equal compares values."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def tolerations_tolerate(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def find_untolerated_taint(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: tuple[str, ...]
) -> Taint | None:
    """``FindMatchingUntoleratedTaint``: the first taint of those effects not tolerated."""
    for taint in taints:
        if taint.effect in effects and not tolerations_tolerate(tolerations, taint):
            return taint
    return None


_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)


def node_unschedulable(tolerations: Sequence[Toleration], node: Node) -> Status | None:
    """NodeUnschedulable: a cordoned node, unless the pod tolerates the unschedulable taint."""
    if not node.unschedulable or tolerations_tolerate(tolerations, _UNSCHEDULABLE_TAINT):
        return None
    return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)


def node_affinity(required: RequiredNodeAffinity, node: Node) -> Status | None:
    """NodeAffinity Filter: ``spec.nodeSelector`` and required node affinity."""
    if required.matches(node):
        return None
    return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_AFFINITY)


def taint_toleration(tolerations: Sequence[Toleration], node: Node) -> Status | None:
    """TaintToleration Filter: NoSchedule and NoExecute taints must be tolerated."""
    if not node.taints:
        return None
    taint = find_untolerated_taint(node.taints, tolerations, _DO_NOT_SCHEDULE_EFFECTS)
    if taint is None:
        return None
    return Status(
        Code.UnschedulableAndUnresolvable,
        f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}",
    )


# -- NodePorts -------------------------------------------------------------------------------


def node_ports_pre_filter(pod: PodInfo) -> tuple[HostPort, ...] | None:
    """The wanted host ports; ``None`` (Skip) for a pod without any."""
    return pod.host_ports or None


def node_ports(wanted: Sequence[HostPort], node: K8sNodeInfo) -> Status | None:
    for port in wanted:
        if node.port_conflicts(port):
            return Status(Code.Unschedulable, ERR_REASON_NODE_PORTS)
    return None


# -- InterPodAffinity ------------------------------------------------------------------------

TopologyCounts = dict[TopologyPair, int]


def _update(counts: TopologyCounts, labels: Mapping[str, str], key: str, delta: int) -> None:
    tv = labels.get(key)
    if tv is not None:
        pair = (key, tv)
        total = counts.get(pair, 0) + delta
        if total == 0:
            counts.pop(pair, None)
        else:
            counts[pair] = total


def pod_matches_all_affinity_terms(terms: Sequence[AffinityTerm], pod: PodInfo) -> bool:
    """Incoming terms have their namespace selectors merged, so no namespace labels."""
    if not terms:
        return False
    return all(t.matches(pod.namespace, pod.labels, None) for t in terms)


class InterPodAffinityState:
    """InterPodAffinity's preFilterState."""

    __slots__ = (
        "affinity_counts",
        "anti_affinity_counts",
        "existing_anti_affinity_counts",
        "pod",
        "required_affinity_terms",
        "required_anti_affinity_terms",
    )

    def __init__(self, pod: PodInfo, snapshot: Snapshot) -> None:
        ns_all = snapshot.namespace_labels
        self.pod = pod
        self.required_affinity_terms = [
            t.merged_namespaces(ns_all) for t in pod.required_affinity_terms
        ]
        self.required_anti_affinity_terms = [
            t.merged_namespaces(ns_all) for t in pod.required_anti_affinity_terms
        ]
        ns_labels = ns_all.get(pod.namespace)
        self.existing_anti_affinity_counts: TopologyCounts = {}
        for ni in snapshot.have_pods_with_required_anti_affinity:
            labels = ni.node.meta.labels
            for existing in ni.pods_with_required_anti_affinity.values():
                for term in existing.required_anti_affinity_terms:
                    if term.matches(pod.namespace, pod.labels, ns_labels):
                        _update(self.existing_anti_affinity_counts, labels, term.topology_key, 1)
        self.affinity_counts: TopologyCounts = {}
        self.anti_affinity_counts: TopologyCounts = {}
        if self.required_affinity_terms or self.required_anti_affinity_terms:
            self._count_incoming(snapshot)

    def _count_incoming(self, snapshot: Snapshot) -> None:
        """``getIncomingAffinityAntiAffinityCounts``: existing pods matching our terms."""
        aff, anti = self.required_affinity_terms, self.required_anti_affinity_terms
        for ni in snapshot.node_list:
            labels = ni.node.meta.labels
            for existing in ni.pod_infos.values():
                if pod_matches_all_affinity_terms(aff, existing):
                    for term in aff:
                        _update(self.affinity_counts, labels, term.topology_key, 1)
                for term in anti:
                    if term.matches(existing.namespace, existing.labels, None):
                        _update(self.anti_affinity_counts, labels, term.topology_key, 1)

    @property
    def skip(self) -> bool:
        return (
            not self.existing_anti_affinity_counts
            and not self.pod.required_affinity_terms
            and not self.pod.required_anti_affinity_terms
        )

    def satisfies_pod_affinity(self, labels: Mapping[str, str]) -> bool:
        pods_exist = True
        for term in self.required_affinity_terms:
            tv = labels.get(term.topology_key)
            if tv is None:
                return False  # every topology label must exist on the node
            if self.affinity_counts.get((term.topology_key, tv), 0) <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # The first pod of a group with affinity to itself may go anywhere it matches.
        return not self.affinity_counts and pod_matches_all_affinity_terms(
            self.required_affinity_terms, self.pod
        )

    def satisfies_pod_anti_affinity(self, labels: Mapping[str, str]) -> bool:
        if self.anti_affinity_counts:
            for term in self.required_anti_affinity_terms:
                tv = labels.get(term.topology_key)
                if tv is not None and self.anti_affinity_counts.get((term.topology_key, tv), 0) > 0:
                    return False
        return True

    def satisfies_existing_pods_anti_affinity(self, labels: Mapping[str, str]) -> bool:
        counts = self.existing_anti_affinity_counts
        if counts:
            for pair in labels.items():
                if counts.get(pair, 0) > 0:
                    return False
        return True


def inter_pod_affinity_pre_filter(pod: PodInfo, snapshot: Snapshot) -> InterPodAffinityState | None:
    if pod.parse_error is not None:
        raise PreFilterError(f"parsing pod: {pod.parse_error}")
    if (
        not pod.required_affinity_terms
        and not pod.required_anti_affinity_terms
        and not snapshot.have_pods_with_required_anti_affinity
    ):
        return None  # the state would count nothing and be skipped: most pods, every task
    state = InterPodAffinityState(pod, snapshot)
    return None if state.skip else state


def inter_pod_affinity(state: InterPodAffinityState, node: Node) -> Status | None:
    labels = node.meta.labels
    if not state.satisfies_pod_affinity(labels):
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES)
    if not state.satisfies_pod_anti_affinity(labels):
        return Status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES)
    if not state.satisfies_existing_pods_anti_affinity(labels):
        return Status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY)
    return None


# -- PodTopologySpread -----------------------------------------------------------------------


class SpreadConstraint:
    """``topologySpreadConstraint``: one constraint with its selector parsed."""

    __slots__ = (
        "max_skew",
        "min_domains",
        "node_affinity_policy",
        "node_taints_policy",
        "selector",
        "topology_key",
    )

    def __init__(self, c: TopologySpreadConstraint, pod_labels: Mapping[str, str]) -> None:
        selector = selector_from_label_selector(c.label_selector)
        extra = [
            equals_requirement(k, pod_labels[k]) for k in c.match_label_keys if k in pod_labels
        ]
        self.selector: Selector = selector.with_requirements(extra) if extra else selector
        self.max_skew = c.max_skew
        self.topology_key = c.topology_key
        self.min_domains = 1 if c.min_domains is None else c.min_domains
        self.node_affinity_policy = c.node_affinity_policy
        self.node_taints_policy = c.node_taints_policy

    def matches_node_inclusion_policies(
        self, pod: Pod, node: Node, required: RequiredNodeAffinity
    ) -> bool:
        if self.node_affinity_policy == HONOR and not required.matches(node):
            return False
        return not (
            self.node_taints_policy == HONOR
            and node.taints
            and find_untolerated_taint(node.taints, pod.tolerations, _DO_NOT_SCHEDULE_EFFECTS)
            is not None
        )


def spread_constraints(pod: Pod, action: str) -> list[SpreadConstraint]:
    """``filterTopologySpreadConstraints``: the pod's constraints for one action.

    Cluster-level (system default) constraints need Services/ReplicaSets selecting the
    pod, which vspec does not model; they are never in effect.
    """
    labels = pod.meta.labels
    return [
        SpreadConstraint(c, labels)
        for c in pod.topology_spread_constraints
        if c.when_unsatisfiable == action
    ]


def node_has_topology_keys(
    labels: Mapping[str, str], constraints: Iterable[SpreadConstraint]
) -> bool:
    return all(c.topology_key in labels for c in constraints)


def count_pods_match_selector(pods: Iterable[PodInfo], selector: Selector, namespace: str) -> int:
    """Terminating pods and pods of other namespaces are not counted."""
    if selector.empty:
        return 0
    return sum(
        1
        for p in pods
        if not p.deleting and p.namespace == namespace and selector.matches(p.labels)
    )


class TopologySpreadState:
    """PodTopologySpread's preFilterState for DoNotSchedule constraints."""

    __slots__ = ("constraints", "domains_num", "min_match", "pair_match_num")

    def __init__(self, pod: Pod, constraints: list[SpreadConstraint], snapshot: Snapshot) -> None:
        self.constraints = constraints
        required = RequiredNodeAffinity(
            pod.node_selector, pod.affinity.node_affinity if pod.affinity else None
        )
        self.pair_match_num: dict[TopologyPair, int] = {}
        for ni in snapshot.node_list:
            node = ni.node
            labels = node.meta.labels
            if not node_has_topology_keys(labels, constraints):
                continue
            # Per node, a later constraint on the same key overwrites the count (as in K8s).
            per_node: dict[TopologyPair, int] = {}
            for c in constraints:
                if not c.matches_node_inclusion_policies(pod, node, required):
                    continue
                pair = (c.topology_key, labels[c.topology_key])
                per_node[pair] = count_pods_match_selector(
                    ni.pod_infos.values(), c.selector, pod.meta.namespace
                )
            for pair, count in per_node.items():
                self.pair_match_num[pair] = self.pair_match_num.get(pair, 0) + count
        self.domains_num: dict[str, int] = {}
        self.min_match: dict[str, int] = {}
        for (key, _), num in self.pair_match_num.items():
            self.domains_num[key] = self.domains_num.get(key, 0) + 1
            if num < self.min_match.get(key, num + 1):
                self.min_match[key] = num


def pod_topology_spread_pre_filter(pod: Pod, snapshot: Snapshot) -> TopologySpreadState | None:
    try:
        constraints = spread_constraints(pod, DO_NOT_SCHEDULE)
    except SelectorError as err:
        raise PreFilterError(f"obtaining pod's hard topology spread constraints: {err}") from err
    if not constraints:
        return None
    return TopologySpreadState(pod, constraints, snapshot)


def pod_topology_spread(state: TopologySpreadState, pod: Pod, node: Node) -> Status | None:
    labels = node.meta.labels
    pod_labels = pod.meta.labels
    for c in state.constraints:
        key = c.topology_key
        tv = labels.get(key)
        if tv is None:
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH)
        domains = state.domains_num.get(key)
        if domains is None:
            continue  # Kubernetes logs an internal error and skips the constraint
        min_match = 0 if domains < c.min_domains else state.min_match[key]
        self_match = 1 if c.selector.matches(pod_labels) else 0
        skew = state.pair_match_num.get((key, tv), 0) + self_match - min_match
        if skew > c.max_skew:
            return Status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return None
