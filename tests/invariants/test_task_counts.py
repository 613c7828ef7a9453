"""phase-consistent's task counts, patched from the last session's by the tasks that are
other objects and the pods that changed (TaskCounts), equal the counts worked out afresh
from every task, whatever tasks and pods come, go, move or change between sessions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.invariants.test_pod_facts import NAMES, Change, _apply, _by_key
from vspec.api.types import TaskStatus
from vspec.invariants.evictions import TaskCounts, _counted
from vspec.invariants.history import PodFacts, PodIndex
from vspec.model.objects import Pod
from vspec.model.result import TaskResult

STATUSES = ["Pending", "Allocated", "Running", "Succeeded", "Binding"]

# One change of a session's tasks: (what, which pod's key, which status).
TaskChange = tuple[str, int, int]
pod_changes = st.tuples(
    st.sampled_from(["add", "remove", "bind", "finish", "keep", "move", "twice"]),
    st.integers(0, 5),
    st.integers(0, 3),
)
task_changes = st.tuples(
    st.sampled_from(["status", "drop", "extra", "move", "same", "orphan"]),
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
    gone, the order changed)."""
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
    return tasks


@settings(max_examples=300, deadline=None)
@given(sessions)
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
        assert got == _counted(step.after.keys(), job_ids, tasks)
        earlier.append((got, [sum(c.values()) for c in got.values()]))
    for old, sums in earlier:  # patching a later session's counts left these alone
        assert [sum(c.values()) for c in old.values()] == sums
