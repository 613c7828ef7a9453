"""The clock's kept sums (``Clock._tally``) and count of pod groups not Running
(``Clock._unready``), brought up to date with what the clock itself changed (arrivals,
completions) and what a session changed: over drawn timelines, every reading is what
counting the cluster afresh gives."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings

from tests.builders import node, pod, pod_group, queue
from tests.timeline.test_carried_jobs import _run as _run_case
from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.fuzz.runner import SEED_CONF, load_space
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, conf_from_document
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.model.objects import Cluster
from vspec.model.resources import ResourceVector
from vspec.model.timeline import Arrival, Timeline
from vspec.timeline.clock import Clock, _Tally, run_timeline

BOUNDS = ClusterBounds(max_nodes=4, max_jobs=5)
SEED = conf_from_document(SEED_CONF)


def _vector(v: ResourceVector) -> tuple[float, float, tuple[tuple[str, float], ...]]:
    return v.milli_cpu, v.memory, tuple(sorted((n, q) for n, q in v.scalars.items() if q))


def _reading(tally: _Tally) -> tuple[Any, ...]:
    """What a tick and ``_idle`` read of a tally; a queue whose sums came back to zero
    reads as one never counted."""
    zero = _vector(ResourceVector())
    sums = {
        queue: (_vector(s.demand), _vector(s.used))
        for queue, s in tally.sums.items()
        if (_vector(s.demand), _vector(s.used)) != (zero, zero)
    }
    counts = (tally.pending, tally.running, tally.terminating, tally.waiting)
    return _vector(tally.used), sums, counts


def _fresh(clock: Clock) -> _Tally:
    tally = _Tally(clock.cluster.pods, clock.names)
    for pod_ in clock.cluster.pods:
        tally.count(pod_, clock._load(pod_), 1.0)
    return tally


@dataclass
class _Seen:
    readings: int = 0
    patched: int = 0  # readings whose tally the clock's own changes kept current


@contextmanager
def _checked() -> Iterator[_Seen]:
    """Every ``_tally`` and ``_unready`` answer compared with counting afresh."""
    seen = _Seen()
    tally, unready = Clock._tally, Clock._unready

    def checked_tally(clock: Clock) -> _Tally:
        kept = clock.tallied
        got = tally(clock)
        seen.readings += 1
        seen.patched += got is kept and kept is not None and kept.pods is clock.cluster.pods
        assert _reading(got) == _reading(_fresh(clock))
        return got

    def checked_unready(clock: Clock) -> int:
        got = unready(clock)
        assert got == sum(pg.phase != "Running" for pg in clock.cluster.pod_groups)
        return got

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Clock, "_tally", checked_tally)
        patch.setattr(Clock, "_unready", checked_unready)
        yield seen


def _run(case: GeneratedTimelineSpec) -> None:
    with suppress(VspecError):  # a conf Volcano rejects, or a plugin's own panic
        _run_case(case.conf, case.cluster, case.timeline, case.seed, case.verbosity)


@settings(max_examples=40, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), BOUNDS))
def test_seed_conf_timelines_keep_what_counting_afresh_gives(case: GeneratedTimelineSpec) -> None:
    with _checked():
        _run(case)


@settings(max_examples=30, deadline=None)
@given(timeline_specs(load_space("mixed").conf or ConfSpace(), BOUNDS))
def test_any_conf_timelines_keep_what_counting_afresh_gives(case: GeneratedTimelineSpec) -> None:
    """Preempt and reclaim evict (pods created again), node events drain and remove."""
    with _checked():
        _run(case)


def _jobs_arriving_and_finishing() -> tuple[Cluster, Timeline]:
    cluster = Cluster(
        nodes=[node("n1", {"cpu": "8", "memory": "8Gi", "pods": "110"})],
        queues=[queue("q1"), queue("q2", weight=2)],
    )
    arrivals = []
    for i in range(6):
        name = f"j{i}"
        pods = [pod("c1", f"{name}-p{k}", name, {"cpu": "1", "memory": "1Gi"}) for k in range(2)]
        arrivals.append(
            Arrival(
                at=timedelta(seconds=3 * i),
                pod_groups=[pod_group("c1", name, "q1" if i % 2 else "q2", min_member=2)],
                pods=pods,
                run_for={p.meta.key: timedelta(seconds=4 + i) for p in pods},
            )
        )
    return cluster, Timeline(period=timedelta(seconds=1), arrivals=arrivals)


def test_arrivals_and_completions_are_counted_without_finding_them_again() -> None:
    """Most readings after arrivals and completions take the tally the clock kept
    current itself (``_counted``), and it is what counting afresh gives."""
    cluster, timeline = _jobs_arriving_and_finishing()
    with _checked() as seen:
        result = run_timeline(SEED, cluster, timeline, engine=get_engine())
    assert all(job.completed is not None for job in result.jobs.values())
    assert seen.patched >= 6  # each arrival at least


@pytest.mark.parametrize("method", ["_counted", "_regrouped"])
def test_a_patch_that_forgets_what_it_took_out_is_caught(method: str) -> None:
    cluster, timeline = _jobs_arriving_and_finishing()
    real: Callable[..., None] = getattr(Clock, method)

    def forgetful(clock: Clock, was: list[Any], gone: list[Any], added: list[Any]) -> None:
        real(clock, was, [], added)

    with pytest.raises(AssertionError), _checked(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(Clock, method, forgetful)
        run_timeline(SEED, cluster, timeline, engine=get_engine())
