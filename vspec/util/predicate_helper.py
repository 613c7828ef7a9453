"""Predicating a task over nodes (``util/predicate_helper.go``).

Volcano checks nodes with 16 workers from a rotating offset and keeps the feasible ones
in completion order; vspec checks them sequentially from the same offset, so the
feasible list is in node order (deterministic) and the offset advances as in Volcano.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.api.unschedule_info import FitError, FitErrors, fit_error_text
from vspec.util.scheduler_helper import num_feasible_nodes_to_find

if TYPE_CHECKING:
    from vspec.framework.session import Session

PredicateFn = Callable[[TaskInfo, NodeInfo], Exception | None]


@dataclass
class PredicateHelper:
    """Holds the per-(job, role) error cache for its lifetime (an allocate job turn,
    a backfill task, or a whole preempt action)."""

    error_cache: dict[str, dict[str, Exception]] = field(default_factory=dict)

    def predicate_nodes(
        self,
        ssn: Session,
        task: TaskInfo,
        nodes: list[NodeInfo],
        fn: PredicateFn,
        enable_error_cache: bool,
    ) -> tuple[list[NodeInfo], FitErrors]:
        fe = FitErrors()
        if not task.task_role:
            enable_error_cache = False
        total = len(nodes)
        if total == 0:
            return [], fe
        to_find = num_feasible_nodes_to_find(total, ssn.options)
        group = f"{task.job}/{task.task_role}"
        node_errors = self.error_cache.get(group)
        failed_before = node_errors is not None
        if node_errors is None:
            node_errors = {}
        state = ssn.state
        offset = state.last_processed_node_index
        log = ssn.log
        verbose = log.enabled(4)
        log_failures = log.enabled(3)
        use_cache = enable_error_cache and failed_before
        found: list[NodeInfo] = []
        start = offset % total
        processed = total
        ordered = nodes[start:] + nodes[:start]
        for index, node in enumerate(ordered):
            if verbose:
                log.v(
                    4,
                    f"Considering Task <{task.namespace}/{task.name}> on node <{node.name}>: "
                    f"<{task.resreq}> vs. <{node.idle}>",
                )
            if use_cache:
                cached = node_errors.get(node.name)
                if cached is not None:
                    fe.set_node_error(node.name, cached)
                    continue
            err = fn(task, node)
            if err is not None:
                if log_failures:
                    _log_failure(ssn, err)
                node_errors[node.name] = err
                self.error_cache[group] = node_errors
                fe.set_node_error(node.name, err)
                continue
            if len(found) == to_find:
                processed = index + 1
                break  # Volcano cancels the workers once one node too many fits
            found.append(node)
        state.last_processed_node_index = (offset + processed) % total
        ssn.recorder.predicated(ssn, task, ordered, processed, found, fe)
        return found, fe


def _log_failure(ssn: Session, err: Exception) -> None:
    """``Predicates failed: <err>``; a FitError's text is formatted only if the line is
    read, from its parts as they are now (set_node_error may rename it afterwards)."""
    if isinstance(err, FitError):
        parts = (err.task_namespace, err.task_name, err.node_name, err.statuses)
        ssn.log.lazy(3, "Predicates failed: ", fit_error_text, *parts)
    else:
        ssn.log.v(3, f"Predicates failed: {err}")
