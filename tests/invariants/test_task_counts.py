"""The tasks' facts (phase-consistent's task counts, the tasks a kept statement left),
patched from the last session's by the tasks that are other objects and the pods that
changed (TaskCounts), equal those worked out afresh from every task, whatever tasks and
pods come, go, move or change between sessions; phase-consistent's verdicts, kept while
the jobs are all right (PhaseVerdicts), say what judging every job says."""

from __future__ import annotations

from dataclasses import dataclass
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.builders import pod, pod_group
from tests.invariants.test_pod_facts import NAMES, Change, _apply, _by_key
from vspec.api.types import TaskStatus
from vspec.invariants import history
from vspec.invariants.evictions import PhaseVerdicts, phase_messages
from vspec.invariants.history import PodFacts, PodIndex, TaskCounts, counted_tasks, kept_tasks
from vspec.model.corev1 import Condition
from vspec.model.objects import Pod, PodGroup
from vspec.model.result import PodGroupResult, TaskResult

STATUSES = ["Pending", "Allocated", "Running", "Succeeded", "Binding", "Pipelined"]

# One change of a session's tasks: (what, which pod's key, which status).
TaskChange = tuple[str, int, int]
pod_changes = st.tuples(
    st.sampled_from(["add", "remove", "bind", "finish", "keep", "move", "twice"]),
    st.integers(0, 5),
    st.integers(0, 3),
)
task_changes = st.tuples(
    st.sampled_from(["status", "drop", "extra", "move", "same", "orphan", "rekey"]),
    st.integers(0, 6),
    st.integers(0, len(STATUSES) - 1),
)
sessions = st.lists(
    st.tuples(st.lists(pod_changes, max_size=6), st.lists(task_changes, max_size=6)),
    min_size=1,
    max_size=10,
)


def _tasks_of(
    pods: list[Pod], last: dict[str, TaskResult], edits: list[TaskChange]
) -> dict[str, TaskResult]:
    """The session's tasks as an engine hands them on: a pod's key in the pods' order,
    the last session's very result where nothing changed; then the drawn changes (a
    status another object, a task missing, one of no pod, one kept whose pod may have
    gone, the order changed, two results swapped between their keys)."""
    tasks = {key: last.get(key) or TaskResult(None, "Pending") for key in _by_key(pods)}
    for what, i, n in edits:
        key = f"ns/p{i}"
        if what == "status":
            tasks[key] = TaskResult(None, STATUSES[n])
        elif what == "drop":
            tasks.pop(key, None)
        elif what == "extra":
            tasks[f"ns/x{i}"] = TaskResult(None, STATUSES[n])
        elif what == "move" and key in tasks:
            tasks[key] = tasks.pop(key)
        elif what == "orphan" and key in last:  # its pod may be gone, its task stays
            tasks[key] = last[key]
        elif what == "same" and key in tasks:  # an equal result, another object
            tasks[key] = TaskResult(tasks[key].node, tasks[key].status)
        elif what == "rekey" and key in tasks:  # its result under the next key, and back
            tasks = _rekeyed(tasks, key)
    return tasks


def _rekeyed(tasks: dict[str, TaskResult], key: str) -> dict[str, TaskResult]:
    """``key`` and the key after it swapped, each result kept in its place: the very
    result objects in the same order, under other keys."""
    keys = list(tasks)
    other = keys[(keys.index(key) + 1) % len(keys)]
    swap = {key: other, other: key}
    return {swap.get(k, k): task for k, task in tasks.items()}


@settings(max_examples=300, deadline=None)
@given(sessions)
# Two jobs' results swapped between their keys: the same objects in the same places.
@example(
    [([("add", 0, 1), ("add", 1, 2)], [("status", 0, 2)]), ([("add", 2, 3)], [("rekey", 0, 0)])]
)
def test_patched_counts_equal_fresh(drawn: list[tuple[list[Change], list[TaskChange]]]) -> None:
    index, facts, counts = PodIndex(), PodFacts(), TaskCounts()
    pods: list[Pod] = []
    tasks: dict[str, TaskResult] = {}
    earlier: list[tuple[dict[str, dict[TaskStatus, int]], list[int]]] = []
    for pod_edits, task_edits in drawn:
        pods = list(pods)
        for change in pod_edits:
            _apply(pods, change)
        tasks = _tasks_of(pods, tasks, task_edits)
        step = index.update(pods)
        job_ids = facts.of(step.after, NAMES, step).job_ids
        got = counts.of(step, job_ids, tasks)
        assert got.counts == counted_tasks(step.after.keys(), job_ids, tasks)
        assert got.kept == kept_tasks(tasks)
        earlier.append((got.counts, [sum(c.values()) for c in got.counts.values()]))
    for old, sums in earlier:  # patching a later session's counts left these alone
        assert [sum(c.values()) for c in old.values()] == sums


def test_a_timeline_step_is_patched_not_counted_afresh() -> None:
    """A finished job's tasks taken out of the middle, tasks replaced in place (binds) and
    new ones last: the keys that stayed are found the same by runs, and the counts are
    patched, not counted over every task again."""
    index, facts, counts = PodIndex(), PodFacts(), TaskCounts()
    pods = [pod("ns", f"p{i}", f"j{i // 4}") for i in range(12)]
    tasks = {p.meta.key: TaskResult(None, "Pending") for p in pods}
    step = index.update(pods)
    counts.of(step, facts.of(step.after, NAMES, step).job_ids, tasks)
    pods = [*pods[:4], *pods[8:], pod("ns", "p12", "j3")]
    tasks = {p.meta.key: tasks[p.meta.key] for p in pods[:-1]} | {
        "ns/p12": TaskResult(None, "Pending")
    }
    tasks["ns/p1"] = tasks["ns/p9"] = TaskResult("n1", "Running")
    step = index.update(pods)
    job_ids = facts.of(step.after, NAMES, step).job_ids
    with mock.patch.object(history, "counted_tasks", side_effect=AssertionError("counted")):
        got = counts.of(step, job_ids, tasks)
    assert got.counts == counted_tasks(step.after.keys(), job_ids, tasks)


# -- phase-consistent's verdicts, judged again only for the jobs that differ ---------------------

PHASES = ["Pending", "Inqueue", "Running", "Unknown", "Completed"]
JOB_UIDS = [f"ns/j{k}" for k in range(4)]

# One change between sessions: (what, which job, which variant).
PhaseEdit = tuple[str, int, int]
phase_edits = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["group", "count", "phase", "session", "conditions", "bind", "drop"]),
            st.integers(0, len(JOB_UIDS) - 1),
            st.integers(0, 4),
        ),
        max_size=4,
    ),
    min_size=1,
    max_size=10,
)


@dataclass
class _Session:
    """What phase_messages reads of a session: the pod groups, each job's counts (a
    changed job's a new dict, as TaskCounts gives), the results and the bound jobs."""

    groups: dict[str, PodGroup]
    counts: dict[str, dict[TaskStatus, int]]
    results: dict[str, PodGroupResult]
    bound: set[str]

    def edited(self, edits: list[PhaseEdit]) -> _Session:
        groups, counts = dict(self.groups), dict(self.counts)
        results = {
            uid: PodGroupResult(r.phase, r.session_phase, r.conditions)
            for uid, r in self.results.items()
        }
        bound: set[str] = set()
        for what, k, n in edits:
            uid = JOB_UIDS[k]
            if what == "group":
                groups[uid] = pod_group("ns", f"j{k}", "q", min_member=n)
            elif what == "count":
                counted = dict(counts.get(uid, {}))
                status = (TaskStatus.Running, TaskStatus.Pending, TaskStatus.Succeeded)[n % 3]
                counted[status] = counted.get(status, 0) + 1
                counts[uid] = counted
            elif what == "phase" and uid in results:
                results[uid].phase = PHASES[n]
            elif what == "session" and uid in results:
                results[uid].session_phase = PHASES[n]
            elif what == "conditions" and uid in results:
                results[uid].conditions = [Condition("Unschedulable", ("True", "False")[n % 2])]
            elif what == "bind":
                bound.add(uid)
            elif what == "drop":
                results.pop(uid, None)
        return _Session(groups, counts, results, bound)


def _first_session() -> _Session:
    groups = {uid: pod_group("ns", uid[3:], "q", min_member=1) for uid in JOB_UIDS}
    counts = {uid: {TaskStatus.Running: 1} for uid in JOB_UIDS}
    results = {uid: PodGroupResult("Running", "Running") for uid in JOB_UIDS}
    return _Session(groups, counts, results, set())


@settings(max_examples=300, deadline=None)
@given(phase_edits)
# Unknown is right while the job is Unschedulable, which its state does not hold.
@example([[("phase", 0, 3), ("conditions", 0, 0)], [("conditions", 0, 1)]])
def test_phase_verdicts_kept_say_what_judging_every_job_says(drawn: list[list[PhaseEdit]]) -> None:
    memo = PhaseVerdicts()
    session = _first_session()
    for edits in [[], *drawn]:
        session = session.edited(edits)
        args = (session.groups, session.counts, session.bound, session.results)
        assert phase_messages(*args, memo) == phase_messages(*args)
