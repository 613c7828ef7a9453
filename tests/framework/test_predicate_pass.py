"""A predicate pass that reads memoised verdicts in bulk decides and logs as the pass
that asks every node in turn."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from vspec.api.types import Code, Status
from vspec.api.unschedule_info import FitError
from vspec.framework.log import Klog
from vspec.model.conf import SchedulerOptions
from vspec.util.predicate_helper import PredicateHelper, Verdict

SHORT = [Status(Code.Unschedulable, "Insufficient cpu")]


def _ssn() -> Any:
    return SimpleNamespace(
        log=Klog(),
        options=SchedulerOptions(min_nodes_to_find=3, percentage_of_nodes_to_find=30),
        state=SimpleNamespace(last_processed_node_index=2),
        recorder=SimpleNamespace(predicated=lambda *_args: None),
        columns=None,
    )


def _pass(memo: dict[str, tuple[int, list[Status] | None]] | None) -> tuple[Any, ...]:
    """Nodes n0..n9: even ones fail; n4 and n7 have no current memo entry; the error
    cache already holds n3. Asked node by node (no memo), the function logs a line of
    its own; memoised, it is node-local, which logs nothing."""
    ssn = _ssn()
    task: Any = SimpleNamespace(namespace="ns", name="p", job="j", task_role="r", resreq="1")
    nodes: Any = [SimpleNamespace(name=f"n{i}", version=1) for i in range(10)]

    def fn(_task: Any, node: Any) -> Verdict:
        if memo is None:
            ssn.log.v(3, f"asked {node.name}")
        if int(node.name[1:]) % 2:
            return None
        return FitError("ns", "p", node.name, SHORT) if memo is None else SHORT

    helper = PredicateHelper()
    cached = FitError("ns", "other", "n3", [Status(Code.Error, "cached")])
    helper.error_cache["j/r"] = {"n3": cached}
    found, fe = helper.predicate_nodes(ssn, task, nodes, fn, True, memo)
    reasons = {name: [s.reason for s in err.statuses] for name, err in fe.nodes.items()}
    texts = [line.text for line in ssn.log.lines]
    return (
        [n.name for n in found],
        list(fe.nodes),
        reasons,
        list(helper.error_cache["j/r"]),
        ssn.state.last_processed_node_index,
        [t for t in texts if not t.startswith("asked n")],
        texts,
    )


MEMO: dict[str, tuple[int, list[Status] | None]] = {
    f"n{i}": (1, None if i % 2 else SHORT) for i in range(10) if i not in (4, 7)
}


def test_memoised_pass_matches_the_node_by_node_pass() -> None:
    assert _pass(MEMO)[:-1] == _pass(None)[:-1]


def _order(texts: list[str]) -> list[str]:
    return [t.removeprefix("Predicates failed: task ns/p on node ").split(" fit")[0] for t in texts]


def test_plugin_lines_stay_between_the_failures_around_them() -> None:
    assert _order(_pass(None)[-1]) == [
        *("asked n2", "n2", "asked n4", "n4", "asked n5", "asked n6", "n6", "asked n7"),
        *("asked n8", "n8", "asked n9", "asked n0", "n0", "asked n1"),
    ]


def test_memoised_failures_are_logged_in_the_pass_s_order() -> None:
    """Known and asked alike, from the rotation's start (n2); n3's cached error has none."""
    assert _order(_pass(MEMO)[-1]) == ["n2", "n4", "n6", "n8", "n0"]
