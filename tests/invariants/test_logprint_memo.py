"""logprint-correct carries each line's verdict from session to session (a timeline's
jobs print the same lines again): a line is judged again when its text or its job
changed, never taken on trust."""

from __future__ import annotations

from vspec.invariants.checks import (
    _ListedTasks,
    _print_point_messages,
    _PrintedJob,
    _PrintedMemo,
)

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
