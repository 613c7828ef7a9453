"""Proportion's queue sums and drf's job attributes kept between sessions
(``QueueSums``, ``JobAttrs``): every session opens with exactly what summing every
job afresh, in Volcano's order, gives, and the runs decide and log the same."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings

from tests.builders import node, pod, pod_group, queue
from tests.timeline.test_carried_jobs import BOUNDS, _outcome, _run
from vspec.api.job_info import JobInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import Resource, ResourceValues
from vspec.api.types import TaskStatus
from vspec.errors import VspecError
from vspec.framework.cache import SchedulerCache, Snapshot, pod_group_status
from vspec.framework.log import Klog
from vspec.framework.scheduler import simulate
from vspec.framework.session import Session
from vspec.fuzz.runner import SEED_CONF, load_space
from vspec.fuzz.strategies import ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.model.conf import SchedulerOptions
from vspec.model.objects import Cluster, Pod, PodGroup
from vspec.plugins.drf import DrfAttr, DrfPlugin, JobAttrs
from vspec.plugins.proportion import ProportionPlugin, QueueAttr, QueueSums

SEED = conf_from_document(SEED_CONF)


@dataclass
class _Opened:
    """What each session's proportion and drf opened with, in order."""

    sums: list[Any] = field(default_factory=list)
    attrs: list[Any] = field(default_factory=list)
    kept: int = 0  # sessions whose queue sums came from the kept ones


def _queue_sums(attr: QueueAttr) -> list[ResourceValues]:
    return [r.values() for r in (attr.allocated, attr.request, attr.inqueue, attr.elastic)]


def _attr(attr: DrfAttr) -> tuple[float, str, ResourceValues]:
    return attr.share, attr.dominant_resource, attr.allocated.values()


@contextmanager
def _watched(*, keep: bool) -> Iterator[_Opened]:
    """Record what the plugins open with; ``keep`` False sums every job afresh."""
    opened = _Opened()
    deserve = ProportionPlugin._compute_deserved
    drf_open = DrfPlugin.on_session_open
    kept_sums = ProportionPlugin._kept_sums

    def sums(self: ProportionPlugin, log: Klog) -> None:
        opened.sums.append([(uid, *_queue_sums(attr)) for uid, attr in self.queue_opts.items()])
        deserve(self, log)

    def attrs(self: DrfPlugin, ssn: Session) -> None:
        drf_open(self, ssn)
        opened.attrs.append({uid: _attr(attr) for uid, attr in self.job_attrs.items()})

    def counted(ssn: Session) -> QueueSums | None:
        found = kept_sums(ssn)
        opened.kept += found is not None
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ProportionPlugin, "_compute_deserved", sums)
        patch.setattr(DrfPlugin, "on_session_open", attrs)
        if keep:
            patch.setattr(ProportionPlugin, "_kept_sums", staticmethod(counted))
        else:
            patch.setattr(ProportionPlugin, "_kept_sums", staticmethod(lambda ssn: None))
            patch.setattr(DrfPlugin, "_kept_attrs", staticmethod(lambda ssn: None))
        yield opened


def _outcome_or_error(run: Callable[[], Any]) -> Any:
    try:
        return run()
    except VspecError as exc:  # a conf Volcano rejects, or a plugin's own panic
        return str(exc)


def _same_both_ways(run: Callable[[], Any]) -> _Opened:
    """Run with and without the kept sums: the same openings and the same outcome."""
    with _watched(keep=True) as kept:
        outcome = _outcome_or_error(run)
    with _watched(keep=False) as fresh:
        assert _outcome_or_error(run) == outcome
    assert kept.sums == fresh.sums
    assert kept.attrs == fresh.attrs
    return kept


def _sessions(cluster: Cluster, cycles: int = 4) -> _Opened:
    def run() -> Any:
        result = simulate(SEED, cluster, cycles=cycles, verbosity=3)
        return result.binds, [line.text for line in result.logs]

    return _same_both_ways(run)


@settings(max_examples=40, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), BOUNDS))
def test_drawn_timelines_open_with_what_summing_afresh_gives(
    case: GeneratedTimelineSpec,
) -> None:
    args = (case.conf, case.cluster, case.timeline, case.seed, case.verbosity)
    _same_both_ways(lambda: _outcome(_run(*args)))


@settings(max_examples=30, deadline=None)
@given(timeline_specs(load_space("mixed").conf or ConfSpace(), BOUNDS))
def test_any_conf_timelines_open_with_what_summing_afresh_gives(
    case: GeneratedTimelineSpec,
) -> None:
    """Preempt and reclaim evict (drf's deallocate events); hDRF sums afresh."""
    args = (case.conf, case.cluster, case.timeline, case.seed, case.verbosity)
    _same_both_ways(lambda: _outcome(_run(*args)))


@pytest.mark.parametrize("verbosity", [3, 5])
def test_the_day_benchmark_shape_keeps_its_sums(verbosity: int) -> None:
    """Every session's sums are the kept ones, but where proportion logs job by job
    (V(4) and V(5)); drf's attributes are kept at any verbosity."""
    from benchmarks.timeline_day import workload

    cluster, timeline = workload(nodes=20, jobs=60, hours=0.25, seed=4)
    kept = _same_both_ways(lambda: _outcome(_run(SEED, cluster, timeline, 4, verbosity)))
    assert len(kept.sums) > 20
    assert kept.kept == (len(kept.sums) if verbosity < 4 else 0)


def _cluster(pods: list[Pod], groups: list[PodGroup]) -> Cluster:
    return Cluster(
        nodes=[node("n1", {"cpu": "8", "memory": "8Gi", "pods": "110"})],
        pods=pods,
        pod_groups=groups,
        queues=[queue("q1"), queue("q2", weight=3)],
    )


def test_sums_past_2_53_are_left_to_volcano_order() -> None:
    """8Pi + 1 + 1 bytes is 8Pi added job by job as float64s; the integer sum is not."""
    big = pod("c1", "a-p0", "a", {"cpu": "1", "memory": "8Pi"})
    small = [pod("c1", f"b-p{i}", "b", {"cpu": "1", "memory": "1"}) for i in range(2)]
    groups = [pod_group("c1", "a", "q1"), pod_group("c1", "b", "q1")]
    kept = _sessions(_cluster([big, *small], groups))
    assert kept.sums[-1][0][2].memory == float(2**53)
    assert kept.kept == 0


def test_scalar_names_in_an_order_of_the_jobs_are_left_to_volcano_order() -> None:
    """A sum holds its scalars in the order their first job names them."""
    pods = [
        pod("c1", "a-p0", "a", {"cpu": "1", "example.com/foo": "1"}),
        pod("c1", "b-p0", "b", {"cpu": "1", "example.com/bar": "1"}),
        pod("c1", "c-p0", "c", {"cpu": "1", "example.com/bar": "2"}),
    ]
    groups = [pod_group("c1", name, "q2") for name in "abc"]
    kept = _sessions(_cluster(pods, groups))
    names = [name for name, _ in kept.sums[-1][0][2].scalars]
    assert names == ["example.com/foo", "pods", "example.com/bar"]
    assert kept.kept == 0


def test_a_job_enqueued_with_its_tasks_untouched_reserves_its_minimum() -> None:
    """Enqueue moves the pod group to Inqueue; no node fits its pods, so its tasks stay
    as they were and the next session is handed the same clone: its phase alone tells
    its part of the queue's inqueue changed."""
    pods = [pod("c1", f"a-p{i}", "a", {"cpu": "100"}) for i in range(2)]
    groups = [pod_group("c1", "a", "q1", min_member=2, min_resources={"cpu": "2"})]
    running = [
        pod("c1", "b-p0", "b", {"cpu": "1"}, phase="Running", node_name="n1"),
    ]
    groups.append(pod_group("c1", "b", "q2", min_member=1, phase="Running"))
    kept = _sessions(_cluster(pods + running, groups))
    inqueue = [{uid: attr[2].milli_cpu for uid, *attr in s} for s in kept.sums]
    assert inqueue[0]["q1"] == 0 and inqueue[-1]["q1"] == 2000
    assert kept.kept == len(kept.sums)


# -- the kept values, step by step --------------------------------------------------------


def _snapshot(cluster: Cluster) -> Snapshot:
    return SchedulerCache(cluster, SchedulerOptions(), Klog(0)).snapshot()


def _jobs(cluster: Cluster) -> dict[str, JobInfo]:
    return _snapshot(cluster).jobs


def _two_jobs() -> Snapshot:
    pods = [pod("c1", f"{g}-p{i}", g, {"cpu": "1"}) for g in "ab" for i in range(2)]
    groups = [
        pod_group("c1", "a", "q1", min_resources={"cpu": "2"}),
        pod_group("c1", "b", "q2"),
    ]
    return _snapshot(_cluster(pods, groups))


def _queues(sums: QueueSums, opened: Snapshot) -> dict[str, Any] | None:
    """The queues' allocated, request, inqueue and elastic, as the sums fill them."""
    if not sums.update(opened.jobs, opened.feed, True):
        return None
    filled = {}
    for uid, count in sums.jobs_in.items():
        if count:
            attr = QueueAttr(QueueInfo(queue(uid)), Resource(), Resource(), exceeded=True)
            sums.fill(uid, attr)
            filled[uid] = _queue_sums(attr)
    return filled


def _kept_then_fresh(change: Callable[[Snapshot], None]) -> None:
    """Sums kept over a change of the jobs are the sums of the changed jobs."""
    opened = _two_jobs()
    kept = QueueSums()
    before = _queues(kept, opened)
    change(opened)
    after = _queues(kept, opened)
    assert after == _queues(QueueSums(), opened)
    assert after != before


# Each change as the cache hands it to the next session: a touched job as another clone
# (only an untouched one is carried), a pod group written back with another status.


def _allocate_one(opened: Snapshot) -> None:
    job = opened.jobs["c1/a"] = opened.jobs["c1/a"].clone()
    job.update_task_status(next(iter(job.tasks.values())), TaskStatus.Allocated)


def _another_clone(opened: Snapshot) -> None:
    """A different clone at the very same version: only its identity tells."""
    pods = [pod("c1", "a-p0", "a", {"cpu": "3"}, phase="Running", node_name="n1")]
    other = _jobs(_cluster(pods, [pod_group("c1", "a", "q1")]))
    other["c1/a"].version = opened.jobs["c1/a"].version
    opened.jobs["c1/a"] = other["c1/a"]


def _enqueue(opened: Snapshot) -> None:
    """Enqueue's phase, written back: the same clone is carried, with a new status."""
    pg = opened.jobs["c1/a"].pod_group
    assert pg is not None
    pg.phase = "Inqueue"
    opened.pod_group_status["c1/a"] = pod_group_status(pg)


def _gone(opened: Snapshot) -> None:
    del opened.jobs["c1/a"], opened.pod_group_status["c1/a"]


@pytest.mark.parametrize(
    "change",
    [_allocate_one, _another_clone, _enqueue, _gone],
    ids=["version", "clone", "phase", "gone"],
)
def test_queue_sums_take_out_and_put_in_what_changed(
    change: Callable[[Snapshot], None],
) -> None:
    _kept_then_fresh(change)


def test_queue_sums_are_refused_where_float64_would_round() -> None:
    opened = _two_jobs()
    job = opened.jobs["c1/b"]
    task = next(iter(job.tasks.values()))
    job.delete_task_info(task)
    task.resreq = Resource(0.5, 0.0)  # not a whole number (no Kubernetes quantity is)
    job.add_task_info(task)
    assert _queues(QueueSums(), opened) is None


def _attrs(kept: JobAttrs, opened: Snapshot, total: Resource) -> dict[str, Any]:
    jobs, feed = opened.jobs, opened.feed

    def work_out(job: JobInfo, _total: object) -> DrfAttr:
        return DrfAttr(allocated=job.allocated.clone().add(total))

    return {
        uid: attr.allocated.values()
        for uid, attr in kept.update(jobs, feed, total.values(), work_out).items()
    }


@pytest.mark.parametrize(
    "change",
    [_allocate_one, _another_clone, _gone, "total", "forget"],
    ids=["version", "clone", "gone", "total", "forget"],
)
def test_job_attrs_are_worked_out_again_for_what_changed(change: Any) -> None:
    opened, kept, total = _two_jobs(), JobAttrs(), Resource(1.0)
    jobs = opened.jobs
    before = _attrs(kept, opened, total)
    if change == "total":
        total = Resource(2.0)
    elif change == "forget":  # an event changed the attribute in its session
        kept.forget("c1/a")
        jobs["c1/a"].allocated.add(Resource(7.0))
    else:
        change(opened)
    after = _attrs(kept, opened, total)
    assert after == _attrs(JobAttrs(), opened, total)
    assert after != before
