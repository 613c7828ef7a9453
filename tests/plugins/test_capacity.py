"""capacity: Allocatable against capability, Preemptive and Reclaimable against deserved,
JobEnqueueable against real capability, and the queue tree of enableHierarchy."""

from __future__ import annotations

from typing import Any

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.model.objects import Cluster

FLAT = {
    "name": "capacity",
    "enabledAllocatable": True,
    "enablePreemptive": True,
    "enableReclaimable": True,
    "enableQueueOrder": True,
    "enableJobEnqueued": True,
}
TREE = {**FLAT, "enableHierarchy": True}


def _open(cluster: Cluster, entry: dict[str, Any] = FLAT) -> Any:
    return session(cluster, [entry])


def test_flat_allocatable_compares_with_capability_not_deserved() -> None:
    cluster = Cluster(
        nodes=[node("n1", {"cpu": 2, "memory": "4Gi", "pods": 10})],
        queues=[queue("q2", capability={"cpu": "1.5", "memory": "1.5Gi"}, deserved={"cpu": 1})],
        pod_groups=[
            pod_group("ns1", "pg3", "q2", min_member=1, phase="Running"),
            pod_group("ns1", "pg4", "q2", min_member=1, phase="Inqueue"),
        ],
        pods=[
            pod("ns1", "p3", "pg3", {"cpu": 1, "memory": "1Gi"}, phase="Running", node_name="n1"),
            pod("ns1", "p4", "pg4", {"cpu": 1, "memory": "1Gi"}),
            pod("ns1", "p5", "pg4", {"cpu": "500m", "memory": "500Mi"}),
        ],
    )
    ssn = _open(cluster)
    q2 = ssn.queues["q2"]
    assert ssn.allocatable(q2, task(ssn, "ns1/p4")) is False
    # 1 + 0.5 cpu fits the 1.5 cpu capability although deserved is only 1 cpu.
    assert ssn.allocatable(q2, task(ssn, "ns1/p5")) is True
    assert ssn.preemptive(q2, task(ssn, "ns1/p5")) is False
    assert "Queue <q2>: realCapability" in "\n".join(ssn.log.texts())


def test_flat_missing_cpu_capability_is_unlimited() -> None:
    cluster = Cluster(
        nodes=[node("n1", {"cpu": 8, "memory": "8Gi", "pods": 10})],
        queues=[queue("q1", capability={"memory": "8Gi"})],
        pod_groups=[pod_group("ns1", "pg1", "q1", min_member=1)],
        pods=[pod("ns1", "p1", "pg1", {"cpu": 6, "memory": "1Gi"})],
    )
    ssn = _open(cluster)
    assert ssn.allocatable(ssn.queues["q1"], task(ssn, "ns1/p1")) is True


def test_flat_enqueueable_uses_real_capability_and_counts_admitted_jobs() -> None:
    cluster = Cluster(
        nodes=[node("n1", {"cpu": 4, "memory": "4Gi", "pods": 10})],
        queues=[queue("q1", capability={"cpu": 2, "memory": "4Gi"})],
        pod_groups=[
            pod_group("ns1", "pg1", "q1", min_member=1, min_resources={"cpu": 1}),
            pod_group("ns1", "pg2", "q1", min_member=1, min_resources={"cpu": 1}),
            pod_group("ns1", "pg3", "q1", min_member=1, min_resources={"cpu": 1}),
            pod_group("ns1", "pg4", "q1", min_member=1),
        ],
    )
    ssn = _open(cluster)
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg1"]) is True
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg2"]) is True
    # The two admitted jobs hold the 2 cpu of the capability.
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg3"]) is False
    assert ("ns1/pg3", "Normal", "Unschedulable", "queue resource quota insufficient") in (
        ssn.cache.effects.events
    )
    # Without minResources every job is admitted.
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg4"]) is True


def test_flat_guarantee_reduces_other_queues_real_capability() -> None:
    cluster = Cluster(
        nodes=[node("n1", {"cpu": 4, "memory": "4Gi", "pods": 10})],
        queues=[queue("q1"), queue("q2", guarantee={"cpu": 3, "memory": "3Gi"})],
        pod_groups=[pod_group("ns1", "pg1", "q1", min_member=1)],
        pods=[pod("ns1", "p1", "pg1", {"cpu": 2, "memory": "1Gi"})],
    )
    ssn = _open(cluster)
    # q1 may reach total - guarantees = 1 cpu.
    assert ssn.allocatable(ssn.queues["q1"], task(ssn, "ns1/p1")) is False


def _reclaim_cluster() -> Cluster:
    return Cluster(
        nodes=[node("n1", {"cpu": 4, "memory": "4Gi", "pods": 10})],
        queues=[
            queue("q1", deserved={"cpu": 3, "memory": "3Gi"}),
            queue("q2", deserved={"cpu": 1, "memory": "1Gi"}, guarantee={"cpu": 1}),
        ],
        pod_groups=[
            pod_group("ns1", "pg1", "q1", min_member=1, phase="Running"),
            pod_group("ns1", "pg2", "q2", min_member=1, phase="Running"),
        ],
        pods=[
            pod("ns1", "p1", "pg1", {"cpu": 1, "memory": "1Gi"}, phase="Running", node_name="n1"),
            pod("ns1", "p2", "pg2", {"cpu": 1, "memory": "1Gi"}, phase="Running", node_name="n1"),
            pod("ns1", "p3", "pg2", {"cpu": 1, "memory": "1Gi"}, phase="Running", node_name="n1"),
            pod("ns1", "p4", "pg2", {"cpu": 1, "memory": "1Gi"}, phase="Running", node_name="n1"),
            pod("ns1", "p9", "pg1", {"cpu": 1, "memory": "1Gi"}),
        ],
    )


def test_reclaimable_stops_at_deserved_and_guarantee() -> None:
    ssn = _open(_reclaim_cluster())
    reclaimer = task(ssn, "ns1/p9")
    q2_tasks = [task(ssn, f"ns1/p{i}") for i in (2, 3, 4)]
    victims = ssn.reclaimable(reclaimer, q2_tasks)
    # q2 holds 3 cpu of a 1 cpu deserved: two may go, the third is its guarantee.
    assert [v.name for v in victims] == ["p2", "p3"]
    # q1 is within its deserved share: nothing of it is reclaimable.
    assert ssn.reclaimable(reclaimer, [task(ssn, "ns1/p1")]) == []


def test_preemptive_and_queue_order_follow_deserved_share() -> None:
    ssn = _open(_reclaim_cluster())
    assert ssn.preemptive(ssn.queues["q1"], task(ssn, "ns1/p9")) is True
    # q1 share 1/3, q2 share 3/1: q1 first.
    assert ssn.queue_order_fn(ssn.queues["q1"], ssn.queues["q2"]) is True
    assert ssn.queue_order_fn(ssn.queues["q2"], ssn.queues["q1"]) is False


def test_event_handlers_update_allocation() -> None:
    ssn = _open(_reclaim_cluster())
    plugin = ssn.plugins["capacity"]
    p9 = task(ssn, "ns1/p9")
    ssn.pipeline(p9, "n1")
    attr = plugin.queue_opts["q1"]
    assert attr.allocated.milli_cpu == 2000
    # deserved was cut to the queue's request (2 cpu): the queue is now at its share.
    assert attr.deserved.milli_cpu == 2000
    assert attr.share == 1.0
    ssn.evict(task(ssn, "ns1/p1"), "test")
    assert attr.allocated.milli_cpu == 1000
    assert attr.share == 0.5


def _tree_cluster(**extra: Any) -> Cluster:
    return Cluster(
        nodes=[node("n1", {"cpu": 8, "memory": "8Gi", "pods": 10})],
        queues=[
            queue("root"),
            queue("q1", parent="root", capability={"cpu": 4, "memory": "4Gi"}),
            queue("q2", parent="root", capability={"cpu": 4, "memory": "4Gi"}),
            queue("q11", parent="q1", capability={"cpu": 1, "memory": "1Gi"}),
            queue("q12", parent="q1", capability=extra.get("q12", {"cpu": 3, "memory": "3Gi"})),
        ],
        pod_groups=[
            pod_group("ns1", "pg1", "q11", min_member=1, min_resources={"cpu": 1}),
            pod_group("ns1", "pg2", "q1", min_member=1),
            pod_group("ns1", "pg3", "q12", min_member=1, min_resources={"cpu": 4}),
        ],
        pods=[
            pod("ns1", "p1", "pg1", {"cpu": 1, "memory": "1Gi"}),
            pod("ns1", "p3", "pg3", {"cpu": 2, "memory": "1Gi"}),
        ],
    )


def test_tree_only_leaf_queues_allocate_and_enqueue() -> None:
    cluster = _tree_cluster()
    cluster.pod_groups.pop(1)  # a job in q1 (not a leaf) makes the whole tree invalid
    ssn = _open(cluster, TREE)
    plugin = ssn.plugins["capacity"]
    assert plugin.queue_opts["q11"].ancestors == ["root", "q1"]
    assert ssn.allocatable(ssn.queues["q11"], task(ssn, "ns1/p1")) is True
    assert ssn.allocatable(ssn.queues["q1"], task(ssn, "ns1/p1")) is False
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg1"]) is True
    # pg3 asks for 4 cpu in q12, whose capability is 3.
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg3"]) is False


def test_tree_job_in_inner_queue_disables_every_function() -> None:
    ssn = _open(_tree_cluster(), TREE)
    assert ssn.allocatable(ssn.queues["q11"], task(ssn, "ns1/p1")) is False
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg1"]) is False
    assert any("is not leaf queue" in line for line in ssn.log.texts())


def test_tree_child_capability_above_parent_is_rejected() -> None:
    cluster = _tree_cluster(q12={"cpu": 5, "memory": "3Gi"})
    cluster.pod_groups.pop(1)
    ssn = _open(cluster, TREE)
    assert ssn.allocatable(ssn.queues["q11"], task(ssn, "ns1/p1")) is False
    assert any("capability is less than its child queue <q12>" in t for t in ssn.log.texts())


def test_tree_allocatable_checks_every_ancestor() -> None:
    cluster = Cluster(
        nodes=[node("n1", {"cpu": 8, "memory": "8Gi", "pods": 10})],
        queues=[
            queue("root"),
            queue("q1", capability={"cpu": 2, "memory": "4Gi"}),
            queue("q11", parent="q1", capability={"cpu": 2, "memory": "4Gi"}),
            queue("q12", parent="q1", capability={"cpu": 2, "memory": "4Gi"}),
        ],
        pod_groups=[
            pod_group("ns1", "pg1", "q11", min_member=1, phase="Running"),
            pod_group("ns1", "pg2", "q12", min_member=1),
        ],
        pods=[
            pod("ns1", "p1", "pg1", {"cpu": 2, "memory": "1Gi"}, phase="Running", node_name="n1"),
            pod("ns1", "p2", "pg2", {"cpu": 1, "memory": "1Gi"}),
        ],
    )
    ssn = _open(cluster, TREE)
    # q12 itself has room, but its parent q1 is full with q11's 2 cpu.
    assert ssn.allocatable(ssn.queues["q12"], task(ssn, "ns1/p2")) is False
    assert ssn.plugins["capacity"].queue_opts["q1"].allocated.milli_cpu == 2000


def _tree_reclaim_cluster() -> Cluster:
    return Cluster(
        nodes=[node("n1", {"cpu": 8, "memory": "8Gi", "pods": 10})],
        queues=[
            queue("root"),
            queue(
                "q3",
                deserved={"cpu": 4, "memory": "4Gi", "pods": 10},
                capability={"cpu": 4, "memory": "4Gi", "pods": 10},
            ),
            queue(
                "q31",
                parent="q3",
                deserved={"cpu": 2, "memory": "2Gi", "pods": 2},
                capability={"cpu": 4, "memory": "4Gi", "pods": 4},
            ),
            queue(
                "q32",
                parent="q3",
                deserved={"cpu": 2, "memory": "2Gi", "pods": 2},
                capability={"cpu": 4, "memory": "4Gi", "pods": 4},
            ),
            queue(
                "q4",
                parent="root",
                deserved={"cpu": 2, "memory": "2Gi", "pods": 1},
                capability={"cpu": 4, "memory": "4Gi", "pods": 4},
            ),
        ],
        pod_groups=[
            pod_group("ns1", "pg4", "q4", min_member=1, phase="Running"),
            pod_group("ns1", "pg5", "q31", min_member=1, phase="Running"),
            pod_group("ns1", "pg6", "q32", min_member=1, phase="Inqueue"),
        ],
        pods=[
            pod("ns1", "p5", "pg4", {"cpu": 4, "memory": "4Gi"}, phase="Running", node_name="n1"),
            pod("ns1", "p6", "pg5", {"cpu": 2, "memory": "2Gi"}, phase="Running", node_name="n1"),
            pod("ns1", "p7", "pg5", {"cpu": 2, "memory": "2Gi"}, phase="Running", node_name="n1"),
            pod("ns1", "p8", "pg6", {"cpu": 2, "memory": "2Gi"}),
        ],
    )


def test_tree_reclaim_prefers_victims_from_the_nearest_queue() -> None:
    ssn = _open(_tree_reclaim_cluster(), TREE)
    p8 = task(ssn, "ns1/p8")
    victims = ssn.reclaimable(p8, [task(ssn, "ns1/p5"), task(ssn, "ns1/p7")])
    assert {v.name for v in victims} == {"p5", "p7"}
    q31, q4, q32 = ssn.queues["q31"], ssn.queues["q4"], ssn.queues["q32"]
    # q31 shares q3 with the preemptor's q32, so its victims go first.
    assert ssn.victim_queue_order_fn(q31, q4, q32) is True
    assert ssn.victim_queue_order_fn(q4, q31, q32) is False
    assert ssn.preemptive(q32, p8) is True
    assert ssn.total_guarantee.is_empty()


def test_tree_queue_order_prefers_leaves_then_branch_share() -> None:
    ssn = _open(_tree_reclaim_cluster(), TREE)
    q3, q31, q4 = ssn.queues["q3"], ssn.queues["q31"], ssn.queues["q4"]
    assert ssn.queue_order_fn(q31, q3) is True
    # q31's branch (q3: 2 of 4 cpu) has a smaller share than q4 (4 of 2 cpu).
    assert ssn.queue_order_fn(q31, q4) is True
    assert ssn.queue_order_fn(q4, q31) is False


def test_missing_parent_makes_tree_unusable() -> None:
    cluster = _tree_reclaim_cluster()
    cluster.queues[2].parent = "nope"
    ssn = _open(cluster, TREE)
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg6"]) is False
    assert any("invalid parent queue nope" in t for t in ssn.log.texts())
