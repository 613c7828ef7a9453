"""Large clusters from the ``cluster.generate`` key's vocabulary (docs/generate.md):
:func:`generate_params` draws the parameters and :func:`generated_clusters` expands them
with the loader's own generator (:mod:`vspec.harness.generate`), for properties that
need size more than shrinkability.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from vspec.fuzz.strategies.cluster import PRIORITY_CLASSES, ZONES
from vspec.harness.generate import generate_cluster
from vspec.model.objects import (
    Cluster,
)


def generate_params(max_nodes: int = 50, max_jobs: int = 50) -> st.SearchStrategy[dict[str, Any]]:
    """Parameters in the ``cluster.generate`` vocabulary (docs/generate.md)."""
    node_shape = st.fixed_dictionaries(
        {
            "count": st.integers(1, max_nodes),
            "allocatable": st.fixed_dictionaries(
                {"cpu": st.sampled_from([2, 4, 16]), "memory": st.sampled_from(["4Gi", "64Gi"])}
            ),
            "labels": st.just({"zone": {"cycle": list(ZONES)}}),
        }
    )
    job = st.fixed_dictionaries(
        {
            "count": st.integers(0, max_jobs),
            "running": st.sampled_from([0.0, 0.2, 0.5]),
            "minAvailable": st.sampled_from(["all", 1, {"choice": ["all", 1]}]),
            "priorityClassName": st.just({"choice": ["high", "low"]}),
            "tasks": st.lists(
                st.fixed_dictionaries(
                    {
                        "name": st.sampled_from(["ps", "worker", "chief"]),
                        "replicas": st.integers(1, 4),
                        "requests": st.fixed_dictionaries(
                            {"cpu": st.sampled_from([1, "500m", {"choice": [1, 2]}])}
                        ),
                        "bestEffort": st.sampled_from([0.0, 0.3]),
                    }
                ),
                min_size=1,
                max_size=2,
                unique_by=lambda t: t["name"],
            ),
        }
    )
    return st.fixed_dictionaries(
        {
            "priorityClasses": st.just([{"name": n, "value": v} for n, v in PRIORITY_CLASSES]),
            "queues": st.lists(
                st.fixed_dictionaries({"count": st.integers(1, 3), "weight": st.integers(1, 4)}),
                min_size=1,
                max_size=1,
            ),
            "nodes": st.lists(node_shape, min_size=1, max_size=2),
            "jobs": st.lists(job, max_size=2),
        }
    )


def generated_clusters(max_nodes: int = 50, max_jobs: int = 50) -> st.SearchStrategy[Cluster]:
    """Clusters from the generator, for properties that need size more than shrinkability."""
    return st.builds(generate_cluster, generate_params(max_nodes, max_jobs), st.integers(0, 2**16))


# Allocate scores and filters whole columns of nodes from this many on
# (vspec.framework.columnar.COLUMNAR_MIN_NODES): a large cluster's code paths.
LARGE_NODES = (128, 144)


def large_clusters(max_jobs: int = 6) -> st.SearchStrategy[Cluster]:
    """Clusters just past the columnar threshold (:data:`LARGE_NODES`), of two node
    shapes, with a few jobs: where allocate's columnar scoring and filtering run."""
    shape = st.fixed_dictionaries(
        {
            "count": st.integers(LARGE_NODES[0] // 2, LARGE_NODES[1] // 2),
            "allocatable": st.fixed_dictionaries(
                {"cpu": st.sampled_from([2, 4]), "memory": st.sampled_from(["4Gi", "8Gi"])}
            ),
            "labels": st.just({"zone": {"cycle": list(ZONES)}}),
        }
    )
    params = generate_params(max_jobs=max_jobs).map(_drop_nodes)
    return st.builds(
        generate_cluster,
        st.builds(_with_nodes, params, st.lists(shape, min_size=2, max_size=2)),
        st.integers(0, 2**16),
    )


def _drop_nodes(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k != "nodes"}


def _with_nodes(params: dict[str, Any], nodes: list[dict[str, Any]]) -> dict[str, Any]:
    return {**params, "nodes": nodes}
