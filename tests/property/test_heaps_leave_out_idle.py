"""Allocate leaves out of its heaps the jobs with nothing pending (counting the pops that
would print at V(3)), and backfill does not ask their JobValid, when every order, JobValid
and Overused function reads its own queue or job alone (``SessionPlugins.reads_own_state``)
and nothing logs at V(4): over generated timelines and confs, every session binds, evicts,
logs and leaves the pod groups exactly as the plain path, which pushes and pops every job."""

from __future__ import annotations

import itertools
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


def _running(
    name: str, queue_name: str, cpus: list[int], on: str, min_member: int = 1
) -> tuple[Any, list[Any]]:
    group = pod_group("ns", name, queue_name, min_member=min_member, phase="Running")
    return group, [
        pod("ns", f"{name}-{i}", name, {"cpu": c}, node_name=on) for i, c in enumerate(cpus)
    ]


def _turn_runs(logs: Any) -> list[tuple[str, int]]:
    """Each run of consecutive "Try to allocate resource to Jobs in Queue <q>" lines:
    its queue and length."""
    head = "Try to allocate resource to Jobs in Queue <"
    turns = [line.text[len(head) : -1] if line.text.startswith(head) else None for line in logs]
    return [(q, len(list(run))) for q, run in itertools.groupby(turns) if q is not None]


def test_idle_jobs_print_their_turns_at_v3_as_the_plain_path() -> None:
    """At V(3) every pop of a job with nothing pending prints its queue's turn line. Queue
    a's running jobs (drf shares 1, 2, 1, 3 and 1 core) come between its pending ones: the
    gang g (not ready, first), then e0 and e1 (ready, 2 cores each), so four lines come
    before e0 and one plus the last after e1; queue c holds running jobs only and a
    guarantee that keeps it from being overused (four lines, none for c3, which fails
    JobValid; queue d holds only a job like c3 and is never pushed); queue b is
    overused once b1 is placed (none). The sessions match the plain path's, line for line."""
    groups, pods = [], []
    for group, members in (
        *(_running(f"a{j}", "a", [c], f"n{j % 3}") for j, c in enumerate([1, 2, 1, 3, 1])),
        *(_running(f"c{j}", "c", [1], "n2") for j in range(3)),
        _running("b0", "b", [2], "n0"),
    ):
        groups.append(group)
        pods += members
    for j in range(2):
        group, members = _running(f"e{j}", "a", [2], "n1")
        groups.append(group)
        pods += [*members, pod("ns", f"e{j}-p", f"e{j}", {"cpu": 1})]
    # Running below its minMember: JobValid fails, so Volcano never pushes it (no line).
    short, members = _running("c3", "c", [1], "n2", min_member=2)
    groups.append(short)
    pods += members
    # Queue d holds such a job only: Volcano never pushes d.
    short, members = _running("d0", "d", [1], "n2", min_member=2)
    groups.append(short)
    pods += members
    groups += [pod_group("ns", "g", "a", min_member=2), pod_group("ns", "b1", "b", min_member=1)]
    pods += [pod("ns", f"g-{i}", "g", {"cpu": 1}) for i in range(2)]
    pods.append(pod("ns", "b1-0", "b1", {"cpu": 1}))
    cluster = Cluster(
        nodes=[node(f"n{i}", {"cpu": 8, "pods": 110}) for i in range(3)],
        queues=[queue("a"), queue("b"), queue("c", guarantee={"cpu": 8}), queue("d")],
        pod_groups=groups,
        pods=pods,
    )
    timeline = Timeline()
    late = pod("ns", "late-0", "late", {"cpu": 1})
    timeline.arrivals.append(
        Arrival(
            timedelta(seconds=30),
            [pod_group("ns", "late", "a", min_member=1)],
            [late],
            {late.meta.key: timedelta(seconds=40)},
        )
    )
    case = GeneratedTimelineSpec(SEED_CONF, cluster, seed=5, timeline=timeline)
    compared = {False: 0, True: 0}
    real = SessionPlugins.job_order_fn
    runs = {}
    for plain_path in (False, True):

        def counted(self: SessionPlugins, left: Any, right: Any, plain: bool = plain_path) -> bool:
            compared[plain] += 1
            return real(self, left, right)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(SessionPlugins, "job_order_fn", counted)
            runs[plain_path] = _run(case, 3, plain=plain_path)
    fast, plain = runs[False], runs[True]
    assert compared[False] < compared[True]  # the leave-out is taken at V(3)
    first_logs = plain.seen[0][3]
    assert any(line.text == "Try to allocate resource to 3 Queues" for line in first_logs)
    assert _turn_runs(first_logs) == [("b", 1), ("a", 1), ("a", 5), ("a", 1), ("a", 2), ("c", 4)]
    assert fast.records == plain.records
    assert fast.seen == plain.seen
