"""The settled jobs' close (vspec.framework.job_updater.settled_jobs): a session that
leaves them unstamped records, session by session, the very pod group results (in
order), events, logs and next clusters of one that stamps and reads every job, on the
day's shape and on drawn timelines; and it is off where another plugin closes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings

from tests.timeline.conftest import day_shape, drawn_timelines
from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.framework import job_updater, registry
from vspec.framework.interface import Action, Plugin
from vspec.framework.scheduler import Scheduler
from vspec.framework.session import Session
from vspec.fuzz.runner import SEED_CONF, load_space
from vspec.fuzz.strategies import ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec
from vspec.model.conf import SchedulerConf
from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult
from vspec.model.timeline import Timeline
from vspec.plugins import gang
from vspec.timeline.clock import run_timeline


def _sessions(
    conf: SchedulerConf, cluster: Cluster, timeline: Timeline, seed: int, verbosity: int
) -> tuple[list[Any], int]:
    """Each session's records, and how many jobs closed settled in all."""
    records: list[Any] = []
    settled = [0]
    found = job_updater.settled_jobs

    def counted(ssn: Session) -> dict[str, str]:
        jobs = found(ssn)
        settled[0] += len(jobs)
        return jobs

    def hook(now: datetime, before: Cluster, session: SimulationResult) -> None:
        records.append(
            (
                [(uid, repr(entry)) for uid, entry in session.pod_groups.items()],
                session.events,
                [(line.verbosity, line.text) for line in session.logs],
                [repr(pg) for pg in session.cluster.pod_groups],
            )
        )

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gang, "settled_jobs", counted)
        run_timeline(
            conf,
            cluster,
            timeline,
            seed=seed,
            verbosity=verbosity,
            engine=get_engine(),
            on_session=hook,
        )
    return records, settled[0]


def _unsettled(*args: Any) -> list[Any]:
    """The same run with no job settled: gang stamps, the updater reads every job."""
    none: Callable[[Session], dict[str, str]] = lambda ssn: {}  # noqa: E731
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(job_updater, "settled_jobs", none)
        return _sessions(*args)[0]


def test_the_day_shape_settles_most_jobs_and_records_the_same() -> None:
    cluster, timeline = day_shape()
    args = (conf_from_document(SEED_CONF), cluster, timeline, 4, 3)
    records, settled = _sessions(*args)
    assert settled > 10 * len(records)  # most live jobs, in most sessions
    assert records == _unsettled(*args)


def _same_as_unsettled(case: GeneratedTimelineSpec) -> None:
    args = (case.conf, case.cluster, case.timeline, case.seed, case.verbosity)
    try:
        records, _ = _sessions(*args)
    except VspecError as exc:  # a conf Volcano rejects, or a plugin's own panic
        with pytest.raises(VspecError) as plain:
            _unsettled(*args)
        assert str(plain.value) == str(exc)
        return
    assert records == _unsettled(*args)


@settings(max_examples=30, deadline=None)
@given(drawn_timelines(ConfSpace(fixed=SEED_CONF)))
def test_seed_conf_timelines_record_the_same(case: GeneratedTimelineSpec) -> None:
    _same_as_unsettled(case)


@settings(max_examples=25, deadline=None)
@given(drawn_timelines(load_space("mixed").conf or ConfSpace()))
def test_any_conf_timelines_record_the_same(case: GeneratedTimelineSpec) -> None:
    _same_as_unsettled(case)


class _Reading(Plugin):
    """A user plugin that keeps the job contract and reads every pod group at close,
    after gang's close: it sees each stamp gang gave."""

    name: ClassVar[str] = "reading"
    carries_jobs: ClassVar[bool] = True
    stamps: ClassVar[list[str]] = []

    def on_session_open(self, ssn: Session) -> None:
        pass

    def on_session_close(self, ssn: Session) -> None:
        for job in ssn.jobs.values():
            pg = job.pod_group
            assert pg is not None
            self.stamps.extend(c.transition_id for c in pg.conditions)


def test_off_where_another_plugin_closes() -> None:
    document = {**SEED_CONF, "tiers": [*SEED_CONF["tiers"], {"plugins": [{"name": "reading"}]}]}
    cluster, timeline = day_shape()
    with registry.isolated():
        registry.register_plugin(_Reading)
        conf = conf_from_document(document)
        assert Scheduler(conf).carries_jobs
        _, settled = _sessions(conf, cluster, timeline, 4, 0)
        read = list(_Reading.stamps)
        _Reading.stamps.clear()
        _unsettled(conf, cluster, timeline, 4, 0)
    assert settled == 0
    assert read == _Reading.stamps


class _Writing(Action):
    """A user action that keeps the job contract and writes one job's pod group status
    in each session (a condition of its own), touching no task of it."""

    name: ClassVar[str] = "writing"
    carries_jobs: ClassVar[bool] = True

    def execute(self, ssn: Session) -> None:
        jobs = list(ssn.jobs.values())
        pg = jobs[len(ssn.uid) * ord(ssn.uid[0]) % len(jobs)].pod_group if jobs else None
        if pg is not None:
            kept = [c for c in pg.conditions if c.type != "Seen"]
            pg.conditions[:] = [*kept, Condition(type="Seen", transition_id=ssn.uid)]


def test_a_status_written_by_an_action_is_read() -> None:
    """Outside vspec's own code, a settled job whose status an action wrote is read as
    any other (settled_jobs checks each); the others stay settled."""
    document = {**SEED_CONF, "actions": "print, enqueue, writing, allocate, backfill"}
    cluster, timeline = day_shape()
    with registry.isolated():
        registry.register_action(_Writing)
        conf = conf_from_document(document)
        scheduler = Scheduler(conf)
        assert scheduler.carries_jobs and not scheduler.own_code
        records, settled = _sessions(conf, cluster, timeline, 4, 0)
        assert records == _unsettled(conf, cluster, timeline, 4, 0)
    assert settled > len(records) // 4  # the jobs written stay out, the others settle
