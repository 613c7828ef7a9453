"""Carried jobs (vspec.framework.cache): a session handed its jobs' last clones decides,
logs and records exactly what the plain path, a fresh clone of every job every session,
does; and the carrying is off where a plugin or action does not keep the job contract."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings

from tests.builders import cluster, node, pod, pod_group
from vspec.api.job_info import JobInfo
from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.framework import registry
from vspec.framework.cache import PodGroupStatus, SchedulerCache, Snapshot, pod_group_status
from vspec.framework.interface import Plugin
from vspec.framework.recorder import Recorder
from vspec.framework.scheduler import Scheduler
from vspec.framework.session import Session
from vspec.fuzz.runner import SEED_CONF, load_space
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.model.conf import SchedulerConf
from vspec.model.objects import DEFAULT_NOW, Cluster, PodGroup
from vspec.model.result import SimulationResult
from vspec.model.timeline import Timeline
from vspec.timeline.clock import run_timeline
from vspec.timeline.records import TimelineResult

BOUNDS = ClusterBounds(max_nodes=4, max_jobs=5)


def _run(
    conf: SchedulerConf, cluster: Cluster, timeline: Timeline, seed: int, verbosity: int
) -> TimelineResult:
    return run_timeline(
        conf, cluster, timeline, seed=seed, verbosity=verbosity, engine=get_engine()
    )


def _plain(
    conf: SchedulerConf, cluster: Cluster, timeline: Timeline, seed: int, verbosity: int
) -> TimelineResult:
    """The same run with nothing handed back: every session clones every job."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SchedulerCache, "hand_back", lambda self, cluster, settled=(): None)
        return _run(conf, cluster, timeline, seed, verbosity)


def _outcome(result: TimelineResult) -> Any:
    simulation = result.simulation
    return (
        result.sessions,
        result.skipped,
        result.jobs,
        result.pods,
        result.ticks,
        simulation.binds,
        simulation.evictions,
        [(line.cycle, line.severity, line.verbosity, line.text) for line in simulation.logs],
    )


def _same_as_plain(case: GeneratedTimelineSpec) -> None:
    args = (case.conf, case.cluster, case.timeline, case.seed, case.verbosity)
    try:
        carried = _outcome(_run(*args))
    except VspecError as exc:  # a conf Volcano rejects, or a plugin's own panic
        with pytest.raises(VspecError) as plain:
            _plain(*args)
        assert str(plain.value) == str(exc)
        return
    assert carried == _outcome(_plain(*args))


@settings(max_examples=30, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), BOUNDS))
def test_seed_conf_timelines_record_what_the_plain_path_records(
    case: GeneratedTimelineSpec,
) -> None:
    _same_as_plain(case)


@settings(max_examples=30, deadline=None)
@given(timeline_specs(load_space("mixed").conf or ConfSpace(), BOUNDS))
def test_any_conf_timelines_record_what_the_plain_path_records(
    case: GeneratedTimelineSpec,
) -> None:
    """Preempt and reclaim evict; confs with plugins outside the contract run plain."""
    _same_as_plain(case)


def test_the_day_benchmark_shape_records_what_the_plain_path_records() -> None:
    """A slice of benchmarks/timeline_day.py's workload: jobs running for many sessions
    while others arrive, gang-wait and finish, most of them handed on."""
    from benchmarks.timeline_day import workload

    conf = conf_from_document(SEED_CONF)
    cluster, timeline = workload(nodes=20, jobs=60, hours=0.25, seed=4)
    carried = 0

    def counted(cache: SchedulerCache, kept: dict[str, _Kept], taken: Snapshot) -> None:
        nonlocal carried
        carried += sum(uid in kept and kept[uid].clone is job for uid, job in taken.jobs.items())

    with _snapshots_seen(counted):
        result = _run(conf, cluster, timeline, 4, 3)
    assert carried > result.sessions  # most sessions hand jobs on
    assert _outcome(result) == _outcome(_plain(conf, cluster, timeline, 4, 3))


class _Touching(Plugin):
    """A user plugin that keeps no contract: it could change any job in place."""

    name: ClassVar[str] = "touching"

    def on_session_open(self, ssn: Session) -> None:
        pass


class _Inheriting(_Touching):
    name: ClassVar[str] = "inheriting"
    carries_jobs: ClassVar[bool] = True


class _Subclass(_Inheriting):
    """Declares nothing itself: a subclass may break what its base kept."""

    name: ClassVar[str] = "subclass"


def test_carrying_needs_every_class_to_declare_the_contract() -> None:
    seed = conf_from_document(SEED_CONF)
    assert Scheduler(seed).carries_jobs
    assert not Scheduler(seed, recorder=Recorder()).carries_jobs  # it may keep a job
    with registry.isolated():
        for cls in (_Touching, _Inheriting, _Subclass):
            registry.register_plugin(cls)
        for name, carries in (("touching", False), ("inheriting", True), ("subclass", False)):
            document: dict[str, Any] = {**SEED_CONF, "tiers": [{"plugins": [{"name": name}]}]}
            assert Scheduler(conf_from_document(document)).carries_jobs is carries, name


@dataclass(frozen=True)
class _Kept:
    """What the cache carried for a job into a snapshot, as it was before it."""

    clone: JobInfo
    status: PodGroupStatus


@contextmanager
def _snapshots_seen(
    seen: Callable[[SchedulerCache, dict[str, _Kept], Snapshot], None],
) -> Iterator[None]:
    """Each snapshot shown to ``seen``, with what the cache carried into it."""
    snapshot = SchedulerCache.snapshot

    def shown(self: SchedulerCache) -> Snapshot:
        kept = {uid: _Kept(k.clone, k.status) for uid, k in self._carried.items()}
        taken = snapshot(self)
        seen(self, kept, taken)
        return taken

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SchedulerCache, "snapshot", shown)
        yield


@dataclass
class _Checked:
    kept_statuses: int = 0  # statuses a snapshot kept from an earlier session
    patched: int = 0  # updates that kept the carried clones without a pass over them


def _checked_run(conf: SchedulerConf, cluster: Cluster, timeline: Timeline, seed: int) -> _Checked:
    """Run with every snapshot checked: each job's clone holds the pod group a fresh
    clone copies (a carried one's restored at hand-back), and the kept pod group
    statuses are those read afresh from the clones; and with every update's carried
    clones checked against a pass over all of them."""
    checked = _Checked()
    drop = SchedulerCache._drop_carried

    def opened(cache: SchedulerCache, kept: dict[str, _Kept], taken: Snapshot) -> None:
        assert taken.pod_group_status.keys() == taken.jobs.keys()
        for uid, clone in taken.jobs.items():
            pg = clone.pod_group
            assert pg is not None
            assert pg == cache.jobs[uid].pod_group
            assert pg is not cache.jobs[uid].pod_group
            status = taken.pod_group_status[uid]
            assert status == pod_group_status(pg)
            checked.kept_statuses += uid in kept and status is kept[uid].status

    def dropped(self: SchedulerCache, diff: Any, groups: dict[str, PodGroup]) -> None:
        every = {
            uid: kept
            for uid, kept in self._carried.items()
            if uid not in diff.jobs and groups.get(uid) is kept.written
        }
        checked.patched += diff.moved is not None
        drop(self, diff, groups)
        assert self._carried == every

    with _snapshots_seen(opened), pytest.MonkeyPatch.context() as patch:
        patch.setattr(SchedulerCache, "_drop_carried", dropped)
        _run(conf, cluster, timeline, seed, 0)
    return checked


def test_carried_jobs_open_as_fresh_clones_and_are_kept_as_a_pass_keeps_them() -> None:
    from benchmarks.timeline_day import workload

    cluster, timeline = workload(nodes=20, jobs=60, hours=0.25, seed=4)
    checked = _checked_run(conf_from_document(SEED_CONF), cluster, timeline, 4)
    assert checked.kept_statuses > 100
    assert checked.patched > 10


@settings(max_examples=20, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), BOUNDS))
def test_any_timeline_opens_as_fresh_clones_and_keeps_them_as_a_pass_does(
    case: GeneratedTimelineSpec,
) -> None:
    with suppress(VspecError):  # a conf Volcano rejects: no session to check
        _checked_run(case.conf, case.cluster, case.timeline, case.seed)


def test_a_clone_written_back_is_not_carried_onto_a_cluster_without_that_write() -> None:
    """Sessions run twice on the very same cluster: the first wrote a pod group (a job
    too big to enqueue takes gang's Unschedulable condition) that the second cluster
    does not hold, so the second session gets a fresh clone, not the written one."""
    world = cluster(
        [node("n0")],
        [pod("ns", "p0", "j", {"cpu": 8})],
        [pod_group("ns", "j", "q", min_member=1, min_resources={"cpu": 8})],
    )
    scheduler = Scheduler(conf_from_document(SEED_CONF))
    clones: list[JobInfo] = []

    def opened(cache: SchedulerCache, kept: dict[str, _Kept], taken: Snapshot) -> None:
        job = taken.jobs["ns/j"]
        assert job.pod_group == cache.jobs["ns/j"].pod_group
        clones.append(job)

    with _snapshots_seen(opened):
        moved_on = scheduler.run_once(world, DEFAULT_NOW, SimulationResult(), capture=False)
        scheduler.run_once(world, DEFAULT_NOW, SimulationResult(), capture=False)
    assert moved_on.pod_groups[0] is not world.pod_groups[0]  # written back
    first, second = clones
    assert second is not first
