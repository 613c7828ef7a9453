"""The example plugin examples/plugins/dedicated_nodes.py on drawn clusters: a task never
binds to a node dedicated to a team its job did not ask for, whatever the cluster."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vspec.framework.scheduler import simulate
from vspec.fuzz.strategies import ClusterBounds, clusters
from vspec.harness.plugin_dirs import load_plugins_dirs
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "plugins"
LABEL = "example.vspec/dedicated"  # the plugin's node label and pod group annotation
TEAMS = st.sampled_from(["", "ml", "web"])  # "" leaves the node or job alone

CONF = load_conf(
    {
        "actions": "enqueue, allocate, backfill",
        "tiers": [
            {"plugins": [{"name": "priority"}, {"name": "gang"}]},
            {
                "plugins": [
                    {"name": "drf"},
                    {"name": "predicates"},
                    {"name": "proportion"},
                    {"name": "nodeorder"},
                    {"name": "dedicated-nodes"},
                ]
            },
        ],
    }
)


@pytest.fixture(scope="module", autouse=True)
def example_plugins(module_registry: None) -> None:
    load_plugins_dirs([EXAMPLES], origin="examples")


@st.composite
def dedicated_clusters(draw: st.DrawFn) -> Cluster:
    """A drawn cluster whose nodes and pod groups are each given a team, or none."""
    cluster = draw(clusters(ClusterBounds(max_nodes=4, max_jobs=5)))
    for node in cluster.nodes:
        team = draw(TEAMS)
        if team:
            node.meta.labels[LABEL] = team
    for pg in cluster.pod_groups:
        team = draw(TEAMS)
        if team:
            pg.meta.annotations[LABEL] = team
    return cluster


@given(dedicated_clusters(), st.integers(0, 3))
def test_no_task_binds_to_a_node_of_another_team(cluster: Cluster, seed: int) -> None:
    node_team = {n.meta.name: n.meta.labels.get(LABEL, "") for n in cluster.nodes}
    job_team = {pg.meta.key: pg.meta.annotations.get(LABEL, "") for pg in cluster.pod_groups}
    pod_job = {p.meta.key: p.job_id for p in cluster.pods}
    result = simulate(CONF, cluster, seed=seed)
    for bind in result.binds:
        team = node_team[bind.node]
        assert team in ("", job_team[pod_job[bind.task]]), bind
