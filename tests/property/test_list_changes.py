"""The clock's tally and the scheduler cache are brought up to date with the pods that
changed since the last session: what list_changes finds must turn the last list's
elements into the new list's exactly, and (keep_order) the rest must have kept their
order, as the cache keeps a job's and a node's tasks in the cluster's order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import check_changes, less_once
from vspec.model.changes import (
    FEW_MOVED,
    MOST_RUNS,
    Changed,
    changed,
    changes_of,
    from_place,
    list_changes,
)
from vspec.model.objects import ObjectMeta, Pod

_POOL = [Pod(ObjectMeta(f"p{i}", "ns")) for i in range(600)]
_lists = st.lists(st.integers(0, 199), max_size=150)


def _edited(before: list[int], data: st.DataObject) -> list[int]:
    """What a session or a clock event does to the list, in any mix: replace some in
    place, append, take out, reorder, list an object twice."""
    after = list(before)
    for edit in data.draw(
        st.lists(st.sampled_from(["replace", "append", "drop", "swap", "twice"]))
    ):
        if edit == "append" or not after:
            after.append(data.draw(st.integers(0, 199)))
            continue
        i = data.draw(st.integers(0, len(after) - 1))
        if edit == "replace":
            after[i] = data.draw(st.integers(0, 199))
        elif edit == "drop":
            del after[i]
        elif edit == "swap":
            j = data.draw(st.integers(0, len(after) - 1))
            after[i], after[j] = after[j], after[i]
        else:
            after.append(after[i])
    return after


@given(
    st.lists(st.integers(), max_size=8), st.integers(0, 10), st.sampled_from([list, tuple, range])
)
def test_from_place_is_the_elements_from_that_place_on(
    items: list[int], start: int, kind: type[Sequence[int]]
) -> None:
    # A list's or tuple's own iterator set to the place, any other stepped over.
    seq = range(len(items)) if kind is range else kind(items)  # type: ignore[call-arg]
    assert list(from_place(seq, start)) == list(seq)[start:]


@given(before=_lists, data=st.data(), keep_order=st.booleans())
def test_the_changes_turn_the_last_list_into_the_new_one(
    before: list[int], data: st.DataObject, keep_order: bool
) -> None:
    after = _edited(before, data)
    old, new = [_POOL[i] for i in before], [_POOL[i] for i in after]
    changes = list_changes(old, new, keep_order=keep_order)
    if changes is None:  # an object listed twice, or the rest reordered, and many moved
        twice = len(set(map(id, old))) < len(old) or len(set(map(id, new))) < len(new)
        assert twice or (keep_order and not _kept_in_order(old, new))
        return
    gone, added = changes
    # Of an object listed twice, the place that went may be either: order is checked
    # when each list holds each object once.
    if keep_order and all(len(set(map(id, part))) == len(part) for part in (old, new)):
        assert _kept_in_order(less_once(old, gone), less_once(new, added))
    counted = Counter(map(id, old))
    counted.subtract(map(id, gone))
    counted.update(map(id, added))
    assert +counted == Counter(map(id, new))
    assert all(v >= 0 for v in counted.values())  # nothing taken off that was not counted


def test_a_list_shifted_by_a_removal_near_its_start_is_diffed_by_identity() -> None:
    """Every place after the removal moved: found by identity, one pod gone."""
    old = _POOL[: 3 * FEW_MOVED]
    new = old[1:]
    assert list_changes(old, new) == ([old[0]], [])


def _kept_in_order(old: list[Pod], new: list[Pod]) -> bool:
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))


def test_objects_that_stayed_but_moved_among_themselves_are_no_change_in_order() -> None:
    """A swap of two pods far apart, with the list shifted by a removal (found by
    identity): nothing is gone or added but the first pod, yet the rest's order moved."""
    old = _POOL[: 3 * FEW_MOVED]
    new = old[1:]
    new[0], new[-1] = new[-1], new[0]
    assert list_changes(old, new) == ([old[0]], [])
    assert list_changes(old, new, keep_order=True) is None


def _reference(
    before: list[Pod], after: list[Pod], keep_order: bool
) -> tuple[list[Pod], list[Pod]] | None:
    """What list_changes gives, by its definition, one element at a time."""
    shared = min(len(before), len(after))
    moved = [i for i in range(shared) if before[i] is not after[i]]
    if len(moved) <= FEW_MOVED + shared // 8:
        gone = [before[i] for i in moved] + before[shared:]
        added = [after[i] for i in moved] + after[shared:]
        return gone, added
    old, new = {id(p) for p in before}, {id(p) for p in after}
    if len(old) < len(before) or len(new) < len(after):
        return None
    was = [p for p in before if id(p) in new]
    now = [p for p in after if id(p) in old]
    if keep_order and any(a is not b for a, b in zip(was, now, strict=True)):
        return None
    return [p for p in before if id(p) not in new], [p for p in after if id(p) not in old]


_EDITS = ["take run"] * 4 + ["replace"] * 2 + ["put run", "append", "move", "twice"]


@st.composite
def _steps(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    """A list of distinct pods (one now and then listed twice) and what a clock step and
    a session make of it: runs of pods taken out of the middle (which moves every later
    place), pods replaced in place, new pods put in or appended, now and then a pod
    moved or listed twice."""
    size = draw(st.integers(0, 300))
    before = list(range(size))
    if size and draw(st.integers(0, 9)) == 0:
        before.insert(draw(st.integers(0, size)), draw(st.integers(0, size - 1)))
    fresh = iter(range(size, len(_POOL)))
    after = list(before)
    for edit in draw(st.lists(st.sampled_from(_EDITS), max_size=12)):
        if edit == "append" or not after:
            after += [next(fresh) for _ in range(draw(st.integers(1, 8)))]
            continue
        i = draw(st.integers(0, len(after) - 1))
        if edit == "take run":
            del after[i : i + draw(st.integers(1, 16))]
        elif edit == "replace":
            after[i] = next(fresh)
        elif edit == "put run":
            after[i:i] = [next(fresh) for _ in range(draw(st.integers(1, 8)))]
        elif edit == "move":
            after.insert(draw(st.integers(0, len(after) - 1)), after.pop(i))
        else:
            after.insert(draw(st.integers(0, len(after))), after[i])
    return before, after


def _as_ids(changes: tuple[list[Pod], list[Pod]] | None) -> tuple[list[int], ...] | None:
    return None if changes is None else tuple(list(map(id, part)) for part in changes)


@settings(max_examples=200)
@given(step=_steps(), keep_order=st.booleans())
def test_runs_taken_out_of_the_middle_give_what_the_definition_gives(
    step: tuple[list[int], list[int]], keep_order: bool
) -> None:
    """Whichever way the lists are compared (by place, walked run by run, or object by
    object), the changes and the None cases are the definition's, each list's elements
    in its order."""
    old, new = ([_POOL[i] for i in part] for part in step)
    expected = _reference(old, new, keep_order)
    assert _as_ids(list_changes(old, new, keep_order=keep_order)) == _as_ids(expected)


def test_runs_taken_out_replaced_and_appended_are_found_in_list_order() -> None:
    old = _POOL[:300]
    new = [*old[:10], *old[15:100], _POOL[400], *old[101:200], *old[203:], *_POOL[401:403]]
    gone = [*old[10:15], old[100], *old[200:203]]
    assert list_changes(old, new, keep_order=True) == (gone, _POOL[400:403])


def test_more_runs_than_are_walked_are_compared_object_by_object() -> None:
    old = _POOL[:300]
    new = old[::2]
    assert len(old) - len(new) > MOST_RUNS
    assert list_changes(old, new, keep_order=True) == (old[1::2], [])


_REPORTED = ["replace", "append", "take", "put back"]


@st.composite
def _reported_steps(draw: st.DrawFn) -> list[tuple[str, int, int]]:
    """What ``next_cluster`` and the clock do to the pods between two sessions, step by
    step, each making a new list: replace in place (a bind), append (an arrival, an
    evicted pod created again), take out (a finished job, a drain), and put back at the
    end a pod the steps took out (an evicted pod's original created again)."""
    edits = st.tuples(st.sampled_from(_REPORTED), st.integers(0, 10**6), st.integers(1, 8))
    return draw(st.lists(edits, max_size=20))


def _step(before: list[Pod], edit: tuple[str, int, int], fresh: list[Pod], out: list[Pod]):
    """The list ``edit`` makes of ``before``, and what it took out and put in."""
    kind, at, n = edit
    after = list(before)
    if kind == "append" or not after:
        put = [fresh.pop() for _ in range(n)]
        return [*after, *put], [], put
    i = at % len(after)
    if kind == "replace":
        new = fresh.pop()
        gone = [after[i]]
        after[i] = new
        out += gone
        return after, gone, [new]
    if kind == "take":
        gone = after[i : i + n]
        del after[i : i + n]
        out += gone
        return after, gone, []
    back = [p for p in out[:n] if all(p is not q for q in after)][:1]
    return [*after, *back], [], back


@settings(max_examples=300)
@given(
    size=st.integers(0, 60),
    steps=_reported_steps(),
    then=st.sampled_from(["as is", "copied", "grown", "other"]),
)
def test_a_report_followed_on_step_by_step_turns_the_first_list_into_the_last(
    size: int, steps: list[tuple[str, int, int]], then: str
) -> None:
    """Reports followed on from list to list say what a comparison of the first and the
    last list finds (as multisets, the rest in order), and are trusted between those two
    lists alone: not for a copy of the last, nor once it was changed in place."""
    first = _POOL[:size]
    fresh = list(reversed(_POOL[size:]))
    out: list[Pod] = []
    report: Changed[Pod] | None = None
    lists = [first]
    for edit in steps:
        after, gone, added = _step(lists[-1], edit, fresh, out)
        report = changed(report, lists[-1], after, gone, added)
        lists.append(after)
    last = lists[-1]
    if len(lists) == 1:
        assert changes_of(report, first, last) is None  # no step, no report
        return
    assert report is not None  # no step puts an object in twice
    if then == "copied":
        assert changes_of(report, first, list(last)) is None
        return
    if then == "grown":
        last.append(fresh.pop())
        assert changes_of(report, first, last) is None
        return
    if then == "other":
        assert changes_of(report, list(first), last) is None
        return
    found = changes_of(report, first, last)
    assert found is not None
    gone, added = found
    check_changes(first, last, gone, added)
    compared = list_changes(first, last)  # a pod put back moved: compared, it may be kept
    assert compared is not None
    net = Counter(map(id, gone))
    net.subtract(map(id, added))
    by_list = Counter(map(id, compared[0]))
    by_list.subtract(map(id, compared[1]))
    assert +net == +by_list and -net == -by_list


def test_a_report_does_not_follow_on_from_a_list_it_does_not_end_at() -> None:
    """A step from a list the last report does not end at begins a report of its own,
    and a pod put in twice leaves none."""
    first, second, third = _POOL[:5], _POOL[:6], _POOL[:4]
    report = changed(None, first, second, [], [_POOL[5]])
    restarted = changed(report, list(second), third, [_POOL[4], _POOL[5]], [])
    assert restarted is not None and restarted.before is not first
    assert changes_of(restarted, first, third) is None
    assert changed(report, second, [*second, _POOL[5]], [], [_POOL[5]]) is None
