"""The clock's tally and the scheduler cache are brought up to date with the pods that
changed since the last session: what list_changes finds must turn the last list's
elements into the new list's exactly, and (keep_order) the rest must have kept their
order, as the cache keeps a job's and a node's tasks in the cluster's order."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from vspec.model.changes import FEW_MOVED, list_changes
from vspec.model.objects import ObjectMeta, Pod

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
    if keep_order and len(set(map(id, new))) == len(new):
        assert _kept_in_order(_without(old, gone), _without(new, added))
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


def _without(items: list[Pod], taken: list[Pod]) -> list[Pod]:
    """``items`` less one occurrence of each of ``taken``, in order."""
    left = Counter(map(id, taken))
    kept = []
    for item in items:
        if left[id(item)]:
            left[id(item)] -= 1
        else:
            kept.append(item)
    return kept


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
