"""``vspec explain``: what it says about tasks, in text and JSON, on small specs whose
reasons are known by construction."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from vspec.cli import main
from vspec.explain.records import FORMAT, TaskExplanation
from vspec.explain.run import Selection, explain_spec
from vspec.harness.loader import load_file

CONF = """
scheduler:
  actions: "enqueue, allocate"
  tiers:
  - plugins: [{name: priority}, {name: gang}]
  - plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}]
"""

SPEC = (
    """
name: explained
"""
    + CONF
    + """
cluster:
  queues:
  - {name: default, weight: 1}
  - {name: small, weight: 1, capability: {cpu: 1}}
  nodes:
  - {name: n1, allocatable: {cpu: 2, memory: 4Gi}}
  - {name: n2, allocatable: {cpu: 2, memory: 4Gi}}
  - {name: n3, allocatable: {cpu: 8, memory: 4Gi}, taints: [{key: x, value: y, effect: NoSchedule}]}
  jobs:
  - name: solo
    minAvailable: 1
    tasks: [{name: t, replicas: 1, requests: {cpu: 1}}]
  - name: big
    minAvailable: 3
    tasks: [{name: w, replicas: 3, requests: {cpu: 1500m}}]
  - name: capped
    queue: small
    minAvailable: 1
    minResources: {cpu: 2}
    tasks: [{name: c, replicas: 1, requests: {cpu: 2}}]
expect:
  binds: {default/solo-t-0: n1}
"""
)


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "explained.yaml"
    path.write_text(textwrap.dedent(SPEC))
    return path


def _explain(path: Path, **selection: str) -> list[TaskExplanation]:
    spec = load_file(path).specs[0]
    explanation = explain_spec(spec, Selection(**selection))
    return explanation.tasks


def _task(tasks: list[TaskExplanation], key: str) -> TaskExplanation:
    return next(te for te in tasks if te.task == key)


def test_a_gang_that_cannot_fit_names_the_nodes_and_the_plugins(spec_file: Path) -> None:
    tasks = _explain(spec_file, job="default/big")
    assert {te.task for te in tasks} == {f"default/big-w-{i}" for i in range(3)}
    te = _task(tasks, "default/big-w-1")
    assert te.status == "Pending"
    assert te.gang is not None
    assert (te.gang.min_available, te.gang.is_ready, te.gang.valid) == (3, False, True)
    attempt = te.attempts[-1]
    rows = {row.node: row for row in attempt.nodes}
    taint = rows["n3"].checks[-1]
    assert (taint.plugin, taint.passed) == ("predicates", False)
    assert "untolerated taint" in taint.reasons[0]
    # The second worker reuses the first one's verdict (the role's error cache).
    assert taint.cached
    # n1 holds the solo task and the first big worker: the action's own check fails.
    own = [c for row in attempt.nodes for c in row.checks if c.plugin == "(allocate)"]
    assert own and all("Insufficient cpu" in c.reasons[0] for c in own)


def test_the_undone_placement_says_the_gang_was_not_ready(spec_file: Path) -> None:
    te = _task(_explain(spec_file, task="default/big-w-0"), "default/big-w-0")
    assert te.attempts[0].chosen is not None
    assert "then undid it: the job's gang is not ready" in te.summary
    assert "minAvailable 3, ready 0" in te.summary


def test_scores_per_plugin_add_up_and_ties_are_listed(spec_file: Path) -> None:
    te = _task(_explain(spec_file, task="default/solo-t-0"), "default/solo-t-0")
    assert te.status == "Binding" and te.node == "n1"
    attempt = te.attempts[0]
    scored = [row for row in attempt.nodes if row.total is not None]
    assert {row.node for row in scored} == {"n1", "n2"}
    for row in scored:
        assert row.total == pytest.approx(sum(row.scores.values()))
        assert {"nodeorder", "binpack"} <= set(row.scores)
    assert attempt.chosen == "n1" and attempt.tied == ["n1", "n2"]


def test_an_enqueue_rejection_names_the_voter_and_the_queue(spec_file: Path) -> None:
    te = _task(_explain(spec_file, task="default/capped-c-0"), "default/capped-c-0")
    assert te.attempts == []
    assert te.summary == "its job was not enqueued: proportion rejected it"
    assert te.gang is not None
    assert [(v.plugin, v.vote) for v in te.gang.votes["job_enqueueable"]] == [
        ("proportion", "reject")
    ]
    (queue,) = te.queues
    cpu = next(r for r in queue.resources if r.resource == "cpu")
    assert (queue.queue, queue.plugin, cpu.capability) == ("small", "proportion", 1.0)


def test_text_is_a_compact_table(spec_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(spec_file), "--task", "default/solo-t-0"]) == 0
    out = capsys.readouterr().out
    assert "why: allocate placed it on n1 (tied with n2" in out
    header = next(line for line in out.splitlines() if line.strip().startswith("node"))
    assert header.split() == [
        "node",
        "fits",
        "predicates",
        "nodeorder",
        "binpack",
        "nodeorder/batch",
        "total",
    ]
    assert "<- chosen" in out


def test_alike_nodes_share_a_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = "\n".join(f"  - {{name: n{i}, allocatable: {{cpu: 1}}}}" for i in range(50))
    path = tmp_path / "many.yaml"
    path.write_text(
        "name: many\n"
        + CONF
        + "cluster:\n  nodes:\n"
        + nodes
        + "\n  jobs:\n  - {name: j, minAvailable: 1, tasks: [{name: t, replicas: 1, "
        "requests: {cpu: 2}}]}\nexpect: {bindCount: 0}\n"
    )
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "why: no node fits: 50 Insufficient cpu" in out
    assert "n0, n1, n2 +47" in out
    assert len(out.splitlines()) < 20


def test_json_is_the_documented_format(spec_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(spec_file), "--format", "json", "--cycle", "0"]) == 0
    (document,) = json.loads(capsys.readouterr().out)
    assert document["format"] == FORMAT
    assert document["spec"] == "explained"
    keys = {te["task"] for te in document["tasks"]}
    assert "default/capped-c-0" in keys and "default/solo-t-0" in keys
    solo = next(te for te in document["tasks"] if te["task"] == "default/solo-t-0")
    node = solo["attempts"][0]["nodes"][0]
    assert set(node) == {"node", "fits", "checks", "scores", "total"}
    assert set(solo) >= {"status", "node", "summary", "gang", "queues", "attempts"}


def test_a_cycle_that_did_not_run_explains_nothing(
    spec_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", str(spec_file), "--cycle", "3"]) == 0
    assert "no task matches" in capsys.readouterr().out


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(tmp_path / "missing.yaml")]) == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncluster: {nodes: [{allocatable: {cpu: 1}}]}\n")
    assert main(["explain", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "missing.yaml: not a spec file" in err
    assert "bad.yaml:" in err


def test_vspec_run_points_to_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wrong.yaml"
    path.write_text(textwrap.dedent(SPEC).replace("default/solo-t-0: n1", "default/solo-t-0: n3"))
    assert main(["run", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"run `vspec explain {path} --task default/solo-t-0` for why" in out


def explain_overhead_spec(tmp_path: Path) -> Any:
    """1,000 nodes: benchmarks/test_bench.py times explain on it against the plain run."""
    path = tmp_path / "big.yaml"
    path.write_text(
        "name: big\n"
        + CONF
        + """
cluster:
  generate:
    nodes: [{count: 1000, allocatable: {cpu: 8, memory: 32Gi}}]
    jobs:
    - count: 100
      minAvailable: all
      running: 0.2
      tasks: [{name: w, replicas: 5, requests: {cpu: 2, memory: 4Gi}}]
expect: {}
"""
    )
    return load_file(path).specs[0]


def test_explaining_a_task_of_a_1000_node_spec(tmp_path: Path) -> None:
    """Every node Volcano's sampling examines is in the explanation (its CPU budget is
    benchmarks/test_bench.py's)."""
    spec = explain_overhead_spec(tmp_path)
    explanation = explain_spec(spec, Selection(task=some_task(spec)))
    assert len(explanation.tasks) == 1
    assert len(explanation.tasks[0].attempts[0].nodes) >= 400


def some_task(spec: object) -> str:
    pods = spec.cluster.pods  # type: ignore[attr-defined]
    return str(pods[len(pods) // 2].meta.key)


def test_a_run_that_panics_is_explained_up_to_the_panic(
    spec_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vspec.actions.allocate import Allocate
    from vspec.errors import EngineError

    def panic(*_args: object) -> None:
        raise EngineError("Volcano would panic here")

    monkeypatch.setattr(Allocate, "_place", staticmethod(panic))
    spec = load_file(spec_file).specs[0]
    explanation = explain_spec(spec, Selection())
    assert explanation.error is not None and "Volcano would panic here" in explanation.error
    # The first task allocate placed is where it panicked: still Pending, node chosen.
    (te,) = [te for te in explanation.tasks if te.attempts]
    assert te.status == "Pending" and te.attempts[0].chosen in te.attempts[0].feasible
    assert len(explanation.tasks) > 1  # the others are explained too
    assert main(["explain", str(spec_file)]) == 1
