"""The in-session state a timeline captures every session (the tasks the invariants
read) is the same whether a job's capture was kept from an earlier session or made
again: a kept one is used only for a job none of whose tasks moved since; and the
session's tasks patched from the last session's are what listing every pod gives."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from vspec.api.job_info import JobInfo
from vspec.engines import get_engine
from vspec.framework import capture as scheduler
from vspec.fuzz.runner import SEED_CONF
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster, Pod
from vspec.model.timeline import Timeline
from vspec.timeline.clock import run_timeline


def _captures(
    conf: SchedulerConf, cluster: Cluster, timeline: Timeline, seed: int
) -> tuple[list[Any], int]:
    """Every session's captured tasks and pipelined tasks, each job's capture, phase and
    pipelined tasks checked against those made afresh; and how many were kept ones
    (from an earlier session's capture, or kept by the job feed without reading the
    job)."""
    made = scheduler._captured
    kept = 0
    listing = scheduler.TaskCapture.tasks
    job_captures = scheduler.TaskCapture.jobs
    last: dict[str, Any] = {}

    def jobs_checked(self: scheduler.TaskCapture, ssn: Any) -> Any:
        nonlocal kept, last
        captured, phases, pipelined = job_captures(self, ssn)
        assert list(captured) == list(phases) == list(pipelined) == list(ssn.jobs)
        for uid, job in ssn.jobs.items():
            got = captured[uid]
            kept += got is last.get(uid)
            job.derived.pop(scheduler._CAPTURED, None)
            fresh = made(job)
            assert (got.tasks, got.pipelined) == (fresh.tasks, fresh.pipelined), job.uid
            assert pipelined[uid] == fresh.pipelined, job.uid
            assert phases[uid] == (job.pod_group and job.pod_group.phase), job.uid
        last = dict(captured)
        return captured, phases, pipelined

    def listed(
        self: scheduler.TaskCapture, pods: list[Pod], jobs: dict[str, Any], *report: Any
    ) -> Any:
        got = listing(self, pods, jobs, *report)
        assert list(got.items()) == list(scheduler.fresh_tasks(pods, jobs).items())
        return got

    def checked(job: JobInfo) -> Any:
        got = made(job)
        job.derived.pop(scheduler._CAPTURED)
        fresh = made(job)
        assert (got.tasks, got.pipelined) == (fresh.tasks, fresh.pipelined), job.uid
        return got

    sessions: list[Any] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scheduler, "_captured", checked)
        patch.setattr(scheduler.TaskCapture, "tasks", listed)
        patch.setattr(scheduler.TaskCapture, "jobs", jobs_checked)
        run_timeline(
            conf,
            cluster,
            timeline,
            seed=seed,
            engine=get_engine(),
            on_session=lambda now, before, s: sessions.append((now, s.tasks, s.pipelined)),
        )
    return sessions, kept


def test_the_day_shape_keeps_most_captures_and_each_is_what_a_new_one_is() -> None:
    from benchmarks.timeline_day import workload

    conf = conf_from_document(SEED_CONF)
    cluster, timeline = workload(nodes=20, jobs=60, hours=0.25, seed=4)
    patching = scheduler._Patchable.patched
    patched = 0

    def counted(self: Any, pods: list[Pod], jobs: dict[str, Any], *hints: Any) -> bool:
        nonlocal patched
        patched += (done := patching(self, pods, jobs, *hints))
        return done

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scheduler._Patchable, "patched", counted)
        sessions, kept = _captures(conf, cluster, timeline, 4)
    assert kept > 10 * len(sessions)  # most sessions reuse most jobs' captures
    assert patched == len(sessions) - 1  # every session's tasks but the first patched


@settings(max_examples=30, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), ClusterBounds(max_nodes=4, max_jobs=5)))
def test_generated_timelines_capture_what_a_fresh_capture_gives(
    case: GeneratedTimelineSpec,
) -> None:
    _captures(case.conf, case.cluster, case.timeline, case.seed)


def test_a_job_whose_task_moves_is_captured_anew() -> None:
    from vspec.api.task_info import TaskInfo
    from vspec.api.types import TaskStatus
    from vspec.model.objects import GROUP_NAME_ANNOTATION, ObjectMeta, Pod

    meta = ObjectMeta("p", "ns", uid="p", annotations={GROUP_NAME_ANNOTATION: "j"})
    job = JobInfo("ns/j")
    task = TaskInfo(Pod(meta))
    job.add_task_info(task)
    first = scheduler._captured(job)
    assert scheduler._captured(job) is first
    job.update_task_status(task, TaskStatus.Pipelined)
    task.node_name = "n1"
    moved = scheduler._captured(job)
    assert moved.tasks["ns/p"].status == "Pipelined" and moved.pipelined == [("ns/p", "n1")]
    job.update_task_status(task, TaskStatus.Bound)
    assert scheduler._captured(job).tasks["ns/p"].node == "n1"
