"""A session's captured tasks patched from the last session's (TaskCapture) are what a
listing of every pod gives (fresh_tasks), in the same order, whatever the cluster's pods
and the jobs did between two captures: pods replaced in place, evicted, added at the
end or in the middle, moved, a key listed twice; jobs carried, captured anew, finished,
new, holding pods of none or another's task; pods no job holds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import REPORT_LIES, told_report
from vspec.framework import capture
from vspec.framework.capture import Captured, TaskCapture, fresh_tasks
from vspec.model.objects import ObjectMeta, Pod
from vspec.model.result import TaskResult

_PHASES = ("Pending", "Running", "Succeeded")
_STATUSES = ("Pending", "Allocated", "Pipelined", "Binding", "Bound", "Running")


def _pod(key: int, phase: str = "Pending", node: str = "") -> Pod:
    return Pod(ObjectMeta(f"p{key}", "ns"), phase=phase, node_name=node)


def _job(version: int, keys: list[str], data: st.DataObject) -> Captured:
    """A job's capture holding ``keys``, each task in a status and on a node drawn."""
    tasks = {}
    for key in keys:
        status = data.draw(st.sampled_from(_STATUSES))
        tasks[key] = TaskResult(data.draw(st.sampled_from(("", "n1", "n2"))) or None, status)
    return Captured(version, tasks, ())


class _World:
    """A cluster's pods and a session's job captures, moved on step by step the ways a
    timeline does and some it never does."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data
        self.next_key = 0
        self.version = 0
        self.pods: list[Pod] = [self.new_pod() for _ in range(data.draw(st.integers(0, 8)))]
        self.jobs: dict[str, Captured] = {}
        for _ in range(data.draw(st.integers(0, 3))):
            self.new_job()

    def draw(self, strategy: st.SearchStrategy[Any]) -> Any:
        return self.data.draw(strategy)

    def new_pod(self, key: int | None = None) -> Pod:
        if key is None:
            key, self.next_key = self.next_key, self.next_key + 1
        phase = self.draw(st.sampled_from(_PHASES))
        node = self.draw(st.sampled_from(("", "n1", "n2"))) if phase != "Pending" else ""
        return _pod(key, phase, node)

    def keys(self) -> list[str]:
        return [p.meta.key for p in self.pods]

    def held_keys(self, uid: str, keys: list[str]) -> None:
        """Job ``uid`` captured anew holding some of ``keys``."""
        self.version += 1
        held = self.draw(st.lists(st.sampled_from(keys), unique=True, max_size=3)) if keys else []
        self.jobs[uid] = _job(self.version, held, self.data)

    def new_job(self) -> None:
        """A job of pods no job holds (a timeline's new job holds new pods)."""
        taken = {key for job in self.jobs.values() for key in job.tasks}
        self.held_keys(f"j{self.version}", [k for k in self.keys() if k not in taken])

    def step(self) -> None:
        for _ in range(self.draw(st.integers(0, 4))):
            self.pod_step(self.draw(st.sampled_from(_POD_STEPS)))
        for _ in range(self.draw(st.integers(0, 3))):
            self.job_step(self.draw(st.sampled_from(_JOB_STEPS)))

    def pod_step(self, kind: str) -> None:
        pods = self.pods
        if kind == "append" or not pods:
            pods.append(self.new_pod())
            return
        i = self.draw(st.integers(0, len(pods) - 1))
        key = int(pods[i].meta.name[1:])
        if kind == "replace":  # a bind: a new object of the same key, in place
            pods[i] = self.new_pod(key)
        elif kind == "remove":  # an eviction, a finished job's pod
            del pods[i]
        elif kind == "insert":  # a new pod before others
            pods.insert(i, self.new_pod())
        elif kind == "move":
            pods.insert(self.draw(st.integers(0, len(pods) - 1)), pods.pop(i))
        elif kind == "renew elsewhere":  # the same key, a new object at another place
            del pods[i]
            pods.insert(self.draw(st.integers(0, len(pods))), self.new_pod(key))
        elif kind == "key twice":
            pods.insert(self.draw(st.integers(0, len(pods))), self.new_pod(key))

    def job_step(self, kind: str) -> None:
        jobs = self.jobs
        if kind == "new" or not jobs:
            self.new_job()
            return
        uid = self.draw(st.sampled_from(sorted(jobs)))
        if kind == "finish":
            del jobs[uid]
        elif kind == "capture anew":  # a task moved: the same tasks, new results
            self.version += 1
            jobs[uid] = _job(self.version, list(jobs[uid].tasks), self.data)
        elif kind == "take":  # other pods: one no job held, or another job's
            self.held_keys(uid, self.keys())
        elif kind == "hold of no pod":
            self.held_keys(uid, [*jobs[uid].tasks, "ns/nowhere"])


# The ways of a timeline (a session binds in place, evicts, the clock takes finished
# jobs' pods out and appends new ones) most often; then what none does.
_POD_STEPS = (
    *("append", "append", "replace", "replace", "replace", "remove", "remove"),
    *("insert", "move", "renew elsewhere", "renew elsewhere", "key twice"),
)
_JOB_STEPS = ("new", "new", "finish", "capture anew", "capture anew", "take", "hold of no pod")


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_patched_capture_is_a_fresh_one_in_order(data: st.DataObject) -> None:
    world = _World(data)
    kept = TaskCapture()
    for _ in range(data.draw(st.integers(1, 10))):
        got = kept.tasks(list(world.pods), dict(world.jobs))
        assert list(got.items()) == list(fresh_tasks(world.pods, world.jobs).items())
        world.step()


def test_a_timeline_like_step_is_patched_not_listed_afresh() -> None:
    """Binds in place, an eviction, a finished job's pods taken out of the middle, new
    pods at the end, a job captured anew, one finished, pods no job holds."""
    pods = [_pod(i) for i in range(8)]
    keys = [p.meta.key for p in pods]
    jobs = {
        "a": Captured(1, {k: TaskResult(None, "Pending") for k in keys[:3]}, ()),
        "b": Captured(1, {k: TaskResult(None, "Pending") for k in keys[3:6]}, ()),
        "c": Captured(1, {keys[6]: TaskResult(None, "Pending")}, ()),
    }
    kept = TaskCapture()
    kept.tasks(pods, jobs)
    after = [_pod(0, "Running", "n1"), pods[1], pods[2], pods[6], pods[7], _pod(8), _pod(9)]
    moved_on = {
        "a": Captured(2, jobs["a"].tasks | {keys[0]: TaskResult("n1", "Running")}, ()),
        "c": jobs["c"],
        "d": Captured(1, {"ns/p8": TaskResult(None, "Pending")}, ()),
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(capture, "_listed", None)  # a listing afresh would fail
        got = kept.tasks(after, moved_on)
    assert list(got.items()) == list(fresh_tasks(after, moved_on).items())
    assert list(got) == [p.meta.key for p in after]
    assert got["ns/p0"] == TaskResult("n1", "Running")  # a's new capture
    assert got["ns/p7"] == got["ns/p9"] == TaskResult(None, "Pending")  # held by none


def test_a_capture_handed_out_is_the_callers_own() -> None:
    """The next capture patches the kept one, not the dict a result holds."""
    pods = [_pod(0), _pod(1)]
    kept = TaskCapture()
    first = kept.tasks(pods, {})
    snapshot = list(first.items())
    kept.tasks([pods[0], _pod(1, "Running", "n1"), _pod(2)], {})
    assert list(first.items()) == snapshot


@pytest.mark.parametrize(
    "order",
    [
        [9, 1, 2, 3, 4],  # pod 0 renewed at its place (a bind)
        [1, 2, 9, 3, 4],  # pod 0 renewed among others further on
        [1, 2, 3, 4, 9],  # ... at the end
        [9, 2, 8, 4],  # two renewed in place, one of them taken out
        [8, 1, 2, 9, 4],  # 0 and 3 renewed, swapped
        [0, 1, 5, 2, 3, 4],  # a new pod among others
        [0, 2, 1, 3, 4],  # a pod moved
    ],
)
def test_pods_renewed_or_put_among_others_keep_the_cluster_order(order: list[int]) -> None:
    """Places 8 and 9 stand for pods 3 and 0 renewed (a new object of the same key), 5
    for a new pod; the rest are the last session's objects. Pod 3 held by a job."""
    pods = [_pod(i) for i in range(5)]
    renewed = {9: _pod(0, "Running", "n1"), 8: _pod(3, "Running", "n2"), 5: _pod(5)}
    jobs = {"a": Captured(1, {"ns/p3": TaskResult(None, "Pending")}, ())}
    kept = TaskCapture()
    kept.tasks(pods, jobs)
    after = [renewed[i] if i in renewed else pods[i] for i in order]
    got = kept.tasks(after, jobs)
    assert list(got.items()) == list(fresh_tasks(after, jobs).items())


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_capture_patched_by_a_report_is_a_fresh_one_in_order(data: st.DataObject) -> None:
    """The capture takes the pods' changes from the list maker's report when it goes from
    the last pods list to these (a timeline's, every session), and is still what a fresh
    listing gives, in order, whatever the report says: it is checked against the pods."""
    world = _World(data)
    kept = TaskCapture()
    pods = list(world.pods)
    got = kept.tasks(pods, dict(world.jobs))
    for _ in range(data.draw(st.integers(1, 10))):
        world.step()
        last, pods = pods, list(world.pods)
        lie = data.draw(st.sampled_from(REPORT_LIES))
        report = told_report(last, pods, lie, data.draw(st.integers(0, 9)))
        got = kept.tasks(pods, dict(world.jobs), report)
        assert list(got.items()) == list(fresh_tasks(pods, world.jobs).items())


def test_a_true_report_saves_comparing_the_pods() -> None:
    """A bind in place, a pod taken out of the middle and one appended, as reported: the
    lists are not compared."""
    pods = [_pod(i) for i in range(4)]
    kept = TaskCapture()
    kept.tasks(pods, {})
    after = [pods[0], _pod(1, "Running", "n1"), pods[3], _pod(4)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(capture, "list_changes", None)  # a comparison would fail
        patch.setattr(capture, "_listed", None)  # and so would a listing afresh
        got = kept.tasks(after, {}, told_report(pods, after, "none", 0))
    assert list(got.items()) == list(fresh_tasks(after, {}).items())


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_capture_told_which_jobs_moved_is_a_fresh_one_in_order(data: st.DataObject) -> None:
    """When the job captures come from TaskCapture.jobs, the capture compares only the
    jobs it names as moved (a session's few, and any others it names) and the ended
    ones: told those, it is what a fresh listing gives, in order."""
    world = _World(data)
    kept = TaskCapture()
    jobs = dict(world.jobs)
    kept.tasks(list(world.pods), jobs)
    for _ in range(data.draw(st.integers(1, 10))):
        world.step()
        last, jobs = jobs, dict(world.jobs)
        moved = {uid for uid, job in jobs.items() if last.get(uid) is not job}
        moved |= set(data.draw(st.lists(st.sampled_from(sorted(jobs)), max_size=2)) if jobs else [])
        kept._moved = (jobs, last, (moved, last.keys() - jobs.keys()))
        got = kept.tasks(list(world.pods), jobs)
        assert list(got.items()) == list(fresh_tasks(world.pods, world.jobs).items())
