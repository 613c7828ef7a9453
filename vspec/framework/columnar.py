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

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from vspec.api.node_info import NodeInfo
from vspec.api.resource import ZERO, Resource
from vspec.api.task_info import TaskInfo
from vspec.api.types import Code, Status
from vspec.api.unschedule_info import FitError, insufficient_resource_reason

if TYPE_CHECKING:
    from vspec.framework.columns import Column, NodeColumns, Verdicts
    from vspec.framework.session import Session
    from vspec.framework.session_plugins import ColumnarPredicateFn, ColumnarScoreFn

# The plugins' per-node predicate for one task in allocate.
PerNodePredicate = Callable[[NodeInfo], FitError | None]

# Below this many nodes the per-node path (with its memos) is as fast (W1, 100 nodes:
# within noise), and numpy is not imported (about 0.1 s of start-up).
COLUMNAR_MIN_NODES = 128
# Combinations kept per fit's answers (one per plugins' key met with its request).
_COMBINED_KEPT = 16


def session_columns(ssn: Session) -> NodeColumns | None:
    """The session's node columns when the columnar path may be taken at all."""
    if ssn.columns is not None:
        return ssn.columns
    if ssn.recorder.watches_nodes or ssn.log.enabled(4):
        return None
    if len(ssn.node_list) < COLUMNAR_MIN_NODES:
        return None
    from vspec.framework.columns import NodeColumns

    # The cache's columns, carried over from the last session: mostly the same nodes,
    # whose names (kept by the columns) find their node-map entries without reading
    # every node; where the K8s memo made the node map from the views it made the last
    # one of, only the entries it built again since are compared.
    cache = ssn.cache
    kept = cache.columns
    report = cache.k8s.rebuilt_since(ssn.node_map, None if kept is None else kept.companions_mark)
    if kept is not None:
        if report is not None and report[1] is not None:
            renewed = kept.renew(ssn.node_list, report[0], report[1])
        else:
            renewed = kept.renew(ssn.node_list, list(map(ssn.node_map.get, kept.names)))
        if renewed:
            kept.companions_mark = None if report is None else report[2]
            ssn.columns = kept
            return kept
        kept.close()
    companions = [ssn.node_map.get(node.name) for node in ssn.node_list]
    kept = cache.columns = NodeColumns(ssn.node_list, companions)
    kept.companions_mark = None if report is None else report[2]
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


def allocate_verdicts(
    ssn: Session, task: TaskInfo, cols: NodeColumns, per_node: PerNodePredicate
) -> tuple[Verdicts, Column] | None:
    """Allocate's predicate on every node (the resource fit, then the plugins in order,
    the first failure deciding, kept only with an allocate-failing code) and, per node,
    whether the request fits Idle; None when some predicate is not node-local or
    columnar for ``task``. ``per_node`` is the plugins' per-node predicate for the
    task (``Session.predicate_for_allocate_action``).

    Node-local: the fit's answers on a row depend on the request and the row's node
    only, the plugins' on their key and the node, so each is kept per key (a job's
    tasks share both, and many jobs too) and recomputed only for the rows whose node
    changed since; a few such rows are asked row by row (the plugins' of ``per_node``,
    whose answers the variants must equal), cheaper there than numpy calls. The two
    combined are kept too (:class:`_Combined`), brought up to date on the rows either
    wrote since."""
    fns = ssn.columnar_fns("predicate")
    plugins_key = ssn.node_local_key("predicate", task)
    if fns is None or plugins_key is None:
        return None
    scope = ssn.node_local_scope("predicate")
    plugins = _plugin_answers(task, cols, fns, (plugins_key, scope), per_node)
    if plugins is None:
        return None
    fit = _fit_answers(cols, task.init_resreq)
    return _combined(cols, fit, plugins), fit.fits_idle


class _Written:
    """Answers per row that log the rows they write (``written``, in order) for the
    combinations read from them (:class:`_Combined`). The log starts over as a new list
    when every row is written or it outgrows twice the rows: a reader holding the old
    list then combines every row again."""

    __slots__ = ("written",)

    def __init__(self) -> None:
        self.written: list[int] = []

    def wrote(self, rows: Sequence[int], size: int) -> None:
        if len(rows) == size or len(self.written) + len(rows) > 2 * size:
            self.written = []
        else:
            self.written.extend(rows)


class _FitAnswers(_Written):
    """Per row, the resource fit of one request against FutureIdle (0, or 1 + the first
    short dimension's index into ``statuses``) and against Idle; and its combinations
    with plugins' answers, by the plugins' answers' identity."""

    __slots__ = ("codes", "combined", "dims", "fits_idle", "statuses")

    def __init__(self, size: int, request: Resource) -> None:
        import numpy as np

        from vspec.framework.columns import dimensions

        super().__init__()
        self.codes = np.zeros(size, dtype=np.int32)
        self.fits_idle = np.zeros(size, dtype=np.bool_)
        self.dims = dimensions(request)
        self.statuses = [
            [Status(Code.Unschedulable, insufficient_resource_reason([name]))] for name in self.dims
        ]
        self.combined: dict[int, _Combined] = {}


def _fit_answers(cols: NodeColumns, request: Resource) -> _FitAnswers:
    key = ("allocate fit", request.signature())
    answers, stale = cols.kept(key, lambda: _FitAnswers(cols.size, request))
    if len(stale) == 0:
        return answers
    if cols.few(len(stale)):
        dims, nodes = answers.dims, cols.nodes
        for row in stale:
            node = nodes[row]
            future_idle = node.future_idle_view()
            code = 0  # the cheaper check first: most rows asked again still fit
            if not request.less_equal(future_idle, ZERO):
                short = request.less_equal_with_resources_name(future_idle, ZERO)
                code = dims.index(short[0]) + 1
            answers.codes[row] = code
            answers.fits_idle[row] = request.less_equal(node.idle, ZERO)
    elif len(stale) == cols.size:
        answers.codes[:] = cols.fit(request, cols.future_idle)
        answers.fits_idle[:] = cols.fit(request, cols.idle) == 0
    else:
        import numpy as np

        at = np.array(stale, dtype=np.intp)
        answers.codes[at] = cols.fit(request, cols.future_idle, at)
        answers.fits_idle[at] = cols.fit(request, cols.idle, at) == 0
    answers.wrote(stale, cols.size)
    cols.settle(key)
    return answers


class _PluginAnswers(_Written):
    """Per row, the plugins' verdict for one node-local key: a code into a growing list
    of status lists (one code per distinct list)."""

    __slots__ = ("codes", "codes_of", "statuses")

    def __init__(self, size: int) -> None:
        import numpy as np

        super().__init__()
        self.codes = np.zeros(size, dtype=np.int32)
        self.statuses: list[list[Status]] = []
        self.codes_of: dict[tuple[Status, ...], int] = {}

    def code(self, statuses: list[Status]) -> int:
        key = tuple(statuses)
        code = self.codes_of.get(key)
        if code is None:
            self.statuses.append(list(statuses))
            code = self.codes_of[key] = len(self.statuses)
        return code


def _plugin_answers(
    task: TaskInfo,
    cols: NodeColumns,
    fns: list[ColumnarPredicateFn],
    plugins_key: Hashable,
    per_node: PerNodePredicate,
) -> _PluginAnswers | None:
    """The plugins' verdicts, current on every row; None when a variant declines."""
    key = ("allocate plugins", plugins_key)
    answers, stale = cols.kept(key, lambda: _PluginAnswers(cols.size))
    if len(stale) == 0:
        return answers
    if cols.few(len(stale)):
        nodes = cols.nodes
        for row in stale:
            fe = per_node(nodes[row])
            answers.codes[row] = 0 if fe is None else answers.code(fe.statuses)
        answers.wrote(stale, cols.size)
        cols.settle(key)
        return answers
    import numpy as np

    from vspec.framework.session import ALLOCATE_FAILS

    codes = np.zeros(cols.size, dtype=np.int32)
    lut = [0]
    for fn in fns:
        answer = fn(task, cols)
        if answer is None:
            return None
        undecided = (codes == 0) & (answer.codes != 0)
        codes[undecided] = answer.codes[undecided] + (len(lut) - 1)
        # A failure without an allocate-failing code lets the node pass.
        lut.extend(
            answers.code(sts) if any(s.code in ALLOCATE_FAILS for s in sts) else 0
            for sts in answer.statuses
        )
    table = np.array(lut, dtype=np.int32)
    if len(stale) == cols.size:
        answers.codes[:] = table[codes]
    else:
        at = np.array(stale, dtype=np.intp)
        answers.codes[at] = table[codes[at]]
    answers.wrote(stale, cols.size)
    cols.settle(key)
    return answers


class _Combined:
    """Allocate's verdicts for one fit's and one plugins' answers (kept with the fit's,
    by the plugins' identity): per row the fit's code where the request does not fit
    (its statuses come first), else the plugins' shifted past them (0: passes), and
    the rows of each's log (:class:`_Written`) combined so far. Most tasks ask hundreds
    of rows, a placement or two after the last: combining only the rows either wrote
    since makes a task's verdicts one gather, where combining the rows it asks cost
    five array operations."""

    __slots__ = (
        "codes",
        "fit_log",
        "fit_seen",
        "plugins",
        "plugins_log",
        "plugins_seen",
        "verdicts",
    )

    def __init__(self, size: int, plugins: _PluginAnswers) -> None:
        import numpy as np

        self.codes = np.zeros(size, dtype=np.int32)
        self.plugins = plugins  # held, so that its id, the key, is no other's
        self.fit_log: list[int] | None = None  # None: nothing combined yet
        self.plugins_log: list[int] | None = None
        self.fit_seen = self.plugins_seen = 0
        self.verdicts: Verdicts | None = None

    def stale(self, fit: _FitAnswers) -> list[int] | None:
        """The rows written since last combined (None: every row), now marked combined."""
        plugins = self.plugins
        if fit.written is not self.fit_log or plugins.written is not self.plugins_log:
            self.fit_log, self.plugins_log = fit.written, plugins.written
            rows = None
        else:
            rows = fit.written[self.fit_seen :] + plugins.written[self.plugins_seen :]
        self.fit_seen, self.plugins_seen = len(fit.written), len(plugins.written)
        return rows


def _combined(cols: NodeColumns, fit: _FitAnswers, plugins: _PluginAnswers) -> Verdicts:
    """The fit's and the plugins' answers, both current on every row, combined."""
    from vspec.framework.columns import Verdicts

    kept = fit.combined.get(id(plugins))
    if kept is None:
        if len(fit.combined) >= _COMBINED_KEPT:
            fit.combined.clear()
        kept = fit.combined[id(plugins)] = _Combined(cols.size, plugins)
    rows = kept.stale(fit)
    shift = len(fit.statuses)
    codes, fit_codes, plugin_codes = kept.codes, fit.codes, plugins.codes
    if rows is not None and cols.few(len(rows)):
        for row in rows:
            code = fit_codes[row]
            if not code:
                code = plugin_codes[row]
                if code:
                    code += shift
            codes[row] = code
    else:
        import numpy as np

        at: Any = slice(None) if rows is None else np.array(rows, dtype=np.intp)
        failed, passed = fit_codes[at], plugin_codes[at]
        codes[at] = np.where(failed != 0, failed, np.where(passed != 0, passed + shift, 0))
    verdicts = kept.verdicts
    if verdicts is None or len(verdicts.statuses) != shift + len(plugins.statuses):
        # A new list when the plugins' grew: a list handed out is never changed.
        verdicts = kept.verdicts = Verdicts(codes, fit.statuses + plugins.statuses)
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
    scope = ssn.node_local_scope("node_order")
    total = cols.memo(("node_order", key, scope), rows, lambda at: _summed(order, task, cols, at))
    batch_total = None if total is None else _summed(batch, task, cols, rows)
    if total is None or batch_total is None:
        return None
    result: Column = total + batch_total
    return result


def _summed(
    fns: list[ColumnarScoreFn], task: TaskInfo, cols: NodeColumns, rows: Column
) -> Column | None:
    """0.0 plus each function's scores in order (as the per-node path adds them). The
    first float64 scores are taken as they are: 0.0 plus a float is that float but for
    -0.0, which the choice (a maximum, equality with it) takes for 0.0 and no line logs;
    one array operation fewer per call."""
    import numpy as np

    total: Column | None = None
    for fn in fns:
        part = fn(task, cols, rows)
        if part is None:
            return None
        if total is None:
            total = part if part.dtype == np.float64 else 0.0 + part
        else:
            total = total + part
    return np.zeros(len(rows), dtype=np.float64) if total is None else total
