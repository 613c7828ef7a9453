"""Volcano's ``PriorityQueue``: Go's ``container/heap`` with a session comparator.

Python's ``heapq`` sifts differently, so equal elements would pop in another order than
in Volcano; this is a port of Go's ``up``/``down``/``Pop`` so ties behave the same.
The heap is never re-sorted when the comparator's inputs (e.g. DRF shares) change,
exactly like Volcano's (quirk kept).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class PriorityQueue(Generic[T]):
    __slots__ = ("_items", "_less")

    def __init__(self, less: Callable[[T, T], bool], items: Iterable[T] = ()) -> None:
        self._items: list[T] = []
        self._less = less
        for item in items:
            self.push(item)

    @classmethod
    def heapified(cls, less: Callable[[T, T], bool], items: list[T]) -> PriorityQueue[T]:
        """Go's ``heap.Init`` of ``items`` (taken over, not copied): about 2n comparisons
        where n pushes may take n log n."""
        heap = cls(less)
        heap._items = items
        n = len(items)
        for i in range(n // 2 - 1, -1, -1):
            heap._down(i, n)
        return heap

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> list[T]:
        """The elements in the heap's order (not sorted), taken over by the caller."""
        return self._items

    def peek(self) -> T:
        """The element :meth:`pop` would return, left in place."""
        return self._items[0]

    def empty(self) -> bool:
        return not self._items

    def push(self, item: T) -> None:
        self._items.append(item)
        self._up(len(self._items) - 1)

    def pop(self) -> T:
        items = self._items
        n = len(items) - 1
        items[0], items[n] = items[n], items[0]
        self._down(0, n)
        return items.pop()

    def _up(self, j: int) -> None:
        items, less = self._items, self._less
        while True:
            i = (j - 1) // 2
            if i == j or j <= 0 or not less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            j = i

    def _down(self, i0: int, n: int) -> None:
        items, less = self._items, self._less
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n or j1 < 0:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and less(items[j2], items[j1]):
                j = j2
            if not less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            i = j
