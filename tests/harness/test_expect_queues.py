"""``expect.queues``: a queue's shares as the session's proportion or capacity plugin
held them, and its pod groups by phase, checked with the probes' tolerance rule."""

from __future__ import annotations

from pathlib import Path

from tests.harness.test_loader import load_errors, load_one
from vspec.framework.scheduler import simulate
from vspec.harness.expect import check
from vspec.model.spec import Spec

SPEC = """
name: two weighted queues
scheduler:
  actions: "enqueue, allocate"
  tiers:
  - plugins: [{name: gang}, {name: predicates}, {name: PLUGIN}]
cluster:
  queues:
  - {name: big, weight: 3}
  - {name: small, weight: 1, capability: {cpu: 3}}
  - {name: idle}
  nodes:
  - {name: n1, allocatable: {cpu: 8, memory: 16Gi}}
  jobs:
  - {name: a, namespace: t, queue: big, minAvailable: 1,
     tasks: [{name: w, replicas: 8, requests: {cpu: 1, memory: 1Gi}}]}
  - {name: b, namespace: t, queue: small, minAvailable: 1,
     tasks: [{name: w, replicas: 8, requests: {cpu: 1, memory: 1Gi}}]}
expect:
  queues:
EXPECT
"""


def run(tmp_path: Path, expect: str, plugin: str = "proportion") -> list[str]:
    text = SPEC.replace("PLUGIN", plugin).replace("EXPECT", expect)
    spec: Spec = load_one(tmp_path, text)
    result = simulate(spec.scheduler, spec.cluster, seed=spec.seed, now=spec.now)
    return check(spec, result)


def test_proportion_shares_pass_when_right(tmp_path: Path) -> None:
    expect = """
    big:
      deserved: {cpu: 6, memory: 8Gi}
      allocated: {cpu: 6, memory: 6Gi}
      request: {cpu: 8}
      share: 1
      running: 1
      pending: 0
    small: {deserved: {cpu: 2}, allocated: {cpu: 2}, capability: {cpu: 3}, share: 1}
"""
    assert run(tmp_path, expect) == []


def test_every_mismatch_is_named_in_the_spec_units(tmp_path: Path) -> None:
    expect = """
    big: {deserved: {cpu: 5, memory: 6Gi}, share: 0.5, running: 2, capability: {cpu: 9}}
    small: {allocated: {cpu: 2500m}}
"""
    assert run(tmp_path, expect) == [
        "queue big running: expected 2 pod group(s), got 1",
        "queue big deserved cpu: expected 5, got 6 (proportion)",
        "queue big deserved memory: expected 6Gi, got 8Gi (proportion)",
        "queue big capability cpu: expected 9, got unlimited (proportion)",
        "queue big share: expected 0.5, got 1 (proportion)",
        "queue small allocated cpu: expected 2.5, got 2 (proportion)",
    ]


def test_tolerance_is_absolute_when_given(tmp_path: Path) -> None:
    assert run(tmp_path, "    big: {deserved: {cpu: 6.4}, share: 1.3, tolerance: 0.5}\n") == []
    assert run(tmp_path, "    big: {deserved: {cpu: 6.000001}}\n") == []  # relative 1e-6
    assert run(tmp_path, "    big: {deserved: {cpu: 6.1}}\n") != []


def test_capacity_is_read_too(tmp_path: Path) -> None:
    # big, first in queue order and without a limit, takes the whole node
    expect = (
        "    big: {allocated: {cpu: 8}}\n    small: {allocated: {cpu: 0}, capability: {cpu: 3}}\n"
    )
    assert run(tmp_path, expect, plugin="capacity") == []
    assert run(tmp_path, "    small: {allocated: {cpu: 3}}\n", plugin="capacity") == [
        "queue small allocated cpu: expected 3, got 0 (capacity)"
    ]


def test_a_queue_without_jobs_has_no_shares_but_counts(tmp_path: Path) -> None:
    assert run(tmp_path, "    idle: {running: 0, pending: 0}\n") == []
    assert run(tmp_path, "    idle: {deserved: {cpu: 0}}\n") == [
        "queue idle: no plugin of the last session kept shares of it (proportion and "
        "capacity keep them for the queues that have a job in the session)"
    ]


def test_an_undeclared_queue_is_a_located_error(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, SPEC.replace("EXPECT", "    smal: {running: 1}\n"))
    assert any("no queue 'smal' in the cluster; did you mean 'small'?" in e for e in errors)


def test_a_bad_quantity_is_a_schema_error(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, SPEC.replace("EXPECT", "    big: {deserved: {cpu: lots}}\n"))
    assert any("deserved.cpu" in e or "cpu" in e for e in errors)


def test_an_engine_without_queue_shares_skips_the_spec(tmp_path: Path) -> None:
    from tests.conftest import FakeEngine
    from vspec.harness.runner import Verdict, execute
    from vspec.model.result import SimulationResult

    spec = load_one(
        tmp_path,
        SPEC.replace("PLUGIN", "proportion").replace("EXPECT", "    big: {deserved: {cpu: 6}}\n"),
    )
    outcome = execute(spec, engine=FakeEngine(SimulationResult()))  # queues: None
    assert outcome.status is Verdict.SKIPPED
    assert "the engine reports no queue shares" in outcome.reason
    counts = load_one(
        tmp_path,
        SPEC.replace("PLUGIN", "proportion").replace("EXPECT", "    big: {running: 0}\n"),
        "counts.yaml",
    )
    result = SimulationResult(cluster=counts.cluster)
    assert execute(counts, engine=FakeEngine(result)).status is Verdict.PASSED
