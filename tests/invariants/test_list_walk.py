"""What the invariants' walk of two lists (the last session's and the next: pods, pod
groups, printed jobs, task results, log lines) finds equals what comparing them whole
says, whatever a session or a clock does between them: runs replaced in place (a job's
binds), taken out (a finished job), put in or appended (arrivals), moved, listed twice;
and the few changes a timeline makes are found, not given up on."""

from __future__ import annotations

from collections import Counter
from itertools import compress
from operator import eq, is_, is_not, ne

from hypothesis import example, given, settings
from hypothesis import strategies as st

from vspec.invariants.history import changed_places, list_changes, text_changes

# One edit: (what, where, how many).
Edit = tuple[str, int, int]
edits = st.lists(
    st.tuples(
        st.sampled_from(["replace", "take", "put", "append", "move", "twice"]),
        st.integers(0, 60),
        st.integers(1, 20),
    ),
    max_size=5,
)


class _Obj:
    """An object told apart from another by identity alone."""


def _edited(old: list[_Obj], drawn: list[Edit]) -> list[_Obj]:
    new = list(old)
    for what, at, n in drawn:
        at = min(at, len(new))
        if what == "replace":  # n objects in place of as many (binds)
            new[at : at + n] = [_Obj() for _ in new[at : at + n]]
        elif what == "take":
            del new[at : at + n]
        elif what == "put":
            new[at:at] = [_Obj() for _ in range(n)]
        elif what == "append":
            new += [_Obj() for _ in range(n)]
        elif what == "move" and new:
            new.insert(n % len(new), new.pop(min(at, len(new) - 1)))
        elif what == "twice" and new:
            new.insert(n % len(new), new[min(at, len(new) - 1)])
    return new


def _matched(old: list[str], new: list[str], places: tuple[list[int], list[int]]) -> bool:
    """Whether the places not listed hold the same elements, in order."""
    left = [i not in set(places[0]) for i in range(len(old))]
    right = [j not in set(places[1]) for j in range(len(new))]
    return list(compress(old, left)) == list(compress(new, right))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 120), edits)
@example(50, [("replace", 45, 5), ("append", 0, 3)])  # binds of the last job's pods, arrivals
@example(50, [("take", 10, 4), ("replace", 30, 3)])  # a finished job, binds after it
def test_walk_finds_what_the_lists_differ_by(size: int, drawn: list[Edit]) -> None:
    old = [_Obj() for _ in range(size)]
    new = _edited(old, drawn)
    found = changed_places(old, new, is_not, is_)
    once = len(set(map(id, new))) == len(new)
    if found is not None:
        gone, came = found
        assert gone == sorted(set(gone)) and came == sorted(set(came))
        named = list(map(id, old)), list(map(id, new))
        assert _matched(named[0], named[1], found)
    changes = list_changes(old, new)
    if changes is not None and once:  # each list holds each object once
        kept = set(map(id, new))
        was = set(map(id, old))
        assert list(map(id, changes[0])) == [id(o) for o in old if id(o) not in kept]
        assert list(map(id, changes[1])) == [id(o) for o in new if id(o) not in was]
    simple = all(what in ("replace", "take", "append") for what, _, _ in drawn)
    if simple and 2 * sum(n for _, _, n in drawn) <= 16:  # a session's: found, not given up
        assert changes is not None


texts = st.lists(st.sampled_from(["a", "b", "c", "Job x is ready", "Job y is pending"]))


@settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.tuples(st.integers(0, 30), st.integers(0, 4), texts), max_size=4))
def test_text_walk_keeps_the_multisets(
    old: list[str], drawn: list[tuple[int, int, list[str]]]
) -> None:
    """Texts repeat: what the walk finds, taken from the last and added, is the next."""
    new = list(old)
    for at, n, put in drawn:
        new[at : at + n] = put
    found = text_changes(old, new)
    if found is not None:
        assert Counter(old) - Counter(found[0]) + Counter(found[1]) == Counter(new)
        places = changed_places(old, new, ne, eq)
        assert places is not None and _matched(old, new, places)
