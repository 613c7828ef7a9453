"""The session's nodes as columns: one numpy row per node of ``Session.node_list``.

Allocate asks the same questions of every node for every task (does the request fit
FutureIdle, which filters pass, what does each scorer give); asked node by node in
Python that is pods x nodes interpreter steps. Kept as arrays, one question is a few
array operations over all nodes. A column is a copy of a per-node value computed by
the same Python code the per-node path runs (a ``Resource`` float, a Kubernetes int),
so the arrays hold exactly the numbers the scalar path compares, and float64/int64
operations on them round exactly as Python's (and Go's) do.

Columns are kept current incrementally: a node reports every task change
(``NodeInfo.watch``), and the next read of a column recomputes only the reported rows;
from one session to the next only the rows of nodes the snapshot cloned afresh.
Arrays handed out are the columns themselves: readers must not write them.
Per-row answers derived from the columns (a task key's scores) are memoised the same
way (:meth:`NodeColumns.memo`): kept per row until the row's node changes, from
session to session too. A key must name its question in every session of the
scheduler: the callers add the session's uid to keys that hold for one session only
(``Session.node_local_scope``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from itertools import compress, count
from operator import attrgetter, is_not
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from vspec.api.node_info import NodeInfo
from vspec.api.resource import CPU, MEMORY, MIN_RESOURCE, Resource
from vspec.api.types import Status

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Column = NDArray[Any]

NodeValue = Callable[[NodeInfo], float]
# Up to this many rows a columnar variant may answer row by row with its per-node code,
# and allocate's kept verdicts are brought up to date row by row: on small arrays a
# numpy call costs 1-4 microseconds whatever its length, so nodeorder's numpy scores
# cost about 60 (CPU, W2's session), its per-node scorers about 4 a row, binpack's 21
# and 1.3 (about 16 rows either way). But the numpy answers read columns, and a column
# computes again every row changed since it was last read: read rarely, it computes
# many (on the day's two hours at 16, 294 reads of the fit's six columns computed
# 7,313 rows each, 139 of nodeorder's seven 7,025 each). Counted with those, row by row
# is cheaper further: at 64 the day's two hours ran 1.0% fewer instructions than at 16
# (callgrind), at 128 0.1% fewer again. A memoised score is asked again for the rows the
# placements since changed: one or two within a job, 5-100 when another job's tasks of
# other requests came between (W3: 9,600 of 33,000 asks with 5-16).
FEW_ROWS = 64
# Memoised answers (NodeColumns.memo, .kept) are kept for this many keys, the last used.
MEMO_KEYS = 64
# The rows synced are logged from session to session (each column, memo and kept answer
# reads the log from where it last looked, the next session too) until the log holds
# this many times the rows: then what each has not read is marked on it and the log
# starts over. Marking it on every one at each session cost a pass over all of them.
CHANGES_KEPT = 4
T = TypeVar("T")


class _Column:
    """One column and what to compute again before it is read: the rows synced from
    ``seen`` on (an index into ``NodeColumns._changes``, read there rather than handed
    to every column at each sync), and those left pending when that log started over.
    It keeps no function: the reader's, passed at each read, may hold its session (a
    plugin's method), which the cache's columns must not keep alive."""

    __slots__ = ("array", "pending", "seen")

    def __init__(self, array: Column, seen: int) -> None:
        self.array = array
        self.seen = seen
        self.pending: set[int] = set()


class NodeColumns:
    """Per-node columns, computed on first use and updated row by row afterwards.

    They outlive a session (the scheduler cache keeps them): the next session's nodes
    are mostly the very objects this one had (copy-on-write snapshots), so
    :meth:`renew` marks only the rows whose node or Kubernetes view is another object.
    A column's function is the one its reader passes in the current session (it may
    read that session's node map), so a value must depend on nothing but the node and
    its node-map entry, the objects a later session shares only when unchanged.
    """

    __slots__ = (
        "_changes",
        "_columns",
        "_companions",
        "_dirty",
        "_kept",
        "_memos",
        "_rotation",
        "companions_mark",
        "names",
        "nodes",
        "size",
    )

    def __init__(self, nodes: Sequence[NodeInfo], companions: Sequence[object] = ()) -> None:
        self.nodes = list(nodes)
        self.names = [n.name for n in self.nodes]
        self.size = len(self.nodes)
        self._companions = list(companions) or [None] * self.size
        self._dirty: list[int] = []
        self._columns: dict[Hashable, _Column] = {}
        # Per memo key, [the values, per row whether it must be computed again, how many
        # of the rows synced (the log below) it has marked so].
        self._memos: dict[Hashable, list[Any]] = {}
        # The rows synced, in order, over sessions until CHANGES_KEPT starts them over;
        # per kept key, the answers (kept()).
        self._changes: list[int] = []
        self._kept: dict[Hashable, list[Any]] = {}
        self._rotation: Column | None = None
        # Whoever hands the companions keeps here what :meth:`renew`'s ``regarded`` rows
        # are counted from (``K8sMemo.rebuilt_since``'s mark).
        self.companions_mark: object = None
        for row, node in enumerate(self.nodes):
            node.watch(self._dirty, row)

    def renew(
        self, nodes: list[NodeInfo], companions: Sequence[object], regarded: list[int] | None = None
    ) -> bool:
        """Carry the columns into the next session, on ``nodes`` with ``companions``
        (per row, another object the values read: the node-map entry); False when
        these are other nodes, by name or order (then build new columns). Rows are
        compared by identity, by C loops (a row still holding the same node holds its
        name): a session's nodes are mostly the last one's, and cold, so reading each
        one's name cost more than the rest of the renewal. Both lists are kept as
        they are, not copied (a copy touches every cold node too): the caller hands
        over lists nobody changes (the session's node list, a list made for this).
        With ``regarded``, the caller vouches that the nodes and the companions of the
        other rows are the very objects of the last renewal: only those rows are
        compared, and the companions read from ``companions`` into the columns' own list
        (``companions`` is not kept). The K8s memo's rows built again vouch so: it hands
        on the views of the rows whose session node the cache handed on, and its map is
        of the nodes of the session (``K8sMemo.rebuilt_since``)."""
        if len(nodes) != self.size:
            return False
        if regarded is None:
            moved = list(compress(count(), map(is_not, self.nodes, nodes)))
        else:
            own = self.nodes
            moved = sorted({row for row in regarded if own[row] is not nodes[row]})
        names = self.names
        if any(nodes[row].name != names[row] for row in moved):
            return False
        self._sync()
        if len(self._changes) > CHANGES_KEPT * self.size:
            self._carry_changes()
        dirty = self._dirty
        for row in moved:
            self.nodes[row].watch(None)
            nodes[row].watch(dirty, row)
        dirty.extend(moved)
        moved_rows = set(moved)
        dirty.extend(
            row for row in self._companions_changed(companions, regarded) if row not in moved_rows
        )
        self.nodes = nodes
        return True

    def _companions_changed(
        self, companions: Sequence[object], regarded: list[int] | None
    ) -> list[int]:
        """The rows whose companion is another object now (see :meth:`renew`), the
        columns' companions brought up to date."""
        own = self._companions
        if regarded is None:
            # Kept as it is when a list (made for this, see renew), not copied.
            self._companions = companions if isinstance(companions, list) else list(companions)
            return list(compress(count(), map(is_not, own, companions)))
        changed = [row for row in regarded if own[row] is not companions[row]]
        for row in changed:
            own[row] = companions[row]
        return changed

    def _carry_changes(self) -> None:
        """Start the rows synced over, their log grown long: what each column, memo and
        kept answer has not read of it yet is marked on it (its key names the same
        question in every session: ``Session.node_local_scope``) to compute again."""
        changes = self._changes
        for entry in self._columns.values():
            entry.pending.update(changes[entry.seen :])
            entry.seen = 0
        for memo in self._memos.values():
            seen = memo[2]
            if seen < len(changes):
                memo[1][changes[seen:]] = True
            memo[2] = 0
        for kept in self._kept.values():
            seen = kept[1]
            if seen >= 0:
                kept[3].update(changes[seen:])
                kept[1] = 0
            kept[2] = 0
        changes.clear()

    def close(self) -> None:
        """Stop watching the nodes (the columns are dropped)."""
        for node in self.nodes:
            node.watch(None)
        self._columns.clear()
        self._memos.clear()
        self._kept.clear()

    @staticmethod
    def few(count: int) -> bool:
        """Whether ``count`` rows are cheaper asked row by row than by numpy calls
        (``FEW_ROWS``): a method, so that the hot callers, which import this module
        lazily, need no import statement per call (about 0.6 microseconds)."""
        return count <= FEW_ROWS

    def rotation(self, start: int) -> Column:
        """The rows from ``start`` on, wrapping round (row ``(start + i) % size`` at ``i``):
        a view of one array kept for the purpose, not to be written."""
        if self._rotation is None:
            every = np.arange(self.size)
            self._rotation = np.concatenate((every, every))
        return self._rotation[start : start + self.size]

    def column(self, key: Hashable, value: NodeValue, dtype: type = np.float64) -> Column:
        """The column ``key``: ``value(node)`` for every node, current. ``key`` names what
        ``value`` computes (one key, one function)."""
        self._sync()
        entry = self._columns.get(key)
        if entry is None:
            array: Column = np.fromiter(
                (value(n) for n in self.nodes), dtype=dtype, count=self.size
            )
            self._columns[key] = _Column(array, len(self._changes))
            return array
        changes = self._changes
        if entry.seen < len(changes) or entry.pending:
            pending = entry.pending
            pending.update(changes[entry.seen :])
            nodes, array = self.nodes, entry.array
            for row in pending:
                array[row] = value(nodes[row])
            pending.clear()
            entry.seen = len(changes)
        return entry.array

    def _sync(self) -> None:
        """Take in the reported rows: each column computes them when next read."""
        dirty = self._dirty
        if not dirty:
            return
        self._changes.extend(set(dirty))
        dirty.clear()

    def memo(
        self, key: Hashable, rows: Column, compute: Callable[[Column], Column | None]
    ) -> Column | None:
        """``compute(rows)``, a float64 answer per row that depends only on ``key`` and
        the row's node, computed only for the rows of ``rows`` whose node changed since
        (or that were never asked); None, and nothing kept, when ``compute`` declines."""
        values, stale_at = self._entry(key)
        stale = rows[stale_at[rows]]
        if len(stale):
            fresh = compute(stale)
            if fresh is None:
                return None
            values[stale] = fresh
            stale_at[stale] = False
        answer: Column = values[rows]
        return answer

    def kept(self, key: Hashable, make: Callable[[], T]) -> tuple[T, Sequence[int]]:
        """The per-row answers kept under ``key`` (``make()`` the first time) and the
        rows whose node changed since :meth:`settle` last marked them all current (every
        row the first time: a ``range``), in row order: the caller brings those up to
        date, then settles the key. Found from the rows synced since, not by a pass over
        all rows. A list of Python ints, not an array: most often one or two rows, read
        one by one (indexing with a numpy integer costs several times a Python one)."""
        self._sync()
        kept = self._kept
        entry = kept.pop(key, None)
        if entry is None:
            # [answers, how many synced rows they are current with (-1: none), how many
            # there were when last asked, rows left to compute again when the log started over]
            entry = [make(), -1, 0, set()]
            if len(kept) >= MEMO_KEYS:
                del kept[next(iter(kept))]  # the least recently used key
        kept[key] = entry
        changes = self._changes
        seen: int = entry[1]
        entry[2] = len(changes)
        carried: set[int] = entry[3]
        if seen < 0 or len(changes) - seen + len(carried) >= self.size:
            return entry[0], range(self.size)
        if not carried:
            return entry[0], sorted(set(changes[seen:]))
        return entry[0], sorted(carried.union(changes[seen:]))

    def settle(self, key: Hashable) -> None:
        """Mark every answer under ``key`` current as of its last :meth:`kept`."""
        entry = self._kept[key]
        entry[1] = entry[2]
        entry[3].clear()

    def _entry(self, key: Hashable) -> tuple[Column, Column]:
        """The memo under ``key`` and per row whether its value is stale (never computed,
        or its node changed since), for the ``MEMO_KEYS`` keys used last (a workload
        whose every task differs would keep a column per task). Marked from the rows
        synced since the key was last asked: most often one or two, cheaper marked one
        by one than compared over all rows asked."""
        self._sync()
        memos = self._memos
        changes = self._changes
        entry = memos.pop(key, None)
        if entry is None:
            entry = [np.zeros(self.size), np.ones(self.size, dtype=np.bool_), len(changes)]
            if len(memos) >= MEMO_KEYS:
                del memos[next(iter(memos))]  # the least recently used key
        memos[key] = entry
        stale_at: Column = entry[1]
        seen: int = entry[2]
        if seen < len(changes):
            if len(changes) - seen <= FEW_ROWS:
                for row in changes[seen:]:
                    stale_at[row] = True
            else:
                stale_at[changes[seen:]] = True
            entry[2] = len(changes)
        return entry[0], stale_at

    # -- Volcano's resource vectors ----------------------------------------------------------
    def future_idle(self, name: str) -> Column:
        """``FutureIdle`` (Idle + Releasing - Pipelined) of resource ``name``; a scalar the
        node lacks counts 0, as ``LessEqual`` with ``Zero`` reads it."""
        return self.column(("future_idle", name), _resource_getter("future_idle_view", name))

    def idle(self, name: str) -> Column:
        return self.column(("idle", name), _resource_getter("idle", name))

    def used(self, name: str) -> Column:
        return self.column(("used", name), _resource_getter("used", name))

    def allocatable(self, name: str) -> Column:
        return self.column(("allocatable", name), _resource_getter("allocatable", name))

    def max_task_num(self) -> Column:
        return self.column("max_task_num", _max_task_num, np.int64)

    def fit(
        self, request: Resource, vector: Callable[[str], Column], rows: Column | None = None
    ) -> Column:
        """Per node (of ``rows``, or all), 0 when ``request.less_equal(vector, Zero)``
        holds, else 1 + the index of the first short dimension in :func:`dimensions`
        order (what ``LessEqualWithResourcesName`` names first)."""
        size = self.size if rows is None else len(rows)
        codes = np.zeros(size, dtype=np.int32)
        dims = dimensions(request)
        for index in range(len(dims) - 1, -1, -1):
            name = dims[index]
            right = vector(name) if rows is None else vector(name)[rows]
            # Volcano's "left < right or |left - right| < minResource" is exactly
            # left - right < minResource: a difference of distinct floats is never 0.
            codes[(request.get(name) - right) >= MIN_RESOURCE] = index + 1
        return codes


def dimensions(request: Resource) -> list[str]:
    """The dimensions ``LessEqual`` with ``Zero`` compares: cpu, memory, then the
    request's scalars in order."""
    return [CPU, MEMORY, *request.scalars]


def _resource_getter(attribute: str, name: str) -> NodeValue:
    """A node's ``getattr(node, attribute).get(name)`` (the attribute called when a
    method): cpu and memory by the functions made once below, a scalar by a new one."""
    read = _VECTOR_READS.get((attribute, name))
    if read is not None:
        return read
    if attribute == "future_idle_view":
        return lambda node: node.future_idle_view().get(name)
    return lambda node: getattr(node, attribute).get(name)


def _future_idle_cpu(node: NodeInfo) -> float:
    return node.future_idle_view().milli_cpu


def _future_idle_memory(node: NodeInfo) -> float:
    return node.future_idle_view().memory


# Cpu and memory read straight off the vector, the stored vectors' by an ``attrgetter``
# (no Python frame): a column computes its rows again at every task change on them.
_VECTOR_READS: dict[tuple[str, str], NodeValue] = {
    ("future_idle_view", CPU): _future_idle_cpu,
    ("future_idle_view", MEMORY): _future_idle_memory,
    **{
        (vector, name): attrgetter(f"{vector}.{field}")
        for vector in ("idle", "used", "allocatable")
        for name, field in ((CPU, "milli_cpu"), (MEMORY, "memory"))
    },
}


def _max_task_num(node: NodeInfo) -> float:
    return node.allocatable.max_task_num


class Verdicts:
    """A predicate's answer for every node at once: ``codes[row]`` is 0 where the node
    passes, ``k`` where it fails with ``statuses[k - 1]`` (shared lists, never mutated)."""

    __slots__ = ("codes", "statuses")

    def __init__(self, codes: Column, statuses: list[list[Status]]) -> None:
        self.codes = codes
        self.statuses = statuses

    def at(self, rows: Column) -> Column:
        """The codes of the nodes at ``rows``."""
        codes: Column = self.codes[rows]
        return codes
