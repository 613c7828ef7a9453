"""Volcano v1.10.0 beside v1.11.0 in vspec's engine: each gate of
:class:`vspec.model.versions.Gates` decides as its release does (the same cluster, two
outcomes), and a spec's ``volcano`` key skips it on another release."""

from __future__ import annotations

from pathlib import Path

import pytest

from vspec.engines import EngineChoice, get_engine
from vspec.errors import EngineError, VspecError
from vspec.framework.engine import PythonEngine
from vspec.harness.loader import load_file
from vspec.harness.plugin_dirs import spec_scope
from vspec.harness.runner import Verdict, execute, run_paths, simulate_spec
from vspec.model.result import SimulationResult
from vspec.model.versions import V1_10_0, V1_11_0, Gates, VersionRange, gates_for

ROOT = Path(__file__).parents[2]
CONFORMANCE = ROOT.parent / "shared" / "conformance"
OLD, NEW = "v1.10.0", "v1.11.0"


def _run(tmp_path: Path, text: str, version: str) -> SimulationResult:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    [spec] = load_file(path).specs
    with spec_scope(spec):  # the spec's plugins dir
        return simulate_spec(spec, PythonEngine(volcano_version=version), spec.seed)


def _evicted(result: SimulationResult) -> list[str]:
    return sorted(e.task for e in result.evictions)


# -- selection -------------------------------------------------------------------------


def test_the_gates_of_each_release() -> None:
    assert gates_for(NEW) == V1_11_0 == Gates()
    assert gates_for(OLD) == V1_10_0
    # v1.10.0 differs from v1.11.0 in every gate: a gate nothing turns off is not one.
    assert all(
        getattr(V1_10_0, name) != getattr(V1_11_0, name) for name in Gates.__dataclass_fields__
    )
    with pytest.raises(VspecError, match=r"models Volcano v1\.10\.0 and v1\.11\.0, not 'v1\.9\.0'"):
        gates_for("v1.9.0")


def test_get_engine_hands_the_version_to_vspec_s_engine() -> None:
    assert get_engine().volcano_version == NEW  # type: ignore[attr-defined]
    engine = get_engine(choice=EngineChoice(volcano_version=OLD))
    assert isinstance(engine, PythonEngine) and engine.gates == V1_10_0
    with pytest.raises(VspecError, match=r"not 'v2\.0\.0'"):
        get_engine(choice=EngineChoice(volcano_version="v2.0.0"))


@pytest.mark.parametrize(
    ("text", "admitted", "refused"),
    [
        ("v1.10.0", ["v1.10.0"], ["v1.11.0"]),
        (">=v1.11.0", ["v1.11.0", "v1.12.3"], ["v1.10.0"]),
        (">=v1.10.0, <v1.11.0", ["v1.10.0", "v1.10.9"], ["v1.11.0", "v1.9.0"]),
        ("!= v1.10.0", ["v1.11.0"], ["v1.10.0"]),
    ],
)
def test_a_version_range(text: str, admitted: list[str], refused: list[str]) -> None:
    versions = VersionRange.parse(text)
    assert all(versions.admits(v) for v in admitted)
    assert not any(versions.admits(v) for v in refused)


SPEC = """\
name: only on v1.11
volcano: "{versions}"
scheduler: {{actions: allocate, tiers: [{{plugins: [{{name: predicates}}]}}]}}
cluster:
  nodes: [{{name: n1, allocatable: {{cpu: 1}}}}]
  jobs: [{{name: j, tasks: [{{name: t, requests: {{cpu: 1}}}}]}}]
expect:
  binds: {{default/j-t-0: n1}}
"""


def test_a_spec_for_another_release_is_skipped_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(versions=">=v1.11.0"))
    [spec] = load_file(path).specs
    skipped = execute(spec, engine=PythonEngine(volcano_version=OLD))
    assert skipped.status is Verdict.SKIPPED
    assert skipped.reason == "the spec describes Volcano >=v1.11.0; this run's engine is v1.10.0"
    assert execute(spec, engine=PythonEngine()).status is Verdict.PASSED


def test_a_bad_volcano_key_is_located(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(versions="1.11"))
    [error] = load_file(path).errors
    assert error.location is not None and error.location.line == 2
    assert "volcano" in str(error) and "'1.11'" in str(error)


# -- the suites at v1.10.0 -----------------------------------------------------------------


def test_specs_pass_at_v1_10_with_the_v1_11_only_ones_skipped() -> None:
    report = run_paths([ROOT / "specs"], engine=PythonEngine(volcano_version=OLD))
    assert not report.problems
    assert not [o.name for o in report.outcomes if o.failing]
    skipped = {o.name for o in report.outcomes if o.status is Verdict.SKIPPED}
    assert "hierarchical capacity checks every ancestor's capability" in skipped
    passed = {o.name for o in report.outcomes if o.status is Verdict.PASSED}
    assert "v1.10.0's capacity ignores the queue hierarchy" in passed


def test_conformance_at_v1_10_fails_where_the_real_v1_10_does() -> None:
    """The conformance cases are v1.11.0's Go tests: at v1.10.0 vspec's engine fails
    exactly those the real v1.10.0 fails (tests/engines/test_volcano_engine.py)."""
    if not CONFORMANCE.is_dir():
        pytest.skip("../shared/conformance is not beside this checkout")
    from tests.engines.test_volcano_engine import CONFORMANCE_DIFFERING

    report = run_paths([CONFORMANCE], engine=PythonEngine(volcano_version=OLD))
    assert {o.name for o in report.outcomes if o.failing} == CONFORMANCE_DIFFERING


# -- each gate -------------------------------------------------------------------------------

# The conf and the cluster's head of the preempt scenarios.
PREEMPT = """\
clusterMode: bare
scheduler:
  actions: preempt
  tiers:
  - plugins: [{name: priority}, {name: gang}, {name: conformance}]
  - plugins: [{name: predicates}, {name: proportion}]
cluster:
  priorityClasses: [{name: low, value: 10}, {name: high, value: 1000}]
  queues: [{name: q1, weight: 1}]
"""
PREEMPT_NEVER = """\
name: a preemptor that never preempts
"""
PREEMPT_NEVER += PREEMPT
PREEMPT_NEVER += """\
  nodes: [{name: n1, allocatable: {cpu: 1, memory: 1Gi}}]
  podGroups:
  - {name: low, namespace: c1, queue: q1, minMember: 0, priorityClassName: low, phase: Running}
  - {name: high, namespace: c1, queue: q1, minMember: 1, priorityClassName: high, phase: Inqueue}
  pods:
  - {name: victim, namespace: c1, podGroup: low, phase: Running, nodeName: n1,
     requests: {cpu: 1}, priorityClassName: low}
  - {name: never, namespace: c1, podGroup: high, phase: Pending, requests: {cpu: 1},
     priorityClassName: high, preemptionPolicy: Never}
"""


def test_preemption_policy_never_in_preempt(tmp_path: Path) -> None:
    assert _evicted(_run(tmp_path, PREEMPT_NEVER, NEW)) == []
    assert _evicted(_run(tmp_path, PREEMPT_NEVER, OLD)) == ["c1/victim"]


RECLAIM = """\
name: reclaim across two queues
clusterMode: bare
scheduler:
  actions: reclaim
  tiers:
  - plugins: [{name: priority}, {name: gang}, {name: conformance}]
  - plugins: [{name: predicates}, {name: proportion}]
cluster:
  queues: [{name: q1, weight: 1}, {name: q2, weight: 1}]
  nodes: [{name: n1, allocatable: {cpu: 4, memory: 4Gi}}]
  podGroups:
  - {name: a, namespace: c1, queue: q1, minMember: 1, phase: Running}
  - {name: b, namespace: c1, queue: q2, minMember: %(min)d, phase: %(phase)s}
  pods:
  - {name: a1, namespace: c1, podGroup: a, phase: Running, nodeName: n1, requests: {cpu: 1}}
  - {name: a2, namespace: c1, podGroup: a, phase: Running, nodeName: n1, requests: {cpu: 1}}
  - {name: a3, namespace: c1, podGroup: a, phase: Running, nodeName: n1, requests: {cpu: 1}}
  - {name: a4, namespace: c1, podGroup: a, phase: Running, nodeName: n1, requests: {cpu: 1}}
  - {name: b1, namespace: c1, podGroup: b, phase: Pending, requests: {cpu: 1}%(policy)s}
"""


def test_preemption_policy_never_in_reclaim(tmp_path: Path) -> None:
    text = RECLAIM % {"min": 1, "phase": "Inqueue", "policy": ", preemptionPolicy: Never"}
    assert _evicted(_run(tmp_path, text, NEW)) == []
    assert len(_evicted(_run(tmp_path, text, OLD))) == 1


def test_reclaim_for_jobs_with_pending_tasks_not_only_starving_ones(tmp_path: Path) -> None:
    """minMember 0: b is not starving (gang), yet it has a pending task."""
    text = RECLAIM % {"min": 0, "phase": "Running", "policy": ""}
    assert _evicted(_run(tmp_path, text, NEW)) == []
    assert len(_evicted(_run(tmp_path, text, OLD))) == 1


CLOSED_QUEUES = """\
from vspec.extension import Plugin, register_plugin


@register_plugin
class ClosedQueues(Plugin):
    name = "closed-queues"

    def on_session_open(self, ssn):
        ssn.add_allocatable_fn(self.name, lambda queue, task: False)
"""


def test_reclaim_asks_allocatable_before_preemptive_on_v1_10(tmp_path: Path) -> None:
    """An Allocatable function that refuses every task: v1.11.0's reclaim asks only
    Preemptive, v1.10.0's asked Allocatable first and gave up."""
    (tmp_path / "closed_queues.py").write_text(CLOSED_QUEUES)
    text = RECLAIM % {"min": 1, "phase": "Inqueue", "policy": ""}
    text = text.replace("clusterMode: bare", "clusterMode: bare\npluginsDir: .")
    text = text.replace("{name: proportion}]", "{name: proportion}, {name: closed-queues}]")
    assert len(_evicted(_run(tmp_path, text, NEW))) == 1
    old = _run(tmp_path, text, OLD)
    assert _evicted(old) == []
    assert any("Queue <q2> is overused when considering task <b1>" in ln.text for ln in old.logs)


NODEGROUP = """\
name: nodegroup ahead of predicates
clusterMode: bare
scheduler:
  actions: allocate
  tiers:
  - plugins: [{name: nodegroup}]
  - plugins: [{name: predicates}]
cluster:
  queues:
  - name: gpu-team
    affinity: {nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [gpu]}}
  nodes:
  - {name: gpu-1, allocatable: {cpu: 8}, unschedulable: true,
     labels: {volcano.sh/nodegroup-name: gpu}}
  podGroups: [{name: train, queue: gpu-team, minMember: 1, phase: Inqueue}]
  pods:
  - {name: w0, podGroup: train, phase: Pending, requests: {cpu: 1},
     labels: {volcano.sh/queue-name: gpu-team}}
"""


def test_nodegroup_s_fitting_node_ends_the_predicate_chain_on_v1_10(tmp_path: Path) -> None:
    """The node is cordoned: predicates refuses it, but v1.10.0 never asked predicates
    once nodegroup (earlier in the chain) answered with its Success FitError."""
    assert _run(tmp_path, NODEGROUP, NEW).bind_map() == {}
    assert _run(tmp_path, NODEGROUP, OLD).bind_map() == {"default/w0": "gpu-1"}


FAILED_JOB = """\
name: a job whose only pod failed
clusterMode: bare
scheduler:
  actions: allocate
  tiers:
  - plugins: [{name: gang}, {name: predicates}]
cluster:
  queues: [{name: q1}]
  nodes: [{name: n1, allocatable: {cpu: 2}}]
  podGroups: [{name: j, queue: q1, minMember: 1, phase: Running}]
  pods: [{name: p0, podGroup: j, phase: Failed, nodeName: n1, requests: {cpu: 1}}]
"""


def test_a_pod_group_of_failed_pods_completes_on_v1_11_only(tmp_path: Path) -> None:
    assert _run(tmp_path, FAILED_JOB, NEW).pod_groups["default/j"].phase == "Completed"
    assert _run(tmp_path, FAILED_JOB, OLD).pod_groups["default/j"].phase == "Pending"


OVER_GUARANTEED = """\
name: guarantees above the cluster's total
clusterMode: bare
scheduler:
  actions: enqueue
  tiers:
  - plugins: [{name: %(plugin)s}]
cluster:
  queues:
  - {name: q0, guarantee: {cpu: 8}}
  - {name: q1, deserved: {cpu: 4, memory: 4Gi}}
  nodes: [{name: n1, allocatable: {cpu: 4, memory: 4Gi}}]
  podGroups: [{name: j, queue: q1, minMember: 1, phase: Pending}]
  pods: [{name: p0, podGroup: j, phase: Pending, requests: {cpu: 1}}]
"""


@pytest.mark.parametrize("plugin", ["proportion", "capacity"])
def test_real_capability_below_zero_panics_on_v1_10(tmp_path: Path, plugin: str) -> None:
    """q0's guarantee is twice the cluster: v1.11.0 gives q1 none of the cpu beyond it
    (and admits the job, which names no minResources), v1.10.0's asserting Sub panics."""
    text = OVER_GUARANTEED % {"plugin": plugin}
    assert _run(tmp_path, text, NEW).pod_groups["default/j"].phase == "Inqueue"
    with pytest.raises(EngineError, match="resource is not sufficient to do operation"):
        _run(tmp_path, text, OLD)


ELASTIC = """\
name: a job above its minimum in cpu only
clusterMode: bare
verbosity: 5
scheduler:
  actions: enqueue
  tiers:
  - plugins: [{name: proportion}]
cluster:
  queues: [{name: q1}]
  nodes: [{name: n1, allocatable: {cpu: 4, memory: 4Gi}}]
  podGroups:
  - {name: j, queue: q1, minMember: 1, phase: Running, minResources: {cpu: 1, memory: 1Gi}}
  pods:
  - {name: p0, podGroup: j, phase: Running, nodeName: n1, requests: {cpu: 1, memory: 256Mi}}
  - {name: p1, podGroup: j, phase: Running, nodeName: n1, requests: {cpu: 1, memory: 256Mi}}
"""


def test_elastic_resources_per_dimension_on_v1_11_only(tmp_path: Path) -> None:
    """2 cpu and 512Mi allocated over a minimum of 1 cpu and 1Gi: v1.11.0's elastic part
    is the 1 cpu above; v1.10.0's is nothing, as memory is within the minimum."""

    def elastic(version: str) -> str:
        lines = [ln.text for ln in _run(tmp_path, ELASTIC, version).logs]
        [line] = [ln for ln in lines if ln.startswith("Queue q1 allocated")]
        return line.split("elastic <", 1)[1]

    assert elastic(NEW).startswith("cpu 1000.00, memory 0.00")
    assert elastic(OLD).startswith("cpu 0.00, memory 0.00")


ANTI_AFFINITY = """\
name: preempt for a pod whose anti-affinity the node fails
"""
ANTI_AFFINITY += PREEMPT
ANTI_AFFINITY += """\
  nodes:
  - {name: n1, allocatable: {cpu: 2, memory: 2Gi}, labels: {kubernetes.io/hostname: n1}}
  podGroups:
  - {name: low, queue: q1, minMember: 0, priorityClassName: low, phase: Running}
  - {name: keep, queue: q1, minMember: 0, priorityClassName: high, phase: Running}
  - {name: high, queue: q1, minMember: 1, priorityClassName: high, phase: Inqueue}
  pods:
  - {name: victim, podGroup: low, phase: Running, nodeName: n1, requests: {cpu: 1},
     priorityClassName: low}
  - {name: web, podGroup: keep, phase: Running, nodeName: n1, requests: {cpu: 1},
     priorityClassName: high, labels: {app: web}}
  - name: apart
    podGroup: high
    phase: Pending
    requests: {cpu: 1}
    priorityClassName: high
    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
        - labelSelector: {matchLabels: {app: web}}
          topologyKey: kubernetes.io/hostname
"""


def test_preempt_skips_a_node_that_fails_pod_affinity_on_v1_11_only(tmp_path: Path) -> None:
    """Evicting the victim cannot help: web stays on n1. v1.11.0 makes the anti-affinity
    failure unresolvable and leaves n1 out; v1.10.0 kept Unschedulable and evicts."""
    assert _evicted(_run(tmp_path, ANTI_AFFINITY, NEW)) == []
    assert _evicted(_run(tmp_path, ANTI_AFFINITY, OLD)) == ["default/victim"]


SLOTS = """\
name: a node whose pod slots are taken
clusterMode: bare
scheduler:
  actions: allocate
  tiers:
  - plugins: [{name: predicates}]
cluster:
  queues: [{name: q1}]
  nodes: [{name: n1, allocatable: {cpu: 4, pods: 1}}]
  podGroups:
  - {name: old, queue: q1, minMember: 0, phase: Running}
  - {name: new, queue: q1, minMember: 0, phase: Inqueue}
  pods:
  - {name: p0, podGroup: old, phase: Running, nodeName: n1, requests: {cpu: 1},
     deletionTimestamp: '2025-01-01T00:00:00Z'}
  - {name: p1, podGroup: new, phase: Pending, requests: {cpu: 1}}
"""


def test_a_full_node_passes_the_pod_count_predicate_on_v1_10(tmp_path: Path) -> None:
    """p0 is leaving: its slot is future idle. v1.10.0 noted the pod count but returned
    no error when nothing else failed, so p1 is pipelined onto the slot."""
    assert _run(tmp_path, SLOTS, NEW).pipelined["default/new"] == []
    assert _run(tmp_path, SLOTS, OLD).pipelined["default/new"] == [("default/p1", "n1")]
