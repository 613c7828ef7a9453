"""Allocate's per-task questions asked of all nodes at once (issue 18).

For a task whose every predicate and NodeOrder function is node-local and offers a
columnar variant (``add_predicate_fn(..., columnar=)``), the resource fit, the
plugins' verdicts and the scores come from array operations over the session's
:class:`~vspec.framework.columns.NodeColumns` instead of a Python call per node. The
answers are exactly the per-node path's: the same verdicts in the same canonical
node order (Volcano's sampling from ``last_processed_node_index``, see
``PredicateHelper.predicate_rows``), the same float64 sums in the same order.

The path is taken only where nothing can tell the difference: no log line the
per-node path would keep is lost (verbosity below 4, where per-node lines start; the
V(3) "Predicates failed" lines are logged as a block), and the recorder does not
watch per-node calls (``Recorder.watches_nodes``; ``vspec explain`` does). Columnar
variants must be pure: no log line, no state change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vspec.api.resource import Resource
from vspec.api.task_info import TaskInfo
from vspec.api.types import Code, Status
from vspec.api.unschedule_info import insufficient_resource_reason

if TYPE_CHECKING:
    from vspec.framework.columns import Column, NodeColumns, Verdicts
    from vspec.framework.session import Session
    from vspec.framework.session_plugins import ColumnarScoreFn

# Below this many nodes the per-node path (with its memos) is as fast (W1, 100 nodes:
# within noise), and numpy is not imported (about 0.1 s of start-up).
COLUMNAR_MIN_NODES = 128


def session_columns(ssn: Session) -> NodeColumns | None:
    """The session's node columns when the columnar path may be taken at all."""
    if ssn.columns is not None:
        return ssn.columns
    if ssn.recorder.watches_nodes or ssn.log.enabled(4):
        return None
    if len(ssn.node_list) < COLUMNAR_MIN_NODES:
        return None
    from vspec.framework.columns import NodeColumns

    # The cache's columns, carried over from the last session: mostly the same nodes.
    cache = ssn.cache
    companions = [ssn.node_map.get(node.name) for node in ssn.node_list]
    kept = cache.columns
    if kept is None or not kept.renew(ssn.node_list, companions):
        if kept is not None:
            kept.close()
        kept = cache.columns = NodeColumns(ssn.node_list, companions)
    ssn.columns = kept
    return kept


def fit_verdicts(cols: NodeColumns, request: Resource) -> Verdicts:
    """Allocate's resource check on every node: ``request <= FutureIdle`` (with Zero for
    missing scalars), failing as Unschedulable "Insufficient <first short dimension>"."""
    from vspec.framework.columns import Verdicts, dimensions

    statuses = [
        [Status(Code.Unschedulable, insufficient_resource_reason([name]))]
        for name in dimensions(request)
    ]
    return Verdicts(cols.fit(request, cols.future_idle), statuses)


def allocate_verdicts(ssn: Session, task: TaskInfo, cols: NodeColumns) -> Verdicts | None:
    """Allocate's predicate on every node (the resource fit, then the plugins in order,
    the first failure deciding, kept only with an allocate-failing code), or None when
    some predicate is not node-local or columnar for ``task``."""
    from vspec.framework.session import ALLOCATE_FAILS

    fns = ssn.columnar_fns("predicate")
    if fns is None or ssn.node_local_key("predicate", task) is None:
        return None
    import numpy as np

    verdicts = fit_verdicts(cols, task.init_resreq)
    codes = verdicts.codes.copy()
    statuses = list(verdicts.statuses)
    fixed = len(statuses)  # the resource fit's own failures are kept whatever their code
    for fn in fns:
        answer = fn(task, cols)
        if answer is None:
            return None
        undecided = (codes == 0) & (answer.codes != 0)
        codes[undecided] = answer.codes[undecided] + len(statuses)
        statuses.extend(answer.statuses)
    keep = [
        k < fixed or any(s.code in ALLOCATE_FAILS for s in sts) for k, sts in enumerate(statuses)
    ]
    if not all(keep):
        lut = np.array([0, *(k + 1 if kept else 0 for k, kept in enumerate(keep))], np.int32)
        codes = lut[codes]
    verdicts.codes, verdicts.statuses = codes, statuses
    return verdicts


def scores(ssn: Session, task: TaskInfo, cols: NodeColumns, rows: Column) -> Column | None:
    """``PrioritizeNodes`` for the nodes at ``rows``: per node the NodeOrder sum plus the
    BatchNodeOrder sum, added in the per-node path's order; None when some function is
    not columnar for ``task`` (or declines it)."""
    order = ssn.columnar_fns("node_order")
    batch = ssn.columnar_fns("batch_node_order")
    key = ssn.node_local_key("node_order", task)
    if order is None or batch is None or key is None:
        return None
    # Node-local: a row's NodeOrder sum depends on the key and its node only, so the
    # tasks of a job (one key) recompute only the rows their placements changed.
    total = cols.memo(("node_order", key), rows, lambda at: _summed(order, task, cols, at))
    batch_total = None if total is None else _summed(batch, task, cols, rows)
    if total is None or batch_total is None:
        return None
    result: Column = total + batch_total
    return result


def _summed(
    fns: list[ColumnarScoreFn], task: TaskInfo, cols: NodeColumns, rows: Column
) -> Column | None:
    """0.0 plus each function's scores in order (as the per-node path adds them)."""
    import numpy as np

    total = np.zeros(len(rows), dtype=np.float64)
    for fn in fns:
        part = fn(task, cols, rows)
        if part is None:
            return None
        total = total + part
    return total
