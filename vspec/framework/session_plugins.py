"""Session functions: registration and tier dispatch (``framework/session_plugins.go``).

Plugins register functions per kind under their own name; the session combines them
over the configured tiers with each kind's own rule (first decides, AND, OR, tier
votes, intersections) and gate flag. The combination rules are the part of Volcano
users most often misjudge, so each dispatcher states its rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import ValidateResult
from vspec.model.conf import Tier
from vspec.model.versions import Gates

if TYPE_CHECKING:
    from vspec.framework.columns import Column, NodeColumns, Verdicts

CompareFn = Callable[[Any, Any], int]
VictimCompareFn = Callable[[QueueInfo, QueueInfo, QueueInfo], int]
PredicateFn = Callable[[TaskInfo, NodeInfo], None]  # raises FitError (or another GoError) to reject
PrePredicateFn = Callable[[TaskInfo], None]
BestNodeFn = Callable[[TaskInfo, dict[float, list[NodeInfo]]], NodeInfo | None]
NodeOrderFn = Callable[[TaskInfo, NodeInfo], float]
BatchNodeOrderFn = Callable[[TaskInfo, list[NodeInfo]], dict[str, float]]
EvictableFn = Callable[[TaskInfo, list[TaskInfo]], tuple[list[TaskInfo], int]]
ValidateFn = Callable[[Any], bool]
QueueTaskFn = Callable[[QueueInfo, TaskInfo], bool]
VoteFn = Callable[[Any], int]
ValidateExFn = Callable[[Any], ValidateResult | None]
JobEnqueuedFn = Callable[[Any], None]
TargetJobFn = Callable[[list[JobInfo]], JobInfo | None]
ReservedNodesFn = Callable[[], None]
VictimTasksFn = Callable[[list[TaskInfo]], list[TaskInfo]]
PrintFn = Callable[[list[JobInfo]], None]
# Declares a predicate or NodeOrder function memoisable for a task: see add_predicate_fn.
NodeLocalKeyFn = Callable[[TaskInfo], Hashable | None]
# Columnar variants (see add_predicate_fn): every node at once, or None to decline.
ColumnarPredicateFn = Callable[[TaskInfo, "NodeColumns"], "Verdicts | None"]
# Scores of the nodes at ``rows`` (row numbers of NodeColumns), in that order.
ColumnarScoreFn = Callable[[TaskInfo, "NodeColumns", "Column"], "Column | None"]

Kind = Literal[
    "job_order",
    "queue_order",
    "victim_queue_order",
    "cluster_order",
    "task_order",
    "predicate",
    "pre_predicate",
    "best_node",
    "node_order",
    "batch_node_order",
    "node_map",
    "node_reduce",
    "preemptable",
    "reclaimable",
    "overused",
    "preemptive",
    "allocatable",
    "job_ready",
    "job_pipelined",
    "job_valid",
    "job_enqueueable",
    "job_enqueued",
    "target_job",
    "reserved_nodes",
    "victim_tasks",
    "job_starving",
    "print",
]


@dataclass(frozen=True)
class ExtensionPoint:
    """One kind of session function, declared once (as pytest's hookspecs declare hooks):
    the ``PluginOption`` flag that gates it (None: never gated) and the rule by which the
    session combines the plugins' answers over the tiers, Volcano's rule, which its
    dispatcher below implements."""

    kind: Kind
    gate: str | None
    rule: str
    node_local: bool = False  # its functions may declare themselves node-local
    columnar: bool = False  # its functions may offer a columnar variant
    own_state: bool = False  # its functions may declare they read their own object alone


EXTENSION_POINTS: tuple[ExtensionPoint, ...] = (
    ExtensionPoint(
        "job_order", "job_order", "first non-zero; else creation time, then UID", own_state=True
    ),
    ExtensionPoint(
        "queue_order", "queue_order", "first non-zero; else creation time, then UID", own_state=True
    ),
    ExtensionPoint("victim_queue_order", None, "first non-zero; else the negated QueueOrder"),
    ExtensionPoint("cluster_order", "cluster_order", "registered only (Volcano calls none)"),
    ExtensionPoint("task_order", "task_order", "first non-zero; else priority, then name"),
    ExtensionPoint("predicate", "predicate", "in order; the first error rejects", True, True),
    ExtensionPoint("pre_predicate", "predicate", "in order; the first error rejects the task"),
    ExtensionPoint("best_node", "best_node", "the first non-nil node"),
    ExtensionPoint(
        "node_order", "node_order", "the sum; an error drops the node's score", True, True
    ),
    ExtensionPoint("batch_node_order", "node_order", "per node, the sum", columnar=True),
    ExtensionPoint("node_map", "node_order", "registered only (Volcano v1.11 calls none)"),
    ExtensionPoint("node_reduce", "node_order", "registered only (Volcano v1.11 calls none)"),
    ExtensionPoint("preemptable", "preemptable", "intersection per tier; first deciding tier"),
    ExtensionPoint("reclaimable", "reclaimable", "intersection per tier; first deciding tier"),
    ExtensionPoint("overused", "overused", "OR; none registered: not overused", own_state=True),
    ExtensionPoint("preemptive", "preemptive", "AND; none registered: true"),
    ExtensionPoint("allocatable", "allocatable", "AND; none registered: true"),
    ExtensionPoint("job_ready", "job_ready", "AND; none registered: true"),
    ExtensionPoint("job_pipelined", "job_pipelined", "votes: Reject ends; a Permit tier wins"),
    ExtensionPoint("job_valid", None, "the first failed result", own_state=True),
    ExtensionPoint("job_enqueueable", "job_enqueued", "votes: Reject ends; a Permit tier wins"),
    ExtensionPoint("job_enqueued", "job_enqueued", "every function is called"),
    ExtensionPoint("target_job", "target_job", "the first function's answer"),
    ExtensionPoint("reserved_nodes", "reserved_nodes", "every function is called"),
    ExtensionPoint("victim_tasks", "victim", "union per tier; first non-empty tier"),
    ExtensionPoint("job_starving", "job_starving", "AND in the first tier that has any"),
    ExtensionPoint("print", None, "every function is called (vspec's print action)"),
)
POINTS: dict[Kind, ExtensionPoint] = {point.kind: point for point in EXTENSION_POINTS}
# kind -> the PluginOption flag that gates it (None: never gated).
GATES: dict[Kind, str | None] = {point.kind: point.gate for point in EXTENSION_POINTS}
# The kinds whose functions may declare themselves node-local.
NODE_LOCAL_KINDS: tuple[Kind, ...] = tuple(p.kind for p in EXTENSION_POINTS if p.node_local)
# The kinds whose functions may offer a columnar variant.
COLUMNAR_KINDS: tuple[Kind, ...] = tuple(p.kind for p in EXTENSION_POINTS if p.columnar)
# The kinds whose functions may declare they read their own queue or job alone.
OWN_STATE_KINDS: tuple[Kind, ...] = tuple(p.kind for p in EXTENSION_POINTS if p.own_state)


class SessionPlugins:
    """The function slots of a session; mixed into :class:`~vspec.framework.session.Session`."""

    tiers: list[Tier]
    gates: Gates

    def __init__(self) -> None:
        # Names this session in keys of answers that hold for it alone (node_local_scope).
        self._token = object()
        self.clear()

    def clear(self) -> None:
        """No function registered: what a session starts with, and what Volcano's
        ``closeSession`` leaves (the functions hold the session they were built for)."""
        # A kind's table is made when a plugin first registers one (a session registers
        # some twenty of the kinds; it is cleared twice per session).
        self._fns: dict[Kind, dict[str, Any]] = {}
        self._chains: dict[Kind, list[list[tuple[str, Any]]]] = {}
        self._flats: dict[Kind, list[Any]] = {}
        self._node_local: dict[Kind, dict[str, NodeLocalKeyFn]] = {k: {} for k in NODE_LOCAL_KINDS}
        self._node_local_flats: dict[Kind, list[NodeLocalKeyFn | None]] = {}
        # Per kind, the functions whose node-local keys hold in every session.
        self._lasting: dict[Kind, set[str]] = {k: set() for k in NODE_LOCAL_KINDS}
        # Per kind, node_local_scope's answer (allocate asks it per task), until a kind's
        # function is registered again.
        self._scopes: dict[Kind, Hashable] = {}
        self._columnar: dict[Kind, dict[str, Any]] = {k: {} for k in COLUMNAR_KINDS}
        self._columnar_flats: dict[Kind, list[Any] | None] = {}
        # Per kind, the functions registered with ``own_state`` (see reads_own_state).
        self._own_state: dict[Kind, set[str]] = {k: set() for k in OWN_STATE_KINDS}
        # The pod-name index of each task name compared (TaskOrder asks it per comparison).
        self._task_indexes: dict[str, int | None] = {}

    # -- registration -----------------------------------------------------------------------
    def _add(
        self,
        kind: Kind,
        name: str,
        fn: Any,
        node_local: NodeLocalKeyFn | None = None,
        columnar: Any | None = None,
        lasting: bool = False,
        own_state: bool = False,
    ) -> None:
        self._fns.setdefault(kind, {})[name] = fn
        self._chains.pop(kind, None)
        self._flats.pop(kind, None)
        if kind in self._own_state:
            if own_state:
                self._own_state[kind].add(name)
            else:
                self._own_state[kind].discard(name)
        if kind in self._columnar:
            self._columnar_flats.pop(kind, None)
            if columnar is None:
                self._columnar[kind].pop(name, None)
            else:
                self._columnar[kind][name] = columnar
        if kind in self._node_local:
            self._node_local_flats.pop(kind, None)
            self._scopes.pop(kind, None)
            if node_local is None:
                self._node_local[kind].pop(name, None)
            else:
                self._node_local[kind][name] = node_local
            if node_local is not None and lasting:
                self._lasting[kind].add(name)
            else:
                self._lasting[kind].discard(name)

    def add_job_order_fn(self, name: str, fn: CompareFn, *, own_state: bool = False) -> None:
        """``own_state``: see :meth:`reads_own_state`."""
        self._add("job_order", name, fn, own_state=own_state)

    def add_queue_order_fn(self, name: str, fn: CompareFn, *, own_state: bool = False) -> None:
        """``own_state``: see :meth:`reads_own_state`."""
        self._add("queue_order", name, fn, own_state=own_state)

    def add_victim_queue_order_fn(self, name: str, fn: VictimCompareFn) -> None:
        self._add("victim_queue_order", name, fn)

    def add_cluster_order_fn(self, name: str, fn: CompareFn) -> None:
        self._add("cluster_order", name, fn)

    def add_task_order_fn(self, name: str, fn: CompareFn) -> None:
        self._add("task_order", name, fn)

    def add_predicate_fn(
        self,
        name: str,
        fn: PredicateFn,
        node_local: NodeLocalKeyFn | None = None,
        columnar: ColumnarPredicateFn | None = None,
        lasting: bool = False,
    ) -> None:
        """``node_local`` (vspec extension, optional) lets actions memoise ``fn``'s verdicts.

        For a task it returns a hashable key such that ``fn(task, node)`` depends only on
        that key and on the node's state as ``NodeInfo.version`` tracks it (not on other
        nodes, session-wide state or the task's identity), and such that not calling ``fn``
        loses no log line the session keeps; or None when that does not hold for this task
        (e.g. because its log lines are enabled). Without it, ``fn`` is always called.

        ``columnar`` (vspec extension, optional, only with ``node_local``) answers for every
        node of the session at once what ``fn`` would answer node by node (see
        :class:`~vspec.framework.columns.Verdicts`), or None to leave this task to ``fn``.
        Actions use it for a task whose node-local key is not None; its answer must be
        exactly ``fn``'s, FitError statuses included.

        ``lasting`` (with ``node_local``): a key means the same in every session of the
        scheduler (the answer depends on the key, the node, its node-map entry and the
        plugin's arguments, nothing else of the session), so answers kept under it serve
        later sessions on the nodes that did not change (:meth:`node_local_scope`).
        """
        self._add("predicate", name, fn, node_local, columnar, lasting)

    def add_pre_predicate_fn(self, name: str, fn: PrePredicateFn) -> None:
        self._add("pre_predicate", name, fn)

    def add_best_node_fn(self, name: str, fn: BestNodeFn) -> None:
        self._add("best_node", name, fn)

    def add_node_order_fn(
        self,
        name: str,
        fn: NodeOrderFn,
        node_local: NodeLocalKeyFn | None = None,
        columnar: ColumnarScoreFn | None = None,
        lasting: bool = False,
    ) -> None:
        """``node_local``: as for :meth:`add_predicate_fn`, for the node's score. A call
        that raises is never memoised. ``columnar``: the scores of the nodes at the given
        rows at once, exactly ``fn``'s float64 values, or None to leave the task to ``fn``
        (it must decline where ``fn`` would raise). ``lasting``: as for
        :meth:`add_predicate_fn`."""
        self._add("node_order", name, fn, node_local, columnar, lasting)

    def add_batch_node_order_fn(
        self, name: str, fn: BatchNodeOrderFn, columnar: ColumnarScoreFn | None = None
    ) -> None:
        """``columnar``: as for :meth:`add_node_order_fn`; a declined call is answered by
        ``fn`` on those nodes."""
        self._add("batch_node_order", name, fn, columnar=columnar)

    def add_preemptable_fn(self, name: str, fn: EvictableFn) -> None:
        self._add("preemptable", name, fn)

    def add_reclaimable_fn(self, name: str, fn: EvictableFn) -> None:
        self._add("reclaimable", name, fn)

    def add_overused_fn(self, name: str, fn: ValidateFn, *, own_state: bool = False) -> None:
        """``own_state``: see :meth:`reads_own_state`."""
        self._add("overused", name, fn, own_state=own_state)

    def add_preemptive_fn(self, name: str, fn: QueueTaskFn) -> None:
        self._add("preemptive", name, fn)

    def add_allocatable_fn(self, name: str, fn: QueueTaskFn) -> None:
        self._add("allocatable", name, fn)

    def add_job_ready_fn(self, name: str, fn: ValidateFn) -> None:
        self._add("job_ready", name, fn)

    def add_job_pipelined_fn(self, name: str, fn: VoteFn) -> None:
        self._add("job_pipelined", name, fn)

    def add_job_valid_fn(self, name: str, fn: ValidateExFn, *, own_state: bool = False) -> None:
        """``own_state``: see :meth:`reads_own_state`."""
        self._add("job_valid", name, fn, own_state=own_state)

    def add_job_enqueueable_fn(self, name: str, fn: VoteFn) -> None:
        self._add("job_enqueueable", name, fn)

    def add_job_enqueued_fn(self, name: str, fn: JobEnqueuedFn) -> None:
        self._add("job_enqueued", name, fn)

    def add_target_job_fn(self, name: str, fn: TargetJobFn) -> None:
        self._add("target_job", name, fn)

    def add_reserved_nodes_fn(self, name: str, fn: ReservedNodesFn) -> None:
        self._add("reserved_nodes", name, fn)

    def add_victim_tasks_fns(self, name: str, fns: Sequence[VictimTasksFn]) -> None:
        self._add("victim_tasks", name, list(fns))

    def add_job_starving_fns(self, name: str, fn: ValidateFn) -> None:
        self._add("job_starving", name, fn)

    def add_print_fn(self, name: str, fn: PrintFn) -> None:
        """vspec extension: what the ``print`` action calls (the seed's logprint hook)."""
        self._add("print", name, fn)

    def wrap_fns(
        self,
        kind: Kind,
        wrap: Callable[[str, Any], Any],
        node_local: Callable[[NodeLocalKeyFn], NodeLocalKeyFn] | None = None,
    ) -> None:
        """Replace each registered ``kind`` function by ``wrap(plugin, fn)``, and each
        node-local declaration by ``node_local(declared)``: how a recorder watches the
        plugins (its wrappers must call ``fn`` exactly as given) without a hook in
        every dispatcher."""
        fns = self._fns.get(kind, {})
        for name, fn in fns.items():
            fns[name] = wrap(name, fn)
        self._chains.pop(kind, None)
        self._flats.pop(kind, None)
        if kind in self._columnar:
            # A columnar variant would answer without calling the wrapped function.
            self._columnar[kind].clear()
            self._columnar_flats.pop(kind, None)
        if node_local is not None and kind in self._node_local:
            declared = self._node_local[kind]
            for name, key_fn in declared.items():
                declared[name] = node_local(key_fn)
            self._node_local_flats.pop(kind, None)

    def plugin_enabled(self, plugin: str, flag: str) -> bool:
        """A flag of the first tier entry of ``plugin`` (how drf and capacity read
        ``enableHierarchy``, which Volcano never defaults)."""
        for tier in self.tiers:
            for option in tier.plugins:
                if option.name == plugin:
                    return option.enabled(flag)
        return False

    def registered(self, kind: Kind, name: str) -> Any | None:
        """The function ``name`` registered for ``kind`` (probes use it)."""
        return self._fns.get(kind, {}).get(name)

    # -- dispatch helpers -------------------------------------------------------------------
    def chain(self, kind: Kind) -> list[list[tuple[str, Any]]]:
        """Per tier, the enabled (plugin name, fn) pairs of ``kind``, in configured order."""
        cached = self._chains.get(kind)
        if cached is not None:
            return cached
        gate = POINTS[kind].gate
        fns = self._fns.get(kind, {})
        tiers = []
        for tier in self.tiers:
            entries = []
            for option in tier.plugins:
                # The gate asked only of a plugin that registered a function of the kind
                # (a session builds some twenty chains, most kinds of few plugins).
                fn = fns.get(option.name)
                if fn is not None and (gate is None or option.enabled(gate)):
                    entries.append((option.name, fn))
            tiers.append(entries)
        self._chains[kind] = tiers
        return tiers

    def _flat(self, kind: Kind) -> list[Any]:
        flat = self._flats.get(kind)
        if flat is None:
            flat = self._flats[kind] = [fn for tier in self.chain(kind) for _, fn in tier]
        return flat

    def reads_own_state(self, *kinds: Kind) -> bool:
        """Every function of ``kinds`` registered so far was registered with
        ``own_state=True``: it reads only the queue or job it is given, whose state
        changes within a session only through events on that queue's or job's own
        tasks; an order function is a consistent order; and it has no effect but log
        lines at V(4) or above (Overused may also log at V(3) when it answers true: the
        queue is then dropped). Then, with the session's fallback to creation time and
        UID, queues and jobs are totally ordered, and an element keeps its place in its
        heap while an action works on another it took off: each pop yields the least
        element whatever the heap's shape, so an action may leave out of its heaps what
        it would pop and put back unchanged (allocate's jobs with nothing pending when
        nothing logs at V(4), counting at V(3) the pops that print)."""
        return all(self._fns.get(kind, {}).keys() <= self._own_state[kind] for kind in kinds)

    def node_local_key(self, kind: Kind, task: TaskInfo) -> tuple[Hashable, ...] | None:
        """The key under which every enabled ``kind`` function ("predicate" or
        "node_order") is node-local for ``task``, or None when any of them is not (or did
        not declare it): results of the whole chain may then be memoised per node against
        ``NodeInfo.version``."""
        fns = self._node_local_flats.get(kind)
        if fns is None:
            declared = self._node_local[kind]
            fns = [declared.get(name) for tier in self.chain(kind) for name, _ in tier]
            self._node_local_flats[kind] = fns
        keys = []
        for fn in fns:
            key = None if fn is None else fn(task)
            if key is None:
                return None
            keys.append(key)
        return tuple(keys)

    def node_local_scope(self, kind: Kind) -> Hashable:
        """What answers kept under a ``kind`` chain's node-local key hold for: every
        session (None) when each function of the chain declares its keys lasting, else
        this session (a token of its own), which callers add to the key."""
        if kind in self._scopes:
            return self._scopes[kind]
        lasting = self._lasting[kind]
        every = all(name in lasting for tier in self.chain(kind) for name, _ in tier)
        scope = self._scopes[kind] = None if every else self._token
        return scope

    def columnar_fns(self, kind: Kind) -> list[Any] | None:
        """The columnar variants of every enabled ``kind`` function in tier order, or None
        when some function has none (the per-node path then answers)."""
        if kind in self._columnar_flats:
            return self._columnar_flats[kind]
        declared = self._columnar[kind]
        fns: list[Any] | None = []
        for tier in self.chain(kind):
            for name, _ in tier:
                variant = declared.get(name)
                if variant is None:
                    fns = None
                    break
                assert fns is not None
                fns.append(variant)
            if fns is None:
                break
        self._columnar_flats[kind] = fns
        return fns

    def _first_compare(self, kind: Kind, left: Any, right: Any) -> int:
        for fn in self._flat(kind):
            result: int = fn(left, right)
            if result != 0:
                return result
        return 0

    # -- ordering ------------------------------------------------------------------------------
    def job_order_fn(self, left: JobInfo, right: JobInfo) -> bool:
        """First non-zero plugin answer; else creation time, then UID. (The plugins'
        loop inline: allocate's job heaps compare about 20 times per job popped.)"""
        flat = self._flats.get("job_order") or self._flat("job_order")
        for fn in flat:
            result: int = fn(left, right)
            if result != 0:
                return result < 0
        if left.creation_timestamp == right.creation_timestamp:
            return left.uid < right.uid
        return left.creation_timestamp < right.creation_timestamp

    def queue_order_fn(self, left: QueueInfo, right: QueueInfo) -> bool:
        result = self._first_compare("queue_order", left, right)
        if result != 0:
            return result < 0
        lt, rt = left.queue.meta.creation_timestamp, right.queue.meta.creation_timestamp
        if lt == rt:
            return left.uid < right.uid
        return lt < rt

    def victim_queue_order_fn(
        self, left: QueueInfo, right: QueueInfo, preemptor: QueueInfo
    ) -> bool:
        for fn in self._flat("victim_queue_order"):
            result = fn(left, right, preemptor)
            if result != 0:
                return bool(result < 0)
        return not self.queue_order_fn(left, right)

    def task_compare_fns(self, left: TaskInfo, right: TaskInfo) -> int:
        return self._first_compare("task_order", left, right)

    def task_order_fn(self, left: TaskInfo, right: TaskInfo) -> bool:
        flat = self._flats.get("task_order") or self._flat("task_order")
        for fn in flat:
            result: int = fn(left, right)
            if result != 0:
                return result < 0
        return self._compare_task(left, right)

    def _compare_task(self, left: TaskInfo, right: TaskInfo) -> bool:
        """``helpers.CompareTask``: pod-name index, then creation time, then UID."""
        indexes = self._task_indexes
        li = indexes.get(left.name, _UNKNOWN)
        if li == _UNKNOWN:
            li = indexes[left.name] = _task_index(left.name)
        ri = indexes.get(right.name, _UNKNOWN)
        if ri == _UNKNOWN:
            ri = indexes[right.name] = _task_index(right.name)
        if li is not None and ri is not None and li != ri:
            return li < ri
        lt, rt = left.pod.meta.creation_timestamp, right.pod.meta.creation_timestamp
        if lt == rt:
            return left.uid < right.uid
        return lt < rt

    # -- predicates and scores -------------------------------------------------------------------
    def predicate_fn(self, task: TaskInfo, node: NodeInfo) -> None:
        """Plugins in order; the first error is raised (later plugins are not called)."""
        for fn in self._flat("predicate"):
            fn(task, node)

    def pre_predicate_fn(self, task: TaskInfo) -> None:
        for fn in self._flat("pre_predicate"):
            fn(task)

    def best_node_fn(self, task: TaskInfo, scores: dict[float, list[NodeInfo]]) -> NodeInfo | None:
        for fn in self._flat("best_node"):
            node: NodeInfo | None = fn(task, scores)
            if node is not None:
                return node
        return None

    def best_node_fns_registered(self) -> bool:
        return bool(self._flat("best_node"))

    def node_order_fns(self) -> list[NodeOrderFn]:
        """The enabled NodeOrder functions in tier order (hot loops call them directly)."""
        fns: list[NodeOrderFn] = self._flat("node_order")
        return fns

    def node_order_fn(self, task: TaskInfo, node: NodeInfo) -> float:
        """Sum of every plugin's score; an error aborts the whole sum."""
        score = 0.0
        for fn in self._flat("node_order"):
            score += fn(task, node)
        return score

    def batch_node_order_fn(self, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        scores: dict[str, float] = {}
        for fn in self._flat("batch_node_order"):
            found = fn(task, nodes)
            if not scores and 0.0 not in found.values():
                # 0.0 + value is value unless it is -0.0 (== 0.0): the first answer is the
                # sum as it is, copied at C speed (the only one, in the default tiers).
                scores = dict(found)
                continue
            for name, value in found.items():
                scores[name] = scores.get(name, 0.0) + value
        return scores

    # -- victims ----------------------------------------------------------------------------------
    def _evictable(
        self, kind: Kind, actor: TaskInfo, candidates: list[TaskInfo]
    ) -> list[TaskInfo] | None:
        """Preemptable/Reclaimable: intersect per tier; an empty answer ends the tier.

        An empty intersection is nil in Go, so the next plugin's answer is taken whole
        (quirk kept). ``None`` means no tier decided.
        """
        if not self.gates.evictable_next_tier:
            return self._evictable_v1_10(kind, actor, candidates)
        victims: list[TaskInfo] | None = None
        for tier in self.chain(kind):
            for _, fn in tier:
                found, vote = fn(actor, candidates)
                if vote == 0:
                    continue
                if not found:
                    victims = None
                    break
                if victims is None:
                    victims = list(found)
                else:
                    uids = {c.uid for c in found}
                    victims = [v for v in victims if v.uid in uids] or None
            if victims is not None:
                return victims
        return victims

    def _evictable_v1_10(
        self, kind: Kind, actor: TaskInfo, candidates: list[TaskInfo]
    ) -> list[TaskInfo] | None:
        """v1.10.0's: the first answer sets the victims once for the whole call, so an
        empty answer (or intersection) stays empty in every later tier: a veto (gate
        evictable_next_tier, upstream 7976b63e2 "Removed init variable from Reclaimable
        and Preemptable")."""
        victims: list[TaskInfo] | None = None
        init = False
        for tier in self.chain(kind):
            for _, fn in tier:
                found, vote = fn(actor, candidates)
                if vote == 0:
                    continue
                if not found:
                    victims = None
                    break
                if not init:
                    victims, init = list(found), True
                else:
                    uids = {c.uid for c in found}
                    victims = [v for v in victims or () if v.uid in uids] or None
            if victims is not None:
                return victims
        return victims

    def preemptable(self, preemptor: TaskInfo, preemptees: list[TaskInfo]) -> list[TaskInfo]:
        return self._evictable("preemptable", preemptor, preemptees) or []

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: list[TaskInfo]) -> list[TaskInfo]:
        return self._evictable("reclaimable", reclaimer, reclaimees) or []

    def victim_tasks(self, tasks: list[TaskInfo]) -> list[TaskInfo]:
        """Union within a tier; the first tier with a non-empty union wins."""
        for tier in self.chain("victim_tasks"):
            victims: dict[str, TaskInfo] = {}
            for _, fns in tier:
                for fn in fns:
                    for victim in fn(tasks):
                        victims.setdefault(victim.uid, victim)
            if victims:
                return list(victims.values())
        return []

    # -- queue and job verdicts --------------------------------------------------------------------
    def overused(self, queue: QueueInfo) -> bool:
        """OR: any plugin saying overused wins; none registered means not overused."""
        return any(fn(queue) for fn in self._flat("overused"))

    def preemptive(self, queue: QueueInfo, task: TaskInfo) -> bool:
        return all(fn(queue, task) for fn in self._flat("preemptive"))

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        return all(fn(queue, task) for fn in self._flat("allocatable"))

    def job_ready(self, job: JobInfo) -> bool:
        return all(fn(job) for fn in self._flat("job_ready"))

    def _vote(self, kind: Kind, job: JobInfo) -> bool:
        """A Reject ends at once (false); a tier with a Permit decides true; default true."""
        for tier in self.chain(kind):
            permitted = False
            for _, fn in tier:
                result = fn(job)
                if result < 0:
                    return False
                if result > 0:
                    permitted = True
            if permitted:
                return True
        return True

    def job_pipelined(self, job: JobInfo) -> bool:
        return self._vote("job_pipelined", job)

    def job_enqueueable(self, job: JobInfo) -> bool:
        return self._vote("job_enqueueable", job)

    def job_enqueued(self, job: JobInfo) -> None:
        for fn in self._flat("job_enqueued"):
            fn(job)

    def job_starving(self, job: JobInfo) -> bool:
        """AND within the first tier that has any function; no function at all: false."""
        for tier in self.chain("job_starving"):
            if not tier:
                continue
            return all(fn(job) for _, fn in tier)
        return False

    def job_valid(self, job: JobInfo) -> ValidateResult | None:
        for fn in self._flat("job_valid"):
            result: ValidateResult | None = fn(job)
            if result is not None and not result.passed:
                return result
        return None

    def target_job(self, jobs: list[JobInfo]) -> JobInfo | None:
        for fn in self._flat("target_job"):
            found: JobInfo | None = fn(jobs)
            return found
        return None

    def print_jobs(self, jobs: list[JobInfo]) -> None:
        for fn in self._flat("print"):
            fn(jobs)

    def reserved_nodes(self) -> None:
        for fn in self._flat("reserved_nodes"):
            fn()


_ATOI = re.compile(r"^[+-]?[0-9]+$")
_UNKNOWN = -1  # never an index: a name split at "-" has no sign "-" left


def _task_index(name: str) -> int | None:
    parts = name.split("-")
    if len(parts) < 3 or not _ATOI.match(parts[-1]):
        return None
    return int(parts[-1])
