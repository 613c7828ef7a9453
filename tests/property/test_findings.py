"""specs/findings: each finding still shows Volcano's behaviour, which its invariant
reports once the documented exception is lifted, and which the default check spares."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import vspec.invariants.checks as checks
from vspec.engines import get_engine
from vspec.errors import EngineError
from vspec.framework.scheduler import simulate
from vspec.invariants import check_invariants
from vspec.model.result import SimulationResult
from vspec.model.spec import Spec

ENGINE = get_engine()


def judge(spec: Spec, result: SimulationResult) -> list[str]:
    return check_invariants(spec.scheduler, spec.cluster, result, engine=ENGINE, seed=spec.seed)


FINDINGS = Path(__file__).resolve().parents[2] / "specs" / "findings"


def load(name: str) -> Spec:
    from vspec.harness.loader import load_file

    return load_file(FINDINGS / name).specs[0]  # a second spec may show it as deployed


def test_drf_in_a_later_tier_preempts_for_a_lower_priority() -> None:
    spec = load("no-priority-inversion-drf-decides.yaml")
    result = simulate(spec.scheduler, spec.cluster, seed=spec.seed)
    assert judge(spec, result) == []
    [message] = check_invariants(
        spec.scheduler,
        spec.cluster,
        result,
        engine=ENGINE,
        requested=["no-priority-inversion"],
        seed=spec.seed,
    )
    assert "c1/high-w-0 (job c1/high, priority 100) was preempted" in message


def test_backfill_takes_pod_slots_promised_to_pipelined_tasks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = load("pipelined-consistent-backfill-takes-promised-pod-slots.yaml")
    result = simulate(spec.scheduler, spec.cluster, seed=spec.seed)
    assert judge(spec, result) == []
    monkeypatch.setattr(checks, "_unjudged_pipelined", lambda inputs: set())
    [message] = check_invariants(
        spec.scheduler, spec.cluster, result, engine=ENGINE, seed=spec.seed
    )
    assert message == (
        "invariant pipelined-consistent: node n1: pipelined c1/gang-w-0, c1/gang-w-1 need "
        "pods 3 with the tasks that keep their place, above allocatable pods 2"
    )


def test_proportion_panics_when_a_guarantee_overshoots_the_remaining_share() -> None:
    spec = load("proportion-guarantee-panics.yaml")
    assert spec.xfail
    with pytest.raises(EngineError, match="resource is not sufficient to do operation"):
        simulate(spec.scheduler, spec.cluster, seed=spec.seed)


def test_capacity_hierarchy_without_root_panics_on_the_first_eviction() -> None:
    spec = load("capacity-hierarchy-without-root-panics-on-evict.yaml")
    assert spec.xfail
    with pytest.raises(EngineError, match="resource is not sufficient to do operation"):
        simulate(spec.scheduler, spec.cluster, seed=spec.seed)


def test_proportion_panics_in_enqueue_after_an_eviction_in_the_same_session() -> None:
    spec = load("proportion-enqueue-after-eviction-panics.yaml")
    assert spec.xfail
    with pytest.raises(EngineError, match="resource is not sufficient to do operation"):
        simulate(spec.scheduler, spec.cluster, seed=spec.seed)
    # Without the evictions before it, the same enqueue passes.
    result = simulate(replace(spec.scheduler, actions=["enqueue"]), spec.cluster, seed=spec.seed)
    assert not result.evictions


def test_nodegroup_scoring_every_feasible_node_minus_one_leaves_allocate_no_node() -> None:
    spec = load("nodegroup-preferred-anti-affinity-panics.yaml")
    assert spec.xfail
    with pytest.raises(EngineError, match="no best node for task ns/j-0"):
        simulate(spec.scheduler, spec.cluster, seed=spec.seed)


def test_a_negative_scorer_weight_leaves_allocate_and_backfill_no_node() -> None:
    from vspec.harness.loader import load_file

    below, above, backfilled = load_file(FINDINGS / "negative-score-weight-panics.yaml").specs
    assert below.xfail and backfilled.xfail and not above.xfail
    for spec in (below, backfilled):
        with pytest.raises(EngineError, match="no best node for task ns/j-0"):
            simulate(spec.scheduler, spec.cluster, seed=spec.seed)
    # The floor, not the sign: a node at -0.5 is taken.
    binds = simulate(above.scheduler, above.cluster, seed=above.seed).binds
    assert [(b.task, b.node) for b in binds] == [("ns/j-0", "n1")]
