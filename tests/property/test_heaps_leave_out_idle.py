"""Allocate leaves out of its heaps the jobs with nothing pending, and backfill does not
ask their JobValid, when every order, JobValid and Overused function reads its own queue
or job alone (``SessionPlugins.reads_own_state``) and nothing logs at V(3): over
generated timelines and confs, every session binds, evicts, logs and leaves the pod
groups exactly as the plain path, which pushes and pops every job."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import node, pod, pod_group, queue
from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.framework.session_plugins import SessionPlugins
from vspec.fuzz.runner import SEED_CONF, load_space
from vspec.fuzz.strategies import ClusterBounds, ConfSpace
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult
from vspec.model.timeline import Arrival, Timeline
from vspec.timeline.clock import run_timeline

BOUNDS = ClusterBounds(max_nodes=4, max_jobs=6)


@dataclass
class Sessions:
    """What each session decided and printed, and what the run recorded."""

    seen: list[Any] = field(default_factory=list)
    records: Any = None

    def after_session(self, now: datetime, before: Cluster, session: SimulationResult) -> None:
        self.seen.append(
            (
                now,
                [(b.task, b.node) for b in session.binds],
                [(e.task, e.reason) for e in session.evictions],
                list(session.logs),
                sorted((uid, g.phase, repr(g.conditions)) for uid, g in session.pod_groups.items()),
                session.cluster.pod_groups if session.cluster else None,
            )
        )


def _run(case: GeneratedTimelineSpec, verbosity: int, *, plain: bool) -> Sessions:
    sessions = Sessions()
    with pytest.MonkeyPatch.context() as patch:
        if plain:
            patch.setattr(SessionPlugins, "reads_own_state", lambda self, *kinds: False)
        try:
            result = run_timeline(
                case.conf,
                case.cluster,
                case.timeline,
                seed=case.seed,
                verbosity=verbosity,
                on_session=sessions.after_session,
                engine=get_engine(),
            )
        except VspecError as exc:  # a conf Volcano rejects, or a plugin's own panic
            sessions.records = ("error", type(exc).__name__, str(exc))
            return sessions
    sessions.records = (result.jobs, result.pods, result.ticks, result.simulation.binds)
    return sessions


def _same(case: GeneratedTimelineSpec, verbosity: int) -> None:
    fast, plain = _run(case, verbosity, plain=False), _run(case, verbosity, plain=True)
    assert fast.records == plain.records
    assert fast.seen == plain.seen


@settings(max_examples=30, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), BOUNDS), st.sampled_from([0, 2, 3]))
def test_seed_conf_sessions_are_those_of_the_plain_path(
    case: GeneratedTimelineSpec, verbosity: int
) -> None:
    _same(case, verbosity)


@settings(max_examples=30, deadline=None)
@given(timeline_specs(load_space("mixed").conf or ConfSpace(), BOUNDS), st.sampled_from([0, 3]))
def test_any_conf_sessions_are_those_of_the_plain_path(
    case: GeneratedTimelineSpec, verbosity: int
) -> None:
    _same(case, verbosity)


def test_a_crowded_cluster_allocates_as_the_plain_path() -> None:
    """Two queues of equal weight, jobs of equal priority that cannot all fit, running
    jobs among pending ones, arrivals that finish: ties only the creation time and UID
    break. The leave-out is taken (checked) and the sessions match the plain path's."""
    groups, pods = [], []
    for j in range(8):
        groups.append(pod_group("ns", f"j{j}", "ab"[j % 2], min_member=1 + j % 2))
        pods += [pod("ns", f"j{j}-{i}", f"j{j}", {"cpu": 1 + (j + i) % 2}) for i in range(3)]
    cluster = Cluster(
        nodes=[node(f"n{i}", {"cpu": 4, "pods": 110}) for i in range(3)],
        queues=[queue("a"), queue("b")],
        pod_groups=groups,
        pods=pods,
    )
    timeline = Timeline()
    for j in range(6):
        group = pod_group("ns", f"late{j}", "ab"[j % 2], min_member=2)
        late = [pod("ns", f"late{j}-{i}", f"late{j}", {"cpu": 1}) for i in range(2)]
        run = {p.meta.key: timedelta(seconds=20 + 9 * j) for p in late}
        timeline.arrivals.append(Arrival(timedelta(seconds=7 * j), [group], late, run))
    case = GeneratedTimelineSpec(SEED_CONF, cluster, seed=5, timeline=timeline)
    taken: list[bool] = []
    real = SessionPlugins.reads_own_state

    def spied(self: SessionPlugins, *kinds: Any) -> bool:
        answer = real(self, *kinds)
        taken.append(answer)
        return answer

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SessionPlugins, "reads_own_state", spied)
        fast = _run(case, 0, plain=False)
    plain = _run(case, 0, plain=True)
    assert taken and all(taken)
    assert len(fast.seen) > 5 and any(binds for _, binds, *_ in fast.seen)
    assert fast.records == plain.records and fast.seen == plain.seen
