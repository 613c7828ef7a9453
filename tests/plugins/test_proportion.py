"""proportion: water-filled deserved shares, queue verdicts, reclaim and enqueue."""

from __future__ import annotations

from typing import Any

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.framework.session import Session
from vspec.model.objects import Cluster, Pod, PodGroup, Queue
from vspec.plugins.proportion import ProportionPlugin, QueueAttr

FLAGS = {
    "name": "proportion",
    "enableQueueOrder": True,
    "enableReclaimable": True,
    "enabledOverused": True,
    "enabledAllocatable": True,
    "enablePreemptive": True,
    "enableJobEnqueued": True,
}
NODE = {"cpu": "8", "memory": "8Gi", "pods": "100"}


def _pending(group: str, n: int, cpu: str = "1") -> list[Pod]:
    return [pod("c1", f"{group}-p{i}", group, {"cpu": cpu}) for i in range(n)]


def _running(group: str, n: int, cpu: str = "1") -> list[Pod]:
    return [
        pod("c1", f"{group}-r{i}", group, {"cpu": cpu}, phase="Running", node_name="n1")
        for i in range(n)
    ]


def _ssn(queues: list[Queue], pods: list[Pod], groups: list[PodGroup], **kw: Any) -> Session:
    return session(
        Cluster(nodes=[node("n1", NODE)], pods=pods, pod_groups=groups, queues=queues),
        [FLAGS],
        **kw,
    )


def _attrs(ssn: Session) -> dict[str, QueueAttr]:
    plugin = ssn.plugins["proportion"]
    assert isinstance(plugin, ProportionPlugin)
    return plugin.queue_opts


def _deserved_cpu(ssn: Session) -> dict[str, float]:
    return {name: attr.deserved.milli_cpu for name, attr in _attrs(ssn).items()}


def test_deserved_follows_weights_and_only_queues_with_jobs_get_attrs() -> None:
    ssn = _ssn(
        [queue("q1", weight=1), queue("q2", weight=3), queue("q3", weight=5)],
        _pending("a", 8) + _pending("b", 8),
        [pod_group("c1", "a", "q1"), pod_group("c1", "b", "q2")],
    )
    assert _deserved_cpu(ssn) == {"q1": 2000, "q2": 6000}
    # Deserved is capped by the request (Zero): nobody asked for memory.
    assert _attrs(ssn)["q1"].deserved.memory == 0
    lines = ssn.log.texts()
    assert "queue <q1> is meet cause of the capability" in lines
    assert "Considering Queue <q1>: weight <1>, total weight <4>." in lines


def test_what_a_satisfied_queue_leaves_goes_to_the_others() -> None:
    ssn = _ssn(
        [queue("q1", weight=1), queue("q2", weight=3)],
        _pending("a", 1) + _pending("b", 8),
        [pod_group("c1", "a", "q1"), pod_group("c1", "b", "q2")],
    )
    assert _deserved_cpu(ssn) == {"q1": 1000, "q2": 7000}
    assert "queue <q1> is meet" in ssn.log.texts()


def test_guarantee_is_reserved_from_the_others_real_capability() -> None:
    ssn = _ssn(
        [queue("q1", weight=1, guarantee={"cpu": "4"}), queue("q2", weight=3)],
        _pending("a", 8) + _pending("b", 8),
        [pod_group("c1", "a", "q1"), pod_group("c1", "b", "q2")],
    )
    attrs = _attrs(ssn)
    assert attrs["q2"].real_capability.milli_cpu == 4000
    assert attrs["q1"].real_capability.milli_cpu == 8000
    assert _deserved_cpu(ssn) == {"q1": 4000, "q2": 4000}


def test_capability_caps_deserved_and_the_rest_flows_on() -> None:
    ssn = _ssn(
        [queue("q1", weight=1), queue("q2", weight=3, capability={"cpu": "3"})],
        _pending("a", 8) + _pending("b", 8),
        [pod_group("c1", "a", "q1"), pod_group("c1", "b", "q2")],
    )
    assert _deserved_cpu(ssn) == {"q1": 5000, "q2": 3000}
    # Capability without memory leaves memory unlimited.
    assert _attrs(ssn)["q2"].capability is not None
    assert _attrs(ssn)["q2"].real_capability.memory == 8 * 2**30


def test_weight_zero_queue_gets_only_its_guarantee() -> None:
    ssn = _ssn(
        [queue("q1", weight=0, guarantee={"cpu": "1"}), queue("q2", weight=1)],
        _pending("a", 8) + _pending("b", 8),
        [pod_group("c1", "a", "q1"), pod_group("c1", "b", "q2")],
    )
    assert _deserved_cpu(ssn) == {"q1": 1000, "q2": 7000}


def test_all_weights_zero_deserve_nothing_and_are_overused() -> None:
    ssn = _ssn(
        [queue("q1", weight=0)],
        _pending("a", 2),
        [pod_group("c1", "a", "q1")],
    )
    assert _deserved_cpu(ssn) == {"q1": 0}
    assert "Exiting when total weight is 0" in ssn.log.texts()
    assert ssn.overused(ssn.queues["q1"])


def test_overused_and_allocatable() -> None:
    ssn = _ssn(
        [queue("q1", weight=1), queue("q2", weight=1)],
        _running("a", 4) + _pending("b", 8),
        [pod_group("c1", "a", "q1", phase="Running"), pod_group("c1", "b", "q2")],
    )
    assert _deserved_cpu(ssn) == {"q1": 4000, "q2": 4000}
    q1, q2 = ssn.queues["q1"], ssn.queues["q2"]
    b0 = task(ssn, "c1/b-p0")
    assert ssn.overused(q1)  # 4 cpu and 4 pods held of 4 and 4 deserved
    assert not ssn.overused(q2)
    assert any(line.startswith("Queue <q1>: deserved <cpu 4000.00") for line in ssn.log.texts())
    assert not ssn.allocatable(q1, b0)
    assert ssn.allocatable(q2, b0)
    assert ssn.preemptive(q2, b0)
    assert not ssn.preemptive(q1, b0)


def test_pending_tasks_keep_deserved_pods_above_allocation() -> None:
    """Every task requests pods: 1, so a queue with pending tasks deserves more pods than
    it holds and is never overused, however much cpu it holds."""
    ssn = _ssn(
        [queue("q1", weight=1), queue("q2", weight=1)],
        _running("a", 4) + _pending("a", 4) + _pending("b", 8),
        [pod_group("c1", "a", "q1", phase="Running"), pod_group("c1", "b", "q2")],
    )
    assert _deserved_cpu(ssn) == {"q1": 4000, "q2": 4000}
    assert not ssn.overused(ssn.queues["q1"])
    assert not ssn.allocatable(ssn.queues["q1"], task(ssn, "c1/a-p0"))


def test_queue_order_priority_then_share() -> None:
    ssn = _ssn(
        [queue("q1"), queue("q2"), queue("q3", priority=10)],
        _running("a", 3)
        + _pending("a", 5)
        + _running("b", 1)
        + _pending("b", 7)
        + _pending("c", 1),
        [
            pod_group("c1", "a", "q1", phase="Running"),
            pod_group("c1", "b", "q2", phase="Running"),
            pod_group("c1", "c", "q3"),
        ],
    )
    q1, q2, q3 = (ssn.queues[n] for n in ("q1", "q2", "q3"))
    assert ssn.queue_order_fn(q3, q1)  # priority first, although q3 has no share
    assert ssn.queue_order_fn(q2, q1)  # 1 cpu held < 3 cpu held on equal deserved
    assert not ssn.queue_order_fn(q1, q2)


def test_reclaim_takes_only_from_queues_above_deserved() -> None:
    ssn = _ssn(
        [queue("q1"), queue("q2")],
        _running("a", 6) + _pending("a", 2) + _pending("b", 4),
        [pod_group("c1", "a", "q1", phase="Running"), pod_group("c1", "b", "q2")],
    )
    assert _deserved_cpu(ssn) == {"q1": 4000, "q2": 4000}
    running = [task(ssn, f"c1/a-r{i}") for i in range(6)]
    # q1 holds 6 of 4 deserved: victims until its running copy is within deserved.
    assert ssn.reclaimable(task(ssn, "c1/b-p0"), running) == running[:2]


def test_reclaim_skips_when_the_queue_holds_less_than_asked() -> None:
    ssn = _ssn(
        [queue("q1"), queue("q2")],
        _running("a", 6) + _pending("b", 1, cpu="7"),
        [pod_group("c1", "a", "q1", phase="Running"), pod_group("c1", "b", "q2")],
    )
    victims = ssn.reclaimable(task(ssn, "c1/b-p0"), [task(ssn, "c1/a-r0")])
    assert victims == []
    assert (
        "Failed to allocate resource for Task <c1/a-r0> in Queue <q1>, not enough resource."
        in ssn.log.texts()
    )


def test_enqueue_checks_min_resources_against_real_capability() -> None:
    groups = [
        pod_group("c1", "a", "q1", min_resources={"cpu": "2"}),
        pod_group("c1", "b", "q1", min_resources={"cpu": "2"}),
        pod_group("c1", "c", "q1"),
    ]
    ssn = _ssn(
        [queue("q1", capability={"cpu": "3"})],
        _pending("a", 2) + _pending("b", 2) + _pending("c", 1),
        groups,
    )
    a, b, c = (ssn.jobs[f"c1/{n}"] for n in "abc")
    assert ssn.job_enqueueable(a)  # 2 <= 3, and a's 2 cpu are now inqueue
    assert not ssn.job_enqueueable(b)  # 2 + 2 > 3
    assert ssn.job_enqueueable(c)  # no minResources
    assert ssn.cache.effects.events == [
        ("c1/b", "Normal", "Unschedulable", "queue resource quota insufficient")
    ]
    assert "job b inqueue false" in ssn.log.texts()


def test_inqueue_and_running_jobs_reserve_their_min_resources() -> None:
    groups = [
        pod_group("c1", "inq", "q1", phase="Inqueue", min_resources={"cpu": "2"}),
        pod_group("c1", "run", "q1", phase="Running", min_member=1, min_resources={"cpu": "3"}),
        pod_group("c1", "new", "q1", min_resources={"cpu": "2"}),
    ]
    ssn = _ssn(
        [queue("q1", capability={"cpu": "6"})],
        _pending("inq", 2) + _running("run", 1) + _pending("run", 2) + _pending("new", 2),
        groups,
    )
    attr = _attrs(ssn)["q1"]
    # Inqueue: 2 cpu; Running with 1 allocated task (>= minMember): 3 - 1 still missing.
    assert attr.inqueue.milli_cpu == 4000
    # new: 2 + allocated 1 + inqueue 4 = 7 > 6.
    assert not ssn.job_enqueueable(ssn.jobs["c1/new"])


def test_event_handlers_update_allocation_and_share() -> None:
    ssn = _ssn(
        [queue("q1"), queue("q2")],
        _pending("a", 4) + _pending("b", 4),
        [pod_group("c1", "a", "q1"), pod_group("c1", "b", "q2")],
        verbosity=4,
    )
    attr = _attrs(ssn)["q1"]
    stmt = ssn.statement()
    stmt.allocate(task(ssn, "c1/a-p0"), ssn.nodes["n1"])
    assert attr.allocated.milli_cpu == 1000
    assert attr.share == 0.25
    assert (
        "Proportion AllocateFunc: task <c1/a-p0>, resreq <cpu 1000.00, memory 0.00, pods 1.00>,"
        "  share <0.25>" in ssn.log.texts()
    )
    stmt.discard()
    assert attr.allocated.milli_cpu == 0
    assert attr.share == 0
    assert any(line.startswith("Proportion EvictFunc: task <c1/a-p0>") for line in ssn.log.texts())


def test_enqueue_discounts_elastic_allocations() -> None:
    """Allocation beyond a running job's minResources is elastic: a new job may count on it."""
    groups = [
        pod_group("c1", "run", "q1", phase="Running", min_member=1, min_resources={"cpu": "1"}),
        pod_group("c1", "new", "q1", min_resources={"cpu": "3"}),
    ]
    ssn = _ssn(
        [queue("q1", capability={"cpu": "4"})], _running("run", 3) + _pending("new", 3), groups
    )
    attr = _attrs(ssn)["q1"]
    assert attr.elastic.milli_cpu == 2000
    # 3 + 3 allocated - 2 elastic = 4 <= 4.
    assert ssn.job_enqueueable(ssn.jobs["c1/new"])


def test_queue_sums_round_as_volcano_adds_task_by_task() -> None:
    """Whole numbers add exactly up to 2**53 bytes; beyond, each task's addition rounds
    (to even), as Go's float64 does: 8Pi + 1 + 1 is 8Pi, where 8Pi + (1 + 1) is not."""
    big = pod("c1", "a-p0", "a", {"cpu": "1", "memory": "8Pi"})
    small = [pod("c1", f"b-p{i}", "b", {"cpu": "1", "memory": "1"}) for i in range(2)]
    ssn = _ssn(
        [queue("q1")],
        [big, *small],
        [pod_group("c1", "a", "q1"), pod_group("c1", "b", "q1")],
    )
    assert _attrs(ssn)["q1"].request.memory == float(2**53)
    whole = _ssn([queue("q1")], small, [pod_group("c1", "b", "q1")])
    assert _attrs(whole)["q1"].request.memory == 2.0
