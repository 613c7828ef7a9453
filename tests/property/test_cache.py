"""The scheduler's long-lived cache: after every update, over generated timelines, it
holds and snapshots exactly what a cache built afresh from the same cluster would."""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import is_dataclass
from datetime import datetime, timedelta
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings

from tests.builders import check_changes, node, pod, pod_group, queue
from vspec.api.resource import Resource
from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.framework import cache as cache_module
from vspec.framework.cache import SchedulerCache, Snapshot
from vspec.framework.log import Klog
from vspec.fuzz.runner import SEED_CONF, load_space
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.harness.loader import load_file
from vspec.k8s.nodeinfo import build_node_map
from vspec.model.changes import changes_of
from vspec.model.cycles import next_cluster
from vspec.model.objects import Cluster
from vspec.model.timeline import Arrival, Timeline
from vspec.timeline.clock import run_timeline

BOUNDS = ClusterBounds(max_nodes=4, max_jobs=4)
REPO = Path(__file__).resolve().parents[2]
# Memos (a node's future idle, what plugins derived from a carried job's tasks, a job's
# status counts), where changes are reported, and a count of a job's task changes.
_SKIPPED = frozenset(
    {"_future_idle", "_reports", "_others_reports", "derived", "_counts", "version"}
)


# Compared as they are; tuples, not unions, for isinstance: this walk is most of the
# test's time (a dozen walks of the cache per session).
_PLAIN = (str, int, float, datetime, timedelta, enum.Enum, Fraction)
_MAPPINGS = (dict, MappingProxyType)  # TaskInfo's no-annotations default is a proxy


def state(value: Any) -> Any:
    """Everything an object holds, as nested tuples, dict and task order included; model
    objects (dataclasses) compare by value."""
    if value is None or isinstance(value, _PLAIN):
        return value
    if isinstance(value, _MAPPINGS):
        return tuple([(k, state(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return tuple([state(v) for v in value])
    if isinstance(value, (set, frozenset)):
        return frozenset([state(v) for v in value])
    if isinstance(value, Resource):
        return (value.milli_cpu, value.memory, tuple(value.scalars.items()), value.max_task_num)
    if is_dataclass(value) and not isinstance(value, type):
        return value
    names = _slots(type(value))
    if more := getattr(value, "__dict__", None):
        names += tuple(sorted(n for n in more if n not in _SKIPPED))
    return (type(value).__name__, tuple([(n, state(getattr(value, n))) for n in names]))


@functools.cache
def _slots(cls: type) -> tuple[str, ...]:
    return tuple(n for c in cls.__mro__ for n in getattr(c, "__slots__", ()) if n not in _SKIPPED)


def snapshot_state(snapshot: Snapshot) -> Any:
    return (
        state(snapshot.jobs),
        state(snapshot.nodes),
        [n.name for n in snapshot.node_list],
        state(snapshot.queues),
        list(snapshot.revocable_nodes),
    )


@contextmanager
def compared_with_fresh_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Each update checked against a fresh cache; yields whether each update kept the
    cache (True) or rebuilt it whole."""
    kept: list[bool] = []
    updating: list[SchedulerCache] = []
    update = SchedulerCache.update
    rebuild = SchedulerCache._build

    def rebuilt(self: SchedulerCache, cluster: Cluster) -> None:
        if updating and self is updating[0]:
            kept[-1] = False
        rebuild(self, cluster)

    def checked(self: SchedulerCache, cluster: Cluster) -> None:
        kept.append(True)
        _reports_tell_the_truth(self, cluster)
        updating.append(self)
        try:
            update(self, cluster)
        finally:
            updating.clear()
        fresh = SchedulerCache(cluster, self.options, Klog(0))
        known = self.known_pods()
        if known is not None:  # what advance is told: every pod by key, and any terminating
            assert {k: id(p) for k, p in known.by_key.items()} == {
                p.meta.key: id(p) for p in cluster.pods
            }
            assert known.terminating == any(p.meta.deletion_timestamp for p in cluster.pods)
            assert known.groups is not None  # and each pod group by job id
            assert {k: id(g) for k, g in known.groups.items()} == {
                g.meta.key: id(g) for g in cluster.pod_groups
            }
        assert state(self.nodes) == state(fresh.nodes)
        assert state(self.jobs) == state(fresh.jobs)
        assert self.node_list == fresh.node_list
        assert state(self.queues) == state(fresh.queues)
        assert self.default_priority == fresh.default_priority
        log, self.log = self.log, Klog(0)
        try:
            mine, theirs = self.snapshot(), fresh.snapshot()
        finally:
            self.log = log
        assert snapshot_state(mine) == snapshot_state(theirs)
        memoised = build_node_map(mine.node_list, self.k8s)
        assert state(memoised) == state(build_node_map(theirs.node_list))

    monkeypatch.setattr(SchedulerCache, "update", checked)
    monkeypatch.setattr(SchedulerCache, "_build", rebuilt)
    yield kept


def _reports_tell_the_truth(cache: SchedulerCache, cluster: Cluster) -> None:
    """Each change report the cache will trust (one from the very lists it last saw, made
    by ``next_cluster`` and the clock) says what changed: the cache's copy of the last
    list less what it says went plus what it says came is the cluster's list, the rest in
    order."""
    seen = cache._seen
    for report, source, last, now in (
        (cluster.nodes_changed, seen.node_source, seen.nodes, cluster.nodes),
        (cluster.pods_changed, seen.pod_source, seen.pods, cluster.pods),
        (cluster.pod_groups_changed, seen.group_source, seen.group_list, cluster.pod_groups),
    ):
        found = changes_of(report, source, now)  # type: ignore[arg-type]
        if found is None:
            continue
        check_changes(last, now, *found)


def _run(case: GeneratedTimelineSpec) -> None:
    run_timeline(case.conf, case.cluster, case.timeline, seed=case.seed, engine=get_engine())


@settings(max_examples=25, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), BOUNDS))
def test_seed_conf_timelines_see_what_a_fresh_cache_shows(case: GeneratedTimelineSpec) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch, compared_with_fresh_caches(monkeypatch):
        _run(case)


@settings(max_examples=25, deadline=None)
@given(timeline_specs(load_space("mixed").conf or ConfSpace(), BOUNDS))
def test_any_conf_timelines_see_what_a_fresh_cache_shows(case: GeneratedTimelineSpec) -> None:
    """Preempt, reclaim and the device and topology plugins evict and annotate."""
    with pytest.MonkeyPatch.context() as monkeypatch, compared_with_fresh_caches(monkeypatch):
        try:
            _run(case)
        except VspecError as exc:  # a conf Volcano rejects, or a plugin's own panic
            if isinstance(exc.__cause__, AssertionError):
                raise  # a check failed: the engine wraps what a session raises


def test_a_busy_timeline_keeps_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrivals, binds and completions rebuild only what they touch, and each session
    sees a fresh cache's view."""
    cluster = Cluster(
        nodes=[node(f"n{i}", {"cpu": 2, "pods": 110}) for i in range(3)],
        queues=[queue("default")],
    )
    timeline = Timeline()
    for j in range(6):
        group = pod_group("ns", f"j{j}", "default", min_member=2)
        pods = [pod("ns", f"j{j}-{i}", f"j{j}", {"cpu": 1}) for i in range(2)]
        run = {p.meta.key: timedelta(seconds=30 + 7 * j) for p in pods}
        timeline.arrivals.append(Arrival(timedelta(seconds=11 * j), [group], pods, run))
    conf = conf_from_document(SEED_CONF)
    compared: list[int] = []
    monkeypatch.setattr(cache_module, "list_changes", lambda *a, **k: compared.append(1))
    with compared_with_fresh_caches(monkeypatch) as kept:
        result = run_timeline(conf, cluster, timeline, seed=3, engine=get_engine())
    assert result.sessions >= 6 and all(job.completed for job in result.jobs.values())
    assert len(kept) == result.sessions - 1 and all(kept)
    assert not compared  # every change was taken from the reports


def test_a_report_is_trusted_only_between_its_own_two_lists() -> None:
    """A cluster whose pods list was replaced, or changed in place, after the report on
    it was made is compared: the cache sees the pod the report does not name."""
    nodes = [node("n0", {"cpu": 4, "pods": 110})]
    first = Cluster(
        nodes=nodes,
        pods=[pod("ns", "a", "j", {"cpu": 1})],
        pod_groups=[pod_group("ns", "j", "default")],
        queues=[queue("default")],
    )
    options = conf_from_document(SEED_CONF).options
    for how in ("replaced", "in place"):
        cache = SchedulerCache(first, options, Klog(0))
        moved_on = next_cluster(first, binds={"ns/a": "n0"}, evicted=(), patched={}, pod_groups={})
        assert changes_of(moved_on.pods_changed, first.pods, moved_on.pods) is not None
        extra = pod("ns", "b", "j", {"cpu": 1}, phase="Running", node_name="n0")
        if how == "replaced":
            moved_on.pods = [*moved_on.pods, extra]
        else:
            moved_on.pods.append(extra)
        cache.update(moved_on)
        fresh = SchedulerCache(moved_on, options, Klog(0))
        assert list(cache.nodes["n0"].tasks) == ["ns/a", "ns/b"]
        assert state(cache.nodes) == state(fresh.nodes)
        assert state(cache.jobs) == state(fresh.jobs)


# The other timeline specs (hundreds of jobs, run twice more here: 10-40 CPU-s each) are
# left to the generated timelines above, which check every session's cache.
SMALL_TIMELINE_SPECS = ("basics.yaml",)


@pytest.mark.parametrize("name", SMALL_TIMELINE_SPECS)
def test_timeline_specs_give_the_records_of_fresh_caches(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every session on a fresh cache (as before the cache was kept): the same records."""
    for spec in load_file(REPO / "specs" / "timeline" / name).specs:
        assert spec.timeline is not None
        kept = run_timeline(
            spec.scheduler, spec.cluster, spec.timeline, now=spec.now, engine=get_engine()
        )
        with monkeypatch.context() as patch:
            patch.setattr(SchedulerCache, "update", SchedulerCache._build)
            fresh = run_timeline(
                spec.scheduler, spec.cluster, spec.timeline, now=spec.now, engine=get_engine()
            )
        assert kept.sessions == fresh.sessions > 0
        assert kept.jobs == fresh.jobs and kept.pods == fresh.pods
        assert kept.ticks == fresh.ticks
        assert kept.simulation.binds == fresh.simulation.binds
        assert kept.simulation.evictions == fresh.simulation.evictions


def test_sessions_share_the_clones_of_nodes_nothing_changed() -> None:
    """Copy-on-write snapshots: a node neither the session nor the cache changed is
    handed out again, with its Kubernetes view; one the session changed, or the cache
    rebuilt, is cloned afresh, and every snapshot is what a fresh cache's is."""
    nodes = [node(f"n{i}", {"cpu": 2, "pods": 110}) for i in range(3)]
    running = pod("ns", "a", "j", {"cpu": 1}, phase="Running", node_name="n0")
    pending = pod("ns", "b", "j", {"cpu": 1})
    cluster = Cluster(
        nodes=nodes, pods=[running, pending], pod_groups=[pod_group("ns", "j", "default")]
    )
    cluster.queues = [queue("default")]
    cache = SchedulerCache(cluster, conf_from_document(SEED_CONF).options, Klog(0))
    first = cache.snapshot()
    second = cache.snapshot()
    assert all(second.nodes[n] is first.nodes[n] for n in first.nodes)
    first_views = build_node_map(first.node_list, cache.k8s)
    views = build_node_map(second.node_list, cache.k8s)
    assert all(views[n] is first_views[n] for n in views)
    task = next(t for t in second.jobs["ns/j"].tasks.values() if not t.node_name)
    second.nodes["n1"].add_task(task)  # the session changes its clone of n1
    bound = Cluster(
        nodes=nodes,
        pods=[running, pod("ns", "b", "j", {"cpu": 1}, phase="Running", node_name="n2")],
        pod_groups=cluster.pod_groups,
        queues=cluster.queues,
    )
    cache.update(bound)  # the cache rebuilds n2, which a pod is now bound to
    third = cache.snapshot()
    assert third.nodes["n0"] is first.nodes["n0"]
    assert third.nodes["n1"] is not second.nodes["n1"] and not third.nodes["n1"].tasks
    assert third.nodes["n2"] is not second.nodes["n2"] and third.nodes["n2"].tasks
    fresh = SchedulerCache(bound, cache.options, Klog(0)).snapshot()
    assert snapshot_state(third) == snapshot_state(fresh)
    third_views = build_node_map(third.node_list, cache.k8s)
    assert third_views["n0"] is views["n0"] and third_views["n2"] is not views["n2"]
    assert state(third_views) == state(build_node_map(fresh.node_list))


def test_what_a_session_kept_on_a_node_is_gone_from_the_next_sessions_copy() -> None:
    """``others`` (deviceshare's pools) is a session's own: a clone handed out again holds
    a fresh copy of the cache node's, whichever side was written, and only the nodes
    whose ``others`` was touched are copied again."""
    nodes = [node(f"n{i}", {"cpu": 2, "pods": 110}) for i in range(3)]
    cluster = Cluster(nodes=nodes, queues=[queue("default")])
    cache = SchedulerCache(cluster, conf_from_document(SEED_CONF).options, Klog(0))
    first = cache.snapshot()
    first.nodes["n1"].others["pool"] = object()  # a plugin's state, this session only
    assert first.nodes["n0"].others == {}  # read: reported as touched too
    cache.nodes["n2"].others["cached"] = "kept"  # the cache's own node holds one
    untouched = first.nodes["n2"].others
    second = cache.snapshot()
    assert all(second.nodes[n] is first.nodes[n] for n in first.nodes)
    assert second.nodes["n1"].others == {} and second.nodes["n2"].others == {"cached": "kept"}
    assert second.nodes["n2"].others is not untouched
    fresh = SchedulerCache(cluster, cache.options, Klog(0))
    fresh.nodes["n2"].others["cached"] = "kept"
    assert snapshot_state(second) == snapshot_state(fresh.snapshot())
    quiet = second.nodes["n0"]._others
    third = cache.snapshot()
    assert third.nodes["n0"]._others is quiet  # nothing touched it: not copied again


@pytest.mark.parametrize("shifted", [False, True], ids=["in-place", "after-a-removal"])
def test_pods_that_only_moved_among_themselves_are_seen_to_move(shifted: bool) -> None:
    """Two running pods of one node and job swap places in the cluster's list, each
    still the same object: a node's and a job's tasks follow that order, so the cache
    must see the move (by place, or by identity once a removal shifted the list)."""
    pods = [
        pod("ns", f"p{i}", f"j{i % 3}", {"cpu": 0.1}, phase="Running", node_name="n0")
        for i in range(300)
    ]
    cluster = Cluster(
        nodes=[node("n0", {"cpu": 64, "pods": 500})],
        pods=pods,
        pod_groups=[pod_group("ns", f"j{k}", "default") for k in range(3)],
        queues=[queue("default")],
    )
    cache = SchedulerCache(cluster, conf_from_document(SEED_CONF).options, Klog(0))
    moved = pods[1:] if shifted else list(pods)
    moved[3], moved[-3] = moved[-3], moved[3]
    after = Cluster(
        nodes=cluster.nodes, pods=moved, pod_groups=cluster.pod_groups, queues=cluster.queues
    )
    cache.update(after)
    fresh = SchedulerCache(after, cache.options, Klog(0))
    assert [t.name for t in cache.nodes["n0"].tasks.values()] == [p.meta.name for p in moved]
    assert state(cache.nodes) == state(fresh.nodes)
    assert state(cache.jobs) == state(fresh.jobs)


@pytest.mark.parametrize("edit", ["swapped", "inserted", "replaced", "twice"])
def test_pod_groups_patched_or_read_again_keep_a_fresh_caches_job_order(edit: str) -> None:
    """The pod groups are patched from the last session's by identity when that gives
    the cluster's order; a swap or an insertion in the middle (which patching would put
    at the end) is read again, and a job id listed twice rebuilds the cache."""
    groups = [pod_group("ns", f"j{k}", "default") for k in range(200)]
    pods = [pod("ns", f"p{k}", f"j{k}", {"cpu": 0.1}) for k in range(200)]
    cluster = Cluster(
        nodes=[node("n0", {"cpu": 64, "pods": 500})],
        pods=pods,
        pod_groups=groups,
        queues=[queue("default")],
    )
    cache = SchedulerCache(cluster, conf_from_document(SEED_CONF).options, Klog(0))
    moved = groups[1:]  # a removal shifts the list: found by identity
    if edit == "swapped":
        moved[3], moved[-3] = moved[-3], moved[3]
    elif edit == "inserted":
        moved.insert(5, pod_group("ns", "new", "default"))
    elif edit == "replaced":
        moved[7] = pod_group("ns", "j8", "default", min_member=2)
    else:
        moved.append(pod_group("ns", "j9", "default"))
    after = Cluster(nodes=cluster.nodes, pods=pods, pod_groups=moved, queues=cluster.queues)
    cache.update(after)
    fresh = SchedulerCache(after, cache.options, Klog(0))
    assert list(cache.jobs) == list(fresh.jobs)
    assert state(cache.jobs) == state(fresh.jobs)
