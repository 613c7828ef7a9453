"""Which entries of a mapping changed since a copy of it was kept."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import compress
from operator import is_not
from typing import TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")


def changed_keys(now: Mapping[_K, _V], then: Mapping[_K, _V]) -> set[_K]:
    """The keys whose value in ``now`` is not the very object ``then`` holds, with the
    keys only one of them holds.

    Found by C loops that compare references and read no value: a session-open pass
    that keeps what it worked out per job, checked against the very clone it came from
    (SchedulerCache's "Carried jobs"), reads only the jobs that changed that way.
    Reading every live job's fields was most of such a pass, as the jobs' memory has
    gone cold since the last session (an item view's difference, which hashes every
    value, is no cheaper)."""
    changed = set(compress(now, map(is_not, now.values(), map(then.get, now))))
    if len(then) != len(now) - sum(1 for key in changed if key not in then):
        changed.update(then.keys() - now.keys())
    return changed
