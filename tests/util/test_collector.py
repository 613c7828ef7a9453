"""The collector's settings while vspec simulates (vspec/util/collector.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tests.builders import cluster, node, pod, pod_group
from vspec.framework import columnar
from vspec.framework.columns import FEW_ROWS
from vspec.framework.scheduler import simulate
from vspec.fuzz import SEED_CONF
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster
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


def _columnar_world() -> Cluster:
    nodes = [node(f"n{i}") for i in range(2 * FEW_ROWS)]  # the vectorised checks
    pods = [pod("ns", f"j-{i}", "j", {"cpu": 1}) for i in range(6)]
    return cluster(nodes, pods, [pod_group("ns", "j", "q", min_member=2)])


@pytest.mark.usefixtures("unfrozen")
def test_a_columnar_session_leaves_no_cycle_for_the_collector() -> None:
    """The cache keeps its node columns from session to session; they must not keep the
    session (its plugins' methods read the columns), or every big session outlives its
    run until a full collection finds it."""
    conf = load_conf(SEED_CONF)
    world = _columnar_world()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columnar, "COLUMNAR_MIN_NODES", 0)
        simulate(conf, world, seed=1)  # what is made once per process is made
        gc.collect()
        gc.disable()
        try:
            result = simulate(conf, world, seed=1)
            assert result.binds, "the columnar path placed something"
            assert gc.collect() == 0
        finally:
            gc.enable()
