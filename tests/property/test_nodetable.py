"""The invariants' node columns answer as the node-by-node statement of their rules.

`liveness` and `allocate-order` ask :class:`vspec.invariants.nodetable.NodeTable` which
nodes take a job whole and whether a pod fits any node; the table answers with array
operations and answers shared between jobs of one shape. Here both questions are asked
again node by node, in plain Python, on drawn clusters (labels, taints, pod limits,
running and terminating pods, affinities, best-effort pods), and the answers must agree.
"""

from __future__ import annotations

from hypothesis import given, settings

from tests.conftest import FakeEngine
from vspec.api.resource import Resource
from vspec.fuzz.strategies import ClusterBounds, clusters
from vspec.invariants.base import InvariantInputs
from vspec.invariants.history import (
    HOLDING,
    Allocatables,
    CycleView,
    NodeFilter,
    Requests,
    allocatable,
    dims,
    exceeds,
    node_affinity_fails,
    pod_slots,
    taint_fails,
    unschedulable_fails,
)
from vspec.invariants.liveness import FirstCycle
from vspec.invariants.nodetable import TAKER_FILTERS, NodeColumns, NodeLoads, NodeTable
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster, Node, Pod
from vspec.model.result import SimulationResult


def _takes(view: CycleView, request: Requests, node: Node, pods: list[Pod]) -> bool:
    """The rule node by node: pod slots, then held plus asked against allocatable in every
    dimension the node's pods or the job use, then the three filters."""
    held = Resource()
    slots = sum(pod_slots(p) for p in pods)
    for key, pod in view.pods.items():
        if pod.node_name != node.meta.name:
            continue
        slots += pod_slots(pod)
        if view.status(key) in HOLDING:
            held.add(request(pod))
    need = Resource()
    for p in pods:
        need.add(request(p))
    limit = allocatable(node)
    if slots > limit.get("pods"):
        return False
    total = held.clone().add(need)
    if exceeds(total, limit, (set(dims(need)) | set(dims(held))) - {"pods"}):
        return False
    checks = (unschedulable_fails, node_affinity_fails, taint_fails)
    return all(fails(p, node) is None for p in pods for fails in checks)


def _fits_somewhere(
    request: Requests,
    nodes: list[Node],
    pod: Pod,
    filters: tuple[NodeFilter, ...] = TAKER_FILTERS,
) -> bool:
    need = request(pod)
    names = set(dims(need)) - {"pods"}
    return any(
        not exceeds(need, allocatable(n), names) and all(f(pod, n) is None for f in filters)
        for n in nodes
    )


@settings(max_examples=150, deadline=None)
@given(clusters(ClusterBounds(max_nodes=5, max_jobs=5)))
def test_the_table_answers_as_the_nodes_one_by_one(cluster: Cluster) -> None:
    view = CycleView(0, {p.meta.key: p for p in cluster.pods})
    request = Requests()
    alloc = NodeColumns.of(cluster.nodes, Allocatables())
    table = NodeTable.of(cluster.nodes, view.pods, view.statuses, request, alloc)
    jobs: dict[str, list[Pod]] = {}
    for pod in cluster.pods:
        jobs.setdefault(pod.job_id, []).append(pod)
    for pods in jobs.values():
        pending = [p for p in pods if not p.node_name]
        for group in (pending, pending[:1], pods):
            if not group:
                continue
            got = [bool(b) for b in table.takers(group)]
            assert got == [_takes(view, request, n, group) for n in cluster.nodes]
        for pod in pods:
            expected = _fits_somewhere(request, cluster.nodes, pod)
            assert table.fits_somewhere(pod, TAKER_FILTERS) is expected


@settings(max_examples=100, deadline=None)
@given(
    clusters(ClusterBounds(max_nodes=5, max_jobs=5)),
    clusters(ClusterBounds(max_nodes=5, max_jobs=5)),
)
def test_loads_carried_from_another_cycle_are_summed_afresh(first: Cluster, then: Cluster) -> None:
    """A timeline's next session keeps some pods (the same objects), loses others and
    gains new ones: the loads carried over equal those summed over its pods alone."""
    request, alloc = Requests(), NodeColumns.of(then.nodes, Allocatables())
    loads = NodeLoads()
    kept = [p for i, p in enumerate(then.pods) if i % 2 == 0]
    before = CycleView(0, {p.meta.key: p for p in [*first.pods, *kept]})
    after = CycleView(1, {p.meta.key: p for p in then.pods})
    NodeTable.of(then.nodes, before.pods, before.statuses, request, alloc, loads)
    carried = NodeTable.of(then.nodes, after.pods, after.statuses, request, alloc, loads)
    fresh = NodeTable.of(then.nodes, after.pods, after.statuses, request, alloc)
    assert carried.slots.tolist() == fresh.slots.tolist()
    assert carried.held.keys() == fresh.held.keys()
    for name, column in fresh.held.items():
        assert carried.held[name].tolist() == column.tolist()


@settings(max_examples=150, deadline=None)
@given(clusters(ClusterBounds(max_nodes=5, max_jobs=6)))
def test_only_the_waiting_jobs_can_be_placed_whole(cluster: Cluster) -> None:
    """``liveness`` and ``allocate-order`` ask their node question of the waiting jobs
    alone (a timeline's session holds hundreds of jobs, a few with a Pending pod): every
    other job of the session has no pod allocate tries and no node takes it whole, and
    the waiting ones keep the session's order."""
    conf = load_conf({"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}]}]})
    inputs = InvariantInputs(conf, cluster, engine=FakeEngine())
    first = FirstCycle.of(inputs, SimulationResult())
    groups = list(first.jobs.pod_groups)
    waiting = list(first.waiting_jobs)
    assert waiting == [uid for uid in groups if uid in waiting]
    for uid in groups:
        if uid not in first.waiting_jobs:
            assert first.pending(uid) == []
            assert list(first.takers(uid)) == []
        else:
            assert first.waiting_jobs[uid] is first.jobs.pod_groups[uid]
    # What a job's placeable pods are is kept per job: asked again after the other jobs,
    # the answer is that of a fresh first cycle asked of this job alone.
    for uid in [*first.waiting_jobs, *first.waiting_jobs]:
        inputs = InvariantInputs(conf, cluster, engine=FakeEngine())
        fresh = FirstCycle.of(inputs, SimulationResult()).placeable(uid)
        assert [p.meta.key for p in first.placeable(uid)] == [p.meta.key for p in fresh]


@settings(max_examples=100, deadline=None)
@given(
    clusters(ClusterBounds(max_nodes=5, max_jobs=5)),
    clusters(ClusterBounds(max_nodes=5, max_jobs=5)),
)
def test_answers_kept_with_the_columns_equal_fresh(first: Cluster, then: Cluster) -> None:
    """A timeline keeps the node columns while its nodes are the same objects, and with
    them what was found of the nodes alone (which nodes a pod's constraints pass, whether
    a pod fits some node): over sessions that keep some pods (the same objects), lose
    others and gain new ones, asked under several filters, the kept answers equal those
    of columns built afresh."""
    nodes, request, loads = then.nodes, Requests(), NodeLoads()
    columns = NodeColumns.of(nodes, Allocatables())
    kept = [p for i, p in enumerate(then.pods) if i % 2 == 0]
    for pods in ([*first.pods, *kept], then.pods, kept, [*then.pods, *first.pods]):
        view = CycleView(0, {p.meta.key: p for p in pods})
        carried = NodeTable.of(nodes, view.pods, view.statuses, request, columns, loads)
        alone = NodeColumns.of(nodes, Allocatables())
        fresh = NodeTable.of(nodes, view.pods, view.statuses, Requests(), alone)
        for filters in (TAKER_FILTERS, TAKER_FILTERS[:1], (), TAKER_FILTERS):
            for pod in view.pods.values():
                got = carried.fits_somewhere(pod, filters)
                assert got is fresh.fits_somewhere(pod, filters)
                assert got is _fits_somewhere(request, nodes, pod, filters)
        for pod in view.pods.values():
            assert carried.takers([pod]).tolist() == fresh.takers([pod]).tolist()
