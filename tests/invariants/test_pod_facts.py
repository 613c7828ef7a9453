"""The pod facts a timeline's checks patch from session to session (PodFacts: only the
pods a session changed are looked at) equal the facts worked out afresh from every pod,
whatever comes, goes, moves or changes status between sessions."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import pod
from vspec.invariants.history import Facts, PodFacts, pods_by_job
from vspec.model.objects import Pod

NAMES = ("volcano",)

# One step between sessions: (what happens, which pod, a node or job number).
Step = tuple[str, int, int]
steps = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "remove", "bind", "finish", "delete", "keep", "foreign"]),
            st.integers(0, 4),
            st.integers(0, 3),
        ),
        max_size=8,
    ),
    min_size=1,
    max_size=8,
)


def _apply(pods: dict[str, Pod], step: Step) -> None:
    """Change ``pods`` as a timeline does: a changed pod is a new object."""
    what, i, n = step
    key = f"ns/p{i}"
    if what == "add" and key not in pods:
        pods[key] = pod("ns", f"p{i}", f"j{n}" if n else "", {"cpu": 1})
        return
    old = pods.get(key)
    if old is None:
        return
    if what == "remove":
        del pods[key]
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
    pods[key] = new  # "keep": the same pod, as another object


def _fresh(pods: dict[str, Pod]) -> Facts:
    return PodFacts().of(pods, NAMES)


def _same(got: Facts, want: Facts) -> None:
    assert got.statuses == want.statuses
    assert got.job_ids == want.job_ids
    assert got.terminating == want.terminating
    assert got.members == want.members
    assert got.on_node == want.on_node


@settings(max_examples=150, deadline=None)
@given(steps)
def test_patched_facts_equal_fresh_ones(sessions: list[list[Step]]) -> None:
    facts = PodFacts()
    pods: dict[str, Pod] = {}
    earlier: list[tuple[dict[str, Pod], Facts]] = []
    for session in sessions:
        pods = dict(pods)
        for step in session:
            _apply(pods, step)
        got = facts.of(pods, NAMES)
        _same(got, _fresh(pods))
        earlier.append((pods, got))
    for old_pods, old in earlier:  # patching a later session's facts left these alone
        _same(old, _fresh(old_pods))


def test_pods_by_job_follow_the_views_order() -> None:
    """The shared pods of each job keep the view's order whatever was patched."""
    from vspec.invariants.history import CycleView

    facts = PodFacts()
    first = {p.meta.key: p for p in [pod("ns", f"p{i}", f"j{i % 2}") for i in range(4)]}
    facts.of(first, NAMES)
    second = dict(first)
    second["ns/p0"] = copy.copy(first["ns/p0"])  # changed: patched, not moved to the end
    second["ns/p4"] = pod("ns", "p4", "j0")
    view = CycleView(0, second)
    found = facts.of(second, NAMES)
    view.statuses, view.job_ids, view.members = found.statuses, found.job_ids, found.members

    class _Inputs:
        def derived(self, _name: str, _of: object, derive: object) -> object:
            return derive()  # type: ignore[operator]

    by_job = pods_by_job(_Inputs(), view)  # type: ignore[arg-type]
    assert [[p.meta.key for p in pods] for pods in by_job.values()] == [
        ["ns/p0", "ns/p2", "ns/p4"],
        ["ns/p1", "ns/p3"],
    ]
