"""What changed between two versions of a copy-on-write list of model objects.

The model is copy-on-write: whoever changes an object (the clock, ``advance``, the
loader) copies it, so an object that is still the same object holds what it held. Two
consumers keep state from one session's cluster to the next and bring it up to date
with the objects that are not the same: the clock's tally of requests and the
scheduler cache. Between two sessions a few of thousands of pods change, so the
changes are found by C loops alone (``map``, ``compress``, set and dict building), where
a Python pass over every pod cost a day several CPU-seconds per consumer.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from operator import is_, is_not
from typing import TypeVar

T = TypeVar("T")

# Below this many places moved (plus an eighth of the list), changes are found by place.
FEW_MOVED = 64


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
    when each list holds each object once."""
    shared = min(len(before), len(after))
    moved = list(compress(range(shared), map(is_not, before, after)))
    if len(moved) <= FEW_MOVED + shared // 8:
        gone = [before[i] for i in moved]
        gone += before[shared:]
        added = [after[i] for i in moved]
        added += after[shared:]
        return gone, added
    old_ids = dict(zip(map(id, before), before, strict=True))
    new_ids = dict(zip(map(id, after), after, strict=True))
    if len(old_ids) != len(before) or len(new_ids) != len(after):
        return None
    if keep_order:
        stayed = old_ids.keys() & new_ids.keys()
        was = list(compress(before, map(stayed.__contains__, map(id, before))))
        now = list(compress(after, map(stayed.__contains__, map(id, after))))
        if not all(map(is_, was, now)):
            return None
    return (
        [old_ids[k] for k in old_ids.keys() - new_ids.keys()],
        [new_ids[k] for k in new_ids.keys() - old_ids.keys()],
    )
