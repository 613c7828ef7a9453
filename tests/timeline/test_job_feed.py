"""The job feed (vspec.framework.cache, JobFeed): over drawn timelines, every job a
snapshot does not count as changed opens as the very clone of the snapshot it follows,
holding what it held then, and the jobs it counts as gone are those that left; a feed
that leaves a changed job out is caught."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace

import pytest
from hypothesis import given, settings

from tests.timeline.conftest import day_shape, run_case
from vspec.api.job_info import JobInfo
from vspec.errors import VspecError
from vspec.framework.cache import JobFeed, SchedulerCache, Snapshot
from vspec.fuzz.runner import SEED_CONF, load_space
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.timeline import Timeline

BOUNDS = ClusterBounds(max_nodes=4, max_jobs=5)


def opened(job: JobInfo) -> tuple[object, ...]:
    """All a session may read of a job as it opens, by value."""
    pg = job.pod_group
    assert pg is not None
    tasks = tuple((t.uid, t.status, t.node_name, t.resreq.values()) for t in job.tasks.values())
    return (
        job.version,
        tasks,
        job.priority,
        job.queue,
        job.schedule_start_timestamp,
        dict(job.nodes_fit_errors),
        pg.phase,
        pg.running,
        pg.succeeded,
        pg.failed,
        tuple(pg.conditions),
        job.printed(),
    )


@dataclass
class FeedCheck:
    """Each snapshot's feed checked against the snapshot before it (per cache)."""

    followed: int = 0  # feeds that followed the last snapshot
    unchanged: int = 0  # jobs they counted as unchanged
    wrong: list[str] = field(default_factory=list)  # what a feed got wrong (the engine
    # would wrap an assertion failure raised in the snapshot as a plugin error)
    last: dict[int, tuple[object, dict[str, JobInfo], dict[str, tuple[object, ...]]]] = field(
        default_factory=dict
    )

    def seen(self, cache: SchedulerCache, taken: Snapshot) -> None:
        feed, jobs = taken.feed, taken.jobs
        now = {uid: opened(job) for uid, job in jobs.items()}
        before = self.last.get(id(cache))
        self.last[id(cache)] = (feed.mark, dict(jobs), now)
        wrong = self.wrong.append
        if not feed.changed <= jobs.keys():
            wrong(f"changed jobs not in the snapshot: {feed.changed - jobs.keys()}")
        if feed.since is None:
            if feed.changed != jobs.keys() or feed.gone:
                wrong("a feed without a predecessor must count every job changed")
            return
        if before is None or not feed.follows(before[0]):
            wrong("a feed follows a snapshot that was not the cache's last")
            return
        _, last_jobs, last_opened = before
        self.followed += 1
        if feed.gone != last_jobs.keys() - jobs.keys():
            wrong(f"gone {sorted(feed.gone)}, not {sorted(last_jobs.keys() - jobs.keys())}")
        for uid in jobs.keys() - feed.changed:
            if last_jobs.get(uid) is not jobs[uid] or last_opened[uid] != now[uid]:
                wrong(f"{uid} changed, not fed")
            self.unchanged += 1


@contextmanager
def feeds_checked() -> Iterator[FeedCheck]:
    check = FeedCheck()
    snapshot = SchedulerCache.snapshot

    def checked(self: SchedulerCache) -> Snapshot:
        taken = snapshot(self)
        check.seen(self, taken)
        return taken

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SchedulerCache, "snapshot", checked)
        yield check


def _day() -> tuple[SchedulerConf, Cluster, Timeline]:
    cluster, timeline = day_shape()
    return conf_from_document(SEED_CONF), cluster, timeline


def test_the_day_shape_feeds_only_the_jobs_that_changed() -> None:
    conf, cluster, timeline = _day()
    with feeds_checked() as check:
        run_case(conf, cluster, timeline, 4)
    assert check.wrong == []
    assert check.followed > 40
    assert check.unchanged > 5 * check.followed  # most jobs are not fed


def test_a_feed_that_leaves_a_changed_job_out_is_caught() -> None:
    conf, cluster, timeline = _day()
    feed = SchedulerCache._feed

    def dropping(self: SchedulerCache, jobs: dict[str, JobInfo], changed: list[str]) -> JobFeed:
        made = feed(self, jobs, changed)
        if made.since is None or not made.changed:
            return made
        return replace(made, changed=made.changed - {min(made.changed)})

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SchedulerCache, "_feed", dropping)
        # A plugin the wrong feed misled may fail the run; the checker saw it first.
        with feeds_checked() as check, suppress(VspecError):
            run_case(conf, cluster, timeline, 4)
    assert check.wrong and all(problem.endswith("changed, not fed") for problem in check.wrong)


def _checked(case: GeneratedTimelineSpec) -> None:
    with feeds_checked() as check, suppress(VspecError):  # a conf Volcano rejects
        run_case(case.conf, case.cluster, case.timeline, case.seed)
    assert check.wrong == []


@settings(max_examples=25, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), BOUNDS))
def test_seed_conf_timelines_feed_every_job_that_changed(case: GeneratedTimelineSpec) -> None:
    _checked(case)


@settings(max_examples=25, deadline=None)
@given(timeline_specs(load_space("mixed").conf or ConfSpace(), BOUNDS))
def test_any_conf_timelines_feed_every_job_that_changed(case: GeneratedTimelineSpec) -> None:
    """Preempt and reclaim evict; confs outside the job contract feed every job."""
    _checked(case)
