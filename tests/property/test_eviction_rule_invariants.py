"""The reclaim, proportion and drf victim invariants (vspec/invariants/reclaiming.py,
drf_victims.py) hold for the engine and catch an outcome that breaks their rule, and the
victim vetoes bind only where Volcano's tier rules let them."""

from __future__ import annotations

from dataclasses import replace

from tests.builders import cluster, node, pod, pod_group, queue, run, violations
from vspec.invariants.history import sole_decider
from vspec.model.conf import SchedulerConf, load_conf
from vspec.model.objects import Cluster, ObjectMeta, PriorityClass
from vspec.model.result import Eviction, LogLine, Severity, SimulationResult

# The preemptors' and the victims' priority classes.
CLASSES = [PriorityClass(ObjectMeta("high"), 100), PriorityClass(ObjectMeta("low"), 10)]
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


def test_reclaim_counts_pod_slots_as_each_task_resreq_does() -> None:
    # The reclaimer asks for a pod slot in its container: two slots in Volcano's Resreq,
    # so one victim's memory and slot do not cover it and reclaim evicts a second
    # (found by vspec fuzz --space default; both engines evict both).
    conf = {"actions": "reclaim", "tiers": [{"plugins": [{"name": "gang"}]}]}
    victims = [pod("ns", f"v-{i}", "v", {"memory": 1}, node_name="n") for i in range(2)]
    world = cluster(
        [node("n", {"cpu": 2, "memory": "4Gi", "pods": 2})],
        [*victims, pod("ns", "r-0", "r", {"pods": 1})],
        [
            pod_group("ns", "v", "q0", min_member=0, phase="Running"),
            pod_group("ns", "r", "q1", min_member=1, phase="Inqueue"),
        ],
        queues=[queue("q0", weight=1), queue("q1", weight=2)],
    )
    inputs, result = run(conf, world)
    assert sorted(e.task for e in result.evictions) == ["ns/v-0", "ns/v-1"]
    assert violations("reclaim-until-covered", inputs, result) == []


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


PREEMPT = {
    "actions": "enqueue, allocate, preempt",
    "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "proportion"}]}],
}


def _crowded() -> Cluster:
    """q0's four low pods fill two 2-core nodes; its high pod needs 2 cores, and q1's
    pending 4-core pod holds q0's deserved share to 2 cores."""
    pods = [pod("ns", f"low-{i}", "low", {"cpu": 1}, node_name=f"n{i // 2}") for i in range(4)]
    pods += [pod("ns", "high-0", "high", {"cpu": 2}), pod("ns", "other-0", "other", {"cpu": 4})]
    groups = [
        pod_group("ns", "low", "q0", min_member=0, phase="Running", priority_class="low"),
        pod_group("ns", "high", "q0", min_member=1, phase="Inqueue", priority_class="high"),
        pod_group("ns", "other", "q1", min_member=1, phase="Inqueue"),
    ]
    nodes = [node(f"n{i}", {"cpu": 2, "memory": "8Gi", "pods": 110}) for i in range(2)]
    return cluster(nodes, pods, groups, queues=[queue("q0"), queue("q1")], classes=CLASSES)


def test_pipelined_within_deserved_holds_and_catches_a_preemptor_past_the_share() -> None:
    inputs, result = run(PREEMPT, _crowded())
    # Two victims make room on the first node but leave q0 above its 2 cores: Volcano
    # goes on to the second node (the first node's evictions stay) and pipelines there.
    assert sorted(e.task for e in result.evictions) == [f"ns/low-{i}" for i in range(4)]
    assert violations("pipelined-within-deserved", inputs, result) == []
    assert result.pipelined["ns/high"] == [("ns/high-0", "n1")]
    # As if it were pipelined on the first node, where only the queue did not allow it.
    first_node_only = [e for e in result.evictions if e.task in ("ns/low-0", "ns/low-1")]
    broken = replace(
        result, evictions=first_node_only, pipelined={"ns/high": [("ns/high-0", "n0")]}
    )
    [message] = violations("pipelined-within-deserved", inputs, broken)
    assert "queue q0 ends with pipelined ns/high-0" in message


def test_drf_victims_fair_holds_and_catches_a_victim_of_a_smaller_share() -> None:
    conf = {
        "actions": "enqueue, allocate, preempt",
        "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "drf"}]}],
    }
    pods = [
        pod("ns", "small-0", "small", {"cpu": "500m", "memory": "2Gi"}, node_name="n"),
        pod("ns", "small-1", "small", {"cpu": "500m", "memory": "2Gi"}, node_name="n"),
        pod("ns", "big-0", "big", {"cpu": 1, "memory": "1Gi"}, node_name="n"),
        pod("ns", "high-0", "high", {"cpu": 1, "memory": "1Gi"}),
    ]
    groups = [
        pod_group("ns", "small", "q", min_member=0, phase="Running", priority_class="low"),
        pod_group("ns", "big", "q", min_member=0, phase="Running", priority_class="low"),
        pod_group("ns", "high", "q", min_member=1, phase="Inqueue", priority_class="high"),
    ]
    world = cluster(
        [node("n", {"cpu": 2, "memory": "8Gi", "pods": 3})], pods, groups, classes=CLASSES
    )
    inputs, result = run(conf, world)
    # With the preemptor, its job would hold half the cores: more than either job keeps.
    assert result.evictions == []
    assert violations("drf-victims-fair", inputs, result) == []
    line = LogLine(3, Severity.INFO, "Try to preempt Task <ns/small-1> for Task <ns/high-0>")
    broken = replace(
        result, evictions=[Eviction("ns/small-1", "preempt")], logs=[*result.logs, line]
    )
    [message] = violations("drf-victims-fair", inputs, broken)
    assert message.startswith("cycle 0: ns/small-1 was preempted for ns/high-0, but drf's share")


def test_reclaim_above_deserved_knows_what_the_other_queues_leave() -> None:
    """q1 holds 4 of 6 cores over three nodes, with room for the reclaimer's 2 cores in
    all but on none: q0 (weight 3) deserves its 2 cores, q1 the 4 the rest leaves."""
    spots = ["n0", "n0", "n1", "n2"]
    pods = [pod("ns", f"v-{i}", "v", {"cpu": 1}, node_name=n) for i, n in enumerate(spots)]
    world = cluster(
        [node(f"n{i}", {"cpu": 2, "memory": "8Gi", "pods": 110}) for i in range(3)],
        [*pods, pod("ns", "s-0", "s", {"cpu": 2})],
        [
            pod_group("ns", "v", "q1", min_member=0, phase="Running"),
            pod_group("ns", "s", "q0", min_member=1, phase="Inqueue"),
        ],
        queues=[queue("q0", weight=3), queue("q1", weight=1)],
    )
    inputs, result = run(RECLAIM, world)
    assert result.evictions == []
    assert violations("reclaim-above-deserved", inputs, result) == []
    broken = _with_eviction(result, "ns/v-2", "ns/s-0")
    [message] = violations("reclaim-above-deserved", inputs, broken)
    assert message.startswith("cycle 0: ns/v-2 was reclaimed from queue q1, which holds")


def test_drf_victims_fair_weighs_one_answer_s_victims_of_a_job_together() -> None:
    """Job v holds all 4 cores in 1-core pods; the preemptor asks 2 (a share of 0.5):
    drf lets v keep no less than half, so one answer takes at most 2 of its pods."""
    conf = {
        "actions": "enqueue, allocate, preempt",
        "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "drf"}]}],
    }
    pods = [pod("ns", f"v-{i}", "v", {"cpu": 1}, node_name="n") for i in range(4)]
    groups = [
        pod_group("ns", "v", "q", min_member=0, phase="Running", priority_class="low"),
        pod_group("ns", "h", "q", min_member=1, phase="Inqueue", priority_class="high"),
    ]
    world = cluster(
        [node("n", {"cpu": 4, "memory": "8Gi", "pods": 110})],
        [*pods, pod("ns", "h-0", "h", {"cpu": 2})],
        groups,
        classes=CLASSES,
    )
    inputs, result = run(conf, world)
    assert len(result.evictions) == 2
    assert violations("drf-victims-fair", inputs, result) == []
    # A third victim in the same answer: each alone leaves v 0.75, all three 0.25.
    taken = {e.task for e in result.evictions}
    third = next(p.meta.key for p in pods if p.meta.key not in taken)
    line = LogLine(3, Severity.INFO, f"Try to preempt Task <{third}> for Task <ns/h-0>")
    at = max(i for i, x in enumerate(result.logs) if x.startswith("Try to preempt Task <"))
    logs = [*result.logs[: at + 1], line, *result.logs[at + 1 :]]
    broken = replace(result, evictions=[*result.evictions, Eviction(third, "preempt")], logs=logs)
    [message] = violations("drf-victims-fair", inputs, broken)
    assert "exceeds that of ns/v without them (at most 0.2500)" in message


def test_drf_victims_fair_counts_the_preemptor_job_s_pipelined_tasks() -> None:
    """Job h's two 1-core pods each evict one of v's four: h-1's job then holds h-0,
    pipelined, so with h-1 its share is 0.5, and v may keep no less than half."""
    conf = {
        "actions": "enqueue, allocate, preempt",
        "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "drf"}]}],
    }
    pods = [pod("ns", f"v-{i}", "v", {"cpu": 1}, node_name="n") for i in range(4)]
    pods += [pod("ns", f"h-{i}", "h", {"cpu": 1}) for i in range(2)]
    groups = [
        pod_group("ns", "v", "q", min_member=0, phase="Running", priority_class="low"),
        pod_group("ns", "h", "q", min_member=2, phase="Inqueue", priority_class="high"),
    ]
    world = cluster(
        [node("n", {"cpu": 4, "memory": "8Gi", "pods": 110})], pods, groups, classes=CLASSES
    )
    inputs, result = run(conf, world)
    assert [e.task for e in result.evictions] == ["ns/v-2", "ns/v-0"]
    assert violations("drf-victims-fair", inputs, result) == []
    # h-1 takes a second victim: v keeps 1 core (0.25); h's share with h-1 is 0.5 only
    # when the pipelined h-0 counts.
    line = LogLine(3, Severity.INFO, "Try to preempt Task <ns/v-1> for Task <ns/h-1>")
    at = next(
        i for i, x in enumerate(result.logs) if x.text.startswith("Try to preempt Task <ns/v-0>")
    )
    logs = [*result.logs[: at + 1], line, *result.logs[at + 1 :]]
    evictions = [*result.evictions, Eviction("ns/v-1", "preempt")]
    [message] = violations(
        "drf-victims-fair", inputs, replace(result, evictions=evictions, logs=logs)
    )
    assert "ns/v-0, ns/v-1 was preempted for ns/h-1" in message
    assert "(at least 0.5000) exceeds that of ns/v without them (at most 0.2500)" in message
