"""The first cycle's nodes as columns, for the invariants that ask which nodes take a job.

`liveness` and `allocate-order` ask, of every pending job, which nodes take all of its
pods at once; asked node by node that is jobs x nodes x pods of Python, the bulk of a
timeline's checking. Here the nodes' allocatable, what their pods hold and the pod slots
they take are summed once per cycle into numpy columns, a job's question is a few array
operations over them, and jobs of one shape (their summed request, pod slots and node
constraints) share one answer. The rules are the invariants' own (written from the
Kubernetes and Volcano documentation in :mod:`vspec.invariants.outside` and
:mod:`vspec.invariants.history`), never the engine's columns or memo.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.invariants.base import InvariantInputs
from vspec.invariants.history import (
    HOLDING,
    CycleView,
    Named,
    NodeFilter,
    PodStep,
    Requests,
    allocatables,
    dims,
    node_affinity_fails,
    nodes_named,
    requests,
    same_objects,
    taint_fails,
    unschedulable_fails,
)
from vspec.invariants.outside import TOLERANCE
from vspec.model.objects import Node, Pod

Mask = npt.NDArray[np.bool_]
Column = npt.NDArray[np.float64]

# The filters a node must pass to take a job whole (those `liveness` restates).
TAKER_FILTERS: tuple[NodeFilter, ...] = (unschedulable_fails, node_affinity_fails, taint_fails)


def constraints(pod: Pod) -> Hashable:
    """What of a pod the node filters read (its node selector, required node affinity and
    tolerations): pods with equal constraints pass the same nodes."""
    affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    required = affinity.required if affinity is not None else None
    return tuple(sorted(pod.node_selector.items())), required, tuple(pod.tolerations)


@dataclass(frozen=True)
class NodeColumns:
    """What the nodes themselves say, as columns: each name's row, each dimension's
    allocatable ("pods" included), and which nodes are plain (no taints, schedulable:
    they pass a pod without tolerations). Shared: none may change them.

    It also keeps the answers that read the nodes alone (``fits``: which nodes a pod's
    constraints pass, whether a pod fits some node), found by the tables built over it:
    a timeline keeps the columns while its nodes are the same objects, so a pod still
    Pending session after session (the same object: the model is copy-on-write) is
    judged once, not once a session."""

    index: dict[str, int]
    alloc: dict[str, Column]
    plain: Mask
    fits: NodeAnswers = field(default_factory=lambda: NodeAnswers(), compare=False, repr=False)

    @classmethod
    def of(cls, nodes: list[Node], alloc_of: Callable[[Node], Resource]) -> NodeColumns:
        return cls(
            {n.meta.name: i for i, n in enumerate(nodes)},
            _columns([alloc_of(n) for n in nodes], len(nodes), with_pods=True),
            np.array([not n.taints and not n.unschedulable for n in nodes], dtype=np.bool_),
        )


@dataclass
class NodeAnswers:
    """What :class:`NodeTable` found of the nodes alone (see :class:`NodeColumns`)."""

    # (a pod's constraints, filters) -> the nodes the filters let it onto
    passing: dict[tuple[Hashable, tuple[NodeFilter, ...]], Mask] = field(default_factory=dict)
    # a shape (request, constraints, filters) -> whether some node takes it
    shapes: dict[Hashable, bool] = field(default_factory=dict)
    # id -> (the pod, the filters, whether some node takes it): holding the pod keeps
    # its id from being reused.
    pods: dict[int, tuple[Pod, tuple[NodeFilter, ...], bool]] = field(default_factory=dict)

    def forget_gone(self, pods: dict[str, Pod]) -> None:
        """Drop the answers of pods no longer among ``pods``, once they are many."""
        if len(self.pods) > 2 * len(pods) + 64:
            live = set(map(id, pods.values()))
            self.pods = {k: v for k, v in self.pods.items() if k in live}


class NodeColumnsMemo:
    """The last node list's :class:`NodeColumns`, kept while the list holds the same node
    objects (a timeline's sessions mostly do): building them reads every node."""

    def __init__(self) -> None:
        self._last: tuple[list[Node], NodeColumns, Named | None] | None = None

    def of(
        self, nodes: list[Node], alloc_of: Callable[[Node], Resource], named: Named | None = None
    ) -> NodeColumns:
        """``named``: the nodes by name (:class:`NodeRows`), the same object while the
        nodes are: then they are not compared."""
        last = self._last
        if last is not None and named is not None and last[2] is named:
            return last[1]
        if last is None or not same_objects(last[0], nodes):
            last = (list(nodes), NodeColumns.of(nodes, alloc_of), named)
        self._last = (last[0], last[1], named)
        return last[1]


def node_columns(inputs: InvariantInputs) -> NodeColumns:
    """The cluster's node columns, once per result, kept from result to result while
    the nodes are the same objects when the caller carries memos."""
    nodes, alloc_of = inputs.cluster.nodes, allocatables(inputs)
    if inputs.carry is not None:
        memo = inputs.carry.kept("node columns", NodeColumnsMemo)
        named = nodes_named(inputs)
        return inputs.derived("node columns", inputs, lambda: memo.of(nodes, alloc_of, named))
    return inputs.derived("node columns", inputs, lambda: NodeColumns.of(nodes, alloc_of))


class NodeLoads:
    """What the pods on the nodes take (pod slots, and the requests of those holding
    resources), per node row, kept from one table to the next while the node columns
    are the same object: a timeline's session changes a few of its pods (a changed pod is
    a new object, and a pod's status is its object's), so only the pods that came and
    went are counted, not every pod again. The sums are of whole units (milli-cores,
    bytes), which adding and taking away keep exact."""

    def __init__(self) -> None:
        self._columns: NodeColumns | None = None
        # id -> (the pod, its row or -1, its pod slots, what it holds): the pod keeps its
        # id from being reused while it is counted.
        self._of: dict[int, tuple[Pod, int, int, Resource | None]] = {}
        self._slots: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._held: dict[str, Column] = {}
        self._pods: dict[str, Pod] | None = None  # the pods counted (they keep their ids)

    def of(
        self,
        columns: NodeColumns,
        count: int,
        pods: dict[str, Pod],
        statuses: dict[str, TaskStatus],
        request: Requests,
        step: PodStep | None = None,
    ) -> tuple[dict[str, Column], npt.NDArray[np.int64]]:
        """The held columns (the dimensions some node's pods hold) and the pod slots
        taken, per row: copies, which the caller may keep. ``step``: how ``pods`` came
        from the last pods (:class:`PodIndex`), when it did; else the last pods and
        these are compared."""
        if columns is not self._columns:
            self._columns, self._of, self._pods = columns, {}, None
            self._slots, self._held = np.zeros(count, dtype=np.int64), {}
        counted = self._of
        if step is not None and step.after is pods and step.before is self._pods is not None:
            for _, pod in step.gone:
                self._count(*counted.pop(id(pod))[1:], -1)
            came: Iterable[tuple[str, Pod]] = step.came
        elif self._pods is not pods:
            now = dict(zip(map(id, pods.values()), pods.items(), strict=True))
            for gone in counted.keys() - now.keys():
                self._count(*counted.pop(gone)[1:], -1)
            came = [now[new] for new in now.keys() - counted.keys()]
        else:
            came = ()
        index = columns.index
        for key, pod in came:
            row = index.get(pod.node_name, -1) if pod.node_name else -1
            slots = request.slots(pod) if row >= 0 else 0
            held = request(pod) if row >= 0 and statuses[key] in HOLDING else None
            counted[id(pod)] = (pod, row, slots, held)
            self._count(row, slots, held, 1)
        self._pods = pods
        held_columns = {name: c.copy() for name, c in self._held.items() if c.any()}
        return held_columns, self._slots.copy()

    def _count(self, row: int, slots: int, held: Resource | None, sign: int) -> None:
        if row < 0:
            return
        self._slots[row] += sign * slots
        if held is None:
            return
        for name in _names(held):
            column = self._held.get(name)
            if column is None:
                column = self._held[name] = np.zeros(len(self._slots))
            column[row] += sign * held.get(name)


def node_loads(inputs: InvariantInputs) -> NodeLoads:
    """The node loads, kept from result to result when the caller carries memos."""
    if inputs.carry is not None:
        return inputs.carry.kept("node loads", NodeLoads)
    return NodeLoads()


@dataclass(frozen=True)
class NodeFits:
    """What the nodes alone answer of a pod (whatever runs on them), kept with their
    columns (:class:`NodeAnswers`): asked of each pending pod a job may place, without
    the cycle's loads (:class:`NodeTable`), which only a job's whole placement needs."""

    nodes: list[Node]
    columns: NodeColumns
    request: Requests

    @classmethod
    def of(
        cls, nodes: list[Node], columns: NodeColumns, request: Requests, pods: dict[str, Pod]
    ) -> NodeFits:
        """The answers for a cycle whose pods are ``pods`` (those of the pods gone are
        dropped once they are many)."""
        columns.fits.forget_gone(pods)
        return cls(nodes, columns, request)

    def passing(self, pod: Pod, filters: tuple[NodeFilter, ...]) -> Mask:
        """The nodes every one of ``filters`` lets the pod onto (kept with the columns)."""
        key = (constraints(pod), filters)
        found = self.columns.fits.passing
        kept = found.get(key)
        if kept is None:
            kept = found[key] = self._passing(pod, filters)
        return kept

    def _passing(self, pod: Pod, filters: tuple[NodeFilter, ...]) -> Mask:
        out = np.ones(len(self.nodes), dtype=np.bool_)
        if not filters:
            return out
        affinity = pod.affinity.node_affinity if pod.affinity is not None else None
        selects = bool(pod.node_selector) or (
            affinity is not None and affinity.required is not None
        )
        # ``filters`` are among TAKER_FILTERS: a node with no taints that is schedulable
        # passes the unschedulable and taint filters whatever the pod tolerates, and node
        # affinity fails only a pod with a node selector or required terms (even none).
        rows = range(len(self.nodes)) if selects else np.flatnonzero(~self.columns.plain)
        for row in rows:
            node = self.nodes[row]
            out[row] = all(f(pod, node) is None for f in filters)
        return out

    def fits_somewhere(self, pod: Pod, filters: tuple[NodeFilter, ...]) -> bool:
        """Some node's allocatable takes the pod's request (what any node can take,
        whatever runs on it: FutureIdle never exceeds it) and ``filters`` let it on.
        The answer reads the nodes alone, so it is kept with the columns, by pod (the
        same object holds the same request and constraints) and by shape."""
        answers = self.columns.fits
        kept = answers.pods.get(id(pod))
        if kept is not None and kept[1] == filters:
            return kept[2]
        need = self.request(pod)
        shape = (need.signature(), constraints(pod), filters)
        fits = answers.shapes.get(shape)
        if fits is None:
            ok = self.passing(pod, filters).copy()
            for name in dims(need):
                if name != "pods":
                    ok &= need.get(name) - _alloc(self.columns, name, len(self.nodes)) < TOLERANCE
            fits = answers.shapes[shape] = bool(ok.any())
        answers.pods[id(pod)] = (pod, filters, fits)
        return fits


def _alloc(columns: NodeColumns, name: str, count: int) -> Column:
    column = columns.alloc.get(name)
    return column if column is not None else np.zeros(count)


def node_fits(inputs: InvariantInputs, view: CycleView) -> NodeFits:
    """What the nodes alone answer in the cycle of ``view``, once per view."""
    return inputs.derived(
        "node fits",
        view,
        lambda: NodeFits.of(
            inputs.cluster.nodes, node_columns(inputs), requests(inputs), view.pods
        ),
    )


@dataclass
class NodeTable:
    """The nodes of one cycle, as columns: allocatable and held resources per dimension,
    pod slots taken; and the answers already found, by shape."""

    nodes: list[Node]
    request: Requests
    columns: NodeColumns
    held: dict[str, Column]  # dimension -> what the node's holding pods request
    slots: npt.NDArray[np.int64]  # pod slots taken by the pods on the node, any status
    _fits: dict[Hashable, Mask] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        nodes: list[Node],
        pods: dict[str, Pod],
        statuses: dict[str, TaskStatus],
        request: Requests,
        columns: NodeColumns,
        loads: NodeLoads | None = None,
        step: PodStep | None = None,
    ) -> NodeTable:
        """``columns``: the nodes' own (:func:`node_columns`); ``loads``: what their
        pods took in the last table built, updated here (a fresh one when None), by
        ``step`` when it says how ``pods`` came from those (:class:`PodIndex`)."""
        held, slots = (loads or NodeLoads()).of(columns, len(nodes), pods, statuses, request, step)
        return cls(nodes, request, columns, held, slots)

    @property
    def fits(self) -> NodeFits:
        """What the table's nodes alone answer."""
        return NodeFits(self.nodes, self.columns, self.request)

    def passing(self, pod: Pod, filters: tuple[NodeFilter, ...]) -> Mask:
        """The nodes every one of ``filters`` lets the pod onto."""
        return self.fits.passing(pod, filters)

    def fits_somewhere(self, pod: Pod, filters: tuple[NodeFilter, ...]) -> bool:
        """:meth:`NodeFits.fits_somewhere`."""
        return self.fits.fits_somewhere(pod, filters)

    def takers(self, pods: Sequence[Pod]) -> Mask:
        """The nodes that take every one of ``pods`` at once: their pod slots, idle
        resources (a node already beyond its allocatable in a resource takes nothing there,
        as Volcano v1.11 only logs it "out of sync") and :data:`TAKER_FILTERS`."""
        need = Resource()
        for p in pods:
            need.add(self.request(p))
        shape = (
            "takers",
            need.signature(),
            sum(self.request.slots(p) for p in pods),
            frozenset(constraints(p) for p in pods),
        )
        kept = self._fits.get(shape)
        if kept is None:
            kept = self._fits[shape] = self._takers(pods, need, shape[2])
        return kept

    def _takers(self, pods: Sequence[Pod], need: Resource, slots: int) -> Mask:
        ok = self.slots + slots <= self._alloc("pods")
        # Every dimension the job or a node's pods use (where neither does, held plus
        # asked is below tolerance and no allocatable is negative: nothing to test).
        for name in (set(dims(need)) | set(self.held)) - {"pods"}:
            ok &= self._held(name) + need.get(name) - self._alloc(name) < TOLERANCE
        for pod in {constraints(p): p for p in pods}.values():
            ok &= self.passing(pod, TAKER_FILTERS)
        return ok

    def _alloc(self, name: str) -> Column:
        return _alloc(self.columns, name, len(self.nodes))

    def _held(self, name: str) -> Column:
        column = self.held.get(name)
        return column if column is not None else np.zeros(len(self.nodes))


def _names(r: Resource) -> list[str]:
    return ["cpu", "memory", *r.scalars]


def _columns(rows: list[Resource], count: int, *, with_pods: bool) -> dict[str, Column]:
    """One float column per dimension any row has (the values as the rows hold them)."""
    out: dict[str, Column] = {}
    for row, r in enumerate(rows):
        for name in _names(r):
            column = out.get(name)
            if column is None:
                column = out[name] = np.zeros(count)
            column[row] = r.get(name)
    if with_pods and "pods" not in out:
        out["pods"] = np.zeros(count)
    return out
