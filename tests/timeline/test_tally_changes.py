"""A tick's sums are brought up to date with the pods that changed since the last tick:
what _changes finds must turn the last list's elements into the new list's exactly."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from vspec.model.objects import ObjectMeta, Pod
from vspec.timeline.clock import _FEW_MOVED, _changes

_POOL = [Pod(ObjectMeta(f"p{i}", "ns")) for i in range(200)]
_lists = st.lists(st.integers(0, len(_POOL) - 1), max_size=150)


def _edited(before: list[int], data: st.DataObject) -> list[int]:
    """What a session or a clock event does to the list, in any mix: replace some in
    place, append, take out, reorder, list an object twice."""
    after = list(before)
    for edit in data.draw(
        st.lists(st.sampled_from(["replace", "append", "drop", "swap", "twice"]))
    ):
        if edit == "append" or not after:
            after.append(data.draw(st.integers(0, len(_POOL) - 1)))
            continue
        i = data.draw(st.integers(0, len(after) - 1))
        if edit == "replace":
            after[i] = data.draw(st.integers(0, len(_POOL) - 1))
        elif edit == "drop":
            del after[i]
        elif edit == "swap":
            j = data.draw(st.integers(0, len(after) - 1))
            after[i], after[j] = after[j], after[i]
        else:
            after.append(after[i])
    return after


@given(before=_lists, data=st.data())
def test_the_changes_turn_the_last_list_into_the_new_one(
    before: list[int], data: st.DataObject
) -> None:
    after = _edited(before, data)
    old, new = [_POOL[i] for i in before], [_POOL[i] for i in after]
    changes = _changes(old, new)
    if changes is None:  # only when an object is listed twice and too many places moved
        assert len(set(map(id, old))) < len(old) or len(set(map(id, new))) < len(new)
        return
    gone, added = changes
    counted = Counter(map(id, old))
    counted.subtract(map(id, gone))
    counted.update(map(id, added))
    assert +counted == Counter(map(id, new))
    assert all(v >= 0 for v in counted.values())  # nothing taken off that was not counted


def test_a_list_shifted_by_a_removal_near_its_start_is_diffed_by_identity() -> None:
    """Every place after the removal moved: found by identity, one pod gone."""
    old = _POOL[: 3 * _FEW_MOVED]
    new = old[1:]
    assert _changes(old, new) == ([old[0]], [])
