"""Issue 4's property: where priority decides preemption, no eviction takes a task of a
job that outranks every pending preemptor (the ``no-priority-inversion`` invariant).

The configuration is Volcano's ConfigMap shape with preempt and reclaim added and drf's
Preemptable switched off, so the first tier (priority, gang, conformance) decides victims.
With drf's Preemptable on, tier 2 can decide instead and the property does not hold in
Volcano v1.11 (see specs/findings/no-priority-inversion-drf-decides.yaml).
"""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st

from tests.builders import node, pod, pod_group
from vspec.engines import get_engine
from vspec.framework.scheduler import simulate
from vspec.invariants import check_invariants
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster, ObjectMeta, PriorityClass, Queue

PRIORITY_LED = load_conf(
    {
        "actions": "enqueue, allocate, preempt, reclaim, backfill",
        "tiers": [
            {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
            {
                "plugins": [
                    {"name": "drf", "enablePreemptable": False},
                    {"name": "predicates"},
                    {"name": "proportion"},
                    {"name": "nodeorder"},
                ]
            },
        ],
    }
)


CLASSES = ("low", "mid", "high")


@st.composite
def contended_clusters(draw: st.DrawFn) -> Cluster:
    """Nodes filled by running jobs of drawn priorities, and pending jobs of drawn
    priorities in the same queue: the situation in which preempt picks victims."""
    nodes = [
        node(f"n{i}", {"cpu": draw(st.integers(1, 3)), "memory": "8Gi", "pods": 110})
        for i in range(draw(st.integers(1, 3)))
    ]
    cluster = Cluster(
        nodes=nodes,
        queues=[Queue(ObjectMeta("q"))],
        priority_classes=[
            PriorityClass(ObjectMeta(n), v) for n, v in zip(CLASSES, (10, 100, 1000), strict=True)
        ],
    )
    for i, host in enumerate(nodes):
        name = f"run{i}"
        size = int(host.allocatable["cpu"])
        cls = draw(st.sampled_from(CLASSES))
        cluster.pod_groups.append(
            pod_group(
                "ns",
                name,
                "q",
                min_member=draw(st.integers(1, size)),
                phase="Running",
                priority_class=cls,
            )
        )
        cluster.pods.extend(
            pod("ns", f"{name}-{t}", name, {"cpu": 1}, node_name=host.meta.name)
            for t in range(size)
        )
    for j in range(draw(st.integers(1, 3))):
        name = f"new{j}"
        size = draw(st.integers(1, 2))
        cls = draw(st.sampled_from(CLASSES))
        cluster.pod_groups.append(
            pod_group("ns", name, "q", min_member=size, phase="Inqueue", priority_class=cls)
        )
        cluster.pods.extend(pod("ns", f"{name}-{t}", name, {"cpu": 1}) for t in range(size))
    return cluster


@given(contended_clusters(), st.integers(1, 2), st.integers(0, 9))
def test_priority_led_preemption_never_evicts_an_outranking_job(
    cluster: Cluster, cycles: int, seed: int
) -> None:
    result = simulate(PRIORITY_LED, cluster, seed=seed, cycles=cycles, verbosity=0)
    preempted = [e for e in result.evictions if e.reason == "preempt"]
    event(f"preempt evictions: {'some' if preempted else 'none'}")
    violations = check_invariants(
        PRIORITY_LED,
        cluster,
        result,
        engine=get_engine(),
        requested=["no-priority-inversion"],
        disabled=["deterministic"],
        seed=seed,
        cycles=cycles,
        verbosity=0,
    )
    assert [v for v in violations if "no-priority-inversion" in v] == []


def test_the_configuration_does_preempt() -> None:
    """Guards against a vacuous property: a full node, a higher-priority pending job."""
    cluster = Cluster(
        nodes=[node("n0", {"cpu": 2, "memory": "8Gi", "pods": 110})],
        queues=[Queue(ObjectMeta("q"))],
        priority_classes=[
            PriorityClass(ObjectMeta("low"), 10),
            PriorityClass(ObjectMeta("high"), 1000),
        ],
        pod_groups=[
            pod_group("ns", "old", "q", min_member=1, phase="Running", priority_class="low"),
            pod_group("ns", "new", "q", min_member=1, phase="Inqueue", priority_class="high"),
        ],
        pods=[
            pod("ns", "old-0", "old", {"cpu": 1}, node_name="n0"),
            pod("ns", "old-1", "old", {"cpu": 1}, node_name="n0"),
            pod("ns", "new-0", "new", {"cpu": 1}),
        ],
    )
    result = simulate(PRIORITY_LED, cluster, cycles=2, verbosity=0)
    assert [(e.task, e.reason) for e in result.evictions] == [("ns/old-0", "preempt")]
    assert [(b.task, b.node, b.cycle) for b in result.binds] == [("ns/new-0", "n0", 1)]
