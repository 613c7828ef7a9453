"""The clock works a tick's fair shares out again only when what they are read from
moved: over generated timelines, every tick's shares are those worked out afresh."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from hypothesis import given, settings

from tests.builders import node, pod, pod_group, queue
from vspec.engines import get_engine
from vspec.fuzz.runner import SEED_CONF
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.model.objects import Cluster
from vspec.model.resources import ResourceVector
from vspec.model.timeline import Arrival, Timeline
from vspec.timeline.clock import Clock, _Sums, run_timeline
from vspec.timeline.shares import fair_shares


class Checked:
    """Clock._deserved, compared with fair_shares at every tick; counts the kept answers."""

    def __init__(self) -> None:
        self.ticks = 0
        self.kept = 0
        self.real = Clock._deserved

    def __call__(
        self, clock: Clock, capacity: ResourceVector, sums: dict[str, _Sums], names: list[str]
    ) -> dict[str, dict[str, float]]:
        before = clock.deserved_of
        got = self.real(clock, capacity, sums, names)
        demand = {name: s.demand for name, s in sums.items()}
        assert got == fair_shares(clock.cluster.queues, capacity, demand, names)
        self.ticks += 1
        self.kept += clock.deserved_of is before
        return got

    def method(self) -> Callable[..., dict[str, dict[str, float]]]:
        """This check as a Clock method (bound to each clock)."""
        return lambda clock, *args: self(clock, *args)


@settings(max_examples=30, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), ClusterBounds(max_nodes=4, max_jobs=4)))
def test_every_ticks_fair_shares_are_those_worked_out_afresh(case: GeneratedTimelineSpec) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Clock, "_deserved", Checked().method())
        run_timeline(case.conf, case.cluster, case.timeline, seed=case.seed, engine=get_engine())


def test_a_tick_that_sees_the_last_demand_keeps_its_shares() -> None:
    """Two weighted queues, jobs arriving and finishing: shares move with the demand,
    and the ticks between (idle ones after a session) keep them; a kept answer is a
    copy, so a tick's shares are its own."""
    cluster = Cluster(
        nodes=[node(f"n{i}", {"cpu": 4, "pods": 110}) for i in range(2)],
        queues=[queue("a", weight=1), queue("b", weight=3)],
    )
    timeline = Timeline()
    for j in range(6):
        group = pod_group("ns", f"j{j}", "ab"[j % 2], min_member=1)
        pods = [pod("ns", f"j{j}-0", f"j{j}", {"cpu": 1 + j % 3})]
        run = {p.meta.key: timedelta(seconds=15 + 10 * j) for p in pods}
        timeline.arrivals.append(Arrival(timedelta(seconds=9 * j), [group], pods, run))
    checked = Checked()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Clock, "_deserved", checked.method())
        result = run_timeline(conf_from_document(SEED_CONF), cluster, timeline, engine=get_engine())
    assert checked.ticks == len(result.ticks) and 0 < checked.kept < checked.ticks
    shares = [tick.queue_deserved for tick in result.ticks]
    assert len({id(s) for s in shares}) == len(shares)
    assert len({repr(s) for s in shares}) > 2
