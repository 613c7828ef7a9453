"""The few primitives every drawn object is made with: :class:`Dice` (an object's leaf
decisions as one byte string, which keeps Hypothesis fast and its shrinking decision by
decision), weighted pools, and strategies built once and cached.

Imports Hypothesis only: the other strategy modules build on it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


def weighted_pool(*choices: tuple[int, T]) -> tuple[T, ...]:
    """Each value repeated by its weight (edge values get large weights); the first is
    the simplest, what a zero byte or index picks and shrinking leads to."""
    return tuple(value for weight, value in choices for _ in range(weight))


@functools.cache
def weighted(*choices: tuple[int, Any]) -> st.SearchStrategy[Any]:
    """Values drawn in proportion to their weights, as one strategy built once per
    choice list (see below why strategies are built once)."""
    return st.sampled_from(weighted_pool(*choices))


def weighted_one_of(parts: tuple[tuple[int, st.SearchStrategy[T]], ...]) -> st.SearchStrategy[T]:
    """One of ``parts``' strategies, each drawn in proportion to its weight (a mixture's
    parts: ``st.one_of`` weighs them all alike); the first is the simplest."""
    return _one_of_weighted(
        weighted(*((w, i) for i, (w, _) in enumerate(parts))), tuple(s for _, s in parts)
    )


@st.composite
def _one_of_weighted(
    draw: st.DrawFn, index: st.SearchStrategy[int], parts: tuple[st.SearchStrategy[T], ...]
) -> T:
    return draw(parts[draw(index)])


@functools.cache
def _byte_string(size: int) -> st.SearchStrategy[bytes]:
    return st.binary(min_size=size, max_size=size)


class Dice:
    """One object's leaf decisions (its quantities, labels, gates), drawn as a single
    Hypothesis choice: a byte string of ``size`` bytes, one byte per decision.

    Hypothesis' engine costs about 25-30 us for each choice it records (and more for
    each strategy drawn), however little the choice holds; one byte string costs about
    that for all of an object's decisions. Shrinking keeps working decision by decision:
    Hypothesis shrinks a byte string byte by byte towards zero, and a zero byte picks
    each decision's first, simplest option (no gate, the pool's first value). Every
    decision takes the byte at its own position whatever the earlier ones decided (a
    gate's payload is rolled even when the gate is shut), so that a byte shrunk leaves
    the meaning of the others alone. Used as a context manager, which checks that the
    object took exactly its ``size`` bytes.
    """

    __slots__ = ("_bytes", "_next")

    def __init__(self, draw: st.DrawFn, size: int) -> None:
        self._bytes = draw(_byte_string(size))
        self._next = 0

    def __enter__(self) -> Dice:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None and self._next != len(self._bytes):
            raise AssertionError(f"drew {len(self._bytes)} bytes, took {self._next}")

    def below(self, n: int) -> int:
        """0 to ``n - 1``, each about equally often."""
        byte = self._bytes[self._next]
        self._next += 1
        return byte * n >> 8

    def pick(self, pool: Sequence[T]) -> T:
        return pool[self.below(len(pool))]

    def one_in(self, n: int) -> bool:
        """True one time in ``n`` (a zero byte, the simplest, is false)."""
        return self.below(n) == n - 1

    def maybe(self, n: int, pool: Sequence[T]) -> T | None:
        """One time in ``n`` a value of ``pool``, else None (two bytes)."""
        gate, value = self.one_in(n), self.pick(pool)
        return value if gate else None

    def some(self, pool: Sequence[T], lo: int, hi: int) -> list[T]:
        """``lo`` to ``hi`` values of ``pool``, without repeats (``1 + hi`` bytes): a
        repeated pick is dropped, so fewer come up now and then, as in a unique list."""
        count, picked = lo + self.below(hi - lo + 1), [self.pick(pool) for _ in range(hi)]
        out: list[T] = []
        for value in picked[:count]:
            if value not in out:
                out.append(value)
        return out


BOOLEANS = st.booleans()
SEEDS = st.integers(0, 2**16)


@functools.cache
def int_range(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


@functools.cache
def sampled(values: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    return st.sampled_from(values)


def clamped(draw: st.DrawFn, base: st.SearchStrategy[int], lo: int, hi: int) -> int:
    return max(lo, min(draw(base), hi))
