"""conformance: critical and kube-system pods are never preempted or reclaimed."""

from __future__ import annotations

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.model.objects import Cluster, Pod


def _running(namespace: str, name: str, priority_class: str = "") -> Pod:
    p = pod(namespace, name, "pg", {"cpu": "1"}, phase="Running", node_name="n1")
    p.priority_class_name = priority_class
    return p


def test_critical_and_system_pods_are_protected() -> None:
    cluster = Cluster(
        nodes=[node("n1", {"cpu": "8", "memory": "8Gi", "pods": "10"})],
        pods=[
            pod("c1", "preemptor", "pg", {"cpu": "1"}),
            _running("c1", "plain"),
            _running("c1", "critical", "system-cluster-critical"),
            _running("c1", "node-critical", "system-node-critical"),
            _running("kube-system", "sys"),
        ],
        pod_groups=[pod_group("c1", "pg", "q1"), pod_group("kube-system", "pg", "q1")],
        queues=[queue("q1")],
    )
    ssn = session(
        cluster, [{"name": "conformance", "enablePreemptable": True, "enableReclaimable": True}]
    )
    preemptor = task(ssn, "c1/preemptor")
    candidates = [
        task(ssn, key) for key in ("c1/plain", "c1/critical", "c1/node-critical", "kube-system/sys")
    ]
    assert ssn.preemptable(preemptor, candidates) == [candidates[0]]
    assert ssn.reclaimable(preemptor, candidates) == [candidates[0]]
    # Only protected candidates: an empty answer, i.e. no victims.
    assert ssn.preemptable(preemptor, candidates[1:]) == []
