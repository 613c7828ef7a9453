"""What a timeline's checks carry from session to session and patch with the pods and
pod groups a session changed (PodIndex's pods by key and its step, PodFacts, JobPods,
NodeLoads, JobsMemo) equals what is worked out afresh from every pod, whatever comes,
goes, moves in the list, changes status or shares a key between sessions."""

from __future__ import annotations

import copy
import operator
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import REPORT_LIES, node, pod, pod_group, queue, told_report
from vspec.api.types import TaskStatus
from vspec.invariants import history
from vspec.invariants.history import (
    CycleView,
    Facts,
    JobPods,
    Jobs,
    JobsMemo,
    JobsMoved,
    PodFacts,
    PodIndex,
    Requests,
    allocatable,
    pods_by_job,
)
from vspec.invariants.nodetable import NodeColumns, NodeLoads
from vspec.model.changes import Changed
from vspec.model.objects import Cluster, Pod, PodGroup

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


def _readded(session: list[Change]) -> bool:
    """Whether a pod taken out comes back in the session (last, so its key moved)."""
    removed: set[int] = set()
    for what, i, _ in session:
        if what == "remove":
            removed.add(i)
        elif what == "add" and i in removed:
            return True
    return False


def _by_key(pods: list[Pod]) -> dict[str, Pod]:
    return {p.meta.key: p for p in pods}


def _same(got: Facts, want: Facts) -> None:
    assert got.statuses == want.statuses
    assert got.job_ids == want.job_ids
    assert got.terminating == want.terminating
    assert got.members == want.members
    assert got.on_node == want.on_node
    pending = {key for key, status in want.statuses.items() if status is TaskStatus.Pending}
    assert got.pending == want.pending == pending


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
    last_by_job: dict[str, list[Pod]] = {}
    pods: list[Pod] = []
    earlier_list: list[Pod] = []
    earlier: list[tuple[dict[str, Pod], Facts]] = []
    for session in sessions:
        pods = list(pods)
        for change in session:
            _apply(pods, change)
        last, step = index.step, index.update(pods)
        want = _by_key(pods)
        moved = any(what in ("move", "twice") for what, _, _ in session) or _readded(session)
        unique = len(want) == len(pods) and len(step.before or {}) == len(earlier_list)
        if step is not last and step.before is not None and unique and not moved:
            assert not step.renumbered  # patched, not built afresh
        earlier_list = pods
        assert list(step.after.items()) == list(want.items())
        assert [k for k, _ in sorted(step.rank.items(), key=lambda kv: kv[1])] == list(want)
        got = facts.of(step.after, NAMES, step)
        fresh = PodFacts().of(want, NAMES)
        _same(got, fresh)
        by_job = jobs.of(step, got.members, NAMES)
        assert [(u, list(map(id, ps))) for u, ps in by_job.items()] == _fresh_jobs(want, fresh)
        _told_moved(jobs.moved, last_by_job, by_job)
        last_by_job = by_job
        assert _loads(loads, step.after, got, step) == _loads(NodeLoads(), want, fresh, None)
        earlier.append((step.after, got))
    for old_pods, old in earlier:  # patching a later session's facts left these alone
        _same(old, PodFacts().of(old_pods, NAMES))


lies = st.lists(st.tuples(st.sampled_from(REPORT_LIES), st.integers(0, 7)), min_size=1, max_size=8)


T = TypeVar("T")


def _reported_lists(
    sessions: list[list[Change]],
    told: list[tuple[str, int]],
    apply: Callable[[list[T], Change], None],
) -> Iterator[tuple[list[T], Changed[T] | None]]:
    """Each session's list (a new one, changed by ``apply``) and its change report, told
    as ``told`` says (none for the first)."""
    now: list[T] = []
    for at, session in enumerate(sessions):
        last, now = now, list(now)
        for change in session:
            apply(now, change)
        yield now, (told_report(last, now, *told[at % len(told)]) if at else None)


def _told_moved(moved: JobsMoved, before: dict[str, Any], now: dict[str, Any]) -> None:
    """What a memo says moved between its last two answers names every job whose entry
    is another object (or came, or went), when it says anything; nothing between an
    answer and itself."""
    told = moved.since(before, now)
    if told is not None:
        assert {
            uid for uid in before.keys() | now.keys() if before.get(uid) is not now.get(uid)
        } <= told
    assert moved.since(now, now) == set()


@settings(max_examples=300, deadline=None)
@given(changes, lies)
def test_a_reported_step_is_the_walked_one(
    sessions: list[list[Change]], told: list[tuple[str, int]]
) -> None:
    """A step taken from the list maker's report (PodIndex._reported) is the one the walk
    finds, pods by key, what went and came (in the lists' orders) and the ranks, however
    the report errs: it is checked against the pods, never trusted."""
    reported, walked = PodIndex(), PodIndex()
    for pods, report in _reported_lists(sessions, told, _apply):
        got, want = reported.update(pods, report), walked.update(pods)
        assert list(got.after.items()) == list(want.after.items()) == list(_by_key(pods).items())
        # Rebuilt, the walked step lists them in no particular order; else in the lists'.
        arranged = sorted if want.renumbered else list
        for got_side, want_side in ((got.gone, want.gone), (got.came, want.came)):
            assert arranged((k, id(p)) for k, p in got_side) == arranged(
                (k, id(p)) for k, p in want_side
            )
        assert [k for k, _ in sorted(got.rank.items(), key=lambda kv: kv[1])] == list(got.after)


def test_a_true_report_saves_the_walk() -> None:
    """The report, when it holds, is what the step comes from: the lists are not walked."""
    index = PodIndex()
    pods = [pod("ns", f"p{i}", "j") for i in range(4)]
    index.update(pods)
    bound = copy.copy(pods[1])
    bound.node_name = "n0"
    after = [pods[0], bound, pods[3], pod("ns", "p9", "j")]
    report = told_report(pods, after, "none", 0)
    with mock.patch.object(history, "list_changes", side_effect=AssertionError("walked")):
        step = index.update(after, report)
    assert [k for k, _ in step.gone] == ["ns/p1", "ns/p2"]
    assert [k for k, _ in step.came] == ["ns/p1", "ns/p9"]
    assert not step.renumbered


_CONTAINERS = ("statuses", "job_ids", "terminating", "members", "on_node", "pending")


@settings(max_examples=200, deadline=None)
@given(changes, st.lists(st.sampled_from(("facts", *_CONTAINERS)), max_size=8), st.booleans())
def test_facts_patched_in_place_equal_fresh_and_leave_what_is_held(
    sessions: list[list[Change]], held_per_session: list[str], stepped: bool
) -> None:
    """PodFacts patches the last facts in place when nothing else holds them (a
    timeline's last views are gone by the next session), and copies first what anyone
    still holds: the patched facts equal the fresh ones, and what a caller kept of an
    earlier session (the facts, or one of their containers, as a view does) is as it was."""
    index, facts = PodIndex(), PodFacts()
    pods: list[Pod] = []
    kept: list[tuple[dict[str, Pod], str, object]] = []  # the pods, what was held, and it
    for at, session in enumerate(sessions):
        pods = list(pods)
        for change in session:
            _apply(pods, change)
        step = index.update(pods)
        got = facts.of(step.after, NAMES, step if stepped else None)
        _same(got, PodFacts().of(_by_key(pods), NAMES))
        if at < len(held_per_session):
            what = held_per_session[at]
            held = got if what == "facts" else getattr(got, what)
            kept.append((step.after, what, (held, copy.deepcopy(held))))
            del held  # the list alone holds it, as a caller's kept view would
        del got
    for _, _, (held, then) in kept:  # patching later sessions left these alone
        assert (held.__dict__ if isinstance(held, Facts) else held) == (
            then.__dict__ if isinstance(then, Facts) else then
        )


def test_facts_nobody_holds_are_patched_not_copied() -> None:
    """The step path patches the very containers when the last views are gone (the
    count of holders Facts.to_patch expects is the one CPython gives)."""
    index, facts = PodIndex(), PodFacts()
    pods = [pod("ns", f"p{i}", "j1", {"cpu": 1}) for i in range(4)]
    step = index.update(pods)
    ids = [id(getattr(facts.of(step.after, NAMES, step), c)) for c in _CONTAINERS]
    pods = [*pods, pod("ns", "p9", "j2", {"cpu": 1})]
    step = index.update(pods)
    patched = facts.of(step.after, NAMES, step)
    assert [id(getattr(patched, c)) for c in _CONTAINERS] == ids
    assert patched.job_ids["ns/p9"] == "ns/j2"


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


def _job_order(index: PodIndex, jobs: JobPods, facts: PodFacts, pods: list[Pod]) -> list[str]:
    step = index.update(pods)
    return list(jobs.of(step, facts.of(step.after, NAMES, step).members, NAMES))


def test_a_job_whose_first_pod_goes_follows_the_others() -> None:
    """The jobs are in the order of their first pod, as found afresh."""
    index, facts, jobs = PodIndex(), PodFacts(), JobPods()
    pods = [pod("ns", "p0", "j1"), pod("ns", "p1", "j2"), pod("ns", "p2", "j1")]
    assert _job_order(index, jobs, facts, pods) == ["ns/j1", "ns/j2"]
    assert _job_order(index, jobs, facts, pods[1:]) == ["ns/j2", "ns/j1"]


def test_a_job_counted_from_an_earlier_pod_goes_before_the_others() -> None:
    """Another scheduler's pod counts in its job once on a node: a job new to the lists
    whose pod is earlier than the other jobs' goes first."""
    index, facts, jobs = PodIndex(), PodFacts(), JobPods()
    foreign = pod("ns", "p0", "j1")
    foreign.scheduler_name = "other"
    pods = [foreign, pod("ns", "p1", "j2")]
    assert _job_order(index, jobs, facts, pods) == ["ns/j2"]
    placed = copy.copy(foreign)
    placed.node_name, placed.phase = "n0", "Running"
    assert _job_order(index, jobs, facts, [placed, pods[1]]) == ["ns/j1", "ns/j2"]


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


def _changed_groups(groups: list[PodGroup], change: Change) -> None:
    """A pod group changed as a timeline changes one (a new object in its place), come,
    gone, moved, twice, or of a queue the cluster does not have."""
    what, i, n = change
    at = next((k for k, g in enumerate(groups) if g.meta.name == f"j{i}"), None)
    if what == "add" and at is None:
        groups.append(pod_group("ns", f"j{i}", f"q{n % 2}", min_member=n))
    elif at is None:
        return
    elif what == "remove":
        del groups[at]
    elif what == "move":
        groups.insert(n % (len(groups) + 1), groups.pop(at))
    elif what in ("bind", "finish", "twice", "foreign"):
        new = copy.copy(groups[at])
        new.phase = "Running" if what == "bind" else "Completed"
        new.queue = "elsewhere" if what == "foreign" else new.queue
        if what == "twice":
            groups.insert(n % (len(groups) + 1), new)
        else:
            groups[at] = new


def _plain(groups: list[PodGroup]) -> bool:
    """Every pod group of a known queue, each name once: what a patch keeps."""
    names = {g.meta.name for g in groups}
    return len(names) == len(groups) and all(g.queue in ("q0", "q1") for g in groups)


def _recorded(found: list[Jobs | None]) -> Callable[..., Jobs | None]:
    real = history._patched

    def patched(*args: Any) -> Jobs | None:
        found.append(real(*args))
        return found[-1]

    return patched


@settings(max_examples=200, deadline=None)
@given(changes)
def test_patched_jobs_equal_fresh(sessions: list[list[Change]]) -> None:
    memo = JobsMemo()
    queues = [queue("q0"), queue("q1")]
    groups: list[PodGroup] = []
    before: list[PodGroup] = []
    for session in sessions:
        groups = list(groups)
        for change in session:
            _changed_groups(groups, change)
        cluster = Cluster(pod_groups=groups, queues=queues)
        found: list[Jobs | None] = []
        with mock.patch.object(history, "_patched", _recorded(found)):
            got, want = memo.of(cluster), Jobs.of(cluster)
        moved = any(what in ("move", "twice") for what, _, _ in session) or _readded(session)
        timeline_like = not moved
        if found and timeline_like and _plain(before) and _plain(groups):
            assert found[0] is not None  # patched, not found afresh
        before = groups
        assert list(got.pod_groups.items()) == list(want.pod_groups.items())
        assert all(map(operator.is_, got.pod_groups.values(), want.pod_groups.values()))
        assert got.priority == want.priority


@settings(max_examples=300, deadline=None)
@given(changes, lies)
def test_jobs_patched_from_a_report_equal_fresh(
    sessions: list[list[Change]], told: list[tuple[str, int]]
) -> None:
    """JobsMemo takes the pod groups that changed from the cluster's change report when
    it goes from the last list to this one, and still finds what Jobs.of finds, however
    the report errs: the patch is checked against the pod groups, never trusted."""
    memo = JobsMemo()
    queues = [queue("q0"), queue("q1")]
    last: dict[str, PodGroup] = {}
    for groups, report in _reported_lists(sessions, told, _changed_groups):
        cluster = Cluster(pod_groups=groups, queues=queues, pod_groups_changed=report)
        got, want = memo.of(cluster), Jobs.of(cluster)
        assert list(got.pod_groups.items()) == list(want.pod_groups.items())
        assert list(got.priority.items()) == list(want.priority.items())
        _told_moved(memo.moved, last, got.pod_groups)
        last = got.pod_groups


def test_a_true_pod_group_report_saves_the_walk() -> None:
    memo = JobsMemo()
    queues = [queue("q0")]
    groups = [pod_group("ns", f"j{i}", "q0") for i in range(3)]
    memo.of(Cluster(pod_groups=groups, queues=queues))
    running = copy.copy(groups[1])
    running.phase = "Running"
    after = [groups[0], running, pod_group("ns", "j9", "q0")]
    report = told_report(groups, after, "none", 0)
    with mock.patch.object(history, "list_changes", side_effect=AssertionError("walked")):
        got = memo.of(Cluster(pod_groups=after, queues=queues, pod_groups_changed=report))
    assert list(got.pod_groups.values()) == after
