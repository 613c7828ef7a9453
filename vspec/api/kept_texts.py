"""Texts a scheduler prints every session, kept from the last session by what they print."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

_T = TypeVar("_T")


class KeptTexts(Generic[_T]):
    """``render`` of objects, kept by ``key`` (everything the text prints, so equal keys
    print equal texts): a scheduler that prints every job each session (logprint at V(1))
    prints the same objects again and again, each a clone of the last session's. Only
    what the last session printed is kept, so the memory follows the live jobs."""

    def __init__(self, key: Callable[[_T], Hashable], render: Callable[[_T], str]) -> None:
        self._key = key
        self._render = render
        self._now: dict[Hashable, str] = {}
        self._before: dict[Hashable, str] = {}

    def next_session(self) -> None:
        self._before, self._now = self._now, {}

    def __call__(self, obj: _T) -> str:
        key = self._key(obj)
        text = self._now.get(key)
        if text is None:
            text = self._before.get(key)
            if text is None:
                text = self._render(obj)
            self._now[key] = text
        return text
