"""One generic registry for everything vspec finds by name: actions, plugins, invariants.

A registry is the only global mutable state vspec keeps (module import registers, a
conf looks up). :meth:`Registry.isolated` gives a test (or an embedding tool) a scope
whose registrations are undone afterwards, instead of clearing private dicts by hand.
A leaf: imports nothing of vspec.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import ClassVar, Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Entries by name in registration order; registering a name again replaces the
    entry in place (a user plugin may replace a built-in of its name).

    Every change takes a new :attr:`stamp`, unique among all registries, so that what
    was derived from their entries can be kept until one of them changes."""

    _stamps: ClassVar[Iterator[int]] = itertools.count(1)

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "action", "plugin", "invariant": how messages call an entry
        self._entries: dict[str, T] = {}
        self.stamp = next(Registry._stamps)

    def _changed(self) -> None:
        self.stamp = next(Registry._stamps)

    def register(self, name: str, entry: T) -> T:
        self._entries[name] = entry
        self._changed()
        return entry

    def get(self, name: str, default: T | None = None) -> T | None:
        return self._entries.get(name, default)

    def names(self) -> list[str]:
        return list(self._entries)

    def entries(self) -> list[T]:
        return list(self._entries.values())

    def items(self) -> list[tuple[str, T]]:
        return list(self._entries.items())

    def unknown(self, names: Iterable[str]) -> list[str]:
        """The names in ``names`` that nothing registered, in their order."""
        return [n for n in names if n not in self._entries]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    # A Mapping's item protocol, so that ``monkeypatch.setitem`` can stand an entry in.
    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __setitem__(self, name: str, entry: T) -> None:
        self.register(name, entry)

    def __delitem__(self, name: str) -> None:
        del self._entries[name]
        self._changed()

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    @contextmanager
    def isolated(self) -> Iterator[Registry[T]]:
        """Within the block, register freely; afterwards the entries are as before."""
        saved = dict(self._entries)
        try:
            yield self
        finally:
            self._entries.clear()
            self._entries.update(saved)
            self._changed()
