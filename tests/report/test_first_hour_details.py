"""Small but visible: explain names the victims evicted (not only those permitted), the
report's Why keeps the cycle that preempted, its charts never say "No data" over an
empty frame nor draw a bar past 100%, one colour means one thing per chart family, it
expands and collapses everything at once, and pytest names an invalid spec by its name."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vspec.cli import main
from vspec.explain.records import ClusterState, NodeState, PodBar, QueueState, ResourceShare
from vspec.explain.run import Selection, explain_spec
from vspec.explain.text import render
from vspec.harness.loader import load_file
from vspec.report.charts import nodes_chart, queues_chart

REPO = Path(__file__).resolve().parents[2]
PREEMPT = REPO / "specs" / "first" / "priority-preempts-in-one-queue.yaml"


def test_explain_names_the_evicted_victims() -> None:
    [spec] = load_file(PREEMPT).specs
    explanation = explain_spec(spec, Selection(task="team/urgent-w-0", cycle=0))
    [te] = explanation.tasks
    [search] = [v for a in te.attempts for v in a.victims]
    assert len(search.victims) == 2  # gang permits two of batch's four
    assert len(search.evicted) == 1  # one 1-cpu pod makes room for one 1-cpu task
    assert search.evicted[0] in search.victims
    text = render(explanation)
    assert f"evicted [{search.evicted[0]}]" in text
    assert f"preempt evicted there: {search.evicted[0]}; of the permitted" in te.summary


def test_the_reports_why_keeps_the_cycle_that_preempted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(PREEMPT.read_text().replace("evictCount: 2", "evictCount: 3"))
    report = tmp_path / "r.html"
    assert main(["run", str(spec), "--html", str(report)]) == 1
    html = report.read_text()
    assert "team/urgent-w-0  cycle 0  Pipelined on n1" in html
    assert "team/urgent-w-0  cycle 1  Binding on n1" in html
    assert '<button type="button" data-open="1">expand all</button>' in html
    assert "document.querySelectorAll('details').forEach" in html


def _state(pods: list[PodBar]) -> ClusterState:
    return ClusterState(0, nodes=[NodeState("n1", {"cpu": 4.0}, pods)])


def test_an_empty_cluster_draws_no_chart() -> None:
    assert nodes_chart(_state([])) is None


def test_a_pipelined_pod_is_drawn_within_the_nodes_allocatable() -> None:
    pods = [
        PodBar("a/run", "a/run", "Running", {"cpu": 3.0}),
        PodBar("a/gone", "a/gone", "Releasing", {"cpu": 1.0}),
        PodBar("b/w", "b/w", "Pipelined", {"cpu": 2.0}),  # waits for a/gone's cpu
    ]
    svg = nodes_chart(_state(pods))
    assert svg is not None
    # pygal writes each bar's value in its tooltip text: 75 + 25, then 0 left for b/w
    values = [float(v) for v in re.findall(r'<desc class="value">([\d.]+)</desc>', svg)]
    assert values and sum(values) <= 100.0 + 1e-9
    assert "b/w (pipelined)" not in svg


def test_the_queue_chart_uses_colours_the_node_chart_gives_no_job() -> None:
    node_svg = nodes_chart(_state([PodBar("a/p", "a/j", "Running", {"cpu": 1.0})]))
    share = ResourceShare("cpu", 2.0, 1.0, None, None, 0.0, 2.0, False)
    queue_svg = queues_chart(ClusterState(0, queues=[QueueState("q", "proportion", 0.5, [share])]))
    assert node_svg is not None and queue_svg is not None
    job_colours = set(re.findall(r"color-0[^{]*\{[^}]*?(#[0-9a-fA-F]{6})", node_svg))
    queue_colours = set(re.findall(r"color-[01][^{]*\{[^}]*?(#[0-9a-fA-F]{6})", queue_svg))
    assert queue_colours and not (queue_colours & job_colours)


def test_pytest_names_an_invalid_spec_by_its_name(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "name: good\ncluster: {nodes: [{name: n1}]}\n---\nname: the broken one\n"
        "cluster:\n  nodez: []\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "s.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert "FAILED s.yaml::the broken one" in done.stdout, done.stdout
    assert "invalid spec (line" not in done.stdout
