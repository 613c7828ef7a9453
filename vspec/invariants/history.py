"""The cluster cycle by cycle, rebuilt from the input and the recorded binds and evictions.

Invariants judge the engine from the outside: they replay what the result says happened
(binds become Running pods, evicted pods leave, as between two sessions) instead of
trusting the engine's own bookkeeping, and match nodes with their own small filters.
"""

from __future__ import annotations

import copy
import operator
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, compress, count, islice, repeat
from operator import eq, is_, is_not, ne
from typing import Any, TypeVar

from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.invariants.base import InvariantInputs
from vspec.invariants.outside import (
    TOLERANCE,
    node_allocatable,
    pod_request,
    pod_status,
    requests_nothing,
)
from vspec.model.changes import Changed, from_place
from vspec.model.conf import PluginOption, SchedulerConf
from vspec.model.corev1 import NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration
from vspec.model.objects import Cluster, Node, Pod, PodGroup, PriorityClass, Queue
from vspec.model.result import Bind, Eviction, SimulationResult, TaskResult

# Statuses whose pods hold node resources (NodeInfo.add_task: all but Pipelined and the
# completed ones; Releasing pods hold theirs until they are gone).
HOLDING = frozenset(
    {
        TaskStatus.Allocated,
        TaskStatus.Binding,
        TaskStatus.Bound,
        TaskStatus.Running,
        TaskStatus.Releasing,
        TaskStatus.Unknown,
    }
)
READY = frozenset(
    {
        TaskStatus.Allocated,
        TaskStatus.Binding,
        TaskStatus.Bound,
        TaskStatus.Running,
        TaskStatus.Succeeded,
    }
)
_KEY = operator.attrgetter("meta.key")
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


@dataclass
class CycleView:
    """One cycle: the pods at its start (by ``ns/name``) and what it did."""

    cycle: int
    pods: dict[str, Pod]
    binds: list[Bind] = field(default_factory=list)
    evictions: list[Eviction] = field(default_factory=list)

    def status(self, key: str) -> TaskStatus:
        return self.statuses[key]

    @cached_property
    def statuses(self) -> dict[str, TaskStatus]:
        """Each pod's status (:func:`pod_status`), worked out once for the view: a dozen
        invariants ask it of every pod, and the view's pods do not change."""
        return {key: pod_status(pod) for key, pod in self.pods.items()}

    @cached_property
    def pending(self) -> set[str]:
        """The Pending pods (:attr:`statuses`), found once for the view, as its statuses
        are: the jobs allocate tries are theirs."""
        return {key for key, status in self.statuses.items() if status is TaskStatus.Pending}

    @cached_property
    def terminating(self) -> set[str]:
        """The pods with a deletion timestamp (gone one period later), found once for
        the view, as its statuses are."""
        return {k for k, p in self.pods.items() if p.meta.deletion_timestamp is not None}

    @cached_property
    def job_ids(self) -> dict[str, str]:
        """Each pod's job (``Pod.job_id``, "" for none), worked out once for the view,
        as its statuses are."""
        return {key: pod.job_id for key, pod in self.pods.items()}

    @cached_property
    def members(self) -> dict[str, str]:
        """The job each pod counts in for :func:`pods_by_job`: its job when ours (the
        default scheduler's names) or on a node, else "" (set by :func:`cycles` from
        the conf's names)."""
        return PodFacts().of(self.pods).members

    @cached_property
    def on_node(self) -> dict[str, frozenset[str]]:
        """The pods on each node (by ``node_name``, any status), found once for the view,
        as its statuses are."""
        return PodFacts().of(self.pods).on_node


def gone_after(view: CycleView) -> set[str]:
    """The pods that leave at the end of a cycle: evicted, or terminating already."""
    return {e.task for e in view.evictions} | view.terminating


def cycles(inputs: InvariantInputs, result: SimulationResult) -> tuple[CycleView, ...]:
    """Each cycle's view of ``result``, in order (:func:`replay`), replayed once for all
    the invariants that check it: the views are shared, so none may change them."""
    return inputs.derived("cycles", result, lambda: _replayed(inputs, result))


def _replayed(inputs: InvariantInputs, result: SimulationResult) -> tuple[CycleView, ...]:
    cluster = inputs.cluster
    step = pod_index(inputs).update(cluster.pods, cluster.pods_changed)
    views = tuple(replay(inputs.cluster, result, inputs.cycles, step.after))
    facts = inputs.carry.kept("pod facts", PodFacts) if inputs.carry is not None else PodFacts()
    names = inputs.conf.options.scheduler_names
    for view in views:  # asked by most checks: worked out here, where their cost is shared
        found = facts.of(view.pods, names, step)
        view.statuses, view.job_ids = found.statuses, found.job_ids
        view.terminating, view.pending = found.terminating, found.pending
        view.members, view.on_node = found.members, found.on_node
    return views


@dataclass(frozen=True)
class PodStep:
    """How one cluster's pods by key (``after``) differ from the last ones (``before``,
    None at the first): the keys whose pod left or is another object (``gone``: with the
    pod they had) and those whose pod came or is another object (``came``: with it). A
    consumer that holds ``before``'s state patches it with these and nothing else."""

    before: dict[str, Pod] | None
    after: dict[str, Pod]
    gone: list[tuple[str, Pod]]
    came: list[tuple[str, Pod]]
    # Each key's rank in ``after``'s order (the index's own, kept in place: valid for
    # the latest step only), and whether they were numbered afresh (the pods moved in
    # the list, or many changed): a rank kept from before is then no longer comparable.
    rank: dict[str, int]
    renumbered: bool


class PodIndex:
    """A cluster's pods by key (``ns/name``, in the list's order, a later pod of a key
    winning), patched from one pod list to the next: a timeline hands its unchanged pods
    from session to session (a changed pod is a new object in its place, new pods come
    last, a finished job's pods are taken out), so the lists are compared by identity
    in C loops (:func:`list_changes`) and only the pods that differ are read. The step
    taken (:class:`PodStep`) lets the facts, the pods of each job and the node loads be
    patched the same way. The patched dict equals the one built afresh
    (tests/invariants/test_pod_facts.py)."""

    def __init__(self) -> None:
        self._pods: list[Pod] = []  # the last list, copied
        self._source: list[Pod] | None = None  # the last list itself, which reports name
        self._rank: dict[str, int] = {}
        self._next = 0  # the rank the next new key gets
        self.step: PodStep | None = None

    @property
    def pods(self) -> dict[str, Pod] | None:
        """The last pods by key: shared, so none may change them."""
        return None if self.step is None else self.step.after

    def update(self, pods: list[Pod], report: Changed[Pod] | None = None) -> PodStep:
        """The step to ``pods`` from the last list (the same step when it is the same).
        ``report``: what the list's maker says it changed (vspec.model.changes, "Change
        reports"), taken as a hint only (:meth:`_reported`)."""
        step = self.step
        if step is not None and len(pods) == len(self._pods) and all(map(is_, pods, self._pods)):
            return step
        before = None if step is None else step.after
        told = None if before is None else self._reported(before, pods, report)
        if told is not None:
            after, gone, came = told
            patched: dict[str, Pod] | None = after
        else:
            found = self.changed(pods)
            patched = None if found is None else self._patched(before, pods, *found)
            if patched is None or found is None:
                after = self._rebuilt(pods)
                old = before or {}
                touched: Iterable[str] = after.keys() | old.keys()
                gone = [(k, old[k]) for k in touched if k in old and after.get(k) is not old[k]]
                came = [(k, after[k]) for k in touched if k in after and old.get(k) is not after[k]]
            else:
                after = patched
                gone = [(p.meta.key, p) for p in found[0]]
                came = [(p.meta.key, p) for p in found[1]]
        self._pods, self._source = list(pods), pods
        self.step = PodStep(before, after, gone, came, self._rank, patched is None)
        return self.step

    def _reported(
        self, before: dict[str, Pod], pods: list[Pod], report: Changed[Pod] | None
    ) -> tuple[dict[str, Pod], list[tuple[str, Pod]], list[tuple[str, Pod]]] | None:
        """The pods by key, and the step's gone and came, from a report that goes from the
        last list object to ``pods`` (the cluster's maker's, in part the engine's own
        ``next_cluster``: not trusted): ``before`` patched with the pods it names, then
        compared with ``pods`` object by object in order, in one C pass, as the walk's
        patch is (:meth:`_patched`). What came and went is then read off the keys the
        report names, ``before`` against the patched dict: the other keys hold the very
        pods they held. So a report that names too much, too little or the wrong pods
        gives the walk's answer or none (the walk then runs), never another. Saves the
        walk over every pod (:func:`list_changes`) where the report holds."""
        if report is None or report.before is not self._source or report.after is not pods:
            return None
        left, came = report.gone, list(report.added.values())
        keys = dict.fromkeys(map(_KEY, left))
        keys.update(dict.fromkeys(map(_KEY, came)))
        rank = self._rank
        was = [(rank[key], key, pod) for key in keys if (pod := before.get(key)) is not None]
        after = self._patched(before, pods, left, came)
        if after is None:
            return None
        # In the lists' orders, as the walk gives them (the ranks follow each list's).
        gone = [(key, pod) for _, key, pod in sorted(was) if after.get(key) is not pod]
        now = [(rank[key], key, pod) for key in keys if (pod := after.get(key)) is not None]
        came_keys = [(key, pod) for _, key, pod in sorted(now) if before.get(key) is not pod]
        return after, gone, came_keys

    def changed(self, pods: list[Pod]) -> tuple[list[Pod], list[Pod]] | None:
        """Against the last list, by identity: its pods not in ``pods``, and the pods of
        ``pods`` not in it; None when it had no list or a key twice, or they differ at
        many places."""
        if self.step is None or len(self._pods) != len(self.step.after):
            return None
        return list_changes(self._pods, pods)

    def _patched(
        self, before: dict[str, Pod] | None, pods: list[Pod], left: list[Pod], came: list[Pod]
    ) -> dict[str, Pod] | None:
        """``before`` with each pod that came in its key's place (a new key last, in the
        list's order) and the keys whose pod left and none came taken out: None when
        that is not ``pods``, in order (pods moved in it, or a key has two pods)."""
        if before is None:
            return None
        after = dict(before)
        fresh = []
        for pod in came:
            key = pod.meta.key
            if key in before:
                after[key] = pod
            else:
                fresh.append((key, pod))
        for key, pod in fresh:
            after[key] = pod
        dropped = []
        for pod in left:
            key = pod.meta.key
            if after.get(key) is pod:
                del after[key]
                dropped.append(key)
        if len(after) != len(pods) or not all(map(is_, after.values(), pods)):
            return None
        rank = self._rank
        for key in dropped:
            del rank[key]
        for key, _ in fresh:
            rank[key] = self._next
            self._next += 1
        return after

    def _rebuilt(self, pods: list[Pod]) -> dict[str, Pod]:
        after = dict(zip(map(_KEY, pods), pods, strict=True))
        self._rank = dict(zip(after, range(len(after)), strict=True))
        self._next = len(after)
        return after


Obj = TypeVar("Obj")
_LOOK_AHEAD = 16  # how far on an object is looked for where two lists differ


def list_changes(old: list[Obj], new: list[Obj]) -> tuple[list[Obj], list[Obj]] | None:
    """The objects (pods, pod groups) of ``old`` not in ``new`` and the reverse, by
    identity, for lists that hold each once: both are walked side by side in C loops, a
    place where they differ being an object replaced there, or a run of them taken out
    or put in (found within :data:`_LOOK_AHEAD` places); None when they differ at more
    than an eighth of their places (then reading every object costs about as much)."""
    found = changed_places(old, new, is_not, is_)
    if found is None:
        return None
    gone, came = [old[i] for i in found[0]], [new[j] for j in found[1]]
    both = set(map(id, gone)) & set(map(id, came))  # pods that moved in the list
    if both:
        gone = [p for p in gone if id(p) not in both]
        came = [p for p in came if id(p) not in both]
    return gone, came


def text_changes(old: list[Obj], new: list[Obj]) -> tuple[list[Obj], list[Obj]] | None:
    """:func:`list_changes` by equality, for texts (a log's lines, which a session makes
    anew, equal to the last session's where nothing changed): as multisets, ``new`` is
    ``old`` less the first list plus the second; None when they differ at more than an
    eighth of their places."""
    found = changed_places(old, new, ne, eq)
    return None if found is None else ([old[i] for i in found[0]], [new[j] for j in found[1]])


def changed_places(
    old: Sequence[Obj],
    new: Sequence[Obj],
    differ: Callable[[Obj, Obj], bool],
    same: Callable[[Obj, Obj], bool],
) -> tuple[list[int], list[int]] | None:
    """The places of ``old`` whose elements it loses and those of ``new`` whose elements
    it gains (each in order), the lists walked side by side, ``differ`` and ``same``
    comparing two elements (:func:`list_changes`): every other place of ``old`` is
    matched, in order, with one of ``new`` whose element is the same."""
    gone: list[int] = []
    came: list[int] = []
    limit = 16 + len(new) // 8
    a = b = 0
    while True:
        shift = b - a
        past = 0  # the places before it are in a run taken as replaced already
        pairs = map(differ, from_place(old, a), from_place(new, b))
        for i in compress(count(a), pairs):
            if i < past:
                continue
            j = i + shift
            x, y = old[i], new[j]
            taken = _first(old, i + 1, y, same)
            run = None if taken is not None else _realigned(old, new, i, j, same)
            put = None if taken is not None or run is not None else _first(new, j + 1, x, same)
            if taken is not None:
                gone += range(i, taken)
                a, b = taken, j
            elif run is not None:  # a run replaced in place (binds): the walk goes on
                gone += range(i, i + run)
                came += range(j, j + run)
                past = i + run
            elif put is not None:
                came += range(j, put)
                a, b = i, put
            else:  # replaced in place: the walk goes on
                gone.append(i)
                came.append(j)
            if len(gone) + len(came) > limit:
                return None
            if taken is not None or put is not None:
                break
        else:
            shared = min(len(old) - a, len(new) - b)
            gone += range(a + shared, len(old))
            came += range(b + shared, len(new))
            return gone, came


def _realigned(
    old: Sequence[Obj], new: Sequence[Obj], i: int, j: int, same: Callable[[Obj, Obj], bool]
) -> int | None:
    """How many places from ``old[i]`` and ``new[j]`` on differ before the lists hold
    the same again (within :data:`_LOOK_AHEAD`), or before the shorter one ends: a run
    replaced in place (the binds of a job's pods, which came last), told in one C loop
    where looking for ``old[i]`` ahead costs one per place. Taking it as replaced keeps
    the multisets exact, as the lists are the same past it."""
    ahead = min(_LOOK_AHEAD, len(old) - i - 1, len(new) - j - 1)
    pairs = map(same, islice(from_place(old, i + 1), ahead), islice(from_place(new, j + 1), ahead))
    found = next(compress(count(1), pairs), None)
    return ahead + 1 if found is None and ahead < _LOOK_AHEAD else found


def _first(
    objects: Sequence[Obj], start: int, obj: Obj, same: Callable[[Obj, Obj], bool]
) -> int | None:
    """The first place from ``start`` on (within :data:`_LOOK_AHEAD`) holding ``obj``."""
    near = islice(from_place(objects, start), _LOOK_AHEAD)
    return next(compress(count(start), map(same, near, repeat(obj))), None)


class NodeRows:
    """Each node's index in the cluster's list, and the node itself, by name (the last
    of a name), kept while the list holds the same node objects (a timeline's sessions
    mostly do)."""

    def __init__(self) -> None:
        self._kept: tuple[list[Node], Named] | None = None

    def of(self, nodes: list[Node]) -> Named:
        if self._kept is None or not same_objects(self._kept[0], nodes):
            rows = {n.meta.name: i for i, n in enumerate(nodes)}
            named = Named(rows, {name: nodes[i] for name, i in rows.items()})
            self._kept = (list(nodes), named)
        return self._kept[1]


def same_objects(kept: list[Obj], now: list[Obj]) -> bool:
    """Whether ``now`` holds the very objects ``kept`` does, in order, or objects equal
    to them: list equality, which takes an object for itself without reading it (a
    timeline's sessions ask it of a thousand nodes, cold in memory by then: comparing
    them one by one in Python reads each), and compares the first pair that differs.
    Whatever is worked out from equal nodes is equal."""
    return len(kept) == len(now) and kept == now


@dataclass(frozen=True)
class Named:
    """The nodes by name: their rows in the cluster's list, and the nodes."""

    rows: dict[str, int]
    nodes: dict[str, Node]


def nodes_named(inputs: InvariantInputs) -> Named:
    """The nodes by name, checked against the list once per result (half a dozen checks
    ask), kept from result to result when the caller carries memos."""
    if inputs.carry is not None:
        memo = inputs.carry.kept("node rows", NodeRows)
        return inputs.derived("node rows", inputs, lambda: memo.of(inputs.cluster.nodes))
    return inputs.derived("node rows", inputs, lambda: NodeRows().of(inputs.cluster.nodes))


def node_rows(inputs: InvariantInputs) -> dict[str, int]:
    """The cluster's nodes' indexes by name: shared, so none may change them."""
    return nodes_named(inputs).rows


def nodes_by_name(inputs: InvariantInputs) -> dict[str, Node]:
    """The cluster's nodes by name (the last of a name): shared, so none may change it."""
    return nodes_named(inputs).nodes


def pod_index(inputs: InvariantInputs) -> PodIndex:
    """The pods by key, kept from result to result when the caller carries memos (a
    timeline's sessions), else for the invariants that check ``inputs``."""
    if inputs.carry is not None:
        return inputs.carry.kept("pod index", PodIndex)
    return inputs.derived("pod index", inputs, PodIndex)


@dataclass
class Facts:
    """What most checks ask of every pod of a view, by key (see :class:`CycleView`)."""

    statuses: dict[str, TaskStatus] = field(default_factory=dict)
    job_ids: dict[str, str] = field(default_factory=dict)
    terminating: set[str] = field(default_factory=set)
    members: dict[str, str] = field(default_factory=dict)
    on_node: dict[str, frozenset[str]] = field(default_factory=dict)
    pending: set[str] = field(default_factory=set)  # the Pending pods, patched as the rest

    def copy(self) -> Facts:
        """Fresh containers (the node sets are frozen, so shared): the last view holds
        the others."""
        return Facts(
            dict(self.statuses),
            dict(self.job_ids),
            set(self.terminating),
            dict(self.members),
            dict(self.on_node),
            set(self.pending),
        )

    def to_patch(self) -> Facts:
        """These facts to patch for the next pods: themselves when nothing but the memo
        holds them or their containers (the last views are gone once their result is
        judged), each container still held elsewhere copied first (copy-on-write: what
        anyone holds stays as it was); a copy when someone holds these facts. The
        holders are counted by reference (CPython's ``sys.getrefcount``: the memo's
        tuple and the call's argument for the facts, their attribute and the call's
        argument for a container), so a missed holder costs a copy, never a change seen."""
        if sys.getrefcount(self) > _HELD_BY_MEMO:
            return self.copy()
        if sys.getrefcount(self.statuses) > _HELD_BY_FACTS:
            self.statuses = dict(self.statuses)
        if sys.getrefcount(self.job_ids) > _HELD_BY_FACTS:
            self.job_ids = dict(self.job_ids)
        if sys.getrefcount(self.terminating) > _HELD_BY_FACTS:
            self.terminating = set(self.terminating)
        if sys.getrefcount(self.members) > _HELD_BY_FACTS:
            self.members = dict(self.members)
        if sys.getrefcount(self.on_node) > _HELD_BY_FACTS:
            self.on_node = dict(self.on_node)
        if sys.getrefcount(self.pending) > _HELD_BY_FACTS:
            self.pending = set(self.pending)
        return self


# The references to facts held by PodFacts alone, as Facts.to_patch counts them: the
# memo's tuple, the method's ``self`` and getrefcount's argument; and to one of their
# containers: the facts' attribute and getrefcount's argument.
_HELD_BY_MEMO = 3
_HELD_BY_FACTS = 2


class PodFacts:
    """Each pod's status and job (:func:`pod_status`, ``Pod.job_id``), worked out once
    per pod object, and the last pods' facts by key, patched for the next pods: a
    timeline hands its unchanged pods from session to session (a changed pod is a new
    object), so a session looks up only the pods it changed instead of every pod of the
    cluster. The pods are compared by identity in one pass in C (their ids by key); the
    patched facts equal the from-scratch ones (tests/invariants/test_pod_facts.py)."""

    def __init__(self) -> None:
        # id -> (the pod, its status, its job, whether it is terminating): holding the
        # pod keeps its id from being reused.
        self._of: dict[int, tuple[Pod, TaskStatus, str, bool]] = {}
        # The last pods (holding them keeps their ids), their facts, and the scheduler
        # names the membership was judged under.
        self._last: tuple[dict[str, Pod], Facts, tuple[str, ...]] | None = None

    def of(
        self,
        pods: dict[str, Pod],
        names: tuple[str, ...] = ("volcano",),
        step: PodStep | None = None,
    ) -> Facts:
        """The facts of ``pods``: statuses, jobs, the terminating ones, the job each pod
        counts in for :func:`pods_by_job` ("" for none: a pod of no job, or another
        scheduler's not on a node), and the pods on each node (by ``node_name``).
        ``step``: how ``pods`` came from the last pods (:class:`PodIndex`), when it did;
        else the last pods and these are compared."""
        last = self._last
        if last is None or last[2] != names:
            facts = Facts()
            fresh: Iterable[tuple[str, Pod]] = pods.items()
        elif last[0] is pods:
            return last[1]
        elif step is not None and step.before is last[0] and step.after is pods:
            facts = last[1].to_patch()
            for key, pod in step.gone:
                self._drop(facts, key, pod)
            fresh = step.came
        else:
            before_pods, facts = last[0], last[1].to_patch()
            before = dict(zip(before_pods, map(id, before_pods.values()), strict=True))
            ids = dict(zip(pods, map(id, pods.values()), strict=True))
            for key in before.keys() - ids.keys():
                self._drop(facts, key, before_pods[key])
            fresh = [(key, pods[key]) for key, _ in ids.items() - before.items()]
            for key, _ in fresh:
                if key in before_pods:
                    self._drop(facts, key, before_pods[key])
        for key, pod in fresh:
            self._add(facts, key, pod, names)
        self._last = (pods, facts, names)
        memo = self._of
        if len(memo) > 2 * len(pods) + 64:  # drop the pods gone from the cluster
            live = set(map(id, pods.values()))
            self._of = {k: v for k, v in memo.items() if k in live}
        return facts

    def _add(self, facts: Facts, key: str, pod: Pod, names: tuple[str, ...]) -> None:
        kept = self._of.get(id(pod))
        if kept is None:
            deleted = pod.meta.deletion_timestamp is not None
            kept = self._of[id(pod)] = (pod, pod_status(pod), pod.job_id, deleted)
        facts.statuses[key] = kept[1]
        facts.job_ids[key] = kept[2]
        if kept[3]:
            facts.terminating.add(key)
        if kept[1] is TaskStatus.Pending:
            facts.pending.add(key)
        facts.members[key] = kept[2] if pod.scheduled_by(names) or pod.node_name else ""
        if pod.node_name:
            on = facts.on_node
            on[pod.node_name] = on.get(pod.node_name, frozenset()) | {key}

    @staticmethod
    def _drop(facts: Facts, key: str, pod: Pod) -> None:
        del facts.statuses[key], facts.job_ids[key], facts.members[key]
        facts.terminating.discard(key)
        facts.pending.discard(key)
        if pod.node_name:
            on = facts.on_node
            left = on[pod.node_name] - {key}
            if left:
                on[pod.node_name] = left
            else:
                del on[pod.node_name]


def replay(
    cluster: Cluster,
    result: SimulationResult,
    count: int,
    by_key: dict[str, Pod] | None = None,
) -> Iterator[CycleView]:
    """Each cycle's view, in order; the pods move on as between two sessions: bound pods
    run on their node, evicted and terminating pods are gone, and the held pods a
    controller created (``result.created``) are there from their cycle on. ``by_key``:
    the cluster's pods by key (:class:`PodIndex`), when found already; not changed."""
    pods = PodIndex().update(cluster.pods).after if by_key is None else by_key
    owned = False  # whether ``pods`` is this replay's own dict, which it may change
    held = {p.meta.key: p for p in cluster.held_pods}
    binds: dict[int, list[Bind]] = {}
    for bind in result.binds:
        binds.setdefault(bind.cycle, []).append(bind)
    evictions: dict[int, list[Eviction]] = {}
    for eviction in result.evictions:
        evictions.setdefault(eviction.cycle, []).append(eviction)
    for c in range(count):
        created = {k: p for k, p in held.items() if result.created.get(k) == c}
        if created:
            pods, owned = {**pods, **created}, True
        # The last view may have the dict itself: nothing moves after it.
        at_start = pods if c == count - 1 else dict(pods)
        view = CycleView(c, at_start, binds.get(c, []), evictions.get(c, []))
        yield view
        if c == count - 1:
            return  # nothing reads the cluster after the last cycle: move no pod
        if not owned:
            pods, owned = dict(pods), True
        for bind in view.binds:
            pod = pods.get(bind.task)
            if pod is not None:
                moved = copy.copy(pod)
                moved.node_name, moved.phase = bind.node, "Running"
                pods[bind.task] = moved
        for key in gone_after(view):
            pods.pop(key, None)


# -- the session's tasks ---------------------------------------------------------------------------

_STATUS_OF = operator.attrgetter("status")
_STATUS_NAMED = dict(TaskStatus.__members__)  # a plain dict: the enum's is a call per task
KEPT = frozenset({"Allocated", "Pipelined"})  # the statuses a kept statement leaves


def counted_tasks(
    pods: KeysView[str], job_ids: Mapping[str, str], tasks: Mapping[str, TaskResult]
) -> dict[str, dict[TaskStatus, int]]:
    """Each job's tasks among ``pods`` counted by in-session status: the (job, status
    name) pairs counted in one pass in C, then grouped and named (a job has a status or
    two, not a task each). Every task is usually a pod's: then the tasks are read in
    their own order, not looked up."""
    if tasks.keys() <= pods:
        keys: Collection[str] = tasks.keys()
        statuses = map(_STATUS_OF, tasks.values())
    else:
        keys = pods & tasks.keys()
        statuses = map(_STATUS_OF, map(tasks.__getitem__, keys))
    pairs = Counter(zip(map(job_ids.__getitem__, keys), statuses, strict=True))
    out: dict[str, dict[TaskStatus, int]] = {}
    for (uid, status), n in pairs.items():
        out.setdefault(uid, {})[_STATUS_NAMED[status]] = n
    return out


@dataclass(frozen=True)
class TaskFacts:
    """What checks ask of a result's tasks: each job's tasks among the last view's pods
    counted by in-session status (:func:`counted_tasks`), and the tasks a kept
    statement left (Allocated or Pipelined, pods or not). Shared: none may change them."""

    counts: dict[str, dict[TaskStatus, int]]
    kept: frozenset[str]


def kept_tasks(tasks: Mapping[str, TaskResult]) -> frozenset[str]:
    """The tasks left Allocated or Pipelined, found in one pass in C."""
    return frozenset(compress(tasks, map(KEPT.__contains__, map(_STATUS_OF, tasks.values()))))


class TaskCounts:
    """The last result's :class:`TaskFacts`, patched for the next: a timeline's engine
    hands a job's task results on as the very objects while the job is untouched, and
    its pods as the very objects while unchanged, so only the keys whose task is another
    object (or came, or went) and the keys whose pod changed (:class:`PodStep`) are
    counted again; the patched facts equal the fresh ones
    (tests/invariants/test_task_counts.py)."""

    def __init__(self) -> None:
        self._pods: dict[str, Pod] | None = None  # the pods last counted over
        # The last tasks' keys and tasks (holding them), in order: the tasks are walked
        # side by side with the next by identity (:func:`changed_places`), no key looked
        # up (a lookup of a key cold in memory costs).
        self._keys: list[str] = []
        self._tasks: list[TaskResult] = []
        self._of: dict[str, tuple[str, TaskStatus]] = {}  # key -> what it counts in
        self._out = TaskFacts({}, frozenset())

    def of(
        self, step: PodStep, job_ids: Mapping[str, str], tasks: Mapping[str, TaskResult]
    ) -> TaskFacts:
        """The facts of ``tasks``, counted over ``step.after``'s pods (whose jobs
        ``job_ids`` gives)."""
        keys, values = list(tasks), list(tasks.values())
        dirty = None if self._pods is not step.before else self._dirty(step, keys, values)
        if dirty is None:
            counts = counted_tasks(step.after.keys(), job_ids, tasks)
            self._of = {
                key: (job_ids[key], _STATUS_NAMED[tasks[key].status])
                for key in tasks.keys() & step.after.keys()
            }
            self._out = TaskFacts(counts, kept_tasks(tasks))
        else:
            out = dict(self._out.counts)  # the last counts stay as they were
            kept = set(self._out.kept)
            for key in dirty:
                self._count(out, key, step.after, job_ids, tasks)
                task = tasks.get(key)
                if task is not None and task.status in KEPT:
                    kept.add(key)
                else:
                    kept.discard(key)
            self._out = TaskFacts(out, frozenset(kept))
        self._pods, self._keys, self._tasks = step.after, keys, values
        return self._out

    def _dirty(self, step: PodStep, keys: list[str], tasks: list[TaskResult]) -> set[str] | None:
        """The keys that may count otherwise than last time; None when too many, or when
        a task stayed under another key."""
        found = changed_places(self._tasks, tasks, is_not, is_)
        if found is None or not _same_keys(self._keys, keys, found):
            return None
        dirty = set(map(self._keys.__getitem__, found[0]))
        dirty.update(map(keys.__getitem__, found[1]))
        dirty.update(key for key, _ in step.gone)
        dirty.update(key for key, _ in step.came)
        return dirty

    def _count(
        self,
        out: dict[str, dict[TaskStatus, int]],
        key: str,
        pods: dict[str, Pod],
        job_ids: Mapping[str, str],
        tasks: Mapping[str, TaskResult],
    ) -> None:
        was = self._of.pop(key, None)
        if was is not None:
            uid, status = was
            counted = out[uid] = dict(out[uid])
            counted[status] -= 1
            if not counted[status]:
                del counted[status]
                if not counted:
                    del out[uid]
        task = tasks.get(key)
        if task is not None and key in pods:
            uid, status = self._of[key] = (job_ids[key], _STATUS_NAMED[task.status])
            counted = out[uid] = dict(out.get(uid, {}))
            counted[status] = counted.get(status, 0) + 1


def _same_keys(old: list[str], new: list[str], places: tuple[list[int], list[int]]) -> bool:
    """Whether ``old`` and ``new`` hold the same keys, in order, but at ``places`` (what
    :func:`changed_places` found their tasks to lose and gain): compared in C, the runs
    between the places copied by slices (a few a session), not picked key by key."""
    gone, came = places
    return len(old) - len(gone) == len(new) - len(came) and _but(old, gone) == _but(new, came)


def _but(items: list[str], places: list[int]) -> list[str]:
    """``items`` less those at ``places`` (each once)."""
    out: list[str] = []
    start = 0
    for at in sorted(places):
        out += items[start:at]
        start = at + 1
    out += items[start:]
    return out


def task_facts(inputs: InvariantInputs, result: SimulationResult) -> TaskFacts:
    """The tasks' facts of ``result`` (the counts over the last view's pods), found once
    for the checks that ask, patched from the last result's when the caller carries
    memos and the last view's pods are the pod index's: shared, so none may change them."""

    def found() -> TaskFacts:
        last = cycles(inputs, result)[-1]
        step = pod_index(inputs).step if inputs.carry is not None else None
        if inputs.carry is None or step is None or last.pods is not step.after:
            counts = counted_tasks(last.pods.keys(), last.job_ids, result.tasks)
            return TaskFacts(counts, kept_tasks(result.tasks))
        return inputs.carry.kept("task counts", TaskCounts).of(step, last.job_ids, result.tasks)

    return inputs.derived("task facts", result, found)


# -- the session's view of jobs, queues and priorities ------------------------------------------


@dataclass
class Jobs:
    """Which jobs a session holds, their pod groups and priorities (``cache.Snapshot``)."""

    pod_groups: dict[str, PodGroup]  # job uid -> pod group, only jobs of the session
    priority: dict[str, int]

    @classmethod
    def of(cls, cluster: Cluster) -> Jobs:
        queues = {q.meta.name for q in cluster.queues}
        classes = {pc.meta.name: pc.value for pc in cluster.priority_classes}
        default = next((pc.value for pc in cluster.priority_classes if pc.global_default), 0)
        groups: dict[str, PodGroup] = {}
        priority: dict[str, int] = {}
        for pg in cluster.pod_groups:
            if (pg.queue or "default") not in queues:
                continue
            uid = f"{pg.meta.namespace}/{pg.meta.name}"
            groups[uid] = pg
            priority[uid] = classes.get(pg.priority_class_name, default)
        return cls(groups, priority)

    def queue(self, uid: str) -> str:
        return self.pod_groups[uid].queue or "default"


class JobsMemo:
    """The last cluster's :class:`Jobs`, patched for the next from the pod groups that
    differ while its queues and priority classes are the very objects they were: a
    timeline's session changes a few pod groups of hundreds. Those that differ are the
    ones the cluster's change report names (vspec.model.changes; in part the engine's
    own ``next_cluster``, so not trusted: the patched jobs are checked against the pod
    groups, :func:`_patched`), else found by walking the lists (:func:`list_changes`)."""

    def __init__(self) -> None:
        # The cluster's pod groups, queues and priority classes, and its jobs.
        self._last: tuple[list[PodGroup], list[Queue], list[PriorityClass], Jobs] | None = None
        self._source: list[PodGroup] | None = None  # the last pod groups list itself
        self.moved = JobsMoved()

    def of(self, cluster: Cluster) -> Jobs:
        last, groups = self._last, cluster.pod_groups
        jobs = found = None
        if last is not None and _same(last[1:3], cluster):
            report = cluster.pod_groups_changed
            if report is not None and report.before is self._source and report.after is groups:
                found = report.gone, list(report.added.values())
                jobs = _patched(last, groups, found)
            if jobs is None:
                found = list_changes(last[0], groups)
                jobs = _patched(last, groups, found)
        if jobs is None or found is None:
            jobs, uids = Jobs.of(cluster), None
        else:  # the jobs whose pod group another is: those of the groups gone or come
            uids = {f"{pg.meta.namespace}/{pg.meta.name}" for pg in chain(*found)}
        self.moved.now(jobs.pod_groups, uids)
        self._last = (list(groups), list(cluster.queues), list(cluster.priority_classes), jobs)
        self._source = groups
        return jobs


class JobsMoved:
    """Which jobs' entries may differ between a memo's last answer (a dict by job uid)
    and the one before it: a memo patched by what changed knows, and hands it on to
    those that keep something per job of its answers (logprint's printed jobs)."""

    def __init__(self) -> None:
        self._before: object = None
        self._last: object = None
        self._uids: set[str] | None = None

    def now(self, answer: object, uids: set[str] | None) -> None:
        """``answer`` is the memo's latest; ``uids``: the jobs whose entry may differ
        from the last answer's (None: any)."""
        if answer is not self._last:
            self._before, self._last, self._uids = self._last, answer, uids

    def since(self, earlier: object, answer: object) -> set[str] | None:
        """The jobs whose entries may differ between ``earlier`` and ``answer``, two of
        the memo's answers; None when not known (they are not its last two)."""
        if answer is not self._last:
            return None
        if earlier is answer:
            return set()
        return self._uids if earlier is self._before else None


def _same(kept: tuple[list[Queue], list[PriorityClass]], cluster: Cluster) -> bool:
    queues, classes = kept
    return (
        len(queues) == len(cluster.queues)
        and all(map(is_, queues, cluster.queues))
        and len(classes) == len(cluster.priority_classes)
        and all(map(is_, classes, cluster.priority_classes))
    )


def _patched(
    last: tuple[list[PodGroup], list[Queue], list[PriorityClass], Jobs],
    groups: list[PodGroup],
    found: tuple[list[PodGroup], list[PodGroup]] | None,
) -> Jobs | None:
    """The last jobs with the pod groups that came (``found``'s second list: a new one
    last) and without those that went (its first); None unless that makes every pod
    group a job's, in the list's order (checked by identity in one C pass, so pod groups
    said to have come or gone that did not, or missed, give None, never other jobs)."""
    if found is None:
        return None
    before = last[3]
    if len(before.pod_groups) != len(last[0]):
        return None  # some pod group is of no known queue: found afresh
    fresh = Jobs.of(Cluster(queues=last[1], priority_classes=last[2], pod_groups=found[1]))
    if len(fresh.pod_groups) != len(found[1]):
        return None
    out = Jobs(dict(before.pod_groups), dict(before.priority))
    out.pod_groups.update(fresh.pod_groups)
    out.priority.update(fresh.priority)
    for pg in found[0]:
        uid = f"{pg.meta.namespace}/{pg.meta.name}"
        if out.pod_groups.get(uid) is pg:
            del out.pod_groups[uid], out.priority[uid]
    if len(out.pod_groups) != len(groups) or not all(map(is_, out.pod_groups.values(), groups)):
        return None
    return out


def session_jobs(inputs: InvariantInputs) -> Jobs:
    """The jobs of the cluster before the first session, found once for all the
    invariants that check a run (patched from the last result's when the caller carries
    memos): shared, so none may change them."""
    if inputs.carry is not None:
        memo = inputs.carry.kept("jobs", JobsMemo)
        return inputs.derived("jobs", inputs, lambda: memo.of(inputs.cluster))
    return inputs.derived("jobs", inputs, lambda: Jobs.of(inputs.cluster))


def placed_by_us(pod: Pod, conf: SchedulerConf) -> bool:
    return pod.scheduled_by(conf.options.scheduler_names)


def pods_by_job(inputs: InvariantInputs, view: CycleView) -> dict[str, list[Pod]]:
    """The pods of each job as the cache holds them (ours, or already on a node), in the
    view's order, found once per view for the invariants that ask: shared, so none may
    change them."""
    return inputs.derived(f"pods_by_job {view.cycle}", view, lambda: _job_pods(inputs, view))


def _job_pods(inputs: InvariantInputs, view: CycleView) -> dict[str, list[Pod]]:
    step = inputs.carry.kept("pod index", PodIndex).step if inputs.carry is not None else None
    if inputs.carry is None or step is None or view.pods is not step.after:
        return _by_job(view)
    names = inputs.conf.options.scheduler_names
    return inputs.carry.kept("job pods", JobPods).of(step, view.members, names)


class JobPods:
    """The pods of each job (:func:`_by_job`) of the last pods, patched by a
    :class:`PodStep`: only the jobs whose pods the step touched get new lists (in the
    pods' order, by the index's ranks), the others keep the very lists they had. The
    jobs stay in the order of their first pod; the patched lists equal the ones found
    afresh (tests/invariants/test_pod_facts.py)."""

    def __init__(self) -> None:
        self._pods: dict[str, Pod] | None = None  # the pods the lists are of
        self._names: tuple[str, ...] = ()
        self._out: dict[str, list[Pod]] = {}
        self._member: dict[str, str] = {}  # key -> the job it counts in (none: absent)
        self._keys: dict[str, set[str]] = {}  # job -> the keys of its pods
        self._first: dict[str, int] = {}  # job -> its first pod's rank
        self._top = -1  # no job's first pod ranks above it
        self.moved = JobsMoved()

    def of(
        self, step: PodStep, members: dict[str, str], names: tuple[str, ...]
    ) -> dict[str, list[Pod]]:
        """The pods of each job of ``step.after``, whose pods count in ``members``."""
        if self._pods is step.after and self._names == names:
            return self._out
        if (
            self._pods is None
            or self._pods is not step.before
            or self._names != names
            or step.renumbered
        ):
            self._rebuilt(step, members)
            self.moved.now(self._out, None)
        else:
            touched = self._patched(step, members)
            self.moved.now(self._out, touched)
        self._pods, self._names = step.after, names
        return self._out

    def _rebuilt(self, step: PodStep, members: dict[str, str]) -> None:
        out: dict[str, list[Pod]] = {}
        self._member, self._keys, self._first = {}, {}, {}
        for key, pod in step.after.items():
            uid = members[key]
            if not uid:
                continue
            self._member[key] = uid
            if uid in out:
                out[uid].append(pod)
                self._keys[uid].add(key)
            else:
                out[uid], self._keys[uid], self._first[uid] = [pod], {key}, step.rank[key]
        self._out = out
        self._top = max(self._first.values(), default=-1)

    def _patched(self, step: PodStep, members: dict[str, str]) -> set[str]:
        """The lists patched; the jobs whose list may be another."""
        touched: set[str] = set()
        for key, _ in step.gone:
            uid = self._member.pop(key, "")
            if uid:
                self._keys[uid].discard(key)
                touched.add(uid)
        for key, _ in step.came:
            uid = members[key]
            if uid:
                self._member[key] = uid
                self._keys.setdefault(uid, set()).add(key)
                touched.add(uid)
        out, rank, pods = dict(self._out), step.rank, step.after
        resort = False
        arrived: list[tuple[int, str, list[Pod]]] = []
        for uid in touched:
            keys = sorted(self._keys[uid], key=rank.__getitem__)
            if not keys:
                del self._keys[uid], self._first[uid], out[uid]
                continue
            first, was = rank[keys[0]], self._first.get(uid)
            if was is None:
                arrived.append((first, uid, [pods[k] for k in keys]))
                continue
            out[uid] = [pods[k] for k in keys]
            resort |= first != was
            self._first[uid] = first
        for first, uid, listed in sorted(arrived):  # a new job goes last, if its pods do
            resort |= first < self._top
            out[uid], self._first[uid], self._top = listed, first, max(self._top, first)
        if resort:
            out = dict(sorted(out.items(), key=lambda item: self._first[item[0]]))
        self._out = out
        return touched


def _by_job(view: CycleView) -> dict[str, list[Pod]]:
    out: dict[str, list[Pod]] = {}
    members = view.members  # each pod's job, worked out by PodFacts
    for key, pod in view.pods.items():
        uid = members[key]
        if uid:
            if uid in out:
                out[uid].append(pod)
            else:
                out[uid] = [pod]
    return out


# -- resources --------------------------------------------------------------------------------


def pod_slots(pod: Pod) -> int:
    """Pod slots a pod takes in Volcano's accounting: one, plus any it requests itself."""
    written = sum(c.requests.get("pods", 0) for c in pod.containers)
    return 1 + int(written)


class Requests:
    """Each pod's request (:func:`pod_request`), worked out once per pod object: the
    views share the cluster's pods (a bound pod's copy is another object) and about 30
    invariant checks ask for each pod's request. The value is shared: clone it before
    changing it."""

    def __init__(self) -> None:
        # id -> (the pod, its request): holding the pod keeps its id from being reused.
        self._of: dict[int, tuple[Pod, Resource]] = {}
        # id -> (the pod, whether its request is nothing, :func:`requests_nothing`).
        self._nothing: dict[int, tuple[Pod, bool]] = {}
        # id -> (the pod, the dimensions its request is not zero in, :func:`dims`).
        self._dims: dict[int, tuple[Pod, frozenset[str]]] = {}
        # The same by containers list, for pods of no init container and no overhead,
        # whose request is their containers' alone: the replicas of a generated task
        # share one list, so 11,000 pods are 1,100 requests to work out.
        self._by_containers: dict[int, tuple[object, Resource]] = {}
        # containers list id -> (the list, :func:`pod_slots` of a pod of it).
        self._slots: dict[int, tuple[object, int]] = {}
        # id of a request -> (it, whether it is nothing, its dimensions): what the two
        # above say of it, worked out once per request object, not once per replica.
        self._facts: dict[int, tuple[Resource, bool, frozenset[str]]] = {}

    def __call__(self, pod: Pod) -> Resource:
        kept = self._of.get(id(pod))
        if kept is None:
            kept = self._of[id(pod)] = (pod, self._request(pod))
        return kept[1]

    def nothing(self, pod: Pod) -> bool:
        """Whether the pod requests nothing (:func:`requests_nothing` of its request),
        kept as its request is: gang, logprint and allocate's order ask it of every
        Pending pod."""
        kept = self._nothing.get(id(pod))
        if kept is None:
            kept = self._nothing[id(pod)] = (pod, self._facts_of(self(pod))[1])
        return kept[1]

    def dims(self, pod: Pod) -> frozenset[str]:
        """The names of :func:`dims` of the pod's request, kept as its request is: the
        overcommit and capability checks ask it of every bound pod."""
        kept = self._dims.get(id(pod))
        if kept is None:
            kept = self._dims[id(pod)] = (pod, self._facts_of(self(pod))[2])
        return kept[1]

    def slots(self, pod: Pod) -> int:
        """:func:`pod_slots`, worked out once per containers list (the node columns ask it
        of every pod on a node, every session)."""
        kept = self._slots.get(id(pod.containers))
        if kept is None:
            kept = self._slots[id(pod.containers)] = (pod.containers, pod_slots(pod))
        return kept[1]

    def _facts_of(self, request: Resource) -> tuple[Resource, bool, frozenset[str]]:
        kept = self._facts.get(id(request))
        if kept is None:
            kept = (request, requests_nothing(request), frozenset(dims(request)))
            self._facts[id(request)] = kept
        return kept

    def _request(self, pod: Pod) -> Resource:
        if pod.init_containers or pod.overhead:
            return pod_request(pod)
        shared = self._by_containers.get(id(pod.containers))
        if shared is None:
            shared = self._by_containers[id(pod.containers)] = (pod.containers, pod_request(pod))
        return shared[1]


def requests(inputs: InvariantInputs) -> Requests:
    """The pods' requests, shared by every invariant that checks ``inputs`` (the pods of
    an evaluation do not change)."""
    return inputs.derived("requests", inputs, Requests)


def allocatable(node: Node) -> Resource:
    """As the session sees it (oversubscription annotations included)."""
    return node_allocatable(node)


class Allocatables:
    """Each node's allocatable (:func:`allocatable`) worked out once per node object, and
    the last node list's total: a timeline hands its unchanged nodes from one session to
    the next (a changed node is a new object), so the hundreds of sessions it checks read
    each node once. The values are shared: clone one before changing it."""

    def __init__(self) -> None:
        # id -> (the node, its allocatable): holding the node keeps its id from being reused.
        self._of: dict[int, tuple[Node, Resource]] = {}
        self._total: tuple[list[Node], Resource, Named | None] | None = None

    def __call__(self, node: Node) -> Resource:
        kept = self._of.get(id(node))
        if kept is None:
            kept = self._of[id(node)] = (node, allocatable(node))
        return kept[1]

    def total(self, nodes: list[Node], named: Named | None = None) -> Resource:
        """The nodes' allocatable summed, in their order. ``named``: the nodes by name
        (:class:`NodeRows`), the same object while the nodes are: then not compared."""
        kept = self._total
        if kept is not None and named is not None and kept[2] is named:
            return kept[1]
        if kept is None or not same_objects(kept[0], nodes):
            out = Resource()
            for node in nodes:
                out.add(self(node))
            self._total = (list(nodes), out, named)
            self._forget_gone(nodes)
        else:
            self._total = (kept[0], kept[1], named)
        return self._total[1]

    def _forget_gone(self, nodes: list[Node]) -> None:
        """Drop the nodes no longer in the cluster, once they are many."""
        if len(self._of) > 2 * len(nodes) + 16:
            live = set(map(id, nodes))
            self._of = {k: v for k, v in self._of.items() if k in live}


def allocatables(inputs: InvariantInputs) -> Allocatables:
    """The nodes' allocatables, kept from result to result when the caller carries
    memos (a timeline's sessions), else for the invariants that check ``inputs``."""
    if inputs.carry is not None:
        return inputs.carry.kept("allocatables", Allocatables)
    return inputs.derived("allocatables", inputs, Allocatables)


def cluster_total(inputs: InvariantInputs) -> Resource:
    """The nodes' allocatable summed (an overcommitted node is only logged "out of sync",
    so it counts whole), once per result (allocate-order asks for every job it
    compares), kept while the nodes by name are: shared, so clone it before changing it."""
    nodes = inputs.cluster.nodes
    return inputs.derived(
        "cluster total", inputs, lambda: allocatables(inputs).total(nodes, nodes_named(inputs))
    )


def dims(r: Resource) -> dict[str, float]:
    """The dimensions of ``r`` that are not (within Volcano's tolerance) zero."""
    out = {"cpu": r.milli_cpu, "memory": r.memory, **r.scalars}
    return {k: v for k, v in out.items() if v >= TOLERANCE}


def exceeds(used: Resource, limit: Resource, names: set[str]) -> list[str]:
    """The dimensions among ``names`` where ``used`` is above ``limit`` beyond tolerance."""
    return [name for name in sorted(names) if used.get(name) - limit.get(name) >= TOLERANCE]


def _human(name: str, value: float) -> str:
    """Kubernetes units: cores, bytes, counts (Resource keeps milli-units for most)."""
    if name == "memory":
        return f"{value:.0f}"
    if name == "pods":
        return f"{value:g}"
    return f"{value / 1000:g}"


def fmt(r: Resource, names: set[str]) -> str:
    return ", ".join(f"{n} {_human(n, r.get(n))}" for n in sorted(names))


# -- node filters (an independent port of the K8s filters the predicates plugin runs) -----------


def tolerates(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    for t in tolerations:
        if t.effect and t.effect != taint.effect:
            continue
        if t.operator == "Exists":
            if not t.key or t.key == taint.key:
                return True
        elif t.key == taint.key and t.value == taint.value:
            return True
    return False


def _requirement(req: NodeSelectorRequirement, values: Mapping[str, str]) -> bool:
    present = req.key in values
    value = values.get(req.key, "")
    if req.operator == "In":
        return present and value in req.values
    if req.operator == "NotIn":
        return not present or value not in req.values
    if req.operator == "Exists":
        return present
    if req.operator == "DoesNotExist":
        return not present
    if req.operator in ("Gt", "Lt") and present and len(req.values) == 1:
        try:
            left, right = int(value), int(req.values[0])
        except ValueError:
            return False
        return left > right if req.operator == "Gt" else left < right
    return False


def node_term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    if not term.match_expressions and not term.match_fields:
        return False
    fields = {"metadata.name": node.meta.name}
    return all(_requirement(r, node.meta.labels) for r in term.match_expressions) and all(
        _requirement(r, fields) for r in term.match_fields
    )


def node_affinity_fails(pod: Pod, node: Node) -> str | None:
    labels = node.meta.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return f"nodeSelector {pod.node_selector} does not match labels {labels}"
    affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    required = affinity.required if affinity is not None else None
    if required is not None and not any(node_term_matches(t, node) for t in required):
        return "required node affinity does not match"
    return None


def taint_fails(pod: Pod, node: Node) -> str | None:
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerates(pod.tolerations, taint):
            return f"untolerated taint {{{taint.key}: {taint.value}}} ({taint.effect})"
    return None


def unschedulable_fails(pod: Pod, node: Node) -> str | None:
    if node.unschedulable and not tolerates(pod.tolerations, UNSCHEDULABLE_TAINT):
        return "node is unschedulable"
    return None


# -- conf queries ------------------------------------------------------------------------------

Answer = TypeVar("Answer")


class ConfAnswers:
    """Answers to questions of the conf alone (:func:`conf_answer`), for the last conf
    object asked (held: its id is then not reused). A conf is a model object, not changed
    once built, so an answer holds while its conf does."""

    def __init__(self) -> None:
        self._conf: SchedulerConf | None = None
        self._answers: dict[Callable[[SchedulerConf], object], Any] = {}

    def __call__(self, conf: SchedulerConf, question: Callable[[SchedulerConf], Answer]) -> Answer:
        if self._conf is not conf:
            self._conf, self._answers = conf, {}
        answers = self._answers
        if question not in answers:
            answers[question] = question(conf)
        answer: Answer = answers[question]  # not a cast: a call of typing's
        return answer


def conf_answer(inputs: InvariantInputs, question: Callable[[SchedulerConf], Answer]) -> Answer:
    """``question(inputs.conf)``, asked once per conf object when the caller carries memos:
    a timeline's sessions share one conf, and which invariants apply is asked every
    session (some of them walk every plugin of every tier). ``question`` must read the
    conf alone; its answer is shared, so none may change it."""
    if inputs.carry is None:
        return question(inputs.conf)
    return inputs.carry.kept("conf answers", ConfAnswers)(inputs.conf, question)


def plugin_entries(conf: SchedulerConf, name: str) -> list[tuple[int, PluginOption]]:
    return [(i, p) for i, tier in enumerate(conf.tiers) for p in tier.plugins if p.name == name]


def enabled(conf: SchedulerConf, plugin: str, flag: str) -> bool:
    return any(option.enabled(flag) for _, option in plugin_entries(conf, plugin))


def bool_argument(option: PluginOption, key: str, default: bool) -> bool:
    """``Arguments.GetBool``: only a YAML boolean counts."""
    value = option.arguments.get(key)
    return value if isinstance(value, bool) else default


NodeFilter = Callable[[Pod, Node], "str | None"]


def node_filters(conf: SchedulerConf) -> list[NodeFilter]:
    """The node filters the predicates plugin runs (its first entry with enablePredicate
    on decides): unschedulable always, node affinity and taints unless switched off."""
    entries = [o for _, o in plugin_entries(conf, "predicates") if o.enabled("predicate")]
    if not entries:
        return []
    option = entries[0]
    out: list[NodeFilter] = [unschedulable_fails]
    if bool_argument(option, "predicate.NodeAffinityEnable", True):
        out.append(node_affinity_fails)
    if bool_argument(option, "predicate.TaintTolerationEnable", True):
        out.append(taint_fails)
    return out


# Plugins registering a Preemptable / Reclaimable function (any of them may decide).
PREEMPTABLE = frozenset({"priority", "gang", "conformance", "drf", "cdp", "pdb", "tdm", "extender"})
RECLAIMABLE = frozenset({"gang", "conformance", "drf", "proportion", "capacity", "pdb", "extender"})
FAMILIES = {"preempt": ("preemptable", PREEMPTABLE), "reclaim": ("reclaimable", RECLAIMABLE)}


def sole_decider(conf: SchedulerConf, plugin: str, reason: str) -> bool:
    """``plugin`` has the victim flag of ``reason``'s action on in exactly one tier, no
    other tier has a plugin of that kind with it on, and it is the last of its tier's.

    Quirk of v1.11.0 (framework/session_plugins.go, Preemptable and Reclaimable: the
    ``victims == nil`` test after an intersection): an empty intersection is a nil slice,
    so the next plugin's answer is taken whole and an earlier plugin's veto is lost. Only
    the last deciding plugin of the tier bounds the victims for sure."""
    flag, kind = FAMILIES[reason]
    tiers = {i for i, o in plugin_entries(conf, plugin) if o.enabled(flag)}
    deciding = {
        i
        for i, tier in enumerate(conf.tiers)
        for option in tier.plugins
        if option.name in kind and option.enabled(flag)
    }
    if len(tiers) != 1 or deciding != tiers:
        return False
    (tier,) = tiers
    ordered = [o.name for o in conf.tiers[tier].plugins if o.name in kind and o.enabled(flag)]
    return ordered[-1] == plugin
