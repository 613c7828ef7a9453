"""What a simulation leaves the cyclic collector: nothing, however it ends.

A simulation keeps its long-lived objects frozen out of the collector's way
(vspec.util.collector.long_lived_frozen), so a cycle it leaves is found, if ever, by a
full collection long after; with a session in it (the plugins' functions hold the
session that holds them), a directory of specs kept every such session. Each case runs
twice: the first makes what a process makes once.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.builders import cluster, node, pod, pod_group
from vspec.actions.allocate import Allocate
from vspec.engines import get_engine
from vspec.errors import EngineError, VspecError
from vspec.framework import columnar
from vspec.framework.columns import FEW_ROWS
from vspec.framework.scheduler import simulate
from vspec.fuzz.runner import SEED_CONF
from vspec.harness.loader import load_file
from vspec.harness.runner import simulate_spec
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster
from vspec.plugins.proportion import ProportionPlugin

SPECS = Path(__file__).resolve().parents[2] / "specs"


def _left_for_the_collector(run: Callable[[], object]) -> int:
    with contextlib.suppress(VspecError):
        run()
    gc.collect()
    gc.disable()
    try:
        with contextlib.suppress(VspecError):
            run()
        return gc.collect()
    finally:
        gc.enable()


def _world(nodes: int = 4) -> Cluster:
    return cluster(
        [node(f"n{i}") for i in range(nodes)],
        [pod("ns", f"j-{i}", "j", {"cpu": 1}) for i in range(6)],
        [pod_group("ns", "j", "q", min_member=2)],
    )


def _seed_run(world: Cluster) -> Callable[[], object]:
    conf = load_conf(SEED_CONF)
    return lambda: simulate(conf, world, seed=1)


def test_a_session_that_ends_well() -> None:
    assert _left_for_the_collector(_seed_run(_world())) == 0


def test_a_columnar_session() -> None:
    """The cache keeps its node columns from session to session: they must not keep the
    session (its plugins' methods read them)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columnar, "COLUMNAR_MIN_NODES", 0)
        assert _left_for_the_collector(_seed_run(_world(2 * FEW_ROWS))) == 0


def test_a_session_whose_action_panics(monkeypatch: pytest.MonkeyPatch) -> None:
    def panic(*_args: object) -> None:
        raise EngineError("Volcano would panic here")

    monkeypatch.setattr(Allocate, "_place", staticmethod(panic))
    assert _left_for_the_collector(_seed_run(_world())) == 0


def test_a_session_whose_plugin_fails_to_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proportion opens in the second tier, after priority and gang registered theirs."""

    def broken(*_args: object) -> None:
        raise KeyError("a bug in the plugin")

    monkeypatch.setattr(ProportionPlugin, "on_session_open", broken)
    assert _left_for_the_collector(_seed_run(_world())) == 0


@pytest.mark.parametrize(
    "spec_file",
    [
        "predicates/selectors-and-taints.yaml",  # probes: a session of their own
        "plugins/extender/unreachable-extender.yaml",  # a failed call's error chain
    ],
)
def test_a_spec_file(spec_file: str) -> None:
    specs = load_file(SPECS / spec_file).specs
    engine = get_engine()

    def run() -> None:
        for spec in specs:
            simulate_spec(spec, engine, spec.seed)

    assert _left_for_the_collector(run) == 0
