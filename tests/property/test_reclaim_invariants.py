"""The reclaim invariants (vspec/invariants/reclaiming.py) hold for the engine and catch
an outcome that breaks their rule, and the victim vetoes bind only where Volcano's tier
rules let them."""

from __future__ import annotations

from dataclasses import replace

from tests.builders import cluster, node, pod, pod_group, queue, run, violations
from vspec.invariants.history import sole_decider
from vspec.model.conf import SchedulerConf, load_conf
from vspec.model.objects import Cluster
from vspec.model.result import Eviction, LogLine, Severity, SimulationResult

RECLAIM = {
    "actions": "enqueue, allocate, reclaim",
    "tiers": [{"plugins": [{"name": "gang"}, {"name": "proportion"}]}],
}


def _world(weights: dict[str, int], running: dict[str, int], cpu: int) -> Cluster:
    """One node of ``cpu`` cores full of 1-core pods of the ``running`` queues' jobs, and
    a pending 1-core pod of queue q0."""
    pods, groups = [], []
    for name, count in running.items():
        groups.append(pod_group("ns", name, name, min_member=0, phase="Running"))
        pods += [pod("ns", f"{name}-{i}", name, {"cpu": 1}, node_name="n") for i in range(count)]
    groups.append(pod_group("ns", "s", "q0", min_member=1, phase="Inqueue"))
    pods.append(pod("ns", "s-0", "s", {"cpu": 1}))
    queues = [queue(name, weight=w) for name, w in weights.items()]
    return cluster(
        [node("n", {"cpu": cpu, "memory": "8Gi", "pods": 110})], pods, groups, queues=queues
    )


def _with_eviction(result: SimulationResult, victim: str, reclaimer: str) -> SimulationResult:
    line = LogLine(0, Severity.ERROR, f"Try to reclaim Task <{victim}> for Tasks <{reclaimer}>")
    return replace(
        result,
        evictions=[*result.evictions, Eviction(victim, "reclaim")],
        logs=[*result.logs, line],
    )


def test_reclaim_until_covered_holds_and_catches_one_victim_too_many() -> None:
    inputs, result = run(RECLAIM, _world({"q0": 3, "q1": 1}, {"q1": 2}, 2))
    assert [e.reason for e in result.evictions] == ["reclaim"]
    assert violations("reclaim-until-covered", inputs, result) == []
    taken = result.evictions[0].task
    other = "ns/q1-1" if taken == "ns/q1-0" else "ns/q1-0"
    broken = _with_eviction(result, other, "ns/s-0")
    [message] = violations("reclaim-until-covered", inputs, broken)
    assert "the victims before the last already covered its request" in message


def test_reclaim_above_deserved_holds_and_catches_a_queue_at_its_share() -> None:
    # 3 cores, three queues of weight 1: q1 holds 1 core (its share), q2 holds 2.
    inputs, result = run(RECLAIM, _world({"q0": 1, "q1": 1, "q2": 1}, {"q1": 1, "q2": 2}, 3))
    assert [e.task.split("-")[0] for e in result.evictions] == ["ns/q2"]
    assert violations("reclaim-above-deserved", inputs, result) == []
    broken = _with_eviction(result, "ns/q1-0", "ns/s-0")
    [message] = violations("reclaim-above-deserved", inputs, broken)
    assert message.startswith("cycle 0: ns/q1-0 was reclaimed from queue q1")


def test_a_veto_binds_only_for_the_last_deciding_plugin_of_the_tier() -> None:
    def conf(*names: str) -> SchedulerConf:
        plugins = [{"name": n} for n in names]
        return load_conf({"actions": "reclaim", "tiers": [{"plugins": plugins}]})

    # An empty intersection of the earlier answers lets the next plugin answer afresh.
    assert sole_decider(conf("gang", "conformance"), "conformance", "reclaim")
    assert not sole_decider(conf("conformance", "gang"), "conformance", "reclaim")
    # Plugins without a Reclaimable function do not count.
    assert sole_decider(conf("conformance", "binpack"), "conformance", "reclaim")
