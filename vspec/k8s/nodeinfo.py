"""Kubernetes' per-node view (``framework.NodeInfo``) kept by a session as ``ssn.node_map``.

It differs from Volcano's ``NodeInfo``: an evicted task leaves it at once (the predicates
plugin's deallocate handler removes it) while Volcano keeps the task as Releasing.
"""

from __future__ import annotations

from collections.abc import Iterable

from vspec.api.node_info import NodeInfo
from vspec.api.objects import Node
from vspec.api.task_info import TaskInfo


class K8sNodeInfo:
    __slots__ = ("node", "pods")

    def __init__(self, node: Node) -> None:
        self.node = node
        self.pods: dict[str, TaskInfo] = {}

    def add_task(self, task: TaskInfo) -> None:
        self.pods[task.key] = task

    def remove_task(self, task: TaskInfo) -> None:
        self.pods.pop(task.key, None)


def build_node_map(nodes: Iterable[NodeInfo]) -> dict[str, K8sNodeInfo]:
    """``GenerateNodeMapAndSlice``: every task on a node, Releasing and Pipelined included."""
    node_map = {}
    for ni in nodes:
        if ni.node is None:
            continue
        info = K8sNodeInfo(ni.node)
        for task in ni.tasks.values():
            info.add_task(task)
        node_map[ni.name] = info
    return node_map
