"""task-topology: buckets of co-located roles drive TaskOrder and NodeOrder."""

from __future__ import annotations

from typing import Any

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.model.objects import TASK_SPEC_KEY, Cluster

ENTRY = {"name": "task-topology", "enableTaskOrder": True, "enableNodeOrder": True}


def _cluster(annotations: dict[str, str], small: bool = False) -> Cluster:
    def member(name: str, role: str) -> Any:
        return pod(
            "ns", name, "job", {"cpu": 1, "memory": "1Gi"}, annotations={TASK_SPEC_KEY: role}
        )

    n2 = (
        {"cpu": 1, "memory": "1Gi", "pods": 10}
        if small
        else {"cpu": 8, "memory": "8Gi", "pods": 10}
    )
    return Cluster(
        nodes=[node("n1", {"cpu": 8, "memory": "8Gi", "pods": 10}), node("n2", n2)],
        queues=[queue("q1")],
        pod_groups=[pod_group("ns", "job", "q1", annotations=annotations)],
        pods=[
            member("ps-0", "ps"),
            member("worker-0", "worker"),
            member("worker-1", "worker"),
            pod("ns", "other-0", "job", {"cpu": 1}),
        ],
    )


def test_affine_roles_share_one_bucket_and_follow_bound_tasks() -> None:
    ssn = session(_cluster({"volcano.sh/task-topology-affinity": "ps,worker"}), [ENTRY])
    plugin = ssn.plugins["task-topology"]
    manager = plugin.managers["ns/job"]
    assert [sorted(t.name for t in b.tasks.values()) for b in manager.buckets] == [
        ["ps-0", "worker-0", "worker-1"]
    ]
    worker = task(ssn, "ns/worker-0")
    assert ssn.node_order_fn(worker, ssn.nodes["n1"]) == 100.0
    ssn.pipeline(task(ssn, "ns/ps-0"), "n1")
    # The bucket now has one task on n1 and two pending: (1 + 2) * 100 / 3.
    assert ssn.node_order_fn(worker, ssn.nodes["n1"]) == 100.0
    assert ssn.node_order_fn(worker, ssn.nodes["n2"]) == 200.0 / 3
    # Tasks in a bucket go before tasks outside any bucket.
    assert ssn.task_order_fn(worker, task(ssn, "ns/other-0")) is True


def test_anti_affinity_splits_roles_into_buckets() -> None:
    annotations = {
        "volcano.sh/task-topology-anti-affinity": "worker",
        "volcano.sh/task-topology-task-order": "worker,ps",
    }
    ssn = session(_cluster(annotations), [ENTRY])
    manager = ssn.plugins["task-topology"].managers["ns/job"]
    assert [sorted(t.name for t in b.tasks.values()) for b in manager.buckets] == [
        ["worker-0"],
        ["worker-1"],
    ]
    assert manager.bucket_of(task(ssn, "ns/ps-0")) is None  # ps has no topology rule
    ssn.pipeline(task(ssn, "ns/worker-0"), "n1")
    # worker-1 dislikes the worker now on n1.
    w1 = task(ssn, "ns/worker-1")
    assert ssn.node_order_fn(w1, ssn.nodes["n1"]) == 0.0
    assert ssn.node_order_fn(w1, ssn.nodes["n2"]) == 100.0


def test_nodes_too_small_for_the_bucket_score_less() -> None:
    ssn = session(_cluster({"volcano.sh/task-topology-affinity": "ps,worker"}, small=True), [ENTRY])
    worker = task(ssn, "ns/worker-0")
    # n2 holds one task of the three: two others must be dropped.
    assert ssn.node_order_fn(worker, ssn.nodes["n2"]) == 100.0 / 3


def test_unknown_role_disables_the_job() -> None:
    ssn = session(_cluster({"volcano.sh/task-topology-affinity": "ps,chief"}), [ENTRY])
    assert ssn.plugins["task-topology"].managers == {}
    assert any("task chief do not exist in job <ns/job>" in t for t in ssn.log.texts())
