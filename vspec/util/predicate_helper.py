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
from vspec.api.unschedule_info import FitError, FitErrors, fit_error_text, node_fit_error
from vspec.util.scheduler_helper import num_feasible_nodes_to_find

if TYPE_CHECKING:
    from vspec.framework.columns import Column, NodeColumns, Verdicts
    from vspec.framework.session import Session
    from vspec.model.result import LogBlock

# A predicate's verdict on (task, node): None when the task fits, else the error, or the
# statuses of the task's FitError there (not built: a task fails on most nodes, and
# almost no FitError is ever read).
Verdict = Exception | list[Status] | None
PredicateFn = Callable[[TaskInfo, NodeInfo], Verdict]


@dataclass
class PredicateHelper:
    """Holds the per-(job, role) error cache for its lifetime (an allocate job turn,
    a backfill task, or a whole preempt action)."""

    error_cache: dict[str, dict[str, Exception | list[Status]]] = field(default_factory=dict)
    # The same cache as the columnar pass keeps it: per group, a code per node row
    # (0: none) into a list of statuses. A group is in one of the two at a time.
    coded_cache: dict[str, tuple[Column, list[list[Status]]]] = field(default_factory=dict)
    # How many nodes the columnar pass looked at last (0: none yet), to size the next
    # pass's first look: the pass stops one feasible node past numFeasibleNodesToFind,
    # most often far short of all nodes (about 1,000 of W3's 5,000).
    processed: int = 0

    def predicate_nodes(
        self,
        ssn: Session,
        task: TaskInfo,
        nodes: list[NodeInfo],
        fn: PredicateFn,
        enable_error_cache: bool,
        memo: _Memo | None = None,
    ) -> tuple[list[NodeInfo], FitErrors]:
        """``memo``: the verdicts ``fn`` keeps per node (statuses or None), if any; they
        are read for all nodes at once, and ``fn`` runs only where none is current."""
        fe = FitErrors(task)
        if not task.task_role:
            enable_error_cache = False
        total = len(nodes)
        if total == 0:
            return [], fe
        group = f"{task.job}/{task.task_role}"
        self._uncode(group, ssn)
        node_errors = self.error_cache.get(group)
        use_cache = enable_error_cache and node_errors is not None
        if node_errors is None:
            node_errors = {}
        state = ssn.state
        offset = state.last_processed_node_index
        start = offset % total
        ordered = nodes[start:] + nodes[:start]
        to_find = num_feasible_nodes_to_find(total, ssn.options)
        walk = _Pass(ssn, task, fn, fe, to_find, (node_errors, use_cache))
        processed = walk.run(ordered, memo)
        if node_errors:
            self.error_cache[group] = node_errors
        state.last_processed_node_index = (offset + processed) % total
        ssn.recorder.predicated(ssn, task, ordered, processed, walk.found, fe)
        return walk.found, fe

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
        rotation = cols.rotation(start)  # Volcano's rotation: row rotation[position]
        shift = 0  # the cache's statuses come first in ``statuses`` (as they are now)
        if cached is not None and enable_error_cache:
            shift = len(cached[1])
            statuses = cached[1] + verdicts.statuses
        else:
            cached, statuses = None, verdicts.statuses
        # The first positions only, twice as many as the last pass needed (four times
        # numFeasibleNodesToFind at first); all of them when the feasible nodes there do
        # not reach past it. Nothing past the stop is read: the answer is the same.
        look = min(total, 2 * (self.processed or 2 * (to_find + 1)) + 64)
        while True:
            order = rotation[:look]
            fresh = verdicts.at(order)
            codes = fresh
            not_cached = None
            if cached is not None:
                # A cached failure decides its node; the fresh codes are shifted past
                # the cache's statuses only where a fit error is built from them.
                cached_codes = cached[0][order]
                not_cached = cached_codes == 0
                codes = np.where(not_cached, fresh, cached_codes)
            passing = (codes == 0).nonzero()[0]
            if len(passing) > to_find or look == total:
                break
            look = total
        processed, failures = total, total - len(passing)
        if len(passing) > to_find:
            processed = int(passing[to_find]) + 1
            passing = passing[:to_find]
            failures = processed - to_find - 1  # the stop's node passes
        self.processed = processed
        state.last_processed_node_index = (offset + processed) % total
        if not failures:  # most tasks of a roomy cluster: no node to log or keep
            return order[passing], FitErrors()
        failing = (codes[:processed] != 0).nonzero()[0]
        new = failing if not_cached is None else failing[not_cached[failing]]
        if len(new):
            new_rows, new_codes = order[new], fresh[new]
            self._remember(group, cols, new_rows, new_codes, verdicts.statuses)
            if ssn.log.enabled(3):
                _log_failures(ssn, task, cols.names, new_rows, new_codes, verdicts.statuses)
        if len(passing):  # allocate reads a task's fit errors only when no node passed
            return order[passing], FitErrors()
        failed = codes[failing]
        if not_cached is not None:
            failed = np.where(not_cached[failing], failed + shift, failed)
        fe = FitErrors.of_codes(task, cols.names, order[failing], failed, statuses)
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
        table = [_statuses_of(err) for err in node_errors.values()]
        at = np.array([rows[name] for name in node_errors], dtype=np.intp)
        entry = self.coded_cache.get(group)
        if entry is None:
            entry = self.coded_cache[group] = (np.zeros(cols.size, dtype=np.int32), [])
        entry[0][at] = np.arange(1, len(table) + 1, dtype=np.int32) + len(entry[1])
        entry[1].extend(table)

    def _uncode(self, group: str, ssn: Session) -> None:
        """Move ``group``'s coded cache entry into the per-node cache."""
        entry = self.coded_cache.pop(group, None)
        if entry is None:
            return
        codes, statuses = entry
        names = ssn.columns.names if ssn.columns is not None else []
        node_errors = self.error_cache.setdefault(group, {})
        for row in codes.nonzero()[0]:
            node_errors[names[row]] = statuses[codes[row] - 1]


_Memo = dict[str, tuple[int, list[Status] | None]]  # a NodeTable of predicate verdicts


class _Pass:
    """One :meth:`PredicateHelper.predicate_nodes` pass in Volcano's order. Nodes whose
    verdicts are known (cached or memoised) run no plugin code: their V(3) lines are
    logged in bulk before the next line something else logs (``fn``'s plugins, V(4)),
    and their fit errors and cache entries are stored without a call per node."""

    __slots__ = (
        "entries",
        "errors",
        "fn",
        "found",
        "lines",
        "log",
        "names",
        "reasons",
        "task",
        "to_find",
        "use_cache",
    )

    def __init__(
        self,
        ssn: Session,
        task: TaskInfo,
        fn: PredicateFn,
        fe: FitErrors,
        to_find: int,
        cache: tuple[dict[str, Exception | list[Status]], bool],
    ) -> None:
        """``cache``: the group's error cache, and whether its errors are reused."""
        self.task, self.fn, self.to_find = task, fn, to_find
        self.entries = fe.entries()
        self.errors, self.use_cache = cache
        self.log = ssn.log
        self.lines = _FailureLines(ssn, task) if self.log.enabled(3) else None
        # The known failures whose V(3) lines are not logged yet: nodes and statuses.
        self.names: list[str] = []
        self.reasons: list[list[Status]] = []
        self.found: list[NodeInfo] = []

    def run(self, ordered: list[NodeInfo], memo: _Memo | None) -> int:
        """How many nodes of ``ordered`` were looked at (Volcano cancels its workers
        once one node too many fits)."""
        get = (memo or {}).get
        # Memoised functions are node-local, which log nothing the session keeps: the
        # known failures' lines need not go out before each call.
        may_log = memo is None
        cached = self.errors.get if self.use_cache else None
        verbose = self.log.enabled(4)
        found, to_find, entries, errors = self.found, self.to_find, self.entries, self.errors
        names, reasons = self.names, self.reasons
        processed = len(ordered)
        for index, node in enumerate(ordered):
            name = node.name
            if verbose:
                self._considering(node)
            if cached is not None and (err := cached(name)) is not None:
                entries[name] = err if isinstance(err, list) else node_fit_error(name, err)
                continue
            hit = get(name)
            if hit is None or hit[0] != node.version:
                if self._ask(node, may_log) is not None:
                    continue
            elif (statuses := hit[1]) is not None:
                errors[name] = entries[name] = statuses
                names.append(name)
                reasons.append(statuses)
                continue
            if len(found) == to_find:
                processed = index + 1
                break
            found.append(node)
        self._log_known()
        return processed

    def _considering(self, node: NodeInfo) -> None:
        task = self.task
        self._log_known()
        self.log.v(
            4,
            f"Considering Task <{task.namespace}/{task.name}> on node <{node.name}>: "
            f"<{task.resreq}> vs. <{node.idle}>",
        )

    def _ask(self, node: NodeInfo, may_log: bool) -> Verdict:
        """``fn``'s verdict on ``node``, its V(3) line logged after those before it (and
        before ``fn``'s own, when it ``may_log``)."""
        if may_log:
            self._log_known()
        name = node.name
        err = self.fn(self.task, node)
        if err is None:
            return None
        if isinstance(err, list):  # its line is logged with the known failures'
            self.errors[name] = self.entries[name] = err
            self.names.append(name)
            self.reasons.append(err)
            return err
        self._log_known()
        if self.lines is not None:
            self.lines.log(err)
        self.errors[name] = err
        self.entries[name] = node_fit_error(name, err)
        return err

    def _log_known(self) -> None:
        """The V(3) lines of the known failures not logged yet."""
        if self.names:
            if self.lines is not None:
                self.lines.extend(self.names, self.reasons)
            self.names.clear()
            self.reasons.clear()


def _log_failures(
    ssn: Session,
    task: TaskInfo,
    names: list[str],
    rows: Column,
    codes: Column,
    statuses: list[list[Status]],
) -> None:
    """``Predicates failed: <err>`` for each new failure, as one block of lines. The
    arrays are the caller's fresh gathers, never written afterwards: kept, not copied."""
    namespace, name = task.namespace, task.name
    at: Any = rows
    why: Any = codes

    def render(i: int) -> str:
        return fit_error_text(namespace, name, names[at[i]], statuses[why[i] - 1])

    ssn.log.block(3, FAILED_HEAD, render, len(at))


def _statuses_of(err: Exception | list[Status]) -> list[Status]:
    if isinstance(err, list):
        return err
    return err.statuses if isinstance(err, FitError) else [Status(Code.Error, str(err))]


FAILED_HEAD = "Predicates failed: "


class _FailureLines:
    """The ``Predicates failed: <err>`` lines of one predicate pass. Consecutive ones are
    one :class:`~vspec.model.result.LogBlock` that grows by a line per failing node
    (a node name and a shared statuses list), formatted only if read; a line logged in
    between (a plugin's, the V(4) "Considering" line) starts the next block, so the
    log's order is the order of the calls."""

    __slots__ = ("_block", "_log", "_name", "_namespace", "_nodes", "_statuses")

    def __init__(self, ssn: Session, task: TaskInfo) -> None:
        self._log = ssn.log
        self._namespace, self._name = task.namespace, task.name
        self._block: LogBlock | None = None
        self._nodes: list[str] = []
        self._statuses: list[list[Status]] = []

    def log(self, err: Exception) -> None:
        """The line for ``err``; a FitError's text is that of its parts as they are now
        (set_node_error may rename it afterwards). Statuses are logged by
        :meth:`extend`."""
        if not isinstance(err, FitError):
            self._log.v(3, f"{FAILED_HEAD}{err}")
        elif err.task_namespace == self._namespace and err.task_name == self._name:
            self.extend([err.node_name], [err.statuses])
        else:
            parts = (err.task_namespace, err.task_name, err.node_name, err.statuses)
            self._log.lazy(3, FAILED_HEAD, fit_error_text, *parts)

    def extend(self, nodes: list[str], statuses: list[list[Status]]) -> None:
        """The lines of ``nodes`` that failed with ``statuses``, in order."""
        block = self._block
        if block is not None and self._log.lines.grow(block, len(nodes)):
            self._nodes.extend(nodes)
            self._statuses.extend(statuses)
            return
        namespace, name = self._namespace, self._name
        at, why = self._nodes, self._statuses = list(nodes), list(statuses)

        def render(i: int) -> str:
            return fit_error_text(namespace, name, at[i], why[i])

        self._block = self._log.block(3, FAILED_HEAD, render, len(at))
