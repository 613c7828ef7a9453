"""Allocate-shaped clusters draw the edges the node filters and allocate's accounting
turn on (the mutation runner's engine mutants there survived 300 examples without
them), and still draw plain clusters, where the order invariants judge most."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from hypothesis import HealthCheck, given, seed, settings

from vspec.fuzz.strategies import ClusterBounds, allocate_clusters
from vspec.model.objects import Cluster

SMALL = ClusterBounds(max_nodes=3, max_jobs=4, max_replicas=2)


def _drawn(count: int) -> list[Cluster]:
    drawn: list[Cluster] = []

    @seed(3)
    @settings(max_examples=count, database=None, suppress_health_check=list(HealthCheck))
    @given(allocate_clusters(SMALL))
    def collect(cluster: Cluster) -> None:
        drawn.append(cluster)

    collect()
    return drawn


def _edges(cluster: Cluster) -> set[str]:
    found: set[str] = set()
    running = Counter(p.node_name for p in cluster.pods if p.node_name)
    total_cpu = sum((Fraction(n.allocatable["cpu"]) for n in cluster.nodes), Fraction(0))
    for node in cluster.nodes:
        if node.allocatable["pods"] == max(1, running[node.meta.name]):
            found.add("at its pod limit")
        if node.unschedulable:
            found.add("cordoned")
        if node.taints:
            found.add("tainted")
    for pod in cluster.pods:
        if pod.tolerations:
            found.add("tolerations")
        if pod.node_name and pod.meta.deletion_timestamp is not None:
            found.add("terminating")
    for pg in cluster.pod_groups:
        members = [p for p in cluster.pods if p.job_id == pg.meta.key]
        if len({p.priority for p in members}) > 1:
            found.add("task priorities")
        beyond = (pg.min_resources or {}).get("cpu", Fraction(0)) > total_cpu
        best_effort = any(not p.containers[0].requests for p in members)
        if pg.phase == "Pending" and beyond and best_effort:
            found.add("kept pending, best-effort pod")
    return found


def test_allocate_clusters_draw_the_edges_and_plain_clusters() -> None:
    seen = [_edges(c) for c in _drawn(200)]
    assert set().union(*seen) == {
        "at its pod limit",
        "cordoned",
        "tainted",
        "tolerations",
        "terminating",
        "task priorities",
        "kept pending, best-effort pod",
    }
    # Plain ones too (at most a kept-Pending job): the order invariants need jobs that
    # fit whole.
    plain = sum(1 for edges in seen if edges <= {"kept pending, best-effort pod"})
    assert plain >= len(seen) // 3
