"""A spec with a timeline: run it, then check ``expect`` (binds and evictions over the
whole run, logs, metrics) and the invariants after every session."""

from __future__ import annotations

from datetime import datetime

from vspec.golang import format_go_duration
from vspec.harness.expect import check
from vspec.invariants import Carry, check_invariants
from vspec.model.engine import Engine
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult
from vspec.model.spec import Spec
from vspec.timeline.clock import run_timeline
from vspec.timeline.expr import check_bound
from vspec.timeline.records import TimelineResult

MAX_INVARIANT_MESSAGES = 20
# Re-running one session from a fresh generator is not the timeline's session: the
# timeline as a whole is deterministic (tests/timeline/test_stateful.py checks it).
PER_SESSION_DISABLED = ("deterministic",)


def run_timeline_spec(
    spec: Spec, seed: int, engine: Engine, carry: Carry | None = None
) -> tuple[SimulationResult, list[str]]:
    """What the run did (binds, evictions; the logs of every session when
    ``expect.logs`` reads them, else of the last) and what is wrong;
    the timeline runs on ``engine``, session by session; ``carry`` sums the invariants'
    CPU seconds and keeps their memos from session to session."""
    assert spec.timeline is not None
    violations: list[str] = []
    start = spec.now

    def after_session(now: datetime, before: Cluster, session: SimulationResult) -> None:
        if len(violations) >= MAX_INVARIANT_MESSAGES:
            return
        found = check_invariants(
            spec.scheduler,
            before,
            session,
            requested=spec.expect.invariants,
            disabled=[*spec.expect.disabled_invariants, *PER_SESSION_DISABLED],
            seed=seed,
            now=now,
            verbosity=spec.verbosity,
            engine=engine,
            carry=carry,
        )
        if found:  # the time formatted only for a message (most sessions have none)
            at = format_go_duration(now - start)
            violations.extend(f"at +{at}: {message}" for message in found)

    result = run_timeline(
        spec.scheduler,
        spec.cluster,
        spec.timeline,
        seed=seed,
        now=start,
        verbosity=spec.verbosity,
        on_session=after_session,
        engine=engine,
        keep_logs=spec.expect.logs is not None,  # else the log tail is the last session's
    )
    messages = [*check(spec, result.simulation), *metric_messages(spec, result), *violations]
    return result.simulation, messages


def metric_messages(spec: Spec, result: TimelineResult) -> list[str]:
    messages = []
    for bound in spec.expect.metrics:
        failure = check_bound(bound.text, result)
        if failure is not None:
            messages.append(f"metrics: {bound.text}: {failure}")
    return messages
