"""logprint-correct carries each line's verdict from session to session (a timeline's
jobs print the same lines again): a line is judged again when its text or its job
changed, never taken on trust."""

from __future__ import annotations

import operator

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import pod, pod_group
from vspec.invariants.checks import (
    _ListedTasks,
    _print_point_messages,
    _PrintedJob,
    _PrintedMemo,
)
from vspec.model.objects import Pod, PodGroup

PENDING = "Job ns/j is pending, try to schedule it on node %!s(MISSING)"
READY = (
    "Job ns/j is ready, detail info : Job (ns/j): namespace ns (q), name j, podGroup &{{}}"
    "\n\t 0: Task (ns-p:ns/p): taskSpec w, job ns/j, status {status}, pri 1, resreq cpu 1"
)


def _job(*, pending: bool = False, ready: bool = False, status: str = "Running") -> _PrintedJob:
    return _PrintedJob("ns/j", "q", pending, ready, {"ns/p": status})


def _session(memo: _PrintedMemo, job: _PrintedJob, lines: list[str]) -> list[str]:
    listed = _ListedTasks()
    listed.next_session()
    return _print_point_messages(0, [job], lines, listed, memo)


def test_a_pending_line_changed_under_the_same_job_is_judged_again() -> None:
    memo, job = _PrintedMemo(), _job(pending=True)
    assert _session(memo, job, [PENDING]) == []
    wrong = PENDING.replace("%!s(MISSING)", "n1")
    assert _session(memo, job, [wrong]) == [
        f"cycle 0: pending line of ns/j is not the plugin's: {wrong!r}"
    ]


def test_a_ready_line_of_the_same_text_is_judged_again_for_a_changed_job() -> None:
    memo = _PrintedMemo()
    line = READY.format(status="Running")
    assert _session(memo, _job(ready=True), [line]) == []
    changed = _job(ready=True, status="Pending")  # the job's task went back: a new object
    assert _session(memo, changed, [line]) == [
        "cycle 0: ready line of ns/j: its tasks are {'ns/p': 'Running'}, "
        "the job has {'ns/p': 'Pending'}"
    ]
    assert _session(memo, changed, [READY.format(status="Pending")]) == []


def test_a_line_the_job_no_longer_prints_is_counted_again() -> None:
    memo = _PrintedMemo()
    assert _session(memo, _job(pending=True), [PENDING]) == []
    assert _session(memo, _job(), [PENDING]) == [
        "cycle 0: 1 unexpected 'Job ns/j is pending' line(s)"
    ]
    assert _session(memo, _job(pending=True), [PENDING, PENDING]) == [
        "cycle 0: 1 unexpected 'Job ns/j is pending' line(s)"
    ]


# -- the first cycle's point patched from a clean last session -----------------------------------

KEYS = [f"ns/j{i}" for i in range(4)]


def _ready_line(key: str, status: str, *, queue: str = "q") -> str:
    return (
        f"Job {key} is ready, detail info : Job ({key}): namespace ns ({queue}), name x, "
        f"podGroup &{{{{}}}}\n\t 0: Task (ns-p:{key}-p): taskSpec w, job {key}, "
        f"status {status}, pri 1, resreq cpu 1"
    )


def _texts(key: str) -> list[str]:
    """What a job may print: its right lines for either task status, and wrong ones."""
    return [
        f"Job {key} is pending, try to schedule it on node %!s(MISSING)",
        f"Job {key} is pending, try to schedule it on node n1",
        _ready_line(key, "Running"),
        _ready_line(key, "Pending"),
        _ready_line(key, "Running", queue="other"),
    ]


# One change between sessions: (what, which job, which text or variant).
Edit = tuple[str, int, int]
edits = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["job", "drop job", "line", "drop line", "move line", "copy"]),
            st.integers(0, len(KEYS) - 1),
            st.integers(0, 4),
        ),
        max_size=4,
    ),
    min_size=1,
    max_size=10,
)


def _variant(key: str, n: int) -> _PrintedJob:
    return _PrintedJob(
        key, "q", n & 1 == 1, n & 2 == 2, {f"{key}-p": ("Running", "Pending")[n // 4]}
    )


def _edit(jobs: dict[str, _PrintedJob], lines: list[str], edit: Edit) -> None:
    """A session's change: a job is another object (or leaves), a line is another text
    (or leaves, moves); an unchanged line is an equal text, often another object."""
    what, k, n = edit
    key = KEYS[k]
    if what == "job":
        jobs[key] = _variant(key, n + k)
    elif what == "drop job":
        jobs.pop(key, None)
    elif what == "line":
        lines.insert(n % (len(lines) + 1), _texts(key)[n])
    elif what == "drop line" and lines:
        del lines[n % len(lines)]
    elif what == "move line" and lines:
        lines.insert(k % len(lines), lines.pop(n % len(lines)))
    elif what == "copy":
        lines[:] = [(text + ".")[:-1] for text in lines]  # equal texts, new objects


def _start() -> tuple[dict[str, _PrintedJob], list[str]]:
    """Every job ready (variant 2) with its right line: a clean point to patch from."""
    jobs = {key: _variant(key, 2) for key in KEYS}
    return jobs, [_ready_line(key, "Running") for key in KEYS]


@settings(max_examples=300, deadline=None)
@given(edits)
def test_the_patched_point_says_what_the_whole_pass_says(sessions: list[list[Edit]]) -> None:
    jobs, lines = _start()
    carried = _PrintedMemo()
    listed = _ListedTasks()
    for cycle, session in enumerate([[], *sessions]):
        for edit in session:
            _edit(jobs, lines, edit)
        listed.next_session()
        now = list(jobs.values())
        patched = _print_point_messages(cycle, now, list(lines), listed, carried, True)
        fresh = _print_point_messages(cycle, now, list(lines), _ListedTasks(), _PrintedMemo())
        assert patched == fresh
        kept = carried.clean
        assert (kept is None) == bool(fresh)
        if kept is not None:  # what is carried to the next session is the point's own
            assert kept.lines == lines and kept.jobs == now
            assert kept.by_key == {job.key: job for job in now}
            whole = _PrintedMemo()
            _print_point_messages(cycle, now, list(lines), _ListedTasks(), whole, True)
            assert whole.clean is not None
            assert kept.texts == whole.clean.texts and not kept.excess


# -- the printed jobs, kept by their pod group's and pods' identity -------------------------------

# One change between sessions: (what, which job, which variant).
JobEdit = tuple[str, int, int]
job_edits = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["group", "pod", "pods", "swap", "same pods", "drop", "move"]),
            st.integers(0, 3),
            st.integers(0, 3),
        ),
        max_size=4,
    ),
    min_size=1,
    max_size=10,
)


def _printed(uid: str, pg: PodGroup, pods: list[Pod]) -> _PrintedJob:
    """What a job prints, read from every field the test changes."""
    tasks = {p.meta.key: p.phase for p in pods}
    return _PrintedJob(uid, pg.queue, pg.phase == "Pending", len(pods) >= pg.min_member, tasks)


def _edit_jobs(groups: dict[str, PodGroup], members: dict[str, list[Pod]], edit: JobEdit) -> None:
    """A session's change: a pod group or a pod another object, a pods list built anew
    (of the same pods, or not, as many or not), a job gone or moved to the end."""
    what, k, n = edit
    uid = f"ns/j{k}"
    if what == "group":
        groups[uid] = pod_group(
            "ns", f"j{k}", f"q{n % 2}", min_member=n, phase=("Pending", "Running")[n % 2]
        )
    elif what == "pod":
        members[uid] = [
            *members.get(uid, []),
            pod("ns", f"p{k}-{n}", f"j{k}", phase=("Pending", "Running")[n % 2]),
        ]
    elif what == "pods":
        members[uid] = members.get(uid, [])[n:]
    elif what == "swap" and members.get(uid):  # as many pods, the last another one
        members[uid] = [*members[uid][:-1], pod("ns", f"p{k}-s{n}", f"j{k}")]
    elif what == "same pods" and uid in members:
        members[uid] = list(members[uid])  # the same pods in a new list
    elif what == "drop":
        groups.pop(uid, None)
    elif what == "move" and uid in groups:
        groups[uid] = groups.pop(uid)


@settings(max_examples=300, deadline=None)
@given(job_edits)
def test_the_kept_jobs_are_the_fresh_ones(sessions: list[list[JobEdit]]) -> None:
    groups = {f"ns/j{k}": pod_group("ns", f"j{k}", "q0", min_member=1) for k in range(4)}
    members: dict[str, list[Pod]] = {}
    memo = _PrintedMemo()
    last: dict[str, tuple[PodGroup, list[Pod], _PrintedJob]] = {}
    for session in [[], *sessions]:
        groups, members = dict(groups), dict(members)
        for edit in session:
            _edit_jobs(groups, members, edit)
        got = memo.jobs(groups, members, _printed)
        assert got == [_printed(uid, pg, members.get(uid, [])) for uid, pg in groups.items()]
        for job, (uid, pg) in zip(got, groups.items(), strict=True):
            kept = last.get(uid)
            pods = members.get(uid, [])
            if kept is None or kept[0] is not pg or len(kept[1]) != len(pods):
                continue
            if all(map(operator.is_, kept[1], pods)):
                assert job is kept[2]  # not worked out again
        last = {
            uid: (pg, members.get(uid, []), job)
            for job, (uid, pg) in zip(got, groups.items(), strict=True)
        }


@settings(max_examples=300, deadline=None)
@given(job_edits, st.lists(st.integers(0, 3), max_size=2))
def test_the_jobs_told_moved_are_the_only_ones_looked_at(
    sessions: list[list[JobEdit]], extra: list[int]
) -> None:
    """Told which jobs' pod group or pods list may be other objects (the session's jobs'
    and the pods by job's patched memos say), the memo looks at those alone (and any
    others it is told of), and its jobs are still the fresh ones."""
    groups = {f"ns/j{k}": pod_group("ns", f"j{k}", "q0", min_member=1) for k in range(4)}
    members: dict[str, list[Pod]] = {}
    memo = _PrintedMemo()
    looked: list[str] = []

    def printed(uid: str, pg: PodGroup, pods: list[Pod]) -> _PrintedJob:
        looked.append(uid)
        return _printed(uid, pg, pods)

    memo.jobs(groups, members, printed)
    for session in sessions:
        groups, members = dict(groups), dict(members)
        for edit in session:
            _edit_jobs(groups, members, edit)
        moved = {f"ns/j{k}" for _, k, _ in session} | {f"ns/j{k}" for k in extra}
        looked.clear()
        got = memo.jobs(groups, members, printed, moved)
        assert got == [_printed(uid, pg, members.get(uid, [])) for uid, pg in groups.items()]
        assert set(looked) <= moved
