"""The invariant catalogue (docs/invariants.md holds the same definitions, with examples).

Each check replays the run from the outside (:mod:`vspec.invariants.history`) and returns
one message per violation, naming the cycle, the objects and the numbers involved.
"""

from __future__ import annotations

import operator
import re
from collections import ChainMap, Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, compress, repeat
from operator import attrgetter, is_, itemgetter
from typing import cast

from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.errors import Unsupported
from vspec.invariants.base import Invariant, InvariantInputs, register
from vspec.invariants.history import (
    HOLDING,
    CycleView,
    JobPods,
    JobsMemo,
    PodIndex,
    allocatable,
    allocatables,
    conf_answer,
    cycles,
    dims,
    enabled,
    exceeds,
    fmt,
    gone_after,
    list_changes,
    node_affinity_fails,
    node_filters,
    node_rows,
    nodes_by_name,
    plugin_entries,
    pod_index,
    pods_by_job,
    requests,
    session_jobs,
    sole_decider,
    taint_fails,
    text_changes,
    unschedulable_fails,
)
from vspec.invariants.outside import gang_ready, placed_count, resources_of, task_priority
from vspec.invariants.yours import your_names
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Pod, PodGroup
from vspec.model.result import (
    LogLine,
    LogRecords,
    SimulationResult,
    line_texts,
    lines_starting_with,
)

Check = Callable[[InvariantInputs, SimulationResult], list[str]]


def _always(_inputs: InvariantInputs) -> bool:
    return True


# -- gang-atomicity -----------------------------------------------------------------------------


def _gang_applies(inputs: InvariantInputs) -> bool:
    return conf_answer(inputs, _gang_readies_jobs)


def _gang_readies_jobs(conf: SchedulerConf) -> bool:
    return enabled(conf, "gang", "job_ready")


def _gang_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    messages: list[str] = []
    jobs = session_jobs(inputs)
    request = requests(inputs)
    for view in cycles(inputs, result):
        bound = Counter([view.job_ids[b.task] for b in view.binds if b.task in view.pods])
        if not bound:
            continue
        members = pods_by_job(inputs, view)
        # The bound pods over the view's statuses: a lookup per pod of the bound jobs,
        # not a copy of every pod's status.
        after = ChainMap({b.task: TaskStatus.Running for b in view.binds}, view.statuses)
        for uid, count in bound.items():
            pg = jobs.pod_groups.get(uid)
            if pg is None:
                continue
            pods = members.get(uid, [])
            if gang_ready(pg, pods, after, request.nothing):
                continue
            messages.append(
                f"cycle {view.cycle}: job {uid} had {count} pod(s) bound but is not ready "
                f"afterwards: {placed_count(pods, after)} placed (plus pending best-effort) "
                f"< minMember {pg.min_member}, or a role is below minTaskMember "
                f"{pg.min_task_member or '{}'}"
            )
    return messages


register(
    Invariant(
        "gang-atomicity",
        "a gang is bound all-or-nothing: binds never leave a job below minMember",
        "For every cycle and every job of the session that had at least one pod bound in "
        "that cycle: after the cycle's binds (and before its evictions) the job is ready by "
        "gang's rule, i.e. Bound/Binding/Running/Allocated/Succeeded tasks plus Pending "
        "best-effort tasks >= minMember, and, when minMember >= the sum of minTaskMember, "
        "every role reaches its minTaskMember.",
        "Configurations where gang's JobReady is enabled (a `gang` entry with "
        "enableJobReady on). Without it JobReady is always true and Volcano commits every "
        "partial allocation.",
        _gang_applies,
        _gang_check,
    )
)


# -- no-overcommit ---------------------------------------------------------------------------


def _overcommit_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    request = requests(inputs)
    alloc = allocatables(inputs)  # each node's allocatable, once per node object
    messages: list[str] = []
    nodes = node_rows(inputs)
    for view in cycles(inputs, result):
        by_node: dict[str, list[str]] = {}
        for b in view.binds:
            if b.task in view.pods and b.node in nodes:
                by_node.setdefault(b.node, []).append(b.task)
        statuses = view.statuses
        for name, bound in by_node.items():
            used, names = Resource(), set[str]()
            for key in view.on_node.get(name, ()):  # the node's pods alone
                if statuses[key] in HOLDING:
                    used.add(request(view.pods[key]))
            for key in bound:
                used.add(request(view.pods[key]))
                names |= request.dims(view.pods[key])
            limit = alloc(inputs.cluster.nodes[nodes[name]])
            over = exceeds(used, limit, names)
            if over:
                messages.append(
                    f"cycle {view.cycle}: node {name} holds {fmt(used, set(over))} after "
                    f"binding {', '.join(bound)}, above allocatable {fmt(limit, set(over))}"
                )
    return messages


register(
    Invariant(
        "no-overcommit",
        "binds never take a node beyond its allocatable",
        "For every cycle and every node that received a bind in it: the requests of the "
        "pods on the node after the cycle's binds (pods already on it that are not "
        "Succeeded or Failed, Releasing ones included, plus the pods bound to it) do not "
        "exceed its allocatable (Volcano's tolerance of 0.1 unit) in any dimension the "
        "bound pods request, `pods` (one per pod) included. Dimensions the binds do not "
        "request are not judged, so a cluster that starts overcommitted is not blamed.",
        "Every configuration.",
        _always,
        _overcommit_check,
    )
)


# -- predicates-respected --------------------------------------------------------------------


def _predicates_applies(inputs: InvariantInputs) -> bool:
    return bool(conf_answer(inputs, node_filters))


_ALL_FILTERS = (unschedulable_fails, node_affinity_fails, taint_fails)


def _predicates_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    filters = node_filters(inputs.conf) or list(_ALL_FILTERS)  # requested: judge them all
    nodes = nodes_by_name(inputs)
    messages: list[str] = []
    for view in cycles(inputs, result):
        for b in view.binds:
            pod, node = view.pods.get(b.task), nodes.get(b.node)
            if pod is None or node is None:
                continue
            for fails in filters:
                reason = fails(pod, node)
                if reason is not None:
                    messages.append(f"cycle {view.cycle}: {b.task} bound to {b.node}: {reason}")
    return messages


register(
    Invariant(
        "predicates-respected",
        "every bind passes the node filters the predicates plugin runs",
        "For every bind (pod p to node n): n is not unschedulable unless p tolerates "
        "node.kubernetes.io/unschedulable:NoSchedule; p's nodeSelector and required node "
        "affinity match n (unless predicate.NodeAffinityEnable is false); every "
        "NoSchedule/NoExecute taint of n is tolerated by p (unless "
        "predicate.TaintTolerationEnable is false). The filters are re-implemented here, "
        "independently of the plugin. Pod (anti-)affinity, ports, topology spread and "
        "volumes are not judged; the pod count is judged by no-overcommit and pod-limit.",
        "Configurations with a `predicates` entry whose enablePredicate is on. Requested "
        "explicitly without one, it judges all three filters.",
        _predicates_applies,
        _predicates_check,
    )
)


# -- queue-capability ------------------------------------------------------------------------


def _capability_applies(inputs: InvariantInputs) -> bool:
    return conf_answer(inputs, _capability_bound)


def _capability_bound(conf: SchedulerConf) -> bool:
    return enabled(conf, "proportion", "allocatable") or enabled(conf, "capacity", "allocatable")


_ALLOCATED = (TaskStatus.Bound, TaskStatus.Binding, TaskStatus.Running)


def _capability_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    request = requests(inputs)
    messages: list[str] = []
    jobs = session_jobs(inputs)
    named = {q.meta.name: q for q in inputs.cluster.queues}
    queues = {name: q for name, q in named.items() if q.capability}
    if not queues:
        return []  # no capability, nothing to exceed
    for view in cycles(inputs, result):
        evicted = {e.task for e in view.evictions}
        bound = {b.task for b in view.binds if b.task in view.pods}
        touched: dict[str, set[str]] = {}
        job_ids, statuses = view.job_ids, view.statuses
        for key in bound:
            uid = job_ids[key]
            if uid in jobs.pod_groups:
                touched.setdefault(jobs.queue(uid), set()).update(request.dims(view.pods[key]))
        limited = {name: queues[name] for name in touched if name in queues}
        if not limited:
            continue
        # Each limited queue's allocated pods, summed in one pass over the pods.
        allocated = {name: Resource() for name in limited}
        for key, pod in view.pods.items():
            uid = job_ids[key]
            if key in evicted or uid not in jobs.pod_groups:
                continue
            used = allocated.get(jobs.queue(uid))
            if used is not None and (key in bound or statuses[key] in _ALLOCATED):
                used.add(request(pod))
        for name, queue in limited.items():
            capability = resources_of([queue.capability])
            guarantee = resources_of([queue.guarantee])
            # Judged: dimensions the capability limits (a zero cpu/memory means unlimited
            # to proportion), the binds request, and the guarantee does not exceed.
            names = {
                n
                for n in set(dims(capability)) & touched[name]
                if n != "pods" and guarantee.get(n) <= capability.get(n)
            }
            used = allocated[name]
            over = exceeds(used, capability, names)
            if over:
                messages.append(
                    f"cycle {view.cycle}: queue {name} is allocated {fmt(used, set(over))} "
                    f"after its binds, above capability {fmt(capability, set(over))}"
                )
    return messages


register(
    Invariant(
        "queue-capability",
        "binds never take a queue beyond its capability",
        "For every cycle and every queue with a capability that had pods bound in it: the "
        "requests of the queue's allocated pods after the cycle (Bound/Binding/Running at "
        "its start or bound in it, minus those evicted in it) do not exceed the capability "
        "in any dimension that the capability names with a non-zero value, the bound pods "
        "request, and the queue's guarantee does not exceed (`pods` is never judged).",
        "Configurations where `proportion` or `capacity` has enabledAllocatable on (the "
        "plugins whose Allocatable enforces the capability).",
        _capability_applies,
        _capability_check,
    )
)


# -- logprint-correct ------------------------------------------------------------------------
# The seed's plugin (logprint.go:53 and :56 of the demo repository) logs, at V(1),
# "Job %s/%s is pending, try to schedule it on node %s" (two arguments: Go prints the third
# verb as %!s(MISSING)) and "Job %s/%s is ready, detail info : %s" with JobInfo.String().

_LOGPRINT = re.compile(r"^Job (\S+?)/(\S+) is (pending|ready)\b")
_PENDING_TEXT = "Job {} is pending, try to schedule it on node %!s(MISSING)"
_READY_PREFIX = "Job {key} is ready, detail info : Job ({key}): namespace {ns} ({queue}), "
_TASK = re.compile(r"\n\t (\d+): Task \(([^:]*):([^/]*)/([^)]*)\): .*?, status (\w+), ")
# ReadyTaskNum (job_info.go:789): Bound, Binding, Running, Allocated and Succeeded tasks.
_READY_STATUSES = frozenset({"Bound", "Binding", "Running", "Allocated", "Succeeded"})
_MIN_RESOURCE = 0.1  # api.minResource
LOGPRINT_FINDING = (
    "the logprint plugin logs 'Job %s/%s is pending, try to schedule it on node %s' with "
    "two arguments, so Go prints its third verb as %!s(MISSING) (a bug in the seed's "
    "logprint.go, not in the scheduler; vspec prints what the Go plugin prints)"
)


def _logprint_applies(inputs: InvariantInputs) -> bool:
    return (
        "print" in inputs.conf.actions
        and bool(plugin_entries(inputs.conf, "logprint"))
        and inputs.verbosity >= 1
    )


def _best_effort(pod_request: Resource) -> bool:
    """``Resource.IsEmpty`` of the request: nothing but the ignored ``pods`` scalar."""
    if pod_request.milli_cpu >= _MIN_RESOURCE or pod_request.memory >= _MIN_RESOURCE:
        return False
    return all(q < _MIN_RESOURCE for n, q in pod_request.scalars.items() if n != "pods")


@dataclass(frozen=True)
class _PrintedJob:
    """What the print function sees of one job: enough to restate its two lines."""

    key: str
    queue: str
    pending: bool  # IsPending: the pod group phase is Pending or empty
    ready: bool  # IsReady: ReadyTaskNum + PendingBestEffortTaskNum >= MinAvailable
    tasks: dict[str, str]  # task ns/name -> status

    @cached_property
    def prefix(self) -> str:
        """What its ready line starts with, up to its pod group's part."""
        namespace = self.key.split("/", 1)[0]
        return _READY_PREFIX.format(key=self.key, ns=namespace, queue=self.queue)


_NAMES = {status: status.name for status in TaskStatus}


def _printed_jobs(
    inputs: InvariantInputs, view: CycleView, statuses: dict[str, str], phases: dict[str, str]
) -> list[_PrintedJob]:
    members = pods_by_job(inputs, view)
    if statuses or phases:  # the session's own state: read afresh
        return [
            _printed_job(inputs, view, uid, pg, members.get(uid, []), statuses, phases)
            for uid, pg in session_jobs(inputs).pod_groups.items()
        ]

    # At the cycle's start a job's lines follow from its pod group and its pods alone:
    # a job whose pod group and pods are the very objects of the last session prints
    # what it printed then (a timeline changes a few jobs per session).
    def printed(uid: str, pg: PodGroup, pods: list[Pod]) -> _PrintedJob:
        return _printed_job(inputs, view, uid, pg, pods, statuses, phases)

    memo, groups = _printed_memo(inputs), session_jobs(inputs).pod_groups
    return memo.jobs(groups, members, printed, _jobs_moved(inputs, memo, groups, members))


def _jobs_moved(
    inputs: InvariantInputs,
    memo: _PrintedMemo,
    groups: dict[str, PodGroup],
    members: dict[str, list[Pod]],
) -> set[str] | None:
    """The jobs whose pod group or pods list may be other objects than when ``memo``
    last read them, as the session's jobs and the pods of each job (patched memos,
    checked against the cluster: vspec.invariants.history) say; None when they cannot."""
    if inputs.carry is None:
        return None
    by_group = inputs.carry.kept("jobs", JobsMemo).moved.since(memo.groups, groups)
    by_pods = inputs.carry.kept("job pods", JobPods).moved.since(memo.members, members)
    return None if by_group is None or by_pods is None else by_group | by_pods


def _printed_job(
    inputs: InvariantInputs,
    view: CycleView,
    uid: str,
    pg: PodGroup,
    pods: list[Pod],
    statuses: dict[str, str],
    phases: dict[str, str],
) -> _PrintedJob:
    """What the print function sees of one job: each task's status by name (the
    in-session one ``statuses`` gives, else its own at the cycle's start)."""
    request = requests(inputs)
    at_start = view.statuses
    keys = list(map(_KEY, pods))
    tasks = {k: statuses.get(k) or _NAMES[at_start[k]] for k in keys}
    ready = sum(map(_READY_STATUSES.__contains__, tasks.values()))
    if "Pending" in tasks.values():
        ready += sum(
            tasks[k] == "Pending" and _best_effort(request(p))
            for k, p in zip(keys, pods, strict=True)
        )
    return _PrintedJob(
        uid,
        pg.queue or "default",
        phases.get(uid, pg.phase) in ("Pending", ""),
        ready >= pg.min_member,
        tasks,
    )


_NO_PODS: list[Pod] = []  # a job without pods (never changed)


_UNKEPT: tuple[None, None, None] = (None, None, None)  # what a job new to the memo had
_GROUP, _PODS, _JOB = itemgetter(0), itemgetter(1), itemgetter(2)
# A job's pod group and pods at the first cycle's start, and what it printed from them.
KeptJob = tuple[PodGroup, list[Pod], _PrintedJob]


class _PrintedMemo:
    """Each job's :class:`_PrintedJob` at the first cycle's start with the pod group and
    pods it was worked out from, and the verdict on its last ready line: only the last
    session's are kept (an ended job's are dropped)."""

    def __init__(self) -> None:
        # job uid -> its pod group, its pods and its job: one lookup a job a session
        # (each job's key is cold in memory by the next session: a lookup costs), and
        # only the jobs that differ written
        self._kept: dict[str, KeptJob] = {}
        # job key -> (the job, its ready line's task list, what is wrong with them or None)
        self.verdicts: Verdicts = {}
        self.said: Said = {}  # each line's verdict (:func:`_print_point_messages`)
        # The first cycle's print point of the last session, when it was judged clean.
        self.clean: _CleanPoint | None = None
        # The pod groups and pods lists by job last read (held: compared by identity).
        self.groups: dict[str, PodGroup] | None = None
        self.members: dict[str, list[Pod]] | None = None

    def jobs(
        self,
        groups: dict[str, PodGroup],
        members: dict[str, list[Pod]],
        printed: Callable[[str, PodGroup, list[Pod]], _PrintedJob],
        moved: set[str] | None = None,
    ) -> list[_PrintedJob]:
        """The jobs of ``groups`` in their order: a job whose pod group and pods list are
        the very objects of the last session (found in C loops: a timeline's session
        changes a few jobs of hundreds) is its last :class:`_PrintedJob`; the others
        are looked at (their pods, one by one, may still be the same) or ``printed``.
        ``moved``: the jobs whose pod group or pods list may be other objects than at
        the last call (None: any); only those are compared."""
        self.groups, self.members = groups, members
        if moved is not None:
            found = self._moved_on(groups, members, printed, moved)
            if found is not None:
                return found
        uids = list(groups)
        pgs = list(groups.values())
        pods = list(map(members.get, uids, repeat(_NO_PODS)))
        kept = list(map(self._kept.get, uids, repeat(_UNKEPT)))
        jobs = list(map(_JOB, kept))
        same_group = map(is_, map(_GROUP, kept), pgs)
        same_pods = map(is_, map(_PODS, kept), pods)
        changed = map(operator.not_, map(operator.and_, same_group, same_pods))
        memo = self._kept
        for i in compress(range(len(uids)), changed):
            job = _same(kept[i], pgs[i], pods[i]) or printed(uids[i], pgs[i], pods[i])
            jobs[i] = job
            memo[uids[i]] = (pgs[i], pods[i], job)
        self._forget_ended(uids)
        return cast(list[_PrintedJob], jobs)

    def _moved_on(
        self,
        groups: dict[str, PodGroup],
        members: dict[str, list[Pod]],
        printed: Callable[[str, PodGroup, list[Pod]], _PrintedJob],
        moved: set[str],
    ) -> list[_PrintedJob] | None:
        """:meth:`jobs`, the jobs of ``moved`` alone looked at: every other job's pod
        group and pods are the objects its entry holds. None when a job has no entry
        (then it was not told of)."""
        memo = self._kept
        for uid in moved:
            pg = groups.get(uid)
            if pg is None:
                continue
            pods = members.get(uid, _NO_PODS)
            kept = memo.get(uid, _UNKEPT)
            if kept[0] is not pg or kept[1] is not pods:
                memo[uid] = (pg, pods, _same(kept, pg, pods) or printed(uid, pg, pods))
        try:
            jobs: list[_PrintedJob] = list(map(_JOB, map(memo.__getitem__, groups)))
        except KeyError:
            return None
        self._forget_ended(groups)
        return jobs

    def _forget_ended(self, uids: Collection[str]) -> None:
        """An ended job's entry answers only for its very pod group and pods, whose job
        it holds: it is dropped with the others' once they are many."""
        memo = self._kept
        if len(memo) > 2 * len(uids) + 64:
            self._kept = {uid: memo[uid] for uid in uids}
        if len(self.verdicts) > 2 * len(uids) + 64:  # the ended jobs'
            for key in self.verdicts.keys() - set(uids):
                del self.verdicts[key]


def _same(
    kept: KeptJob | tuple[None, None, None], pg: PodGroup, pods: list[Pod]
) -> _PrintedJob | None:
    """The kept job when its pod group is ``pg`` and its pods are ``pods``, one by one
    (a pods list built afresh)."""
    was, before, job = kept
    if was is not pg or before is None or len(before) != len(pods):
        return None
    return job if all(map(is_, before, pods)) else None


def _printed_memo(inputs: InvariantInputs) -> _PrintedMemo:
    if inputs.carry is not None:
        return inputs.carry.kept("logprint printed jobs", _PrintedMemo)
    return inputs.derived("logprint printed jobs", inputs, _PrintedMemo)


class _ListedTasks:
    """The tasks a ready line lists (task ns/name -> status), read once per text of
    its tasks: a timeline's running job prints the same tasks session after session, so
    their text is looked up (one hash) instead of parsed again. Only the last session's
    texts are kept."""

    def __init__(self) -> None:
        self._now: dict[str, dict[str, str]] = {}
        self._before: dict[str, dict[str, str]] = {}

    def next_session(self) -> None:
        self._before, self._now = self._now, {}

    def __call__(self, text: str) -> dict[str, str]:
        # The tasks' part: the job's own (its pod group's conditions) changes more often.
        start = text.find("\n\t")
        tasks = text[start:] if start >= 0 else ""
        listed = self._now.get(tasks)
        if listed is None:
            listed = self._before.get(tasks)
            if listed is None:
                listed = {f"{m[3]}/{m[4]}": m[5] for m in _TASK.finditer(tasks)}
            self._now[tasks] = listed
        return listed


def _listed_tasks(inputs: InvariantInputs) -> _ListedTasks:
    if inputs.carry is not None:
        return inputs.carry.kept("logprint listed tasks", _ListedTasks)
    return inputs.derived("logprint listed tasks", inputs, _ListedTasks)


def _ready_line_mismatch(
    job: _PrintedJob, text: str, listed_tasks: Callable[[str], dict[str, str]]
) -> str | None:
    if not text.startswith(job.prefix):
        return f"its details do not start with {job.prefix[len(f'Job {job.key} is ready, ') :]!r}"
    listed = listed_tasks(text)
    if listed != job.tasks:
        return f"its tasks are {listed}, the job has {job.tasks}"
    return None


Verdicts = dict[str, tuple[_PrintedJob, dict[str, str], str | None]]


def _ready_verdict(
    job: _PrintedJob,
    text: str,
    listed_tasks: Callable[[str], dict[str, str]],
    verdicts: Verdicts,
) -> str | None:
    """:func:`_ready_line_mismatch`; the tasks compared again only when the job (a
    memo's object, :class:`_PrintedMemo`) or the line's task list (the same object for
    the same text, :class:`_ListedTasks`) changed since the last session: a ready
    line's pod group part changes every session, its tasks seldom."""
    if not text.startswith(job.prefix):
        return _ready_line_mismatch(job, text, listed_tasks)
    listed = listed_tasks(text)
    kept = verdicts.get(job.key)
    if kept is None or kept[0] is not job or kept[1] is not listed:
        why = None if listed == job.tasks else f"its tasks are {listed}, the job has {job.tasks}"
        kept = verdicts[job.key] = (job, listed, why)
    return kept[2]


# (job key, kind) -> the line's text, the job it was judged against, what is wrong with it
Said = dict[tuple[str, str], tuple[str, _PrintedJob, str | None]]
Lines = dict[tuple[str, str], int]  # (job key, kind) -> how many such lines


@dataclass
class _CleanPoint:
    """A print point whose lines were all right: its lines and its jobs (by key too).
    The next session's point patches it with what changed, counting the lines had less
    those wanted, by (job key, kind): all right again only if none is left over."""

    lines: list[str]
    jobs: list[_PrintedJob]
    by_key: dict[str, _PrintedJob]
    texts: dict[tuple[str, str], str]  # (job key, kind) -> its line
    excess: Lines = field(default_factory=dict)


def _print_point_messages(
    cycle: int,
    jobs: list[_PrintedJob],
    lines: list[str],
    listed_tasks: Callable[[str], dict[str, str]],
    memo: _PrintedMemo,
    patched: bool = False,
) -> list[str]:
    """Exactly one pending line per IsPending job, one ready line per IsReady job.

    ``patched``: the point is the first cycle's, whose jobs come from the memo (an
    unchanged job is the very object it was). When the last session's point was clean,
    only what changed is judged: the lines that differ from its lines (walked side by
    side, :func:`text_changes`), and the kept lines of the jobs that are other objects;
    the counts of lines had and wanted are patched. Anything amiss is judged afresh, so
    the messages are those of the whole pass."""
    clean, memo.clean = memo.clean, None
    if patched and clean is not None and _still_clean(clean, jobs, lines, listed_tasks, memo):
        memo.clean = clean
        return []
    by_key = {job.key: job for job in jobs}
    seen: Lines = {}
    texts: dict[tuple[str, str], str] = {}
    said = memo.said
    messages = []
    for text in lines:
        match = _LOGPRINT.match(text)
        if match is None:
            continue
        key = f"{match[1]}/{match[2]}"
        line = (key, match[3])
        seen[line] = seen.get(line, 0) + 1
        texts[line] = text
        job = by_key.get(key)
        if job is None:
            messages.append(f"cycle {cycle}: logprint names unknown job {key}")
            continue
        kept = said.get(line)
        if kept is None or kept[1] is not job or kept[0] != text:
            fault = _line_fault(job, line[1], text, listed_tasks, memo.verdicts)
            kept = said[line] = (text, job, fault)
        if kept[2] is not None:
            messages.append(f"cycle {cycle}: {kept[2]}")
    want = _wanted(jobs)
    if seen != want:
        messages += _count_messages(cycle, Counter(want), Counter(seen), by_key)
    _forget_ended(memo, by_key)
    if patched and not messages:
        memo.clean = _CleanPoint(list(lines), list(jobs), by_key, texts)
    return messages


def _wanted(jobs: list[_PrintedJob]) -> Lines:
    want: Lines = {}
    for job in jobs:
        _want(want, job, 1)
    return want


def _want(want: Lines, job: _PrintedJob, n: int) -> None:
    """Count ``n`` more (or fewer) of the lines ``job`` must print."""
    for kind, wanted in (("pending", job.pending), ("ready", job.ready)):
        if wanted:
            _add(want, (job.key, kind), n)


def _add(lines: Lines, line: tuple[str, str], n: int) -> None:
    left = lines.get(line, 0) + n
    if left:
        lines[line] = left
    else:
        del lines[line]


def _forget_ended(memo: _PrintedMemo, by_key: dict[str, _PrintedJob]) -> None:
    if len(memo.said) > 2 * len(by_key) + 64:  # the ended jobs' lines
        memo.said = {line: kept for line, kept in memo.said.items() if line[0] in by_key}


def _still_clean(
    clean: _CleanPoint,
    jobs: list[_PrintedJob],
    lines: list[str],
    listed_tasks: Callable[[str], dict[str, str]],
    memo: _PrintedMemo,
) -> bool:
    """Whether the point is still clean, ``clean`` patched to it (and spoilt when not):
    the lines that came are judged, and the kept lines of jobs that are new objects; a
    fault or a count that differs (a line of a job gone is not wanted) answers False."""
    found_lines = text_changes(clean.lines, lines)
    found_jobs = list_changes(clean.jobs, jobs)
    if found_lines is None or found_jobs is None:
        return False
    by_key, texts, excess = clean.by_key, clean.texts, clean.excess
    for job in found_jobs[0]:
        _want(excess, job, 1)
        if by_key.get(job.key) is job:
            del by_key[job.key]
    for job in found_jobs[1]:
        _want(excess, job, -1)
        by_key[job.key] = job
    judged: list[tuple[tuple[str, str], str]] = []
    for text in found_lines[0]:
        match = _LOGPRINT.match(text)
        if match is not None:
            line = (f"{match[1]}/{match[2]}", match[3])
            _add(excess, line, -1)
            texts.pop(line, None)
    for text in found_lines[1]:
        match = _LOGPRINT.match(text)
        if match is not None:
            line = (f"{match[1]}/{match[2]}", match[3])
            _add(excess, line, 1)
            texts[line] = text
            judged.append((line, text))
    if excess:
        return False
    # Every line wanted is had once: a job that changed has its kept lines judged again.
    came = {line for line, _ in judged}
    for job in found_jobs[1]:
        judged += [(line, texts.get(line, "")) for line in _wanted([job]) if line not in came]
    said = memo.said
    for line, text in judged:
        job_now = by_key.get(line[0])  # each line is wanted: its job is there
        if job_now is None:
            return False
        kept = said.get(line)
        if kept is None or kept[1] is not job_now or kept[0] != text:
            fault = _line_fault(job_now, line[1], text, listed_tasks, memo.verdicts)
            kept = said[line] = (text, job_now, fault)
        if kept[2] is not None:
            return False
    clean.lines, clean.jobs = list(lines), list(jobs)
    _forget_ended(memo, by_key)
    return True


def _line_fault(
    job: _PrintedJob,
    kind: str,
    text: str,
    listed_tasks: Callable[[str], dict[str, str]],
    verdicts: Verdicts,
) -> str | None:
    """What is wrong with a line of ``job``, as its message says it after the cycle."""
    if kind == "pending":
        if text != _PENDING_TEXT.format(job.key):
            return f"pending line of {job.key} is not the plugin's: {text!r}"
        return None
    why = _ready_verdict(job, text, listed_tasks, verdicts)
    return None if why is None else f"ready line of {job.key}: {why}"


def _count_messages(
    cycle: int,
    want: Counter[tuple[str, str]],
    seen: Counter[tuple[str, str]],
    by_key: dict[str, _PrintedJob],
) -> list[str]:
    messages = []
    for (key, kind), n in sorted((want - seen).items()):
        messages.append(f"cycle {cycle}: missing {n} 'Job {key} is {kind}' line(s)")
    for (key, kind), n in sorted((seen - want).items()):
        if key in by_key:
            messages.append(f"cycle {cycle}: {n} unexpected 'Job {key} is {kind}' line(s)")
    return messages


def _job_lines(result: SimulationResult) -> list[LogLine]:
    """The lines starting "Job " (logprint's), read from the log's records (a block of
    per-node lines whose head is another is skipped without being formatted) or, for a
    list (a timeline's session), in C loops (:func:`lines_starting_with`)."""
    logs = result.logs
    if isinstance(logs, LogRecords):
        return list(logs.starting_with("Job "))
    if isinstance(logs, list):
        return lines_starting_with(logs, "Job ")
    return [line for line in logs if line.startswith("Job ")]


def _lines_by_cycle(inputs: InvariantInputs, result: SimulationResult) -> dict[int, list[str]]:
    """The texts of logprint's lines by cycle, read once for the check and its finding:
    shared, so neither may change them."""
    return inputs.derived("logprint lines", result, lambda: _read_lines(result))


_CYCLE = attrgetter("cycle")


def _read_lines(result: SimulationResult) -> dict[int, list[str]]:
    lines = _job_lines(result)
    if not lines:
        return {}
    cycles = list(map(_CYCLE, lines))
    if cycles.count(cycles[0]) == len(cycles):  # one cycle: a timeline's session
        return {cycles[0]: line_texts(lines)}
    lines_by_cycle: dict[int, list[str]] = {}
    for cycle, text in zip(cycles, line_texts(lines), strict=True):
        lines_by_cycle.setdefault(cycle, []).append(text)
    return lines_by_cycle


def _logprint_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    lines_by_cycle = _lines_by_cycle(inputs, result)
    actions = inputs.conf.actions
    if actions.count("print") != 1:
        known = set(session_jobs(inputs).pod_groups)
        return [
            f"cycle {cycle}: logprint names unknown job {m[1]}/{m[2]}"
            for cycle, lines in lines_by_cycle.items()
            for m in map(_LOGPRINT.match, lines)
            if m is not None and f"{m[1]}/{m[2]}" not in known
        ]
    views = cycles(inputs, result)
    # The lines are exact where the state at print time is known from the outside: print
    # first in the first cycle (the input state), print last in the last cycle (the
    # in-session state the result records).
    points: list[tuple[CycleView, dict[str, str], dict[str, str]]] = []
    if actions[0] == "print":
        points.append((views[0], {}, {}))
    if actions[-1] == "print" and result.tasks:
        statuses = {k: t.status for k, t in result.tasks.items()}
        phases = {uid: pg.session_phase for uid, pg in result.pod_groups.items()}
        points.append((views[-1], statuses, phases))
    listed_tasks = _listed_tasks(inputs)
    listed_tasks.next_session()
    memo = _printed_memo(inputs)
    messages = []
    for view, statuses, phases in points:
        jobs = _printed_jobs(inputs, view, statuses, phases)
        lines = lines_by_cycle.get(view.cycle, [])
        patched = not statuses and not phases
        messages += _print_point_messages(view.cycle, jobs, lines, listed_tasks, memo, patched)
    return messages


def _logprint_findings(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    # Read from the last line back: a timeline's pending jobs are mostly those that just
    # came, printed last, so the scan ends at once rather than after every running job.
    by_cycle = _lines_by_cycle(inputs, result)
    texts = chain.from_iterable(map(reversed, reversed(by_cycle.values())))
    missing = any(map(operator.methodcaller("endswith", " on node %!s(MISSING)"), texts))
    return [LOGPRINT_FINDING] if missing else []


register(
    Invariant(
        "logprint-correct",
        "logprint logs one pending line per pending job and one ready line per ready job",
        "Every 'Job <ns>/<name> is pending|ready' line names a job of the session. When "
        "`print` appears once in the actions, the lines are exact where the state at print "
        "time is known (print first in the first cycle, print last in the last cycle): one "
        "'Job <ns>/<name> is pending, try to schedule it on node %!s(MISSING)' line per job "
        "whose pod group phase is Pending or empty (JobInfo.IsPending), one 'Job <ns>/<name> "
        "is ready, detail info : Job (<ns>/<name>): namespace <ns> (<queue>), ...' line per "
        "job whose Bound, Binding, Running, Allocated and Succeeded tasks plus its pending "
        "best-effort tasks reach minAvailable (JobInfo.IsReady), listing each task of the "
        "job with its status, and no other such line. The `%!s(MISSING)` of the pending "
        "line is the seed plugin's own bug: it is reported once per run as a finding (a "
        "warning), not as a violation.",
        "Configurations with the `print` action and a `logprint` entry, run at verbosity "
        ">= 1 (logprint logs at V(1)).",
        _logprint_applies,
        _logprint_check,
        _logprint_findings,
    )
)


# -- deterministic ---------------------------------------------------------------------------


def _outcome(result: SimulationResult) -> dict[str, object]:
    return {
        "binds": result.binds,
        "evictions": result.evictions,
        "pipelined": result.pipelined,
        "pod groups": {
            k: (v.phase, v.session_phase, v.conditions) for k, v in result.pod_groups.items()
        },
        "tasks": {k: (v.node, v.status) for k, v in result.tasks.items()},
        "logs": [line.text for line in result.logs],
    }


# Above this many pods x nodes a spec run skips the re-run (it costs a second session):
# W1 (1,000 pods on 100 nodes) is 100,000 and its session about 0.6 CPU-s.
DETERMINISTIC_MAX_PAIRS = 20_000
# vspec's own engine, actions and plugins: their determinism is vspec's to test (its
# suite re-runs every example spec, `vspec fuzz` every example), so a spec run re-runs
# only what goes through code vspec does not ship.
OWN_ENGINE_MODULE = "vspec.framework.engine"


def _deterministic_applies(inputs: InvariantInputs) -> bool:
    if not inputs.engine.reproducible:
        return False
    if inputs.thorough:
        return True
    pairs = len(inputs.cluster.pods) * len(inputs.cluster.nodes)
    return pairs <= DETERMINISTIC_MAX_PAIRS and runs_users_code(inputs)


def runs_users_code(inputs: InvariantInputs) -> bool:
    """Whether the run went through code vspec does not ship: another engine, or an
    action or plugin of a plugins dir or an installed extension (one replacing a
    built-in too). Looked up as the run looked them up, in the spec's scope."""
    if type(inputs.engine).__module__ != OWN_ENGINE_MODULE:
        return True
    return bool(your_names(inputs.conf))


def _deterministic_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    if not inputs.engine.reproducible:
        # Asked for by the spec (it never applies by itself there): no verdict, not a pass.
        raise Unsupported(
            f"the spec asks for `deterministic`, which the {inputs.engine.name} engine does "
            "not keep by design (Go's map order, ties drawn at random; docs/engines.md)"
        )
    again = inputs.rerun()
    first, second = _outcome(result), _outcome(again)
    return [
        f"a second run with seed {inputs.seed} gives different {what}"
        for what in first
        if first[what] != second[what]
    ]


register(
    Invariant(
        "deterministic",
        "the same inputs and seed give the same outcome",
        "Running the same conf on the same cluster with the same seed, clock, cycles and "
        "verbosity again gives the same binds and evictions (with their cycles and "
        "order), pipelined tasks, pod group phases and conditions, task statuses and "
        "captured log lines.",
        "Every configuration (Volcano itself is not deterministic: vspec replaces its "
        "random and map-order choices by seeded and insertion-ordered ones). The check "
        "re-runs the whole simulation, so a spec run checks it only where the run goes "
        "through code vspec does not ship (a user's plugin or action, another engine) and "
        f"pods x nodes is at most {DETERMINISTIC_MAX_PAIRS:,}, or when the spec or project "
        "requests it; vspec's own engine, actions and plugins are checked by its test "
        "suite (every example spec) and by vspec fuzz (every example).",
        _deterministic_applies,
        _deterministic_check,
    )
)


# -- no-priority-inversion -------------------------------------------------------------------


def _inversion_applies(inputs: InvariantInputs) -> bool:
    """Priority's veto holds only when no other tier can decide (a tier before priority's
    decides first, a tier after it decides when priority's tier leaves no victim) and
    priority answers last in its tier (an empty intersection is answered afresh)."""
    return "preempt" in inputs.conf.actions and sole_decider(inputs.conf, "priority", "preempt")


def _task_priority(view: CycleView, key: str) -> int:
    return task_priority(view.pods[key])


def _inversion_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    messages: list[str] = []
    jobs = session_jobs(inputs)
    for view in cycles(inputs, result):
        victims = [e.task for e in view.evictions if e.reason == "preempt" and e.task in view.pods]
        if not victims:
            continue
        pending = [
            k
            for k, p in view.pods.items()
            if view.status(k) is TaskStatus.Pending and p.job_id in jobs.pod_groups
        ]
        for victim in victims:
            vjob = view.pods[victim].job_id
            vprio = jobs.priority.get(vjob, 0)
            vtask = _task_priority(view, victim)
            if not any(
                (view.pods[k].job_id != vjob and jobs.priority[view.pods[k].job_id] > vprio)
                or (view.pods[k].job_id == vjob and _task_priority(view, k) > vtask)
                for k in pending
            ):
                messages.append(
                    f"cycle {view.cycle}: {victim} (job {vjob}, priority {vprio}) was preempted "
                    "but no pending pod outranks it"
                )
    return messages


register(
    Invariant(
        "no-priority-inversion",
        "preempt only evicts a pod for a pod that outranks it",
        "For every eviction with reason `preempt` in a cycle, some pod that was Pending at "
        "the start of that cycle, of a job of the session, outranks the victim: it belongs "
        "to another job whose priority (its PriorityClass value, else the global default, "
        "else 0) is strictly higher than the victim's job's, or to the victim's own job "
        "with a strictly higher task priority.",
        "Configurations with the `preempt` action and `priority` with enablePreemptable "
        "on, where every other Preemptable plugin (gang, conformance, drf, cdp, pdb, tdm, "
        "extender) with enablePreemptable on is in priority's tier, after priority: an "
        "earlier tier decides before priority, a later one decides when priority's tier "
        "leaves no victim (see specs/findings/), and a plugin after priority whose "
        "answer shares nothing with the victims so far answers afresh (v1.11.0 quirk).",
        _inversion_applies,
        _inversion_check,
    )
)


# -- pipelined-consistent --------------------------------------------------------------------

_NOT_ON_NODE = frozenset(
    {
        TaskStatus.Pipelined,
        TaskStatus.Releasing,
        TaskStatus.Succeeded,
        TaskStatus.Failed,
        TaskStatus.Pending,
    }
)


def _unjudged_pipelined(inputs: InvariantInputs) -> set[str]:
    """Backfill ignores pipelined tasks' pod slots unless predicates counts them
    (specs/findings/pipelined-consistent-backfill-takes-promised-pod-slots.yaml)."""
    conf = inputs.conf
    if "backfill" in conf.actions and not enabled(conf, "predicates", "predicate"):
        return {"pods"}
    return set()


def _pipelined_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    if not result.tasks:
        return []
    request = requests(inputs)
    unjudged = _unjudged_pipelined(inputs)
    views = cycles(inputs, result)
    last = views[-1]
    nodes = nodes_by_name(inputs)
    messages: list[str] = []
    bound = {b.task for b in last.binds}
    promised: dict[str, list[str]] = {}
    # result.tasks gives no node to a Pipelined (or Allocated) task: it is not bound;
    # result.pipelined has where each pipelined task holds its place.
    for key, node in (pair for pairs in result.pipelined.values() for pair in pairs):
        if node not in nodes:
            messages.append(f"pipelined task {key} is on no declared node ({node or 'none'})")
        elif key in bound:
            messages.append(f"task {key} is pipelined to {node} and bound in the same cycle")
        elif key in last.pods:
            promised.setdefault(node, []).append(key)
    for name, keys in promised.items():
        limit = allocatable(nodes[name])
        before = Resource()  # what the node's pods held at the start of the cycle
        for key, pod in last.pods.items():
            if pod.node_name == name and last.status(key) in HOLDING - {TaskStatus.Releasing}:
                before.add(request(pod))
        used, names = Resource(), set[str]()
        for key, task in result.tasks.items():
            if (
                task.node == name
                and key in last.pods
                and TaskStatus[task.status] not in _NOT_ON_NODE
            ):
                used.add(request(last.pods[key]))
        for key in keys:
            r = request(last.pods[key])
            used.add(r)
            names |= set(dims(r))
        names -= unjudged | set(exceeds(before, limit, names))
        over = exceeds(used, limit, names)
        if over:
            messages.append(
                f"node {name}: pipelined {', '.join(keys)} need {fmt(used, set(over))} with "
                f"the tasks that keep their place, above allocatable {fmt(limit, set(over))}"
            )
    return messages


register(
    Invariant(
        "pipelined-consistent",
        "pipelined tasks are promised only resources that will be free",
        "In the last cycle, after its last action (the state `expect.pipelined` reads): "
        "every Pipelined task is on a declared node and was not bound in that cycle; for "
        "every node, the requests of its Pipelined tasks plus those of its tasks that keep "
        "their place (bound ones: Binding, Bound, Running; Allocated tasks of a kept "
        "statement are not reported with a node, so they are not counted) "
        "fit its allocatable in every dimension the pipelined tasks request (Volcano's "
        "FutureIdle never goes negative), except dimensions in which the node's pods "
        "(Releasing ones aside) already exceeded its allocatable at the start of the cycle.",
        "Every configuration; the `pods` dimension is not judged when `backfill` runs "
        "without the predicates plugin (backfill then binds best-effort pods into pod slots "
        "promised to pipelined tasks, see specs/findings/).",
        _always,
        _pipelined_check,
    )
)


# -- conservation ----------------------------------------------------------------------------


def _conservation_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    messages: list[str] = []
    nodes = node_rows(inputs)
    views = cycles(inputs, result)
    stray = sorted({b.cycle for b in result.binds} | {e.cycle for e in result.evictions})
    if stray and stray[-1] >= inputs.cycles:
        messages.append(f"binds or evictions recorded for cycle {stray[-1]} of {inputs.cycles}")
    for view in views:
        for key, n in Counter(b.task for b in view.binds).items():
            if n > 1:
                messages.append(f"cycle {view.cycle}: {key} bound {n} times")
        for key, n in Counter(e.task for e in view.evictions).items():
            if n > 1:
                messages.append(f"cycle {view.cycle}: {key} evicted {n} times")
        for b in view.binds:
            if b.task not in view.pods:
                messages.append(f"cycle {view.cycle}: bind of {b.task}, which does not exist")
            elif view.status(b.task) is not TaskStatus.Pending:
                messages.append(
                    f"cycle {view.cycle}: bind of {b.task}, which was {view.status(b.task)}"
                )
            if b.node not in nodes:
                messages.append(f"cycle {view.cycle}: {b.task} bound to unknown node {b.node}")
        for e in view.evictions:
            if e.task not in view.pods:
                messages.append(f"cycle {view.cycle}: eviction of {e.task}, which does not exist")
            elif not view.pods[e.task].node_name:
                messages.append(f"cycle {view.cycle}: eviction of {e.task}, which is on no node")
    held = {p.meta.key for p in inputs.cluster.held_pods}
    for key, cycle in sorted(result.created.items()):
        if key not in held:
            messages.append(f"cycle {cycle}: {key} was created but was never a held pod")
    if result.cluster is not None and views:
        messages.extend(_final_cluster(views[-1], result, pod_index(inputs)))
    return messages


_KEY = operator.attrgetter("meta.key")


def _final_cluster(last: CycleView, result: SimulationResult, index: PodIndex) -> list[str]:
    """The cluster after the last cycle: its pods minus the evicted, moved only by binds.
    A pod the session handed on as the very object it had is where it was, under its
    key: only the others (a timeline's session changes a few of its pods) are read."""
    assert result.cluster is not None
    pods = result.cluster.pods
    found = index.changed(pods) if last.pods is index.pods else None
    if found is None:
        before = dict(zip(map(id, last.pods.values()), last.pods.values(), strict=True))
        after = dict(zip(map(id, pods), pods, strict=True))
        found = (
            [before[i] for i in before.keys() - after.keys()],
            [after[i] for i in after.keys() - before.keys()],
        )
    changed = sorted(found[1], key=_KEY)
    dropped = set(map(_KEY, found[0]))  # keys whose pod went
    new_keys = set(map(_KEY, changed))
    gone = gone_after(last)
    created = {k for k, cycle in result.created.items() if cycle == last.cycle + 1}

    def in_final(key: str) -> bool:  # the final pods' keys: the kept pods' and the new
        return key in new_keys or (key in last.pods and key not in dropped)

    def survives(key: str) -> bool:  # the view's pods but the gone, and the created
        return key in created or (key in last.pods and key not in gone)

    # Elsewhere than these keys both say "it was in the view".
    differ = gone | dropped | new_keys | created
    lost = sorted(k for k in differ if survives(k) and not in_final(k))
    extra = sorted(k for k in differ if in_final(k) and not survives(k))
    messages = []
    if lost or extra:
        messages.append(f"final cluster: pods lost {lost}, pods appeared {extra}")
    bound = {b.task for b in last.binds}
    for pod in changed:
        key = pod.meta.key
        was = last.pods.get(key)
        moved = was is not None and pod.node_name != was.node_name
        if moved and survives(key) and key not in bound:
            messages.append(f"final cluster: {key} moved without a bind")
    return messages


register(
    Invariant(
        "conservation",
        "no pod appears, disappears, moves or is bound twice without a recorded reason",
        "Every bind of a cycle names a pod that exists and was Pending (not on a node) at "
        "the start of the cycle, and a declared node; every eviction names a pod that was "
        "on a node; no pod is bound or evicted twice in one cycle; no bind or eviction is "
        "recorded for a cycle that did not run; the cluster after the last cycle holds "
        "exactly the pods of the input (and the held pods a controller created, from the "
        "cycle it created them) minus the evicted and the terminating ones (those "
        "with a deletionTimestamp are gone one period later), each on the node it had "
        "unless a bind moved it.",
        "Every configuration.",
        _always,
        _conservation_check,
    )
)
