"""The shuffle action: every task the VictimTasks plugins pick among the Running tasks
is evicted at once."""

from __future__ import annotations

from preemption_fixtures import (
    VICTIM_LABEL,
    cluster,
    conf,
    evicted,
    lines,
    node,
    pod,
    pod_group,
    queue,
    run,
)

from vspec.model.objects import Cluster

SHUFFLE = "shuffle"
VICTIMS = {"name": "tpre-victims", "enabledVictim": True}
MARK = {VICTIM_LABEL: "true"}


def world() -> Cluster:
    return cluster(
        [node("n1", "4")],
        [queue("q1")],
        [pod_group("job", "q1")],
        [
            pod("job-0", "job", "1", node_name="n1", labels=MARK),
            pod("job-1", "job", "1", node_name="n1"),
            pod("job-2", "job", "1", node_name="n1", labels=MARK, phase="Pending"),  # Bound
            pod("job-3", "job", "1", node_name="n1", labels=MARK),
        ],
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
