"""What a timeline's checks carry from session to session and patch with the pods a
session changed (PodIndex's pods by key and its step, PodFacts, JobPods, NodeLoads)
equals what is worked out afresh from every pod, whatever comes, goes, moves in the
list, changes status or shares a key between sessions."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import node, pod
from vspec.invariants.history import (
    CycleView,
    Facts,
    JobPods,
    PodFacts,
    PodIndex,
    Requests,
    allocatable,
    pods_by_job,
)
from vspec.invariants.nodetable import NodeColumns, NodeLoads
from vspec.model.objects import Pod

NAMES = ("volcano",)
NODES = [node(f"n{i}", {"cpu": 4, "pods": 8}) for i in range(4)]
COLUMNS = NodeColumns.of(NODES, allocatable)

# One change between sessions: (what happens, which pod, a node or job number).
Change = tuple[str, int, int]
changes = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["add", "remove", "bind", "finish", "delete", "keep", "foreign", "move", "twice"]
            ),
            st.integers(0, 5),
            st.integers(0, 3),
        ),
        max_size=8,
    ),
    min_size=1,
    max_size=8,
)


def _at(pods: list[Pod], key: str) -> int | None:
    return next((i for i, p in enumerate(pods) if p.meta.key == key), None)


def _apply(pods: list[Pod], change: Change) -> None:
    """Change ``pods`` as a timeline does (a changed pod is a new object in its place,
    a new pod comes last), or as it might (a pod moves in the list, a key twice)."""
    what, i, n = change
    key = f"ns/p{i}"
    at = _at(pods, key)
    if what == "add" and at is None:
        pods.append(pod("ns", f"p{i}", f"j{n}" if n else "", {"cpu": 1}))
        return
    if at is None:
        return
    old = pods[at]
    if what == "remove":
        del pods[at]
        return
    if what == "move":
        pods.insert(n % (len(pods) + 1), pods.pop(at))
        return
    new = copy.copy(old)
    new.meta = copy.copy(old.meta)
    if what == "bind":
        new.node_name, new.phase = f"n{n}", "Running"
    elif what == "finish":
        new.phase = "Succeeded"
    elif what == "delete":
        new.meta.deletion_timestamp = old.meta.creation_timestamp
    elif what == "foreign":
        new.scheduler_name = "other"
    if what == "twice":
        pods.insert(n % (len(pods) + 1), new)  # the later pod of the key wins
    else:
        pods[at] = new  # "keep": the same pod, as another object


def _by_key(pods: list[Pod]) -> dict[str, Pod]:
    return {p.meta.key: p for p in pods}


def _same(got: Facts, want: Facts) -> None:
    assert got.statuses == want.statuses
    assert got.job_ids == want.job_ids
    assert got.terminating == want.terminating
    assert got.members == want.members
    assert got.on_node == want.on_node


def _fresh_jobs(pods: dict[str, Pod], facts: Facts) -> list[tuple[str, list[int]]]:
    view = CycleView(0, pods)
    view.members = facts.members
    return [(uid, list(map(id, listed))) for uid, listed in _InputsOf(view).by_job().items()]


class _InputsOf:
    """Just enough of InvariantInputs for pods_by_job without carried memos."""

    carry = None

    def __init__(self, view: CycleView) -> None:
        self.view = view

    def derived(self, _name: str, _of: object, derive: object) -> object:
        return derive()  # type: ignore[operator]

    def by_job(self) -> dict[str, list[Pod]]:
        return pods_by_job(self, self.view)  # type: ignore[arg-type]


def _loads(loads: NodeLoads, pods: dict[str, Pod], facts: Facts, step: object) -> list[object]:
    held, slots = loads.of(COLUMNS, len(NODES), pods, facts.statuses, Requests(), step)  # type: ignore[arg-type]
    return [sorted((k, list(v)) for k, v in held.items()), list(slots)]


@settings(max_examples=200, deadline=None)
@given(changes)
def test_patched_equal_fresh(sessions: list[list[Change]]) -> None:
    index, facts, jobs, loads = PodIndex(), PodFacts(), JobPods(), NodeLoads()
    pods: list[Pod] = []
    earlier: list[tuple[dict[str, Pod], Facts]] = []
    for session in sessions:
        pods = list(pods)
        for change in session:
            _apply(pods, change)
        step = index.update(pods)
        want = _by_key(pods)
        assert list(step.after.items()) == list(want.items())
        assert [k for k, _ in sorted(step.rank.items(), key=lambda kv: kv[1])] == list(want)
        got = facts.of(step.after, NAMES, step)
        fresh = PodFacts().of(want, NAMES)
        _same(got, fresh)
        by_job = jobs.of(step, got.members, NAMES)
        assert [(u, list(map(id, ps))) for u, ps in by_job.items()] == _fresh_jobs(want, fresh)
        assert _loads(loads, step.after, got, step) == _loads(NodeLoads(), want, fresh, None)
        earlier.append((step.after, got))
    for old_pods, old in earlier:  # patching a later session's facts left these alone
        _same(old, PodFacts().of(old_pods, NAMES))


@settings(max_examples=100, deadline=None)
@given(changes)
def test_facts_patched_without_a_step_equal_fresh(sessions: list[list[Change]]) -> None:
    """PodFacts compares the pods itself when no step says how they came."""
    facts = PodFacts()
    pods: list[Pod] = []
    for session in sessions:
        pods = list(pods)
        for change in session:
            _apply(pods, change)
        by_key = _by_key(pods)
        _same(facts.of(by_key, NAMES), PodFacts().of(by_key, NAMES))


def test_unchanged_jobs_keep_their_lists() -> None:
    """A job none of whose pods changed keeps the very list it had (a memo keyed by it
    holds); a changed pod stays in its place in its job's list."""
    index, facts, jobs = PodIndex(), PodFacts(), JobPods()
    first = [pod("ns", f"p{i}", f"j{i % 2}") for i in range(4)]
    step = index.update(first)
    before = jobs.of(step, facts.of(step.after, NAMES, step).members, NAMES)
    second = list(first)
    second[0] = copy.copy(first[0])
    second.append(pod("ns", "p4", "j0"))
    step = index.update(second)
    after = jobs.of(step, facts.of(step.after, NAMES, step).members, NAMES)
    assert after["ns/j1"] is before["ns/j1"]
    assert [p.meta.key for p in after["ns/j0"]] == ["ns/p0", "ns/p2", "ns/p4"]
    assert after["ns/j0"][0] is second[0]


def test_the_index_reads_only_the_changed_pods_keys() -> None:
    """An unchanged pod's key is not read again: the step is found by identity."""
    index = PodIndex()
    pods = [pod("ns", f"p{i}", "j") for i in range(3)]
    index.update(pods)
    pods[1].meta.name = "renamed"  # not how a timeline changes a pod: shows what is read
    step = index.update([*pods, pod("ns", "p3", "j")])
    assert list(step.after) == ["ns/p0", "ns/p1", "ns/p2", "ns/p3"]
    assert [k for k, _ in step.came] == ["ns/p3"] and not step.gone
    assert np.array_equal(list(step.rank.values()), [0, 1, 2, 3])
