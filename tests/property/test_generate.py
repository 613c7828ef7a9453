"""The ``cluster.generate`` generator: vocabulary, determinism, placement, errors, scale."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import jsonschema
import pytest

from vspec.errors import SpecError
from vspec.harness.generate import GenerateError, generate_cluster, generate_schema, resolve
from vspec.model.objects import GROUP_NAME_ANNOTATION, TASK_SPEC_KEY


def test_forms_resolve_per_object() -> None:
    import random

    rng = random.Random(1)
    assert [resolve({"cycle": ["a", "b"]}, rng, i) for i in range(4)] == ["a", "b", "a", "b"]
    assert {resolve({"range": [2, 3]}, rng, 0) for _ in range(50)} == {2, 3}
    assert {resolve({"choice": ["x", "y"]}, rng, 0) for _ in range(50)} == {"x", "y"}
    nested = resolve({"zone": {"cycle": ["z0", {"choice": ["z1"]}]}, "k": "v"}, rng, 1)
    assert nested == {"zone": "z1", "k": "v"}
    fired = [
        resolve({"labels": {"fraction": 0.5, "value": {"a": "b"}}}, rng, 0) for _ in range(200)
    ]
    assert {str(f) for f in fired} == {"{}", "{'labels': {'a': 'b'}}"}


def test_nodes_queues_and_jobs_follow_the_builders_defaults() -> None:
    cluster = generate_cluster(
        {
            "priorityClasses": [{"name": "high", "value": 10}],
            "queues": [{"count": 2, "weight": {"cycle": [1, 3]}, "capability": {"cpu": 8}}],
            "nodes": [
                {
                    "count": 2,
                    "allocatable": {"cpu": 4, "memory": "8Gi"},
                    "labels": {"zone": {"cycle": ["a", "b"]}},
                },
                {
                    "count": 1,
                    "name": "gpu",
                    "allocatable": {"nvidia.com/gpu": 2},
                    "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
                },
            ],
            "jobs": [
                {
                    "count": 3,
                    "namespace": "ns",
                    "priorityClassName": "high",
                    "minResources": True,
                    "tasks": [
                        {
                            "name": "ps",
                            "replicas": 1,
                            "requests": {"cpu": "500m"},
                            "minAvailable": 1,
                        },
                        {"name": "worker", "replicas": 2, "requests": {"cpu": 1}, "priority": 7},
                    ],
                }
            ],
        },
        seed=0,
    )
    assert [n.meta.name for n in cluster.nodes] == ["n0", "n1", "gpu0"]
    assert [n.meta.labels for n in cluster.nodes[:2]] == [{"zone": "a"}, {"zone": "b"}]
    assert cluster.nodes[0].allocatable == {
        "cpu": Fraction(4),
        "memory": Fraction(8 * 2**30),
        "pods": Fraction(110),
    }
    assert cluster.nodes[2].taints[0].key == "k"
    assert [(q.meta.name, q.weight) for q in cluster.queues] == [("q0", 1), ("q1", 3)]
    assert [(pg.meta.key, pg.queue, pg.min_member) for pg in cluster.pod_groups] == [
        ("ns/job0", "q0", 3),
        ("ns/job1", "q1", 3),
        ("ns/job2", "q0", 3),
    ]
    pg = cluster.pod_groups[0]
    assert pg.priority_class_name == "high" and pg.min_task_member == {"ps": 1}
    assert pg.min_resources == {"cpu": Fraction(5, 2)}
    pod = cluster.pods[1]
    assert pod.meta.name == "job0-worker-0" and pod.meta.uid == "ns-job0-worker-0"
    assert pod.meta.labels[TASK_SPEC_KEY] == "worker"
    assert pod.meta.annotations[GROUP_NAME_ANNOTATION] == "job0"
    assert pod.priority == 7 and pod.phase == "Pending" and not pod.node_name


def test_running_jobs_are_placed_whole_where_they_fit() -> None:
    params: dict[str, Any] = {
        "nodes": [
            {"count": 1, "allocatable": {"cpu": 2}},
            {
                "count": 1,
                "name": "t",
                "allocatable": {"cpu": 100},
                "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
            },
        ],
        "jobs": [{"count": 2, "running": 1.0, "tasks": [{"replicas": 2, "requests": {"cpu": 1}}]}],
    }
    cluster = generate_cluster(params, seed=0)
    placed = [(p.meta.name, p.node_name, p.phase) for p in cluster.pods]
    # The first gang fills n0; the second fits nowhere it may go (t is tainted): pending.
    assert placed == [
        ("job0-task-0", "n0", "Running"),
        ("job0-task-1", "n0", "Running"),
        ("job1-task-0", "", "Pending"),
        ("job1-task-1", "", "Pending"),
    ]
    assert [pg.phase for pg in cluster.pod_groups] == ["Running", "Pending"]


def test_best_effort_fraction_drops_requests() -> None:
    params = {
        "nodes": [{"count": 1}],
        "jobs": [{"count": 40, "tasks": [{"requests": {"cpu": 1}, "bestEffort": 0.5}]}],
    }
    cluster = generate_cluster(params, seed=3)
    best_effort = sum(1 for p in cluster.pods if not p.containers[0].requests)
    assert 5 < best_effort < 35


def test_same_seed_same_cluster_other_seed_other_cluster() -> None:
    params = {
        "nodes": [{"count": 20, "labels": {"zone": {"choice": ["a", "b", "c"]}}}],
        "jobs": [{"count": 20, "running": 0.5, "tasks": [{"replicas": {"range": [1, 5]}}]}],
    }
    assert generate_cluster(params, 1) == generate_cluster(params, 1)
    assert generate_cluster(params, 1) != generate_cluster(params, 2)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"nodes": [{"allocatable": {"cpu": 1}}]},
            "cluster.generate.nodes[0]: 'count' is a required property",
        ),
        ({"nodez": []}, "Additional properties are not allowed ('nodez' was unexpected)"),
        (
            {"nodes": [{"count": 1, "allocatable": {"cpu": "lots"}}]},
            "'lots' is not a Kubernetes quantity",
        ),
        (
            {"jobs": [{"count": 1, "running": 2}]},
            "cluster.generate.jobs[0].running: 2 is greater than",
        ),
    ],
)
def test_malformed_parameters_name_the_key(params: dict[str, Any], message: str) -> None:
    with pytest.raises(GenerateError) as err:
        generate_cluster(params, seed=0)
    assert isinstance(err.value, SpecError)
    assert message in str(err.value)


def test_schema_is_self_contained() -> None:
    schema = generate_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "$ref" not in str(schema)


FIVE_THOUSAND_NODES: dict[str, Any] = {
    "queues": [{"count": 4}],
    "nodes": [
        {
            "count": 5000,
            "allocatable": {"cpu": 16, "memory": "64Gi"},
            "labels": {"zone": {"cycle": ["a", "b"]}},
        }
    ],
    "jobs": [
        {
            "count": 5000,
            "running": 0.2,
            "minAvailable": {"choice": ["all", 1]},
            "tasks": [{"name": "w", "replicas": 10, "requests": {"cpu": {"choice": [1, 2]}}}],
        }
    ],
}


def test_five_thousand_nodes_fifty_thousand_pods() -> None:
    """Its CPU budget is benchmarks/test_bench.py's."""
    cluster = generate_cluster(FIVE_THOUSAND_NODES, seed=7)
    assert (len(cluster.nodes), len(cluster.pods)) == (5000, 50000)
    assert sum(1 for p in cluster.pods if p.node_name) == 10000
