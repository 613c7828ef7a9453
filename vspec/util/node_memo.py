"""Per-node memo of results that depend only on a node's state and a task key.

Scheduling a task predicates and scores hundreds of nodes, yet between two tasks only
the node that took the last one changed, and the tasks of a job (often of many jobs)
ask the same question. Functions that declare themselves node-local (see
``SessionPlugins.add_predicate_fn``) give a key per task; a result stored under that key
stays valid while the node's ``NodeInfo.version`` is the one it was computed at.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")

# node name -> (NodeInfo.version the result was computed at, result)
NodeTable = dict[str, tuple[int, V]]


class NodeMemo(Generic[V]):
    """One table per key, for the ``capacity`` keys used last (a workload whose every task
    differs would otherwise keep a result per task and node). Hot loops take a key's table
    once per task, read it with ``table.get(node.name)``, check the version, and write it
    directly."""

    __slots__ = ("_capacity", "_tables")

    def __init__(self, capacity: int = 64) -> None:
        self._capacity = capacity
        self._tables: dict[Hashable, NodeTable[V]] = {}

    def table(self, key: Hashable) -> NodeTable[V]:
        tables = self._tables
        table = tables.pop(key, None)
        if table is None:
            table = {}
            if len(tables) >= self._capacity:
                del tables[next(iter(tables))]  # the least recently used key
        tables[key] = table
        return table
