"""What changed between two versions of a copy-on-write list of model objects.

The model is copy-on-write: whoever changes an object (the clock, ``advance``, the
loader) copies it, so an object that is still the same object holds what it held. Two
consumers keep state from one session's cluster to the next and bring it up to date
with the objects that are not the same: the clock's tally of requests and the
scheduler cache. Between two sessions a few of thousands of pods change, so the
changes are found by C loops alone (``map``, ``compress``, set building), where a
Python pass over every pod cost a day several CPU-seconds per consumer.

The clock takes a finished job's pods and pod group out of the middle of the lists,
which moves every later place: compared by place, hundreds differ. Then the lists are
walked side by side in C loops, each taken-out run skipped where the other list picks
up again, so that the Python work is per run (a few) rather than per element. A set of
the last list's ids is still built, as a list holding an object twice must give None
wherever the twice-held object is; only an object that moved among the others (or
listed twice) sends the lists to the comparison of every object by identity.

**Change reports.** Whoever makes the next cluster knows what it changed: ``next_cluster``
which pods it bound, took out or moved in and which pod groups it wrote, the clock which
it appended, succeeded or took out. Each makes a new list for each change (a cluster's
lists are copy-on-write like its objects) and reports it (:class:`Changed`, carried on the
:class:`~vspec.model.objects.Cluster`), so that the consumers take the changes from the
report (:func:`changes_of`) instead of finding them again. A report holds the very list
objects it goes from and to, and is trusted only between those two, with the length it
made the last one: a list made any other way (a spec, a fuzz case, a list someone
replaced) has no report of its own and is compared.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, count, islice, repeat
from operator import is_, is_not, not_
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")

# Below this many places moved (plus an eighth of the list), changes are found by place.
FEW_MOVED = 64
# At most this many runs taken out or put in are walked past; more is no session's step
# (each costs a few C loops) and the lists are compared object by object instead.
MOST_RUNS = 32


def list_changes(
    before: Sequence[T], after: Sequence[T], *, keep_order: bool = False
) -> tuple[list[T], list[T]] | None:
    """The elements of ``before`` not in ``after`` and the reverse: the multiset
    ``after`` is ``before`` less the first list plus the second. None when they cannot be
    told apart cheaply: a list holding one object twice, and (``keep_order``) the objects
    in both no longer in the same relative order, which a consumer that keeps them in
    list order (the cache's tasks) must then take from scratch.

    Found by place when the lists hold the same objects at nearly every shared place (a
    session replaces pods in place and arrivals append): an object at a place that
    moved counts as gone and added, which keeps the order of the rest. Else by identity,
    when each list holds each object once, each list's elements in its order."""
    shared = min(len(before), len(after))
    few = FEW_MOVED + shared // 8
    moved = list(islice(compress(range(shared), map(is_not, before, after)), few + 1))
    if len(moved) <= few:
        gone = [before[i] for i in moved]
        gone += before[shared:]
        added = [after[i] for i in moved]
        added += after[shared:]
        return gone, added
    return _walked(before, after, moved[0]) or _by_identity(before, after, keep_order)


def from_place(seq: Sequence[T], start: int) -> Iterator[T]:
    """``seq``'s elements from place ``start`` on. ``islice`` steps over the first
    ``start`` one by one, which a walk paid at every run it took (twice a run, over
    lists about a thousand long: half of ``list_changes``' time where it walked); a
    list's or tuple's own iterator is set to the place at once (``__setstate__``, what
    unpickling one does, past the end meaning at the end)."""
    if type(seq) is list or type(seq) is tuple:
        at: Any = iter(seq)
        at.__setstate__(start)
        return cast(Iterator[T], at)
    return islice(seq, start, None)


def _walked(before: Sequence[T], after: Sequence[T], first: int) -> tuple[list[T], list[T]] | None:
    """The changes by identity when ``after`` is ``before`` from place ``first`` on with
    runs taken out and runs of new objects put in (replacing in place is one of each),
    each list holding each object once; None when it is not (or has too many runs): an
    object of ``before`` found behind the walk in ``after`` moved or is listed twice."""
    held = set(map(id, before))
    if len(held) != len(before):
        return None
    gone: list[T] = []
    added: list[T] = []
    a = b = first  # before[a] is not after[b]
    for _ in range(MOST_RUNS):
        obj = after[b]
        if id(obj) in held:  # before[a:] holds it further on: a run was taken out
            found = compress(count(a + 1), map(is_, from_place(before, a + 1), repeat(obj)))
            taken = next(found, None)
            if taken is None:
                return None
            gone += before[a:taken]
            a = taken
        else:  # new objects up to the next that ``before`` holds
            held_after = map(held.__contains__, map(id, from_place(after, b + 1)))
            end = next(compress(count(b + 1), held_after), len(after))
            added += after[b:end]
            b = end
        differ = next(
            compress(count(), map(is_not, from_place(before, a), from_place(after, b))), None
        )
        if differ is not None:
            a += differ
            b += differ
            continue
        same = min(len(before) - a, len(after) - b)
        rest = after[b + same :]
        if any(map(held.__contains__, map(id, rest))):
            return None
        gone += before[a + same :]
        added += rest
        break
    else:
        return None
    if len(set(map(id, added))) != len(added):
        return None
    return gone, added


def _by_identity(
    before: Sequence[T], after: Sequence[T], keep_order: bool
) -> tuple[list[T], list[T]] | None:
    """The changes when the walk cannot follow the lists (an object moved among the
    others, one listed twice, many runs): each object looked up among the other list's."""
    old = set(map(id, before))
    new = set(map(id, after))
    if len(old) != len(before) or len(new) != len(after):
        return None
    stays = list(map(new.__contains__, map(id, before)))
    stayed = list(map(old.__contains__, map(id, after)))
    if keep_order and not all(map(is_, compress(before, stays), compress(after, stayed))):
        return None
    return list(compress(before, map(not_, stays))), list(compress(after, map(not_, stayed)))


@dataclass(slots=True)
class Changed(Generic[T]):
    """``after`` (a list its maker made and holds ``size`` elements) is ``before`` less
    ``gone`` (elements of it) plus the values of ``added`` (by id: each new object once),
    the elements kept in the same relative order, as a ``keep_order`` comparison needs."""

    before: list[T]
    after: list[T]
    size: int
    gone: list[T]
    added: dict[int, T]


def changed(
    last: Changed[T] | None, before: list[T], after: list[T], gone: Iterable[T], added: Iterable[T]
) -> Changed[T] | None:
    """The report of a list ``after`` made from ``before`` by taking out ``gone`` (each an
    element of it) and putting in ``added``, the others kept in order: ``last`` followed
    on when it ends at ``before``, so that one report goes from the list a consumer last
    saw to the next, else begun at ``before``. An object put in that the report already
    holds as put in (listed twice) leaves no report: the consumers compare."""
    if last is not None and last.after is before and len(before) == last.size:
        # Copied: the last report stays true of its own two lists.
        report = Changed(last.before, after, len(after), list(last.gone), dict(last.added))
        for obj in gone:
            if report.added.pop(id(obj), None) is None:
                report.gone.append(obj)
    else:
        report = Changed(before, after, len(after), list(gone), {})
    for obj in added:
        if id(obj) in report.added:
            return None
        report.added[id(obj)] = obj
    return report


def changes_of(
    report: Changed[T] | None, before: list[T], after: list[T]
) -> tuple[list[T], list[T]] | None:
    """What ``report`` says changed from ``before`` to ``after`` (the objects, not copies),
    when it goes from the one to the other; None when it does not: then they are compared."""
    if report is None or report.before is not before or report.after is not after:
        return None
    if len(after) != report.size:
        return None
    return report.gone, list(report.added.values())
