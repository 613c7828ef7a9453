"""The nodes by name and the cluster's total that a timeline's checks keep while the node
list holds the same (or equal) nodes (NodeRows, Allocatables.total) equal what is worked
out afresh from each session's list, whatever node is replaced by a copy, cordoned,
added, taken out or moved between sessions."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import node
from vspec.invariants.history import Allocatables, NodeRows
from vspec.model.objects import Node

# One change between sessions: (what happens, which node).
Change = tuple[str, int]
changes = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["copy", "cordon", "grow", "add", "remove", "move"]), st.integers(0, 5)
        ),
        max_size=4,
    ),
    min_size=1,
    max_size=8,
)


def _apply(nodes: list[Node], change: Change) -> None:
    """Change ``nodes`` as a timeline does (a changed node is a new object in its place)
    or as it might (an equal copy, a node moved in the list)."""
    what, i = change
    at = next((j for j, n in enumerate(nodes) if n.meta.name == f"n{i}"), None)
    if what == "add" and at is None:
        nodes.append(node(f"n{i}", {"cpu": 1 + i, "pods": 8}))
        return
    if at is None:
        return
    if what == "remove":
        del nodes[at]
    elif what == "move":
        nodes.insert(i % (len(nodes) + 1), nodes.pop(at))
    else:
        new = copy.deepcopy(nodes[at])
        if what == "cordon":
            new.unschedulable = not new.unschedulable
        elif what == "grow":
            new.allocatable = {**new.allocatable, "cpu": new.allocatable["cpu"] + 1000}
        nodes[at] = new


@settings(max_examples=200, deadline=None)
@given(changes)
def test_kept_rows_and_total_equal_fresh(sessions: list[list[Change]]) -> None:
    rows, alloc = NodeRows(), Allocatables()
    nodes = [node(f"n{i}", {"cpu": 1 + i, "pods": 8}) for i in range(3)]
    for session in sessions:
        nodes = list(nodes)
        for change in session:
            _apply(nodes, change)
        got, fresh = rows.of(nodes), NodeRows().of(nodes)
        assert got.rows == fresh.rows
        assert got.nodes == fresh.nodes
        assert [got.nodes[n.meta.name] for n in nodes] == nodes
        total = alloc.total(nodes, got)
        assert total == Allocatables().total(nodes)
