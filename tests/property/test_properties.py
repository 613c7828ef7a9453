"""Property tests: the invariants hold on drawn clusters and configurations.

Example counts come from the Hypothesis profile (``dev``/``ci`` small, ``fuzz`` large);
see conftest.py.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vspec.api.resource import Resource
from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.framework.scheduler import simulate
from vspec.fuzz.runner import SEED_CONF, examine
from vspec.fuzz.strategies import (
    ClusterBounds,
    ConfSpace,
    GeneratedSpec,
    generate_params,
    generated_clusters,
    specs,
)
from vspec.harness.loader import load_file
from vspec.harness.yamlwrite import dump
from vspec.invariants.base import InvariantInputs, run_checks
from vspec.invariants.history import allocatable, cycles, dims, requests, taint_fails
from vspec.invariants.outside import pod_request
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.spec import Spec

REPO = Path(__file__).resolve().parents[2]
CORE_PLUGINS = (
    "priority",
    "gang",
    "conformance",
    "drf",
    "predicates",
    "proportion",
    "nodeorder",
    "binpack",
    "overcommit",
    "logprint",
)
CORE_ACTIONS = ("print", "enqueue", "allocate", "backfill")


@given(specs(ConfSpace(fixed=SEED_CONF)))
def test_seed_configuration_keeps_every_invariant(case: GeneratedSpec) -> None:
    assert examine(case, get_engine()) == {}


@given(specs(ConfSpace(actions=CORE_ACTIONS, plugins=CORE_PLUGINS), ClusterBounds(max_jobs=4)))
def test_core_configurations_keep_every_invariant(case: GeneratedSpec) -> None:
    assert examine(case, get_engine()) == {}


# Specs with preemptions for drf-victims-fair to weigh (it sums a preemptor's job's requests).
SHARED_REQUEST_SPECS = (
    "specs/preempt/high-priority-gang-preempts-low-priority.yaml",
    "specs/findings/no-priority-inversion-drf-decides.yaml",
)


@pytest.mark.parametrize("path", SHARED_REQUEST_SPECS)
def test_no_invariant_changes_the_shared_pod_requests(path: str) -> None:
    """The invariants share each pod's request (history.requests): one that changed it
    in place would skew every later check of the evaluation."""
    engine = get_engine()
    (spec,) = load_file(REPO / path).specs
    result = engine.simulate(spec.scheduler, spec.cluster, cycles=spec.cycles, now=spec.now)
    inputs = InvariantInputs(
        spec.scheduler, spec.cluster, 0, spec.now, spec.cycles, 3, engine=engine
    )
    shared = requests(inputs)
    pods = [p for view in cycles(inputs, result) for p in view.pods.values()]
    asked = [shared(p) for p in pods]  # each pod's request in the memo before any check
    # drf-victims-fair too, which these confs (drf in tier 2) are outside of.
    run_checks(inputs, result, requested=["drf-victims-fair"], disabled=["deterministic"])
    assert asked == [pod_request(p) for p in pods]
    assert all(shared(p) is r for p, r in zip(pods, asked, strict=True))


@given(generate_params(max_nodes=20, max_jobs=20), st.integers(0, 1000))
def test_generator_is_deterministic_and_never_overcommits(params: dict, seed: int) -> None:
    from vspec.harness.generate import generate_cluster

    cluster = generate_cluster(params, seed)
    assert cluster == generate_cluster(params, seed)
    nodes = {n.meta.name: n for n in cluster.nodes}
    used: dict[str, Resource] = {}
    for pod in cluster.pods:
        if pod.node_name:
            assert pod.phase == "Running"
            assert taint_fails(pod, nodes[pod.node_name]) is None
            used.setdefault(pod.node_name, Resource()).add(pod_request(pod))
    for name, total in used.items():
        limit = allocatable(nodes[name])
        assert all(total.get(d) <= limit.get(d) for d in dims(total))


@given(generated_clusters(max_nodes=5, max_jobs=5))
def test_generated_clusters_run(cluster: object) -> None:
    case = GeneratedSpec(dict(SEED_CONF), cluster)  # type: ignore[arg-type]
    assert examine(case, get_engine()) == {}


def outcome(conf: SchedulerConf, cluster: Cluster, spec: GeneratedSpec | Spec) -> object:
    """What a run shows: binds, evictions and logs, or the error it raised."""
    try:
        result = simulate(
            conf, cluster, seed=spec.seed, cycles=spec.cycles, verbosity=spec.verbosity
        )
    except VspecError as exc:
        return str(exc)
    return result.binds, result.evictions, [line.text for line in result.logs]


@given(specs())
def test_written_specs_load_back_to_the_same_run(
    tmp_path_factory: pytest.TempPathFactory, case: GeneratedSpec
) -> None:
    from vspec.harness.loader import load_file

    path = tmp_path_factory.mktemp("doc") / "spec.yaml"
    path.write_text(dump(case.document()), encoding="utf-8")
    [spec] = load_file(path).specs
    assert (spec.seed, spec.cycles, spec.verbosity) == (case.seed, case.cycles, case.verbosity)
    assert outcome(spec.scheduler, spec.cluster, spec) == outcome(case.conf, case.cluster, case)


def test_vgpu_slices_are_no_resources_of_the_invariants() -> None:
    # Volcano's IgnoredDevicesList: deviceshare accounts vGPU memory and cores card by
    # card, so a pod asking for them asks nothing of the node's resource vector.
    from vspec.model.corev1 import Container
    from vspec.model.objects import ObjectMeta, Pod

    asked = {
        "cpu": Fraction(1),
        "volcano.sh/vgpu-number": Fraction(1),
        "volcano.sh/vgpu-memory": Fraction(6000),
        "volcano.sh/vgpu-cores": Fraction(50),
    }
    pod = Pod(ObjectMeta("p", "ns"), containers=[Container("c", requests=asked, limits=asked)])
    request = pod_request(pod)
    assert request.milli_cpu == 1000
    assert set(request.scalars) == {"volcano.sh/vgpu-number", "pods"}
