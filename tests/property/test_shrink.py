"""vspec.fuzz.shrink: the failure stays, the spec gets smaller and stays a valid spec; and the
fuzzer writes the shrunk spec, which fails under ``vspec run``."""

from __future__ import annotations

import re
import tempfile
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings

from vspec.engines import get_engine
from vspec.framework.statement import Statement
from vspec.fuzz.runner import SEED_CONF, examine, reproduces
from vspec.fuzz.shrink import ShrinkStats, shrink, size
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, GeneratedSpec, specs
from vspec.harness.loader import load_file
from vspec.harness.yamlwrite import dump
from vspec.model.objects import Cluster

GANG = {
    "actions": "enqueue, allocate",
    "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]}],
}
LATER = float("inf")


def _big_pending(cluster: Cluster) -> bool:
    """The failure the structural tests shrink: some pending pod asks for 1 cpu or more."""
    return any(
        not p.node_name and sum(c.requests.get("cpu", Fraction(0)) for c in p.containers) >= 1
        for p in cluster.pods
    )


def _reloaded(case: GeneratedSpec, tmp_path: Path) -> Cluster:
    """The cluster ``case`` means once written as a spec file and read back by the loader."""
    path = tmp_path / "case.yaml"
    path.write_text(dump(case.document()), encoding="utf-8")
    load = load_file(path)
    assert not load.errors, load.errors
    [spec] = load.specs
    return spec.cluster


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs(ConfSpace(fixed=SEED_CONF), ClusterBounds(max_nodes=4, max_jobs=5)))
def test_the_failure_stays_and_only_what_it_needs_is_left(case: GeneratedSpec) -> None:
    assume(_big_pending(case.cluster))
    before = size(case)
    stats = ShrinkStats()
    out = shrink(case, lambda c: _big_pending(c.cluster), deadline=LATER, stats=stats)

    assert _big_pending(out.cluster)
    assert stats.complete and stats.tried >= stats.kept
    # One pending pod (with its job) and one node are all this failure needs.
    assert size(out) == (1, 1)
    assert len(out.cluster.pod_groups) == 1
    assert size(case) == before, "the finding itself is left alone"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs(ConfSpace(fixed=SEED_CONF), ClusterBounds(max_nodes=3, max_jobs=4)))
def test_a_shrunk_spec_is_a_valid_spec_of_the_shapes_drawn(case: GeneratedSpec) -> None:
    assume(_big_pending(case.cluster) and len(case.cluster.pods) > 1)
    # A failure that needs two things: a big pending pod and a second pod.
    out = shrink(
        case,
        lambda c: _big_pending(c.cluster) and len(c.cluster.pods) >= 2,
        deadline=LATER,
    )
    assert len(out.cluster.pods) == 2
    groups = {(g.meta.namespace, g.meta.name): g for g in out.cluster.pod_groups}
    nodes = {n.meta.name for n in out.cluster.nodes}
    for pod in out.cluster.pods:
        group = groups[(pod.meta.namespace, pod.group_name)]  # every pod keeps its job
        assert not pod.node_name or pod.node_name in nodes
        assert group.min_member <= len(out.cluster.pods)
    assert all(
        any(p.group_name == g.meta.name for p in out.cluster.pods) for g in groups.values()
    ), "no job is left without pods"
    with tempfile.TemporaryDirectory() as tmp:
        reloaded = _reloaded(out, Path(tmp))
    assert [p.meta.name for p in reloaded.pods] == [p.meta.name for p in out.cluster.pods]
    assert [n.meta.name for n in reloaded.nodes] == [n.meta.name for n in out.cluster.nodes]


def _over_limit(cluster: Cluster) -> set[str]:
    """The nodes with more pods bound than their pod limit."""
    bound = Counter(p.node_name for p in cluster.pods if p.node_name)
    return {n.meta.name for n in cluster.nodes if bound[n.meta.name] > n.allocatable["pods"]}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs(ConfSpace(fixed=SEED_CONF), ClusterBounds(max_nodes=3, max_jobs=4)))
def test_lower_values_never_push_a_node_over_its_pod_limit(case: GeneratedSpec) -> None:
    def shared(c: GeneratedSpec) -> bool:  # two pods bound to one node
        return (
            max(Counter(p.node_name for p in c.cluster.pods if p.node_name).values(), default=0)
            >= 2
        )

    assume(shared(case))
    out = shrink(case, shared, deadline=LATER)
    # Lowered to a drawn limit (1, 2 or 4), but never below the pods bound there.
    assert _over_limit(out.cluster) <= _over_limit(case.cluster)
    assert len(out.cluster.pods) == 2 and all(g.min_member == 0 for g in out.cluster.pod_groups)
    drawn = {p.meta.name: p for p in case.cluster.pods}
    for pod in out.cluster.pods:
        requests = pod.containers[0].requests
        original = drawn[pod.meta.name].containers[0].requests
        # Requests go one by one, but a pod keeps being best-effort or not.
        assert len(requests) <= 1 and set(requests) <= set(original)
        assert bool({"cpu", "memory"} & set(requests)) == bool({"cpu", "memory"} & set(original))


def test_a_full_node_stays_full_as_its_pods_go(tmp_path: Path) -> None:
    pods = [
        {"name": f"v-{i}", "podGroup": "v", "nodeName": "n0", "phase": "Running"} for i in range(3)
    ]
    pods.append({"name": "s-0", "podGroup": "s"})
    for pod in pods:
        pod["requests"] = {"cpu": 1, "memory": "1Gi"}
    doc = {
        "name": "full",
        "clusterMode": "bare",
        "scheduler": GANG,
        "cluster": {
            "queues": [{"name": "q0"}],
            "nodes": [{"name": "n0", "allocatable": {"cpu": 3, "memory": "8Gi", "pods": 4}}],
            "podGroups": [{"name": "v", "queue": "q0"}, {"name": "s", "queue": "q0"}],
            "pods": pods,
        },
    }
    (tmp_path / "full.yaml").write_text(dump(doc), encoding="utf-8")
    [spec] = load_file(tmp_path / "full.yaml").specs

    def full_and_waiting(c: GeneratedSpec) -> bool:  # what a preemption needs
        [node] = c.cluster.nodes
        used = sum(p.containers[0].requests.get("cpu", 0) for p in c.cluster.pods if p.node_name)
        return used == node.allocatable["cpu"] and any(not p.node_name for p in c.cluster.pods)

    out = shrink(GeneratedSpec(GANG, spec.cluster), full_and_waiting, deadline=LATER)
    # One victim on a node of its size (the memory follows the pod's request down).
    assert [p.node_name for p in out.cluster.pods] == ["n0", ""]
    [node] = out.cluster.nodes
    assert node.allocatable["cpu"] == 1 and node.allocatable["memory"] == 6 * 2**30
    assert _reloaded(out, tmp_path).nodes[0].allocatable == node.allocatable


def _gang_cluster(tmp_path: Path) -> Cluster:
    """Two jobs on three 2-cpu nodes: a gang of four 2-cpu pods (one too many to fit) and
    a small job; the second queue, the small job and two nodes are noise to shrink away."""
    pods = [{"name": f"big-{i}", "podGroup": "big", "requests": {"cpu": 2}} for i in range(4)]
    pods += [
        {"name": f"small-{i}", "podGroup": "small", "requests": {"cpu": "100m"}} for i in range(3)
    ]
    cluster = {
        "queues": [{"name": "q0"}, {"name": "q1"}],
        "nodes": [{"name": f"n{i}", "allocatable": {"cpu": 2, "memory": "4Gi"}} for i in range(3)],
        "podGroups": [
            {"name": "big", "queue": "q0", "minMember": 4, "phase": "Inqueue"},
            {"name": "small", "queue": "q1", "minMember": 1, "phase": "Inqueue"},
        ],
        "pods": pods,
    }
    path = tmp_path / "gang.yaml"
    doc = {"name": "gang", "clusterMode": "bare", "scheduler": GANG, "cluster": cluster}
    path.write_text(dump(doc), encoding="utf-8")
    [spec] = load_file(path).specs
    return spec.cluster


def test_shrinks_an_engine_failure_and_the_file_reproduces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Statement, "discard", Statement.commit)  # partial gangs get bound
    case = GeneratedSpec(GANG, _gang_cluster(tmp_path), cycles=2)
    engine = get_engine()

    def fails(candidate: GeneratedSpec) -> bool:
        return "gang-atomicity" in examine(candidate, engine, ("deterministic",))

    assert fails(case)
    out = shrink(case, fails, deadline=LATER)
    again = shrink(case, fails, deadline=LATER)

    assert fails(out)
    assert out.cluster == again.cluster, "deterministic"
    # On one node one 2-cpu pod binds, of a gang that needs two.
    assert size(out) == (1, 2) and out.cycles == 1
    assert len(out.cluster.queues) == 1 and len(out.cluster.pod_groups) == 1
    written = tmp_path / "finding.yaml"
    doc = out.document(expect={"invariants": ["gang-atomicity"]})
    written.write_text(dump(doc), encoding="utf-8")
    assert reproduces(written, engine)


def test_stops_at_its_deadline() -> None:
    case = GeneratedSpec(dict(SEED_CONF), Cluster())
    stats = ShrinkStats()
    assert shrink(case, lambda c: True, deadline=time.perf_counter() - 1, stats=stats) is case
    assert stats.tried == 0 and not stats.complete


def test_vspec_fuzz_writes_the_shrunk_finding_within_its_margin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from vspec.cli import main

    monkeypatch.setattr(Statement, "discard", Statement.commit)  # partial gangs get bound
    space = tmp_path / "space.yaml"
    space.write_text(yaml.safe_dump({"scheduler": GANG, "maxCycles": 1}), encoding="utf-8")
    out = tmp_path / "out"
    args = ["fuzz", "--space", str(space), "--seconds", "8", "--seed", "3", "--first"]
    start = time.perf_counter()
    status = main([*args, "--out", str(out), "--database", str(tmp_path / "db")])

    assert time.perf_counter() - start < 8 + 5 + 2, "the budget, the shrink margin, start-up"
    assert status == 1
    [path] = out.iterdir()
    [line] = [x for x in capsys.readouterr().out.splitlines() if str(path) in x]
    shrunk = re.fullmatch(
        r"  gang-atomicity: \S+ \(shrunk to (\d) node\(s\), (\d) pod\(s\) "
        r"\(Hypothesis: (\d+) node\(s\), (\d+) pod\(s\)\) in [\d.]+s\)",
        line,
    )
    assert shrunk is not None, line
    nodes, pods, hypothesis_nodes, hypothesis_pods = map(int, shrunk.groups())
    # A gang of two on one node, one of them bound, is the least that breaks atomicity;
    # a third pod may be what keeps the node full (its requests are not shrunk).
    assert nodes == 1 and 2 <= pods <= 3
    assert nodes <= hypothesis_nodes and pods <= hypothesis_pods
    [spec] = load_file(path).specs
    assert (len(spec.cluster.nodes), len(spec.cluster.pods)) == (nodes, pods)
    assert reproduces(path, get_engine())


def test_a_shrunk_spec_that_passes_under_vspec_run_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vspec.fuzz import runner as fuzz

    monkeypatch.setattr(Statement, "discard", Statement.commit)  # partial gangs get bound
    monkeypatch.setattr(fuzz, "reproduces", lambda path, engine: False)
    monkeypatch.setattr(fuzz, "HYPOTHESIS_SHRINK_SHARE", 0.0)  # leave vspec.fuzz.shrink work
    space = fuzz.FuzzSpace(ConfSpace(fixed=GANG), ClusterBounds(max_nodes=3, max_jobs=4))
    fuzzer = fuzz.Fuzzer(space, get_engine(), tmp_path, None, None, shrink_seconds=2, first=True)
    report = fuzzer.run(seconds=10, examples=None, seed_value=3)

    shrunk = report.shrinks["gang-atomicity"]
    assert shrunk.after == shrunk.before and shrunk.edits == 0
    assert "as Hypothesis left it" in shrunk.describe()
    [path] = tmp_path.iterdir()  # the smaller spec's file is gone
    [spec] = load_file(path).specs
    assert (len(spec.cluster.nodes), len(spec.cluster.pods)) == shrunk.before
