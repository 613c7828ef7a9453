"""``NodeInfo.empty``: the cache rebuilds a node whose pods changed in place, and must
get what ``NewNodeInfo`` of the same Node gives."""

from __future__ import annotations

import pytest

from tests.builders import node, pod
from tests.property.test_cache import state
from vspec.api.node_info import (
    OVERSUBSCRIPTION_CPU,
    OVERSUBSCRIPTION_MEMORY,
    OVERSUBSCRIPTION_NODE,
    NodeInfo,
)
from vspec.api.task_info import REVOCABLE_ZONE_KEY, TaskInfo
from vspec.model.objects import Node

OVERSUBSCRIBED = {
    OVERSUBSCRIPTION_NODE: "true",
    OVERSUBSCRIPTION_CPU: "1500",
    OVERSUBSCRIPTION_MEMORY: "1024",
}
SHAPES = [
    node("plain"),
    node("oversubscribed", annotations=OVERSUBSCRIBED),
    node("revocable", {"cpu": "3500m", "nvidia.com/gpu": 2}, labels={REVOCABLE_ZONE_KEY: "z"}),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda n: n.meta.name)
def test_an_emptied_node_is_a_new_node_info_of_its_node(shape: Node) -> None:
    held = NodeInfo(shape)
    for i in range(3):
        running = pod("ns", f"p{i}", "j", {"cpu": 1}, node_name=shape.meta.name, phase="Running")
        held.add_task(TaskInfo(running))
    held.others["pool"] = object()
    was = held.future_idle_view()
    held.empty()
    assert state(held) == state(NodeInfo(shape))
    assert held.node is shape and not held.tasks and held.ready and not held.others
    assert held.idle is not held.allocatable
    assert held.future_idle_view() is not was
    assert held.future_idle_view().values() == NodeInfo(shape).future_idle().values()


@pytest.mark.parametrize("shape", SHAPES, ids=lambda n: n.meta.name)
def test_a_clone_is_a_new_node_info_with_every_task_added_again(shape: Node) -> None:
    """``clone`` assigns every slot by hand: it must hold what ``NewNodeInfo`` plus
    ``AddTask`` of each task gives, own its vectors, and watch and report nothing."""
    held = NodeInfo(shape)
    tasks = []
    for i, phase in enumerate(("Running", "Running", "Pending")):
        placed = pod("ns", f"p{i}", "j", {"cpu": 1}, node_name=shape.meta.name, phase=phase)
        tasks.append(TaskInfo(placed))
        held.add_task(tasks[-1])
    held.others["pool"] = "kept"
    reported: set[str] = set()
    held.report_changes(reported)
    held.report_others(reported)
    held.watch([], 3)
    clone = held.clone()
    fresh = NodeInfo(shape)
    for task in tasks:
        fresh.add_task(task)
    fresh.others["pool"] = "kept"
    assert state(clone) == state(fresh)
    for name in NodeInfo.__slots__:
        assert hasattr(clone, name), name
    vectors = ("allocatable", "capacity", "idle", "used", "releasing", "pipelined")
    for name in (*vectors, "oversubscription"):
        assert getattr(clone, name) is not getattr(held, name), name
        assert getattr(clone, name).values() == getattr(fresh, name).values(), name
    assert clone.others == {"pool": "kept"} and clone.version == len(tasks)
    assert clone.future_idle_view().values() == fresh.future_idle().values()
    clone.remove_task(tasks[0])  # reported nowhere: the clone was handed no sink
    assert not reported and clone.tasks.keys() != held.tasks.keys()
