"""A Volcano Job whose gang does not fit: its PodGroup stays Pending and the job
controller never creates its pods. explain, the failure text and the HTML report say
why (the enqueue decision), and what to change (`cycles`) when the pods come later."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.harness.test_loader import load_errors, load_one
from vspec.cli import main
from vspec.engines import get_engine
from vspec.explain.run import Selection, explain_spec
from vspec.explain.text import render
from vspec.harness.runner import run_spec


def vcjob(name: str, replicas: int, cpu: int) -> str:
    return f"""
  - apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata: {{name: {name}, namespace: ml}}
    spec:
      minAvailable: {replicas}
      tasks:
      - name: worker
        replicas: {replicas}
        template:
          spec:
            containers:
            - {{name: main, image: busybox, resources: {{requests: {{cpu: {cpu}}}}}}}"""


def spec_text(conf: str, cycles: int, expect: str) -> str:
    return (
        textwrap.dedent(f"""
        name: two Volcano Jobs
        cycles: {cycles}
        scheduler: {conf}
        cluster:
          nodes:
          - {{name: n1, allocatable: {{cpu: 4, memory: 8Gi}}}}
          jobs:""")
        + vcjob("small", 2, 1)
        + vcjob("big", 3, 2)
        + f"\nexpect:\n  {expect}\n"
    )


PROPORTION = (
    '{actions: "enqueue, allocate", tiers: [{plugins: [{name: gang}, {name: proportion}]}]}'
)
OVERCOMMIT = (
    '{actions: "enqueue, allocate", tiers: [{plugins: [{name: gang}, {name: overcommit}]}]}'
)


def test_explain_answers_for_a_pod_group_without_pods(tmp_path: Path) -> None:
    spec = load_one(tmp_path, spec_text(PROPORTION, 2, "bindCount: 2"))
    explanation = explain_spec(spec, Selection(job="ml/big"))
    assert [(je.job, je.cycle) for je in explanation.jobs] == [("ml/big", 0), ("ml/big", 1)]
    first = explanation.jobs[0]
    assert (first.phase, first.pods, first.min_member) == ("", 0, 3)
    assert first.min_resources == {"cpu": 6.0}
    assert [(v.plugin, v.vote) for v in first.enqueue] == [("proportion", "reject")]
    [room] = first.rooms
    assert (room.plugin, room.room["cpu"], room.short) == ("proportion", 4.0, ["cpu"])
    assert first.held_pods == ["ml/big-worker-0", "ml/big-worker-1", "ml/big-worker-2"]
    assert first.summary.startswith("enqueue kept it Pending: proportion rejected it")
    assert "do not exist yet" in first.summary
    # cycle 1: small was admitted and bound in cycle 0 and holds 2 of the queue's cpu
    assert explanation.jobs[1].rooms[0].held["cpu"] == 2.0
    text = render(explanation)
    assert "no task matches" not in text
    assert "pods not created yet: ml/big-worker-0" in text


def test_overcommit_shows_its_factor_and_the_clusters_idle(tmp_path: Path) -> None:
    spec = load_one(tmp_path, spec_text(OVERCOMMIT, 1, "bindCount: 0"))
    text = render(explain_spec(spec, Selection(job="ml/big")))
    assert "overcommit: the cluster: allocatable x overcommit-factor 1.2 - used" in text
    # 4 cpu x 1.2 < 6, before small (asked after big) holds any
    assert "room cpu 4.8, memory 9.6Gi; held 0; held + minResources does not fit in cpu" in text


def test_every_podless_job_is_explained_without_a_selection(tmp_path: Path) -> None:
    spec = load_one(tmp_path, spec_text(PROPORTION, 1, "bindCount: 0"))
    jobs = explain_spec(spec, Selection()).jobs
    assert sorted(je.job for je in jobs) == ["ml/big", "ml/small"]
    small = next(je for je in jobs if je.job == "ml/small")
    assert small.phase == "Inqueue"
    assert "exist from cycle 1 on" in small.summary


def test_a_failure_says_the_pods_come_later_and_which_cycles_to_give(tmp_path: Path) -> None:
    spec = load_one(tmp_path, spec_text(PROPORTION, 1, "bindCount: 2"))
    outcome = run_spec(spec, engine=get_engine())
    assert outcome.messages == ["bindCount: expected 2, got 0"]
    assert any("the pods of ml/small did not exist yet" in h for h in outcome.hints)
    assert any("give `cycles: 2`" in h for h in outcome.hints)
    assert any(
        h.startswith("ml/big has no pods: its PodGroup never left Pending") and "--job ml/big" in h
        for h in outcome.hints
    )


def test_the_report_shows_pending_pod_groups_without_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "s.yaml").write_text(spec_text(PROPORTION, 2, "bindCount: 5"))
    report = tmp_path / "r.html"
    assert main(["run", str(tmp_path / "s.yaml"), "--html", str(report)]) == 1
    html = report.read_text()
    assert "Pod groups without pods after cycle 1" in html
    assert "<li><b>ml/big</b>: pod group Pending</li>" in html
    assert "ml/big  cycle 1  pod group Pending, no pods" in html


COMPACT = """
name: a compact job with the controller's minResources
scheduler: {conf}
cluster:
  priorityClasses: [{{name: high, value: 100}}]
  nodes: [{{name: n1, allocatable: {{cpu: 4, memory: 8Gi}}}}]
  jobs:
  - name: big
    minAvailable: 3
    {key}
    tasks:
    - {{name: a, replicas: 2, requests: {{cpu: 1, memory: 1Gi}}}}
    - {{name: b, replicas: 2, requests: {{cpu: 2}}, priorityClassName: high}}
"""


def test_compact_jobs_take_the_controllers_min_resources_when_asked(tmp_path: Path) -> None:
    plain = load_one(tmp_path, COMPACT.format(conf=PROPORTION, key=""), "plain.yaml")
    assert plain.cluster.pod_groups[0].min_resources is None
    spec = load_one(tmp_path, COMPACT.format(conf=PROPORTION, key="controllerMinResources: true"))
    # the high tasks first (2 x 2 cpu), then one of the others
    min_resources = spec.cluster.pod_groups[0].min_resources
    assert min_resources is not None
    assert {k: float(v) for k, v in min_resources.items()} == {
        "cpu": 5.0,
        "memory": float(2**30),
        "pods": 3.0,
    }
    je = explain_spec(spec, Selection(job="default/big")).jobs[0]
    assert [v.vote for v in je.enqueue] == ["reject"]


def test_compact_min_resources_is_given_one_way(tmp_path: Path) -> None:
    key = "controllerMinResources: true\n    minResources: {cpu: 1}"
    errors = load_errors(tmp_path, COMPACT.format(conf=PROPORTION, key=key))
    assert any(
        "controllerMinResources computes minResources: give one of them" in e for e in errors
    )
