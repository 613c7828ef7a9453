"""The shuffle action: every task the VictimTasks plugins pick among the Running tasks
is evicted at once."""

from __future__ import annotations

from tests.actions.preemption_fixtures import (
    PRIORITY_CLASSES,
    VICTIM_LABEL,
    conf,
    evicted,
    lines,
    run,
)
from tests.builders import cluster, node, pod, pod_group, queue
from vspec.model.objects import Cluster

SHUFFLE = "shuffle"
VICTIMS = {"name": "tpre-victims", "enabledVictim": True}
MARK = {VICTIM_LABEL: "true"}


def world() -> Cluster:
    return cluster(
        [node("n1", {"cpu": "4", "memory": "100Gi", "pods": "10"})],
        [
            pod("c1", "job-0", "job", {"cpu": "1", "memory": "1Gi"}, node_name="n1", labels=MARK),
            pod("c1", "job-1", "job", {"cpu": "1", "memory": "1Gi"}, node_name="n1"),
            pod(
                "c1",
                "job-2",
                "job",
                {"cpu": "1", "memory": "1Gi"},
                node_name="n1",
                labels=MARK,
                phase="Pending",
            ),  # Bound
            pod("c1", "job-3", "job", {"cpu": "1", "memory": "1Gi"}, node_name="n1", labels=MARK),
        ],
        [pod_group("c1", "job", "q1", min_member=1, phase="Running")],
        queues=[queue("q1")],
        classes=PRIORITY_CLASSES,
    )


def test_evicts_the_selected_running_tasks() -> None:
    result = run(conf(SHUFFLE, VICTIMS), world())
    # job-2 is Bound, not Running: it is never offered to the victim functions.
    assert evicted(result) == [("c1/job-0", "shuffle"), ("c1/job-3", "shuffle")]
    assert "pod job-0 from namespace c1 and job c1/job will be evicted." in lines(result)
    assert result.tasks["c1/job-0"].status == "Releasing"


def test_nothing_is_evicted_without_an_enabled_victim_function() -> None:
    result = run(conf(SHUFFLE, {"name": "tpre-victims"}), world())
    assert result.evictions == []


def test_evicted_pods_are_gone_in_the_next_cycle() -> None:
    result = run(conf(SHUFFLE, VICTIMS), world(), cycles=2)
    assert [(e.task, e.cycle) for e in result.evictions] == [("c1/job-0", 0), ("c1/job-3", 0)]
    assert result.cluster is not None
    assert [p.meta.name for p in result.cluster.pods] == ["job-1", "job-2"]
