"""Predicating a task over nodes (``util/predicate_helper.go``).

Volcano checks nodes with 16 workers from a rotating offset and keeps the feasible ones
in completion order; vspec checks them sequentially from the same offset, so the
feasible list is in node order (deterministic) and the offset advances as in Volcano.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import Code, Status
from vspec.api.unschedule_info import FitError, FitErrors, fit_error_text
from vspec.util.scheduler_helper import num_feasible_nodes_to_find

if TYPE_CHECKING:
    from vspec.framework.columns import Column, NodeColumns, Verdicts
    from vspec.framework.session import Session

PredicateFn = Callable[[TaskInfo, NodeInfo], Exception | None]


@dataclass
class PredicateHelper:
    """Holds the per-(job, role) error cache for its lifetime (an allocate job turn,
    a backfill task, or a whole preempt action)."""

    error_cache: dict[str, dict[str, Exception]] = field(default_factory=dict)
    # The same cache as the columnar pass keeps it: per group, a code per node row
    # (0: none) into a list of statuses. A group is in one of the two at a time.
    coded_cache: dict[str, tuple[Column, list[list[Status]]]] = field(default_factory=dict)

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
        self._uncode(group, ssn, task)
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

    def predicate_rows(
        self,
        ssn: Session,
        task: TaskInfo,
        cols: NodeColumns,
        verdicts: Verdicts,
        enable_error_cache: bool,
    ) -> tuple[Column, FitErrors]:
        """:meth:`predicate_nodes` over every node of ``cols`` with the verdicts already
        computed for all of them: the same rotation, the same stop one feasible node
        past ``numFeasibleNodesToFind``, the same error cache, the same V(3) lines
        (one block), and fit errors as codes, when no node passes (empty otherwise).
        Returns the feasible rows in order."""
        import numpy as np

        if not task.task_role:
            enable_error_cache = False
        total = cols.size
        if total == 0:
            return np.zeros(0, dtype=np.intp), FitErrors()
        to_find = num_feasible_nodes_to_find(total, ssn.options)
        group = f"{task.job}/{task.task_role}"
        self._encode(group, cols)
        cached = self.coded_cache.get(group)
        state = ssn.state
        offset = state.last_processed_node_index
        start = offset % total
        order = cols.rotation(start)  # Volcano's rotation: row order[position]
        fresh = verdicts.codes[order]
        codes = fresh
        statuses = verdicts.statuses
        from_cache = None
        if cached is not None and enable_error_cache:
            cached_codes = cached[0][order]
            from_cache = cached_codes != 0
            shift = len(cached[1])
            codes = np.where(from_cache, cached_codes, np.where(fresh != 0, fresh + shift, 0))
            statuses = cached[1] + statuses
        passing = np.flatnonzero(codes == 0)
        processed = total
        if len(passing) > to_find:
            processed = int(passing[to_find]) + 1
            passing = passing[:to_find]
        state.last_processed_node_index = (offset + processed) % total
        failing = np.flatnonzero(codes[:processed] != 0)
        new = failing if from_cache is None else failing[~from_cache[failing]]
        if len(new):
            new_rows, new_codes = order[new], fresh[new]
            self._remember(group, cols, new_rows, new_codes, verdicts.statuses)
            if ssn.log.enabled(3):
                _log_failures(ssn, task, cols.names, new_rows, new_codes, verdicts.statuses)
        if len(passing):  # allocate reads a task's fit errors only when no node passed
            return order[passing], FitErrors()
        fe = FitErrors.of_codes(task, cols.names, order[failing], codes[failing], statuses)
        return order[passing], fe

    def _remember(
        self,
        group: str,
        cols: NodeColumns,
        rows: Column,
        codes: Column,
        statuses: list[list[Status]],
    ) -> None:
        import numpy as np

        entry = self.coded_cache.get(group)
        if entry is None:
            entry = self.coded_cache[group] = (np.zeros(cols.size, dtype=np.int32), [])
        entry[0][rows] = codes + len(entry[1])
        entry[1].extend(statuses)

    def _encode(self, group: str, cols: NodeColumns) -> None:
        """Move ``group``'s per-node cache entries into the coded cache."""
        node_errors = self.error_cache.pop(group, None)
        if not node_errors:
            return
        import numpy as np

        rows = {name: row for row, name in enumerate(cols.names)}
        table = [
            err.statuses if isinstance(err, FitError) else [Status(Code.Error, str(err))]
            for err in node_errors.values()
        ]
        at = np.array([rows[name] for name in node_errors], dtype=np.intp)
        entry = self.coded_cache.get(group)
        if entry is None:
            entry = self.coded_cache[group] = (np.zeros(cols.size, dtype=np.int32), [])
        entry[0][at] = np.arange(1, len(table) + 1, dtype=np.int32) + len(entry[1])
        entry[1].extend(table)

    def _uncode(self, group: str, ssn: Session, task: TaskInfo) -> None:
        """Move ``group``'s coded cache entry into the per-node cache."""
        entry = self.coded_cache.pop(group, None)
        if entry is None:
            return
        codes, statuses = entry
        names = ssn.columns.names if ssn.columns is not None else []
        node_errors = self.error_cache.setdefault(group, {})
        for row in codes.nonzero()[0]:
            name = names[row]
            node_errors[name] = FitError(task.namespace, task.name, name, statuses[codes[row] - 1])


def _log_failures(
    ssn: Session,
    task: TaskInfo,
    names: list[str],
    rows: Column,
    codes: Column,
    statuses: list[list[Status]],
) -> None:
    """``Predicates failed: <err>`` for each new failure, as one block of lines."""
    namespace, name = task.namespace, task.name
    at: Any = rows.copy()
    why: Any = codes.copy()

    def render(i: int) -> str:
        return fit_error_text(namespace, name, names[at[i]], statuses[why[i] - 1])

    ssn.log.block(3, "Predicates failed: ", render, len(at))


def _log_failure(ssn: Session, err: Exception) -> None:
    """``Predicates failed: <err>``; a FitError's text is formatted only if the line is
    read, from its parts as they are now (set_node_error may rename it afterwards)."""
    if isinstance(err, FitError):
        parts = (err.task_namespace, err.task_name, err.node_name, err.statuses)
        ssn.log.lazy(3, "Predicates failed: ", fit_error_text, *parts)
    else:
        ssn.log.v(3, f"Predicates failed: {err}")
