"""rescheduling: lowNodeUtilization evicts from nodes above target towards nodes below
threshold, once per interval."""

from __future__ import annotations

from typing import Any

from tests.builders import NOW, node, pod, pod_group, queue, session, task
from vspec.framework.session import SchedulerState
from vspec.model.objects import Cluster, NodeUsage

PARAMS = {"thresholds": {"cpu": 30, "memory": 30}, "targetThresholds": {"cpu": 60, "memory": 60}}


def _entry(**arguments: Any) -> dict[str, Any]:
    return {"name": "rescheduling", "enabledVictim": True, "arguments": arguments}


def _cluster() -> Cluster:
    def loaded(name: str, cpu: float, mem: float) -> Any:
        usage = NodeUsage({"5m": cpu}, {"5m": mem}, NOW)
        return node(name, {"cpu": 10, "memory": "10Gi", "pods": 10}, usage=usage)

    def running(name: str, on: str, cpu: int, priority: int | None = None) -> Any:
        requests = {"cpu": cpu, "memory": "1Gi"}
        return pod("ns", name, "pg", requests, phase="Running", node_name=on, priority=priority)

    return Cluster(
        nodes=[loaded("hot", 90, 50), loaded("cold", 10, 10), loaded("warm", 40, 40)],
        queues=[queue("q1")],
        pod_groups=[pod_group("ns", "pg", "q1")],
        pods=[
            running("a", "hot", 2, priority=10),
            running("b", "hot", 2),
            running("c", "hot", 2, priority=5),
            running("d", "cold", 1),
        ],
    )


def _all_running(ssn: Any) -> list[Any]:
    return [task(ssn, f"ns/{n}") for n in "abcd"]


def test_evicts_lowest_priority_first_until_the_node_is_below_target() -> None:
    strategies = [{"name": "lowNodeUtilization", "params": PARAMS}]
    ssn = session(_cluster(), [_entry(interval="0s", strategies=strategies)])
    # hot: 90% cpu of 10 cpu. Each 2-cpu pod takes 20 points: two evictions reach 50%.
    assert [v.name for v in ssn.victim_tasks(_all_running(ssn))] == ["b", "c"]


def test_default_strategy_thresholds_are_100_percent() -> None:
    ssn = session(_cluster(), [_entry(interval="0s")])
    # Every node is below 100%: nothing to do.
    assert ssn.victim_tasks(_all_running(ssn)) == []
    assert any("abort the configuration parse" in t for t in ssn.log.texts())


def test_waits_for_the_interval() -> None:
    strategies = [{"name": "lowNodeUtilization", "params": PARAMS}]
    state = SchedulerState()
    ssn = session(_cluster(), [_entry(strategies=strategies)], state=state)
    assert ssn.victim_tasks(_all_running(ssn)) == []
    assert "It is not the time to execute rescheduling strategies." in ssn.log.texts()
