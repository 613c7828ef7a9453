"""predicates: Kubernetes filters with Volcano's codes, the pod-count check, the shared
PreFilter state, and the event handler that keeps the Kubernetes node map current."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.api.types import Code, TaskStatus
from vspec.api.unschedule_info import FitError
from vspec.framework.scheduler import simulate
from vspec.model.conf import load_conf
from vspec.model.corev1 import ContainerPort, Taint, Toleration, parse_affinity
from vspec.model.objects import Cluster
from vspec.plugins.predicates import PredicatesPlugin, PrePredicateError

PREDICATES: dict[str, Any] = {"name": "predicates", "enablePredicate": True}


def _with(arguments: dict[str, Any]) -> dict[str, Any]:
    return {**PREDICATES, "arguments": arguments}


def _cluster(*pods: Any, nodes: list[Any] | None = None) -> Cluster:
    return Cluster(
        nodes=nodes or [node("n1", {"cpu": 4, "memory": "8Gi", "pods": 10})],
        queues=[queue("q1")],
        pod_groups=[pod_group("ns1", "pg1", "q1", min_member=1, phase="Inqueue")],
        pods=list(pods),
    )


def _fit_error(ssn: Any, key: str, node_name: str = "n1") -> FitError | None:
    t = task(ssn, key)
    ssn.pre_predicate_fn(t)
    return ssn.predicate_for_allocate_action(t, ssn.nodes[node_name])  # type: ignore[no-any-return]


def test_pod_number_is_unschedulable_and_ignored_by_preemption() -> None:
    running = pod("ns1", "r", "pg1", {"cpu": 1}, phase="Running", node_name="n1")
    pending = pod("ns1", "p", "pg1", {"cpu": 1})
    ssn = session(
        _cluster(running, pending, nodes=[node("n1", {"cpu": 4, "memory": "8Gi", "pods": 1})]),
        [PREDICATES],
    )
    fe = _fit_error(ssn, "ns1/p")
    assert fe is not None and fe.reasons() == ["node(s) pod number exceeded"]
    assert [s.code for s in fe.statuses] == [Code.Unschedulable]
    t = task(ssn, "ns1/p")
    assert ssn.predicate_for_preempt_action(t, ssn.nodes["n1"]) is None
    assert (
        "NodePodNumber predicates Task <ns1/p> on Node <n1> failed, allocatable <1>, existed <1>"
        in ssn.log.texts()
    )


def test_node_selector_and_its_switch() -> None:
    p = pod("ns1", "p", "pg1", {"cpu": 1})
    p.node_selector = {"role": "master"}
    fe = _fit_error(session(_cluster(p), [PREDICATES]), "ns1/p")
    assert fe is not None
    assert fe.reasons() == ["node(s) didn't match Pod's node affinity/selector"]
    assert fe.has_code(Code.UnschedulableAndUnresolvable)
    off = session(_cluster(p), [_with({"predicate.NodeAffinityEnable": False})])
    assert _fit_error(off, "ns1/p") is None


def test_unresolvable_failure_stops_after_the_pod_count() -> None:
    p = pod("ns1", "p", "pg1", {"cpu": 1})
    full = node("n1", {"cpu": 4, "memory": "8Gi", "pods": 0})
    full.taints = [Taint("gpu", "yes", "NoSchedule")]
    ssn = session(_cluster(p, nodes=[full]), [PREDICATES])
    fe = _fit_error(ssn, "ns1/p")
    assert fe is not None
    assert fe.reasons() == [
        "node(s) pod number exceeded",
        "node(s) had untolerated taint {gpu: yes}",
    ]
    p.tolerations = [Toleration(key="gpu", operator="Exists")]
    fe = _fit_error(session(_cluster(p, nodes=[full]), [PREDICATES]), "ns1/p")
    assert fe is not None and fe.reasons() == ["node(s) pod number exceeded"]


def test_unschedulable_node_is_always_checked() -> None:
    p = pod("ns1", "p", "pg1", {"cpu": 1})
    cordoned = node("n1", {"cpu": 4, "memory": "8Gi", "pods": 10})
    cordoned.unschedulable = True
    arguments = {"predicate.NodeAffinityEnable": False, "predicate.TaintTolerationEnable": False}
    fe = _fit_error(session(_cluster(p, nodes=[cordoned]), [_with(arguments)]), "ns1/p")
    assert fe is not None and fe.reasons() == ["node(s) were unschedulable"]


ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"role": "worker"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}


def test_pod_affinity_failures_are_made_unresolvable() -> None:
    guard = pod("ns1", "guard", "pg1", {"cpu": 1}, phase="Running", node_name="n1")
    guard.affinity = parse_affinity(ANTI)
    worker = pod("ns1", "w", "pg1", {"cpu": 1}, labels={"role": "worker"})
    n1 = node(
        "n1", {"cpu": 4, "memory": "8Gi", "pods": 10}, labels={"kubernetes.io/hostname": "n1"}
    )
    ssn = session(_cluster(guard, worker, nodes=[n1]), [PREDICATES])
    t = task(ssn, "ns1/w")
    ssn.pre_predicate_fn(t)
    fe = ssn.predicate_for_preempt_action(t, ssn.nodes["n1"])
    assert fe is not None
    assert fe.reasons() == ["node(s) didn't satisfy existing pods anti-affinity rules"]
    # Kubernetes says Unschedulable; Volcano forces UnschedulableAndUnresolvable.
    assert [s.code for s in fe.statuses] == [Code.UnschedulableAndUnresolvable]


def _ported(name: str, **kwargs: Any) -> Any:
    p = pod("ns1", name, "pg1", {"cpu": 1}, **kwargs)
    p.containers[0].ports = [ContainerPort(80, host_port=8080)]
    return p


def test_host_ports_follow_allocations_through_the_event_handler() -> None:
    nodes = [node(n, {"cpu": 4, "memory": "8Gi", "pods": 10}) for n in ("n1", "n2")]
    ssn = session(_cluster(_ported("a"), _ported("b"), nodes=nodes), [PREDICATES])
    a, b = task(ssn, "ns1/a"), task(ssn, "ns1/b")
    stmt = ssn.statement()
    stmt.allocate(a, ssn.nodes["n1"])
    assert list(ssn.node_map["n1"].pods) == ["ns1/a"]
    assert "predicates, update pod ns1/a allocate to node [n1]" in ssn.log.texts()
    ssn.pre_predicate_fn(b)
    fe = ssn.predicate_for_allocate_action(b, ssn.nodes["n1"])
    assert fe is not None
    assert fe.reasons() == ["node(s) didn't have free ports for the requested pod ports"]
    assert fe.statuses[0].code == Code.Unschedulable
    assert ssn.predicate_for_allocate_action(b, ssn.nodes["n2"]) is None
    stmt.discard()
    assert ssn.node_map["n1"].pods == {}
    assert ssn.predicate_for_allocate_action(b, ssn.nodes["n1"]) is None


def test_eviction_leaves_the_k8s_node_map_but_not_volcanos_node() -> None:
    running = pod("ns1", "r", "pg1", {"cpu": 1}, phase="Running", node_name="n1")
    ssn = session(_cluster(running), [PREDICATES])
    r = task(ssn, "ns1/r")
    stmt = ssn.statement()
    stmt.evict(r, "test")
    assert "ns1/r" not in ssn.node_map["n1"].pods
    assert ssn.nodes["n1"].tasks["ns1/r"].status == TaskStatus.Releasing
    stmt.discard()
    assert "ns1/r" in ssn.node_map["n1"].pods


def test_filter_without_any_pre_filter_state_is_an_error() -> None:
    ssn = session(_cluster(_ported("a")), [PREDICATES])
    fe = ssn.predicate_for_allocate_action(task(ssn, "ns1/a"), ssn.nodes["n1"])
    assert fe is not None and fe.statuses[0].code == Code.Error
    assert fe.reasons() == ['reading "PreFilterNodePorts" from cycleState: not found']


def test_pre_predicate_failure_names_the_plugin() -> None:
    bad = pod("ns1", "p", "pg1", {"cpu": 1})
    bad.affinity = parse_affinity(
        {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]},
                        "topologyKey": "z",
                    }
                ]
            }
        }
    )
    ssn = session(_cluster(bad), [PREDICATES])
    with pytest.raises(
        PrePredicateError, match=r"^plugin InterPodAffinity pre-predicates failed parsing pod: "
    ):
        ssn.pre_predicate_fn(task(ssn, "ns1/p"))


def test_proportional_keeps_cpu_for_idle_gpus() -> None:
    gpu_node = node("n1", {"cpu": 8, "memory": "64Gi", "nvidia.com/gpu": 2, "pods": 10})
    cpu_only = pod("ns1", "c", "pg1", {"cpu": 1, "memory": "1Gi"})
    gpu_task = pod("ns1", "g", "pg1", {"cpu": 7, "memory": "1Gi", "nvidia.com/gpu": 1})
    arguments = {
        "predicate.ProportionalEnable": True,
        "predicate.resources": "nvidia.com/gpu",
        "predicate.resources.nvidia.com/gpu.cpu": 4,
    }
    ssn = session(_cluster(cpu_only, gpu_task, nodes=[gpu_node]), [_with(arguments)])
    # 2 idle GPUs keep 8 cpus: 8 - 1 < 8 fails; a GPU task is never held back.
    fe = _fit_error(ssn, "ns1/c")
    assert fe is not None
    assert fe.reasons() == ["proportional of resource nvidia.com/gpu check failed"]
    assert fe.statuses[0].code == Code.UnschedulableAndUnresolvable
    assert _fit_error(ssn, "ns1/g") is None


def test_cache_answers_by_template_uid() -> None:
    tainted = node("n1", {"cpu": 4, "memory": "8Gi", "pods": 10})
    tainted.taints = [Taint("k", "v", "NoSchedule")]
    first = pod("ns1", "a", "pg1", {"cpu": 1}, annotations={"volcano.sh/template-uid": "t1"})
    second = pod("ns1", "b", "pg1", {"cpu": 1}, annotations={"volcano.sh/template-uid": "t1"})
    ssn = session(
        _cluster(first, second, nodes=[tainted]), [_with({"predicate.CacheEnable": True})]
    )
    fe = _fit_error(ssn, "ns1/a")
    assert fe is not None and fe.reasons() == ["node(s) had untolerated taint {k: v}"]
    fe = _fit_error(ssn, "ns1/b")
    assert fe is not None and fe.reasons() == ["plugin equivalence cache predicates failed"]
    assert fe.statuses[0].code == Code.Error
    assert "Predicate node n1 and pod b result false" in ssn.log.texts()


def test_arguments_are_documented_with_volcanos_defaults() -> None:
    specs = {a.name: a.default for a in PredicatesPlugin.arguments_spec}
    assert specs["predicate.NodeAffinityEnable"] == "true"
    assert specs["predicate.CacheEnable"] == "false"
    assert specs["predicate.ProportionalEnable"] == "false"


def test_anti_affinity_case_end_to_end() -> None:
    """Volcano's TestPodAntiAffinity: the anti-affine worker neither fits nor preempts."""
    affinity = parse_affinity(ANTI)
    w1 = pod(
        "ns1",
        "w1",
        "pg1",
        {"cpu": 3},
        phase="Running",
        node_name="n1",
        priority=100000,
        labels={"role": "worker"},
    )
    w1.affinity = affinity
    w2 = pod("ns1", "w2", "pg1", {"cpu": 3}, phase="Running", node_name="n1", priority=10)
    w3 = pod("ns1", "w3", "pg2", {"cpu": 3}, priority=100000, labels={"role": "worker"})
    w3.affinity = affinity
    cluster = Cluster(
        nodes=[
            node(
                "n1",
                {"cpu": 12, "memory": "12G", "pods": 2},
                labels={"kubernetes.io/hostname": "node1"},
            )
        ],
        queues=[queue("q1")],
        pod_groups=[
            pod_group("ns1", "pg1", "q1", phase="Running"),
            pod_group("ns1", "pg2", "q1", min_member=1, phase="Inqueue"),
        ],
        pods=[w1, w2, w3],
    )
    conf = load_conf(
        {
            "actions": "allocate, preempt",
            "tiers": [
                {
                    "plugins": [
                        PREDICATES,
                        {"name": "priority", "enablePreemptable": True, "enableJobStarving": True},
                    ]
                }
            ],
        },
        default_plugin_flags=False,
    )
    result = simulate(conf, cluster, verbosity=3)
    assert result.binds == [] and result.evictions == []
    assert any("node(s) didn't match pod anti-affinity rules" in line.text for line in result.logs)


def test_results_are_not_shared_between_different_pod_specs() -> None:
    tainted = node("n1", {"cpu": 4, "memory": "8Gi", "pods": 10})
    tainted.taints = [Taint("k", "v", "NoSchedule")]
    tolerant = pod("ns1", "a", "pg1", {"cpu": 1})
    tolerant.tolerations = [Toleration(key="k", operator="Exists")]
    plain = pod("ns1", "b", "pg1", {"cpu": 1})
    ssn = session(_cluster(tolerant, plain, nodes=[tainted]), [PREDICATES])
    for _ in range(2):
        assert _fit_error(ssn, "ns1/a") is None
        assert _fit_error(ssn, "ns1/b") is not None
