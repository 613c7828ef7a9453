"""Probes read the session as allocate would: gated functions contribute nothing."""

from __future__ import annotations

from pathlib import Path

from vspec.framework.scheduler import simulate
from vspec.harness.loader import load_file

SPEC = """
name: binpack's score only counts where enableNodeOrder is on
scheduler:
  actions: ""
  defaultPluginFlags: false
  tiers:
  - plugins:
    - {{name: binpack, enableNodeOrder: {enabled}}}
cluster:
  nodes:
  - {{name: n1, allocatable: {{cpu: 4, memory: 8Gi}}}}
  pods:
  - {{name: p1, requests: {{cpu: 1}}}}
probes:
- task: default/p1
  pluginScores: {{binpack: {{n1: {score}}}}}
  scores: {{n1: {score}}}
"""


def _failures(tmp_path: Path, enabled: str, score: float) -> list[str]:
    path = tmp_path / f"{enabled}.yaml"
    path.write_text(SPEC.format(enabled=enabled, score=score))
    [spec] = load_file(path).specs
    result = simulate(spec.scheduler, spec.cluster, probes=spec.probes)
    return [f.message for f in result.probe_failures]


def test_plugin_scores_follow_the_enable_flag(tmp_path: Path) -> None:
    # Only cpu has a binpack weight (pods has none): 1000 / 4000 * 100.
    assert _failures(tmp_path, "true", 25) == []
    assert _failures(tmp_path, "false", 0) == []
    assert _failures(tmp_path, "false", 25) != []


TWICE = """
name: binpack listed in two tiers counts twice, in its share as in the total
scheduler:
  actions: ""
  tiers:
  - plugins: [{name: binpack}]
  - plugins: [{name: binpack}, {name: nodeorder, enableNodeOrder: false}]
cluster:
  nodes:
  - {name: n1, allocatable: {cpu: 4, memory: 8Gi}}
  pods:
  - {name: p1, requests: {cpu: 1}}
probes:
- task: default/p1
  pluginScores: {binpack: {n1: 50}}
  scores: {n1: 50}
"""


def test_a_plugin_listed_twice_shares_what_the_total_counts(tmp_path: Path) -> None:
    # Volcano calls the plugin's node-order function once per listing: 2 x 25.
    path = tmp_path / "twice.yaml"
    path.write_text(TWICE)
    [spec] = load_file(path).specs
    result = simulate(spec.scheduler, spec.cluster, probes=spec.probes)
    assert [f.message for f in result.probe_failures] == []
