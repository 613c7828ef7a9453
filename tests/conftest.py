"""Helpers shared by the tests of the harness and its front-ends: a fake engine, so a test
pins the runner, CLI or pytest plugin and not the engine, and the small spec it runs on."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pytest

from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.probes import Probe
from vspec.model.result import Bind, SimulationResult


class FakeEngine:
    """Stands in for the Python engine. Returns ``result`` or raises ``error`` when given;
    otherwise binds every unbound pod to the cluster's first node, crashes when that node is
    named ``boom`` and hangs on ``hang``. Callable too, so it can replace
    ``vspec.framework.scheduler.simulate``."""

    name = "fake"
    reproducible = True

    def __init__(
        self, result: SimulationResult | None = None, error: Exception | None = None
    ) -> None:
        self.result = result
        self.error = error
        self.calls: list[dict[str, Any]] = []

    @property
    def seeds(self) -> list[int]:
        return [call["seed"] for call in self.calls]

    def simulate(
        self,
        conf: SchedulerConf,
        cluster: Cluster,
        *,
        seed: int = 0,
        now: datetime | None = None,
        cycles: int = 1,
        verbosity: int = 3,
        probes: Sequence[Probe] = (),
    ) -> SimulationResult:
        self.calls.append({"seed": seed, "cycles": cycles, "verbosity": verbosity, "now": now})
        if self.error is not None:
            raise self.error
        if self.result is not None:
            return self.result
        first = cluster.nodes[0].meta.name
        if first == "boom":
            raise RuntimeError("engine exploded")
        while first == "hang":
            time.sleep(0.01)
        return SimulationResult(
            binds=[Bind(p.meta.key, first) for p in cluster.pods if not p.node_name]
        )

    __call__ = simulate


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> FakeEngine:
    """The fake in place of the engine the front-ends look up."""
    fake = FakeEngine()
    monkeypatch.setattr("vspec.framework.scheduler.simulate", fake)
    return fake


def spec(name: str, bind_to: str = "n1", *, node: str = "n1", extra: str = "") -> str:
    """A spec whose first node is ``node`` (where the fake engine binds), with n1 and n2
    declared too, so ``bind_to`` can name either."""
    spare = ", ".join(f"{{name: {n}}}" for n in ("n1", "n2") if n != node)
    return textwrap.dedent(
        f"""\
        name: {name}
        cluster:
          nodes: [{{name: {node}, allocatable: {{cpu: 2}}}}, {spare}]
          pods:
          - {{name: p1, requests: {{cpu: 1}}}}
        expect:
          binds: {{default/p1: {bind_to}}}
        """
    ) + textwrap.dedent(extra)
