"""What the K8s memo shares between the plugins of a session, and keeps for later ones:
one Snapshot while no node view changed, and values derived from the Node objects
while the node map holds the same Nodes."""

from __future__ import annotations

from tests.builders import node, pod, queue
from vspec.api.task_info import TaskInfo
from vspec.framework.cache import SchedulerCache
from vspec.framework.log import Klog
from vspec.k8s.nodeinfo import Snapshot, build_node_map
from vspec.model.conf import SchedulerOptions
from vspec.model.objects import Cluster


def _lists(snapshot: Snapshot) -> tuple[list[str], ...]:
    return (
        [n.name for n in snapshot.node_list],
        [n.name for n in snapshot.have_pods_with_affinity],
        [n.name for n in snapshot.have_pods_with_required_anti_affinity],
    )


def test_plugins_share_a_snapshot_until_a_node_view_changes() -> None:
    cluster = Cluster(nodes=[node(f"n{i}") for i in range(3)], queues=[queue("default")])
    cache = SchedulerCache(cluster, SchedulerOptions(), Klog(0))
    node_map = build_node_map(cache.snapshot().node_list, cache.k8s)
    first = cache.k8s.snapshot(node_map, cluster)
    assert cache.k8s.snapshot(node_map, cluster) is first
    assert _lists(first) == _lists(Snapshot.of_session(node_map, cluster))
    node_map["n1"].add_task(TaskInfo(pod("ns", "p", "j", {"cpu": 1}, node_name="n1")))
    changed = cache.k8s.snapshot(node_map, cluster)
    assert changed is not first
    assert _lists(changed) == _lists(Snapshot.of_session(node_map, cluster))
    assert cache.k8s.snapshot(node_map, cluster) is not changed  # still changed since


def test_node_derived_values_last_while_the_nodes_do() -> None:
    nodes = [node(f"n{i}") for i in range(3)]
    cluster = Cluster(nodes=nodes, queues=[queue("default")])
    cache = SchedulerCache(cluster, SchedulerOptions(), Klog(0))
    asked: list[int] = []

    def derive() -> int:
        asked.append(1)
        return len(asked)

    build_node_map(cache.snapshot().node_list, cache.k8s)
    assert cache.k8s.node_derived("k", derive) == 1
    cache.update(cluster)  # the same Node objects: the value stands
    build_node_map(cache.snapshot().node_list, cache.k8s)
    assert cache.k8s.node_derived("k", derive) == 1
    renamed = Cluster(nodes=[*nodes[:2], node("n2", labels={"x": "y"})], queues=cluster.queues)
    cache.update(renamed)  # another Node object: derived again
    build_node_map(cache.snapshot().node_list, cache.k8s)
    assert cache.k8s.node_derived("k", derive) == 2
