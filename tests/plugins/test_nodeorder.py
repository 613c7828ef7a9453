"""nodeorder: Kubernetes scores weighted as Volcano weighs them, per node and in batch."""

from __future__ import annotations

import random
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import NOW, node, pod, pod_group, queue, session, task
from vspec.api.types import TaskStatus
from vspec.framework.cache import SchedulerCache
from vspec.framework.framework import close_session, open_session
from vspec.framework.log import Klog
from vspec.k8s.scores import ScoreError
from vspec.model.conf import SchedulerOptions, load_conf
from vspec.model.corev1 import Taint, parse_affinity, parse_topology_spread_constraint
from vspec.model.objects import Cluster
from vspec.plugins.nodeorder import NodeOrderPlugin
from vspec.util.scheduler_helper import prioritize_nodes

NODEORDER: dict[str, Any] = {"name": "nodeorder", "enableNodeOrder": True}
PREDICATES: dict[str, Any] = {"name": "predicates", "enablePredicate": True}


def _cluster(*pods: Any, nodes: list[Any] | None = None) -> Cluster:
    return Cluster(
        nodes=nodes
        or [
            node("n1", {"cpu": 2, "memory": "4Gi", "pods": 10}),
            node("n2", {"cpu": 4, "memory": "8Gi", "pods": 10}),
        ],
        queues=[queue("c1")],
        pod_groups=[pod_group("c1", "pg1", "c1", min_member=1, phase="Inqueue")],
        pods=list(pods) or [pod("c1", "p1", "pg1", {"cpu": 1, "memory": "1G"})],
    )


def _with(arguments: dict[str, Any]) -> dict[str, Any]:
    return {**NODEORDER, "arguments": arguments}


def test_default_weights_and_volcanos_log_lines() -> None:
    ssn = session(_cluster(), [NODEORDER], verbosity=5)
    t = task(ssn, "c1/p1")
    # n1: LeastAllocated (50*50 + 76*50)/100 = 63, Balanced int((1 - |0.5-0.2328|/2)*100) = 86.
    assert ssn.node_order_fn(t, ssn.nodes["n1"]) == 149.0
    assert ssn.node_order_fn(t, ssn.nodes["n2"]) == 174.0
    assert ssn.batch_node_order_fn(t, ssn.node_list) == {"n1": 300.0, "n2": 300.0}
    texts = ssn.log.texts()
    assert "Node: n1, task<c1/p1> Least Request weight 1, score: 63.000000" in texts
    assert "Nodeorder Total Score for task<c1/p1> on node n1 is: 149.000000" in texts
    assert "taint toleration Score for task c1/p1 is: map[n1:300 n2:300]" in texts
    assert "Batch Total Score for task c1/p1 is: map[n1:300 n2:300]" in texts
    assert not any(line.startswith("inter pod affinity Score") for line in texts)


def test_weights_from_arguments_and_zero_weight_skips() -> None:
    args = {
        "leastrequested.weight": 0,
        "mostrequested.weight": 2,
        "balancedresource.weight": 0,
        "imagelocality.weight": 0,
        "nodeaffinity.weight": 1.5,  # not an integer: refused, default kept
    }
    ssn = session(_cluster(), [_with(args)], verbosity=5)
    t = task(ssn, "c1/p1")
    # MostAllocated on n1: cpu 50, memory 1e9*100/4Gi = 23 -> 36, times 2.
    assert ssn.node_order_fn(t, ssn.nodes["n1"]) == 72.0
    texts = ssn.log.texts()
    assert not any("Least Request" in line for line in texts)
    assert "Could not parse argument: 1.5 for key nodeaffinity.weight to int" in texts


def test_node_affinity_is_the_raw_preferred_weight_sum() -> None:
    p = pod("c1", "p1", "pg1", {"cpu": 1, "memory": "1G"})
    p.affinity = parse_affinity(
        {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 30,
                        "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]},
                    },
                    {
                        "weight": 5,
                        "preference": {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                            ]
                        },
                    },
                ]
            }
        }
    )
    nodes = [
        node("n1", {"cpu": 4, "memory": "8Gi", "pods": 10}, labels={"ssd": "1"}),
        node("n2", {"cpu": 4, "memory": "8Gi", "pods": 10}),
    ]
    ssn = session(
        _cluster(p, nodes=nodes),
        [_with({"leastrequested.weight": 0, "balancedresource.weight": 0})],
    )
    t = task(ssn, "c1/p1")
    assert ssn.node_order_fn(t, ssn.nodes["n1"]) == 70.0  # (30 + 5) x weight 2
    assert ssn.node_order_fn(t, ssn.nodes["n2"]) == 0.0


def test_unparsable_preferred_affinity_fails_the_node_with_a_warning() -> None:
    p = pod("c1", "p1", "pg1", {"cpu": 1})
    p.affinity = parse_affinity(
        {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]
                        },
                    }
                ]
            }
        }
    )
    ssn = session(_cluster(p), [NODEORDER])
    with pytest.raises(ScoreError):
        ssn.node_order_fn(task(ssn, "c1/p1"), ssn.nodes["n1"])
    assert any(
        line.startswith("Node: n1, Calculate Node Affinity Priority Failed because of Error:")
        for line in ssn.log.texts()
    )


def test_prefer_no_schedule_taints_are_normalised_in_reverse() -> None:
    nodes = [
        node("n1", {"cpu": 4, "memory": "8Gi", "pods": 10}),
        node("n2", {"cpu": 4, "memory": "8Gi", "pods": 10}),
        node("n3", {"cpu": 4, "memory": "8Gi", "pods": 10}),
    ]
    nodes[1].taints = [Taint("a", "", "PreferNoSchedule")]
    nodes[2].taints = [Taint("a", "", "PreferNoSchedule"), Taint("b", "", "PreferNoSchedule")]
    ssn = session(_cluster(nodes=nodes), [NODEORDER])
    scores = ssn.batch_node_order_fn(task(ssn, "c1/p1"), ssn.node_list)
    assert scores == {"n1": 300.0, "n2": 150.0, "n3": 0.0}


def test_inter_pod_affinity_batch_score_is_min_max_normalised() -> None:
    db = pod("c1", "db", "pg1", {"cpu": 1}, phase="Running", node_name="n1", labels={"app": "db"})
    web = pod("c1", "web", "pg1", {"cpu": 1})
    web.affinity = parse_affinity(
        {
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 7,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": "db"}},
                            "topologyKey": "zone",
                        },
                    }
                ]
            }
        }
    )
    nodes = [
        node("n1", {"cpu": 4, "memory": "8Gi", "pods": 10}, labels={"zone": "a"}),
        node("n2", {"cpu": 4, "memory": "8Gi", "pods": 10}, labels={"zone": "a"}),
        node("n3", {"cpu": 4, "memory": "8Gi", "pods": 10}, labels={"zone": "b"}),
    ]
    ssn = session(_cluster(db, web, nodes=nodes), [NODEORDER])
    scores = ssn.batch_node_order_fn(task(ssn, "c1/web"), ssn.node_list)
    # 100 x podaffinity weight 2 for zone a, 0 for zone b; plus 300 from taints.
    assert scores == {"n1": 500.0, "n2": 500.0, "n3": 300.0}
    assert "inter pod affinity Score for task c1/web is: map[n1:200 n2:200 n3:0]" in ssn.log.texts()


def test_topology_spread_batch_score() -> None:
    running = [
        pod("c1", f"r{i}", "pg1", {"cpu": 1}, phase="Running", node_name="n1", labels={"app": "s"})
        for i in range(2)
    ]
    new = pod("c1", "new", "pg1", {"cpu": 1}, labels={"app": "s"})
    new.topology_spread_constraints = [
        parse_topology_spread_constraint(
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "s"}},
            }
        )
    ]
    nodes = [
        node("n1", {"cpu": 4, "memory": "8Gi", "pods": 10}, labels={"zone": "a"}),
        node("n2", {"cpu": 4, "memory": "8Gi", "pods": 10}, labels={"zone": "b"}),
    ]
    ssn = session(_cluster(*running, new, nodes=nodes), [NODEORDER])
    scores = ssn.batch_node_order_fn(task(ssn, "c1/new"), ssn.node_list)
    # n1: round(2 log 4) = 3 -> 100*(3+0-3)/3 = 0; n2: 0 -> 100; times weight 2, plus 300.
    assert scores == {"n1": 300.0, "n2": 500.0}


def test_scores_follow_allocations_only_with_the_predicates_plugin() -> None:
    pods = [pod("c1", f"p{i}", "pg1", {"cpu": 1, "memory": "1Gi"}) for i in range(2)]
    nodes = [node("n1", {"cpu": 4, "memory": "8Gi", "pods": 10})]
    for tiers, expected in (([NODEORDER, PREDICATES], True), ([NODEORDER], False)):
        ssn = session(_cluster(*pods, nodes=nodes), tiers)
        first, second = task(ssn, "c1/p0"), task(ssn, "c1/p1")
        before = ssn.node_order_fn(second, ssn.nodes["n1"])
        ssn.statement().allocate(first, ssn.nodes["n1"])
        after = ssn.node_order_fn(second, ssn.nodes["n1"])
        assert (after < before) is expected


def test_arguments_are_documented_with_volcanos_defaults() -> None:
    specs = {a.name: a.default for a in NodeOrderPlugin.arguments_spec}
    assert specs == {
        "leastrequested.weight": "1",
        "mostrequested.weight": "0",
        "nodeaffinity.weight": "2",
        "podaffinity.weight": "2",
        "balancedresource.weight": "1",
        "tainttoleration.weight": "3",
        "imagelocality.weight": "1",
        "podtopologyspread.weight": "2",
    }


_IMAGES = ("a:1", "b:1", "c:1")
_MB = 1024 * 1024


def _imaged(held: list[list[str]]) -> Cluster:
    """Three nodes holding the images ``held`` (300 MB each) and two pending pods that
    ask for images (one each, for two containers)."""
    pods = [
        pod(
            "c1",
            f"p{i}",
            "pg1",
            containers=[
                {"image": image, "resources": {"requests": {"cpu": "500m"}}}
                for image in (_IMAGES[i], _IMAGES[2])
            ],
        )
        for i in range(2)
    ]
    nodes = [
        node(f"n{i}", images=[([image], 300 * _MB) for image in images])
        for i, images in enumerate(held)
    ]
    return _cluster(*pods, nodes=nodes)


@settings(deadline=None)
@given(
    held=st.lists(st.lists(st.sampled_from(_IMAGES), unique=True), min_size=3, max_size=3),
    changes=st.lists(
        st.tuples(st.integers(0, 2), st.lists(st.sampled_from(_IMAGES), unique=True)),
        max_size=4,
    ),
)
def test_row_plans_kept_over_sessions_follow_the_nodes(
    held: list[list[str]], changes: list[tuple[int, list[str]]]
) -> None:
    """The row path's plans and node-fixed scores (image locality) are kept from session
    to session while the node map holds the same Nodes: over drawn sessions, each after
    a node's images changed (another Node) or none did, every pending task's score on
    every node read row by row is the per-node one."""
    import numpy as np

    from vspec.framework import columnar, columns

    conf = load_conf(
        {"actions": "", "tiers": [{"plugins": [_with({"imagelocality.weight": 3})]}]},
        default_plugin_flags=False,
    )
    log = Klog(0)
    cache = SchedulerCache(_imaged(held), SchedulerOptions(), log)
    with (
        mock.patch.object(columnar, "COLUMNAR_MIN_NODES", 0),
        mock.patch.object(columns, "FEW_ROWS", 1000),
    ):
        for step, change in enumerate([None, *changes]):
            if change is not None:
                held = [list(change[1]) if i == change[0] else h for i, h in enumerate(held)]
                cache.update(_imaged(held))
            ssn = open_session(cache, conf, log=log, rng=random.Random(0), now=NOW, uid=f"{step}")
            cols = columnar.session_columns(ssn)
            assert cols is not None
            every = np.arange(cols.size)
            for job in ssn.jobs.values():
                for pending in job.tasks_in(TaskStatus.Pending):
                    scores = columnar.scores(ssn, pending, cols, every)
                    assert scores is not None
                    by_node = {
                        n.name: s
                        for s, ns in prioritize_nodes(ssn, pending, cols.nodes).items()
                        for n in ns
                    }
                    assert [float(s) for s in scores] == [by_node[n] for n in cols.names]
            close_session(ssn)
