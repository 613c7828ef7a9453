"""The collector's settings while vspec simulates (vspec/util/collector.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from vspec.util.collector import long_lived_frozen


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Whatever the test leaves frozen is let go again."""
    gc.unfreeze()
    yield
    gc.unfreeze()


class _Kept:
    """Something alive across the block."""


def _frozen(obj: object) -> bool:
    """Whether the collector's passes skip ``obj`` (no generation lists it)."""
    return not any(o is obj for generation in range(3) for o in gc.get_objects(generation))


@pytest.mark.usefixtures("unfrozen")
def test_what_is_alive_at_each_call_is_frozen_until_the_block_ends() -> None:
    before = _Kept()
    with long_lived_frozen() as freeze:
        assert _frozen(before)
        during = _Kept()
        assert not _frozen(during)
        freeze()
        assert _frozen(during)
    assert gc.get_freeze_count() == 0
    assert not _frozen(before) and not _frozen(during)


@pytest.mark.usefixtures("unfrozen")
def test_a_caller_s_frozen_objects_join_the_oldest_generation_too() -> None:
    """The fuzzer freezes its strategies for a whole campaign; a simulation inside it
    lets them go with its own, where a full pass still walks them."""
    kept = _Kept()
    gc.freeze()
    with long_lived_frozen():
        pass
    assert not _frozen(kept)
    assert any(o is kept for o in gc.get_objects(2))
