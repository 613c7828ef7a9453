"""Carried jobs (vspec.framework.cache): a session handed its jobs' last clones decides,
logs and records exactly what the plain path, a fresh clone of every job every session,
does; and the carrying is off where a plugin or action does not keep the job contract."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from hypothesis import given, settings

from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.framework import registry
from vspec.framework.cache import SchedulerCache
from vspec.framework.interface import Plugin
from vspec.framework.recorder import Recorder
from vspec.framework.scheduler import Scheduler
from vspec.framework.session import Session
from vspec.fuzz.runner import SEED_CONF, load_space
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
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
        patch.setattr(SchedulerCache, "hand_back", lambda self, cluster: None)
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
    snapshot = SchedulerCache.snapshot

    def counted(self: SchedulerCache) -> Any:
        nonlocal carried
        kept = {uid: k.clone for uid, k in self._carried.items()}
        taken = snapshot(self)
        carried += sum(kept.get(uid) is job for uid, job in taken.jobs.items())
        return taken

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SchedulerCache, "snapshot", counted)
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
