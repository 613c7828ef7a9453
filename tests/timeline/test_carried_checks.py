"""The invariants checked after each session of a timeline with what they carry from
session to session (vspec run's Carry: pods' statuses by object, the node loads updated
by the pods that came and went) say what they say when every session is judged afresh,
on the sessions as they ran and with their binds taken away (a violation to find)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from hypothesis import given, settings

from vspec.engines import get_engine
from vspec.fuzz.runner import builtin_space
from vspec.fuzz.strategies import ClusterBounds, ConfSpace
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.harness.timeline_check import PER_SESSION_DISABLED
from vspec.invariants import Carry, check_invariants
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult
from vspec.timeline.clock import run_timeline

BOUNDS = ClusterBounds(max_nodes=4, max_jobs=4, max_replicas=3)


def _space(name: str) -> ConfSpace:
    """The built-in space's conf space (its first part's, for a mix)."""
    space = builtin_space(name)
    conf = space.conf if space.conf is not None else space.mix[0].conf
    assert conf is not None
    return conf


def _judged_both_ways(case: GeneratedTimelineSpec) -> None:
    engine = get_engine()
    carry = Carry()

    def after_session(now: datetime, before: Cluster, session: SimulationResult) -> None:
        def judged(kept: Carry | None, result: SimulationResult) -> list[str]:
            return check_invariants(
                case.conf,
                before,
                result,
                engine=engine,
                disabled=PER_SESSION_DISABLED,
                seed=case.seed,
                now=now,
                verbosity=case.verbosity,
                carry=kept,
            )

        assert judged(carry, session) == judged(None, session)
        # A session that bound nothing: liveness and the order checks ask the node table.
        idle = replace(session, binds=[])
        assert judged(carry, idle) == judged(None, idle)

    run_timeline(
        case.conf,
        case.cluster,
        case.timeline,
        seed=case.seed,
        verbosity=case.verbosity,
        on_session=after_session,
        engine=engine,
        keep_logs=False,
    )


@settings(max_examples=15, deadline=None)
@given(timeline_specs(_space("seed"), BOUNDS))
def test_carried_checks_judge_the_seed_conf_as_fresh_ones(case: GeneratedTimelineSpec) -> None:
    _judged_both_ways(case)


@settings(max_examples=15, deadline=None)
@given(timeline_specs(_space("preempt"), BOUNDS))
def test_carried_checks_judge_evictions_as_fresh_ones(case: GeneratedTimelineSpec) -> None:
    _judged_both_ways(case)
