"""Kubernetes v1.31 filters: codes and reasons as Volcano receives them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import node as k8s_node
from tests.builders import node_info, snapshot
from tests.builders import pod as k8s_pod
from vspec.api.types import Code, Status
from vspec.k8s.filters import (
    ERR_REASON_AFFINITY_RULES,
    ERR_REASON_ANTI_AFFINITY_RULES,
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    ERR_REASON_NODE_AFFINITY,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    ERR_REASON_NODE_PORTS,
    ERR_REASON_UNSCHEDULABLE,
    PreFilterError,
    inter_pod_affinity,
    inter_pod_affinity_pre_filter,
    node_affinity,
    node_ports,
    node_ports_pre_filter,
    node_unschedulable,
    pod_topology_spread,
    pod_topology_spread_pre_filter,
    taint_toleration,
    tolerates,
)
from vspec.k8s.labels import RequiredNodeAffinity
from vspec.k8s.podinfo import PodInfo
from vspec.model.corev1 import Taint, Toleration

# -- taints and unschedulable -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        (Toleration(key="k", operator="Equal", value="v"), True),
        (Toleration(key="k", operator="", value="v"), True),
        (Toleration(key="k", operator="Equal", value="w"), False),
        (Toleration(key="k", operator="Exists"), True),
        (Toleration(operator="Exists"), True),
        (Toleration(key="k", operator="Exists", effect="NoExecute"), False),
        (Toleration(key="other", operator="Exists"), False),
        (Toleration(key="k", operator="Bogus", value="v"), False),
    ],
)
def test_toleration_matching(toleration: Toleration, expected: bool) -> None:
    assert tolerates(toleration, Taint("k", "v", "NoSchedule")) is expected


def test_first_untolerated_no_schedule_or_no_execute_taint_is_named() -> None:
    node = k8s_node(
        "n1",
        taints=[
            {"key": "soft", "value": "x", "effect": "PreferNoSchedule"},
            {"key": "gpu", "value": "true", "effect": "NoSchedule"},
            {"key": "evict", "effect": "NoExecute"},
        ],
    )
    status = taint_toleration([], node)
    assert status == Status(
        Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint {gpu: true}"
    )
    tolerated = [Toleration(key="gpu", operator="Exists")]
    assert taint_toleration(tolerated, node) == Status(
        Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint {evict: }"
    )
    everything = [Toleration(operator="Exists")]
    assert taint_toleration(everything, node) is None


def test_unschedulable_node_unless_the_taint_is_tolerated() -> None:
    node = k8s_node("n1", unschedulable=True)
    assert node_unschedulable([], node) == Status(
        Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE
    )
    toleration = Toleration(key="node.kubernetes.io/unschedulable", operator="Exists")
    assert node_unschedulable([toleration], node) is None
    assert node_unschedulable([], k8s_node("n2")) is None


def test_node_affinity_reason() -> None:
    required = RequiredNodeAffinity({"role": "master"}, None)
    assert node_affinity(required, k8s_node("n1", labels={"role": "worker"})) == Status(
        Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_AFFINITY
    )
    assert node_affinity(required, k8s_node("n2", labels={"role": "master"})) is None


# -- NodePorts ---------------------------------------------------------------------------------


def _ported(name: str, port: int, **kwargs: Any) -> Any:
    ports = [{"containerPort": 80, "hostPort": port, **kwargs}]
    return k8s_pod("ns1", name, containers=[{"name": "c", "ports": ports}])


def test_node_ports() -> None:
    assert node_ports_pre_filter(PodInfo(k8s_pod("ns1", "no-ports"))) is None
    wanted = node_ports_pre_filter(PodInfo(_ported("p", 8080)))
    assert wanted == (("0.0.0.0", "TCP", 8080),)
    busy = node_info(k8s_node("n1"), _ported("q", 8080))
    assert node_ports(wanted, busy) == Status(Code.Unschedulable, ERR_REASON_NODE_PORTS)
    udp = node_info(k8s_node("n2"), _ported("q", 8080, protocol="UDP"))
    assert node_ports(wanted, udp) is None


# -- InterPodAffinity ---------------------------------------------------------------------------

ZONE = "zone"


def _term(labels: dict[str, str], key: str = ZONE, **extra: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key, **extra}


def _required(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def test_pod_without_terms_and_no_existing_anti_affinity_is_skipped() -> None:
    snap = snapshot(
        node_info(k8s_node("n1"), k8s_pod("ns1", "a", labels={"app": "x"}, node_name="n1"))
    )
    assert inter_pod_affinity_pre_filter(PodInfo(k8s_pod("ns1", "p")), snap) is None


def test_required_affinity_needs_a_matching_pod_in_the_topology() -> None:
    z1 = node_info(k8s_node("n1", labels={ZONE: "z1"}), k8s_pod("ns1", "db", labels={"app": "db"}))
    z2 = node_info(k8s_node("n2", labels={ZONE: "z2"}))
    bare = node_info(k8s_node("n3"))
    pod = PodInfo(k8s_pod("ns1", "web", affinity=_required("podAffinity", _term({"app": "db"}))))
    state = inter_pod_affinity_pre_filter(pod, snapshot(z1, z2, bare))
    assert state is not None
    assert inter_pod_affinity(state, z1.node) is None
    fail = Status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES)
    assert inter_pod_affinity(state, z2.node) == fail
    assert inter_pod_affinity(state, bare.node) == fail


def test_first_pod_of_a_self_affine_group_may_go_anywhere_with_the_label() -> None:
    z1 = node_info(k8s_node("n1", labels={ZONE: "z1"}))
    bare = node_info(k8s_node("n2"))
    pod = PodInfo(
        k8s_pod(
            "ns1", "w", labels={"app": "w"}, affinity=_required("podAffinity", _term({"app": "w"}))
        )
    )
    state = inter_pod_affinity_pre_filter(pod, snapshot(z1, bare))
    assert state is not None
    assert inter_pod_affinity(state, z1.node) is None
    assert inter_pod_affinity(state, bare.node) is not None


def test_incoming_anti_affinity() -> None:
    z1 = node_info(k8s_node("n1", labels={ZONE: "z1"}), k8s_pod("ns1", "a", labels={"app": "x"}))
    z2 = node_info(k8s_node("n2", labels={ZONE: "z2"}))
    pod = PodInfo(k8s_pod("ns1", "b", affinity=_required("podAntiAffinity", _term({"app": "x"}))))
    state = inter_pod_affinity_pre_filter(pod, snapshot(z1, z2))
    assert state is not None
    assert inter_pod_affinity(state, z1.node) == Status(
        Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES
    )
    assert inter_pod_affinity(state, z2.node) is None


def test_existing_pods_anti_affinity() -> None:
    guard = k8s_pod("ns1", "guard", affinity=_required("podAntiAffinity", _term({"app": "x"})))
    z1 = node_info(k8s_node("n1", labels={ZONE: "z1"}), guard)
    z1b = node_info(k8s_node("n1b", labels={ZONE: "z1"}))
    z2 = node_info(k8s_node("n2", labels={ZONE: "z2"}))
    snap = snapshot(z1, z1b, z2)
    state = inter_pod_affinity_pre_filter(PodInfo(k8s_pod("ns1", "x", labels={"app": "x"})), snap)
    assert state is not None
    reject = Status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY)
    assert inter_pod_affinity(state, z1b.node) == reject  # same zone as the guard
    assert inter_pod_affinity(state, z2.node) is None
    # A pod the guard does not select is not constrained at all.
    assert (
        inter_pod_affinity_pre_filter(PodInfo(k8s_pod("ns1", "y", labels={"app": "y"})), snap)
        is None
    )


def test_terms_default_to_the_pods_namespace() -> None:
    other = node_info(k8s_node("n1", labels={ZONE: "z1"}), k8s_pod("ns2", "a", labels={"app": "x"}))
    pod = PodInfo(k8s_pod("ns1", "b", affinity=_required("podAntiAffinity", _term({"app": "x"}))))
    assert inter_pod_affinity_pre_filter(pod, snapshot(other)) is not None
    state = inter_pod_affinity_pre_filter(pod, snapshot(other))
    assert state is not None and inter_pod_affinity(state, other.node) is None
    listed = PodInfo(
        k8s_pod(
            "ns1",
            "c",
            affinity=_required("podAntiAffinity", _term({"app": "x"}, namespaces=["ns2"])),
        )
    )
    state = inter_pod_affinity_pre_filter(listed, snapshot(other))
    assert state is not None and inter_pod_affinity(state, other.node) is not None


def test_namespace_selector_resolves_through_namespace_labels() -> None:
    other = node_info(k8s_node("n1", labels={ZONE: "z1"}), k8s_pod("ns2", "a", labels={"app": "x"}))
    by_label = _term({"app": "x"}, namespaceSelector={"matchLabels": {"team": "t"}})
    pod = PodInfo(k8s_pod("ns1", "b", affinity=_required("podAntiAffinity", by_label)))
    labelled = snapshot(other, namespaces={"ns2": {"team": "t"}})
    state = inter_pod_affinity_pre_filter(pod, labelled)
    assert state is not None and inter_pod_affinity(state, other.node) is not None
    state = inter_pod_affinity_pre_filter(pod, snapshot(other, namespaces={"ns2": {}}))
    assert state is not None and inter_pod_affinity(state, other.node) is None
    # An empty namespace selector selects every namespace.
    everywhere = _term({"app": "x"}, namespaceSelector={})
    pod = PodInfo(k8s_pod("ns1", "c", affinity=_required("podAntiAffinity", everywhere)))
    state = inter_pod_affinity_pre_filter(pod, snapshot(other))
    assert state is not None and inter_pod_affinity(state, other.node) is not None


def test_match_label_keys_are_merged_into_the_selector() -> None:
    z1 = node_info(
        k8s_node("n1", labels={ZONE: "z1"}), k8s_pod("ns1", "a", labels={"app": "x", "ver": "1"})
    )
    term = _term({"app": "x"}, matchLabelKeys=["ver"])
    same = PodInfo(
        k8s_pod("ns1", "b", labels={"ver": "1"}, affinity=_required("podAntiAffinity", term))
    )
    newer = PodInfo(
        k8s_pod("ns1", "c", labels={"ver": "2"}, affinity=_required("podAntiAffinity", term))
    )
    state = inter_pod_affinity_pre_filter(same, snapshot(z1))
    assert state is not None and inter_pod_affinity(state, z1.node) is not None
    state = inter_pod_affinity_pre_filter(newer, snapshot(z1))
    assert state is not None and inter_pod_affinity(state, z1.node) is None


def test_unparsable_terms_fail_the_pre_filter() -> None:
    bad = {
        "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]},
        "topologyKey": ZONE,
    }
    pod = PodInfo(k8s_pod("ns1", "b", affinity=_required("podAffinity", bad)))
    with pytest.raises(PreFilterError, match="parsing pod"):
        inter_pod_affinity_pre_filter(pod, snapshot())


# -- PodTopologySpread --------------------------------------------------------------------------


def _spread(max_skew: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "maxSkew": max_skew,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "s"}},
        **extra,
    }


def _spread_cluster() -> tuple[Any, Any, Any]:
    z1 = node_info(
        k8s_node("n1", labels={ZONE: "z1"}),
        k8s_pod("ns1", "a", labels={"app": "s"}),
        k8s_pod("ns1", "b", labels={"app": "s"}),
        k8s_pod("ns1", "gone", labels={"app": "s"}, deleting=True),
        k8s_pod("ns2", "other-ns", labels={"app": "s"}),
    )
    z2 = node_info(k8s_node("n2", labels={ZONE: "z2"}), k8s_pod("ns1", "c", labels={"app": "s"}))
    bare = node_info(k8s_node("n3"))
    return z1, z2, bare


def test_spread_skew_counts_matching_pods_per_domain() -> None:
    z1, z2, bare = _spread_cluster()
    pod = k8s_pod("ns1", "new", labels={"app": "s"}, spread=[_spread()])
    state = pod_topology_spread_pre_filter(pod, snapshot(z1, z2, bare))
    assert state is not None
    assert state.pair_match_num == {(ZONE, "z1"): 2, (ZONE, "z2"): 1}
    # z1: 2 + 1 - 1 = 2 > 1; z2: 1 + 1 - 1 = 1.
    assert pod_topology_spread(state, pod, z1.node) == Status(
        Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH
    )
    assert pod_topology_spread(state, pod, z2.node) is None
    assert pod_topology_spread(state, pod, bare.node) == Status(
        Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH
    )


def test_spread_min_domains_makes_the_global_minimum_zero() -> None:
    z1, z2, _ = _spread_cluster()
    pod = k8s_pod("ns1", "new", labels={"app": "s"}, spread=[_spread(max_skew=2, minDomains=3)])
    state = pod_topology_spread_pre_filter(pod, snapshot(z1, z2))
    assert state is not None
    # Two domains < minDomains 3: z2 gives 1 + 1 - 0 = 2 <= 2, z1 gives 3 > 2.
    assert pod_topology_spread(state, pod, z2.node) is None
    assert pod_topology_spread(state, pod, z1.node) is not None


def test_spread_honours_node_affinity_when_counting() -> None:
    z1, z2, _ = _spread_cluster()
    pod = k8s_pod("ns1", "new", labels={"app": "s"}, spread=[_spread()], node_selector={ZONE: "z2"})
    state = pod_topology_spread_pre_filter(pod, snapshot(z1, z2))
    assert state is not None
    assert state.pair_match_num == {(ZONE, "z2"): 1}
    ignore = k8s_pod(
        "ns1",
        "new2",
        labels={"app": "s"},
        spread=[_spread(nodeAffinityPolicy="Ignore")],
        node_selector={ZONE: "z2"},
    )
    state = pod_topology_spread_pre_filter(ignore, snapshot(z1, z2))
    assert state is not None and state.pair_match_num[(ZONE, "z1")] == 2


def test_spread_without_hard_constraints_is_skipped() -> None:
    soft = dict(_spread(), whenUnsatisfiable="ScheduleAnyway")
    pod = k8s_pod("ns1", "new", spread=[soft])
    assert pod_topology_spread_pre_filter(pod, snapshot()) is None
