"""What the K8s memo shares between the plugins of a session, and keeps for later ones:
one Snapshot while no node view changed, and values derived from the Node objects
while the node map holds the same Nodes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.builders import node, pod, pod_group, queue
from vspec.api.task_info import TaskInfo
from vspec.engines import get_engine
from vspec.framework.cache import SchedulerCache
from vspec.framework.log import Klog
from vspec.fuzz.runner import SEED_CONF
from vspec.fuzz.strategies import conf_from_document
from vspec.k8s.nodeinfo import K8sMemo, Snapshot, build_node_map
from vspec.model.conf import SchedulerOptions
from vspec.model.objects import Cluster, Pod
from vspec.model.timeline import Arrival, NodeEvent, Timeline
from vspec.timeline.clock import run_timeline


def _lists(snapshot: Snapshot) -> tuple[list[str], ...]:
    return (
        [n.name for n in snapshot.node_list],
        [n.name for n in snapshot.have_pods_with_affinity],
        [n.name for n in snapshot.have_pods_with_required_anti_affinity],
    )


def test_plugins_share_a_snapshot_until_a_node_view_changes() -> None:
    cluster = Cluster(nodes=[node(f"n{i}") for i in range(3)], queues=[queue("default")])
    cache = SchedulerCache(cluster, SchedulerOptions(), Klog(0))
    node_map = build_node_map(cache.snapshot().node_list, cache.k8s)
    first = cache.k8s.snapshot(node_map, cluster)
    assert cache.k8s.snapshot(node_map, cluster) is first
    assert _lists(first) == _lists(Snapshot.of_session(node_map, cluster))
    node_map["n1"].add_task(TaskInfo(pod("ns", "p", "j", {"cpu": 1}, node_name="n1")))
    changed = cache.k8s.snapshot(node_map, cluster)
    assert changed is not first
    assert _lists(changed) == _lists(Snapshot.of_session(node_map, cluster))
    assert cache.k8s.snapshot(node_map, cluster) is not changed  # still changed since


def test_node_derived_values_last_while_the_nodes_do() -> None:
    nodes = [node(f"n{i}") for i in range(3)]
    cluster = Cluster(nodes=nodes, queues=[queue("default")])
    cache = SchedulerCache(cluster, SchedulerOptions(), Klog(0))
    asked: list[int] = []

    def derive() -> int:
        asked.append(1)
        return len(asked)

    build_node_map(cache.snapshot().node_list, cache.k8s)
    assert cache.k8s.node_derived("k", derive) == 1
    cache.update(cluster)  # the same Node objects: the value stands
    build_node_map(cache.snapshot().node_list, cache.k8s)
    assert cache.k8s.node_derived("k", derive) == 1
    renamed = Cluster(nodes=[*nodes[:2], node("n2", labels={"x": "y"})], queues=cluster.queues)
    cache.update(renamed)  # another Node object: derived again
    build_node_map(cache.snapshot().node_list, cache.k8s)
    assert cache.k8s.node_derived("k", derive) == 2


def _term(labels: dict[str, str]) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}


def _placed(name: str, host: str, kind: str, *, preferred: bool = False) -> Pod:
    rule = "preferredDuringSchedulingIgnoredDuringExecution"
    terms: list[dict[str, Any]] = [{"weight": 1, "podAffinityTerm": _term({"a": "b"})}]
    if not preferred:
        rule, terms = "requiredDuringSchedulingIgnoredDuringExecution", [_term({"a": "b"})]
    return pod(
        "ns", name, "j", {"cpu": 1}, node_name=host, phase="Running", affinity={kind: {rule: terms}}
    )


def test_the_kept_affinity_lists_follow_the_nodes_pods() -> None:
    """Pods with affinity and with required anti-affinity come and go between sessions:
    each session's shared Snapshot lists the nodes a fresh one lists, in order."""
    nodes = [node(f"n{i}") for i in range(5)]
    anti = _placed("anti", "n3", "podAntiAffinity")
    near = _placed("near", "n1", "podAffinity", preferred=True)
    later = _placed("later", "n0", "podAntiAffinity")
    clusters = [
        Cluster(nodes=nodes, pods=[anti, near], queues=[queue("default")]),
        Cluster(nodes=nodes, pods=[near, later], queues=[queue("default")]),
        Cluster(nodes=nodes, pods=[near, later, anti], queues=[queue("default")]),
        Cluster(nodes=nodes, pods=[], queues=[queue("default")]),
    ]
    cache = SchedulerCache(clusters[0], SchedulerOptions(), Klog(0))
    seen = []
    for i, cluster in enumerate(clusters):
        if i:
            cache.update(cluster)
        node_map = build_node_map(cache.snapshot().node_list, cache.k8s)
        shared = cache.k8s.snapshot(node_map, cluster)
        assert _lists(shared) == _lists(Snapshot.of_session(node_map, cluster))
        seen.append(_lists(shared)[1:])
    assert seen == [
        (["n1", "n3"], ["n3"]),
        (["n0", "n1"], ["n0"]),
        (["n0", "n1", "n3"], ["n0", "n3"]),
        ([], []),
    ]


def test_kept_node_answers_follow_cordons_over_a_timeline(monkeypatch: pytest.MonkeyPatch) -> None:
    """On 160 nodes (the columnar path), some tainted, jobs arrive while nodes are
    cordoned and uncordoned: the run that keeps values derived from the Nodes (the
    predicates' stable filters, nodeorder's PreferNoSchedule nodes) binds and records
    exactly what a run deriving them every session does."""
    taint = {"key": "k", "value": "v", "effect": "PreferNoSchedule"}
    nodes = [
        node(f"n{i:03}", {"cpu": 2, "pods": 110}, taints=[taint] * (i % 7 == 0)) for i in range(160)
    ]
    timeline = Timeline()
    for j in range(30):
        group = pod_group("ns", f"j{j}", "default", min_member=2)
        pods = [pod("ns", f"j{j}-{i}", f"j{j}", {"cpu": 1}) for i in range(2)]
        run = {p.meta.key: timedelta(seconds=40 + 13 * (j % 5)) for p in pods}
        timeline.arrivals.append(Arrival(timedelta(seconds=5 * j), [group], pods, run))
    for k in range(6):
        kind = "cordon" if k % 2 == 0 else "uncordon"
        for name in (f"n{3 * k:03}", f"n{3 * k + 1:03}"):
            timeline.node_events.append(NodeEvent(timedelta(seconds=20 * k + 7), kind, name))
    cluster = Cluster(nodes=nodes, queues=[queue("default")])
    conf = conf_from_document(SEED_CONF)
    kept = run_timeline(conf, cluster, timeline, engine=get_engine())
    monkeypatch.setattr(K8sMemo, "node_derived", lambda self, key, derive: derive())
    fresh = run_timeline(conf, cluster, timeline, engine=get_engine())
    assert kept.simulation.binds == fresh.simulation.binds and len(kept.simulation.binds) >= 60
    assert kept.pods == fresh.pods and kept.ticks == fresh.ticks
