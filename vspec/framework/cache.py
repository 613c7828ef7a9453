"""The scheduler cache: the cluster as Volcano's informers see it (``pkg/scheduler/cache``).

A cache is built from the :class:`~vspec.model.objects.Cluster` model, snapshotted into
each session, and receives the session's committed effects (binds and evictions), which
vspec records instead of calling the API server.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import compress, filterfalse
from operator import is_
from typing import TYPE_CHECKING, NamedTuple

from vspec.api.job_info import JobInfo, same_spec
from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import Resource
from vspec.api.task_info import PodRequests, TaskInfo
from vspec.api.types import TaskStatus
from vspec.errors import EngineError
from vspec.framework.log import Klog
from vspec.k8s.nodeinfo import K8sMemo
from vspec.model.changes import changes_of, list_changes
from vspec.model.conf import SchedulerOptions
from vspec.model.corev1 import Condition
from vspec.model.cycles import KnownPods
from vspec.model.objects import Cluster, Pod, PodGroup, PriorityClass

if TYPE_CHECKING:
    from vspec.framework.columns import NodeColumns


class PodGroupStatus(NamedTuple):
    """What the job updater compares to decide whether a PodGroup is written (a tuple:
    made for every new job clone, where a frozen dataclass is five times slower to
    build)."""

    phase: str
    conditions: tuple[Condition, ...]
    running: int
    succeeded: int
    failed: int


def pod_group_status(pg: PodGroup) -> PodGroupStatus:
    """``pg``'s status, as ``OpenSession`` copies each job's into ``podGroupStatus``."""
    return PodGroupStatus(pg.phase, tuple(pg.conditions), pg.running, pg.succeeded, pg.failed)


@dataclass(frozen=True)
class JobFeed:
    """Which of a snapshot's jobs may open with other values than at the last snapshot
    (SchedulerCache's "The job feed"), for the passes that keep what they worked out
    per job from session to session and patch it rather than read every live job.

    A consumer keeps the ``mark`` of the snapshot its state was last brought to; when
    the next feed :meth:`follows` it, the jobs outside ``changed`` open as they did
    then (the same clone, holding the same tasks, statuses, priority and pod group
    values) and those in ``gone`` left; else it works its state out afresh from every
    job, as it does when ``since`` is None (no carried predecessor: ``changed`` then
    holds every job)."""

    mark: object  # this snapshot's, for the consumers to keep
    since: object | None  # the mark of the snapshot the changes are counted from
    changed: frozenset[str]  # the jobs that may differ from that snapshot's (or are new)
    gone: frozenset[str]  # that snapshot's jobs this one has not

    def follows(self, mark: object | None) -> bool:
        """Whether the changes are counted from the snapshot of ``mark``."""
        return self.since is not None and self.since is mark


@dataclass
class Snapshot:
    """The cache's copy of the cluster that one session works on (the ``ClusterInfo``
    of Go's ``SchedulerCache.Snapshot``), each job's pod group status as it opens (the
    session's ``podGroupStatus``), and which jobs changed since the last snapshot."""

    jobs: dict[str, JobInfo]
    nodes: dict[str, NodeInfo]
    node_list: list[NodeInfo]
    queues: dict[str, QueueInfo]
    revocable_nodes: dict[str, NodeInfo]
    total_allocatable: Resource  # the nodes' allocatable summed, in order
    pod_group_status: dict[str, PodGroupStatus]
    feed: JobFeed


@dataclass
class Effects:
    """What the scheduler did to the cluster: the fake binder and evictor of Go's tests."""

    binds: list[tuple[str, str]] = field(default_factory=list)  # (ns/name, node)
    evictions: list[tuple[str, str]] = field(default_factory=list)  # (ns/name, reason)
    events: list[tuple[str, str, str, str]] = field(
        default_factory=list
    )  # (obj, type, reason, msg)
    # ns/name -> annotations patched onto a bound pod (TaskInfo.bind_annotations)
    annotations: dict[str, dict[str, str]] = field(default_factory=dict)


class SchedulerCache:
    """Built once per scheduler and kept between sessions, as Volcano's informer-fed
    cache is: :meth:`update` brings it to the next session's cluster by rebuilding only
    the nodes and jobs whose objects changed, so that what a session sees is what a
    cache built afresh from that cluster would show (tests/property/test_cache.py).

    Changes are found by object identity: the model is copy-on-write (the scheduler,
    the clock and the loader copy an object to change it, never mutate one in place),
    so an object that is still the same object holds what it held.

    **Carried jobs.** Volcano clones every job into every session. When every action and
    plugin keeps the job contract (``carries_jobs``, vspec.framework.interface) and no
    recorder watches, a session's clone of a job is handed to the next session instead
    of a new clone when all of this holds: the cache's job is the same object (not built
    again: none of its pods changed, none was bound or evicted), the clone's tasks were
    not touched (``JobInfo.version``: every status change takes a task out and adds it),
    its pod group's spec is the cache's, and the next cluster holds the very pod group
    ``advance`` wrote from it. Then the clone holds what a new one would: the same tasks
    in the same statuses and order, the same sums, the fields ``SetPodGroup`` derives
    from the same spec, and a pod group of the values written back, which the cache's
    job took again (or held already); the per-session fields a fresh clone resets are
    reset (:meth:`snapshot`). A session then pays for the jobs that changed, not for
    every live one.

    **The job feed.** So each snapshot tells (:class:`JobFeed`) which of its jobs may
    differ from the last snapshot's as the session opens: a carried clone holds what it
    held at the last open unless its pod group was written back (``advance`` wrote it
    from the clone's new status: ``_rewritten``) or the cache's job took another pod
    group; every new clone, and every job of a snapshot with no carried predecessor
    (the first, after a whole rebuild, when the conf does not keep the job contract, or
    when the priority classes changed: a clone's priority is worked out from them),
    counts as changed. What a session does to a clone after it opens is not in the
    feed: each clone reports to :attr:`touched_jobs` when its tasks or its phase move
    (``JobInfo.touched``), which a consumer that reads jobs later in the session adds
    (the capture).
    """

    def __init__(self, cluster: Cluster, options: SchedulerOptions, log: Klog) -> None:
        self.options = options
        self.log = log
        self.names = frozenset(options.scheduler_names)
        self.k8s = K8sMemo()
        # The nodes as columns, kept from session to session (vspec.framework.columnar).
        self.columns: NodeColumns | None = None
        # Set by the scheduler when its conf keeps the job contract (class docstring).
        self.carries_jobs = False
        # Set by the scheduler when every action and plugin of its conf is vspec's own,
        # which write a session pod group's status only through ``JobInfo.set_phase``
        # (reported to ``touched_jobs``) and at the close: a job not touched holds the
        # status it opened with until then (vspec.framework.job_updater.settled_jobs).
        self.own_code = False
        self._handed_jobs: dict[str, _Carried] = {}  # the last snapshot's clones
        # Those its feed counted as changed: the others' pod groups are the very ones
        # the last hand-back found of the same spec (hand_back).
        self._handed_changed: frozenset[str] = frozenset()
        self._carried: dict[str, _Carried] = {}  # those the next snapshot may hand again
        self._rewritten: set[str] = set()  # those of them whose pod group was written back
        # The jobs whose session clone's tasks or phase moved since the last snapshot
        # (each clone the cache makes reports here: JobInfo.touched).
        self.touched_jobs: set[str] = set()
        # Those of ``_carried`` written back, for the next snapshot's feed (JobFeed).
        self._written_back: set[str] = set()
        # The last snapshot's feed mark and jobs, when the next feed may follow it.
        self._feed_mark: object | None = None
        self._fed_jobs: dict[str, JobInfo] = {}
        self._fed_classes: list[PriorityClass] = []  # and its priority classes
        self._build(cluster)

    def _build(self, cluster: Cluster) -> None:
        """The cache built afresh (``newSchedulerCache`` fed every object in order)."""
        self._prepare(cluster)
        self._carried = {}
        self._rewritten = set()
        self._feed_mark = None  # the next snapshot's jobs all count as changed
        self.nodes: dict[str, NodeInfo] = {}
        self.node_list: list[str] = []
        for node in cluster.nodes:
            self.nodes[node.meta.name] = NodeInfo(node)
            self.node_list.append(node.meta.name)
        self.jobs: dict[str, JobInfo] = {}
        for pg in cluster.pod_groups:
            uid = f"{pg.meta.namespace}/{pg.meta.name}"
            job = self.jobs.get(uid)
            if job is None:
                self.jobs[uid] = JobInfo(uid, pg)
            else:
                job.set_pod_group(pg)
        # Kept for the updates: a bound pod is a copy of the pending one, sharing its
        # containers, so its request is found again rather than worked out again.
        request = self._requests = PodRequests()
        jobs: list[str] = []  # per pod, its job id, as _Seen keeps them: found in the same pass
        for pod in cluster.pods:
            if pod.scheduled_by(self.names) or pod.node_name:
                task = TaskInfo(pod, request(pod))
                self._add_task(task)
                jobs.append(task.job)
            else:
                jobs.append(pod.job_id)
        self._seen = _Seen(cluster, jobs, len(self.nodes) == len(self.node_list))
        self._handed: _Handed | None = None
        # The cache's nodes changed (their tasks, or built again) since the last snapshot.
        self._stale: set[str] = set()
        # The cache's nodes whose ``others`` was accessed since the last snapshot.
        self._others_touched: set[str] = set()
        for ni in self.nodes.values():
            ni.report_changes(self._stale)
            ni.report_others(self._others_touched)

    def _prepare(self, cluster: Cluster) -> None:
        """What every session rebuilds whole: it is small, and the snapshot shares the
        queues with the session rather than cloning them."""
        self.cluster = cluster
        self.effects = Effects()
        self._touched: set[str] = set()  # pods whose cache state the effects changed
        self._touched_nodes: set[str] = set()
        self.priority_classes: dict[str, PriorityClass] = {
            pc.meta.name: pc for pc in cluster.priority_classes
        }
        self.default_priority = 0
        for pc in cluster.priority_classes:
            if pc.global_default:
                self.default_priority = pc.value
        self.queues: dict[str, QueueInfo] = {q.meta.name: QueueInfo(q) for q in cluster.queues}

    def update(self, cluster: Cluster) -> None:
        """The cache for the next session, on ``cluster``: the jobs and nodes whose
        pods, pod group or node changed (or that this session's binds and evictions
        touched) are built again as a fresh cache builds them; the rest stay. Anything
        out of the ordinary (a node added or removed, duplicate names, pods reordered, a
        pod on an unknown node) rebuilds the whole cache."""
        touched, touched_nodes = self._touched, self._touched_nodes
        seen = self._seen
        self._prepare(cluster)
        diff = seen.diff(cluster, touched) if seen.incremental else None
        if diff is None:
            self._build(cluster)
            return
        self.k8s.retain(cluster)
        diff.nodes |= touched_nodes
        diff.nodes.discard("")
        if not diff.nodes <= self.nodes.keys():
            self._build(cluster)
            return
        self._rebuild(cluster, diff, seen)
        self._drop_carried(diff, seen.groups)

    def _drop_carried(self, diff: _Dirty, groups: dict[str, PodGroup]) -> None:
        """Keep the carried clones whose jobs were not built again and whose pod group is
        still the one written from them. A pod group the cluster did not replace since
        the last session is the one that session opened with, the very one ``advance``
        left in place when it wrote none: only the jobs built again, those whose pod
        group was replaced (``diff.moved``) and those written back are looked at, when
        the diff knows which were replaced."""
        carried, rewritten = self._carried, self._rewritten
        self._rewritten = set()
        self._written_back = rewritten
        if diff.moved is None:
            self._carried = {
                uid: kept
                for uid, kept in carried.items()
                if uid not in diff.jobs and groups.get(uid) is kept.written
            }
            return
        for uid in (diff.jobs | diff.moved | rewritten) & carried.keys():
            if uid in diff.jobs or groups.get(uid) is not carried[uid].written:
                del carried[uid]

    def _rebuild(self, cluster: Cluster, dirty: _Dirty, seen: _Seen) -> None:
        dirty_jobs, dirty_nodes = dirty.jobs, dirty.nodes
        for name in dirty_nodes:
            self.nodes[name].empty()
        self._stale |= dirty_nodes
        for uid in dirty.regrouped:
            # The cache's job takes the new pod group (``UpdatePodGroup``): what
            # ``SetPodGroup`` derives from it replaces all it derived from the last one,
            # and the tasks, the same pods', stay as a fresh build adds them.
            self.jobs[uid].set_pod_group(seen.groups[uid])
        for uid in dirty_jobs:
            pg = seen.groups.get(uid)
            if pg is None:
                self.jobs.pop(uid, None)
            else:  # in its place: the jobs keep a fresh cache's order but for new ones
                self.jobs[uid] = JobInfo(uid, pg)
        request = self._requests  # a job's pods share their containers: parsed once
        if len(request) > 2 * len(seen.pods) + 64:  # mostly finished jobs' by now
            request = self._requests = PodRequests()
        for pod in seen.pods_of(dirty_jobs, dirty_nodes):  # the cluster's order
            host, job = pod.node_name, seen.job_of[id(pod)]
            if not (host or pod.scheduled_by(self.names)):
                continue
            task = TaskInfo(pod, request(pod))
            if host in dirty_nodes and task.status not in _OFF_NODE:
                self.nodes[host].add_task(task)
            if job in dirty_jobs:
                info = self.jobs.get(job)
                if info is None:
                    info = self.jobs[job] = JobInfo(job)
                info.add_task_info(task)
        # Jobs in a fresh cache's order: pod groups first, then jobs known by pods only.
        order = seen.job_order(self.jobs)
        if list(self.jobs) != order:
            self.jobs = {uid: self.jobs[uid] for uid in order}
        self._seen = seen

    def _add_task(self, task: TaskInfo) -> None:
        if task.node_name:
            node = self.nodes.get(task.node_name)
            if node is None:
                # Volcano keeps a NotReady placeholder for a pod bound to an unknown node.
                node = self.nodes[task.node_name] = NodeInfo(None, task.node_name)
            if task.status not in _OFF_NODE:
                node.add_task(task)
        if not task.job:
            return
        job = self.jobs.get(task.job)
        if job is None:
            job = self.jobs[task.job] = JobInfo(task.job)
        job.add_task_info(task)

    def snapshot(self) -> Snapshot:
        """Every job with a pod group and a known queue cloned (or its clone carried, the
        class docstring), with its pod group status: that of the cache's job's pod group,
        which every clone copies (a carried one's the hand-back restored), and which no
        session changes. It is worked out once per pod group object: a carried job keeps
        it while the cache's job keeps its pod group."""
        nodes, node_list, revocable, total = self._session_nodes()
        queues = dict(self.queues)
        jobs: dict[str, JobInfo] = {}
        statuses: dict[str, PodGroupStatus] = {}
        carried, self._carried = self._carried, {}
        written_back, self._written_back = self._written_back, set()
        self._rewritten = set()
        handed: dict[str, _Carried] = {}
        changed: list[str] = []  # the jobs that may open otherwise than at the last snapshot
        touched = self.touched_jobs
        touched.clear()
        # Read once: the same for every job (this loop reads every live job).
        carries, default = self.carries_jobs, self.default_priority
        priority_class = self.priority_classes.get
        for uid, job in self.jobs.items():
            group = job.pod_group
            if group is None:
                if self.log.enabled(4):
                    self.log.v(
                        4,
                        f"The scheduling spec of Job <{uid}:{job.namespace}/{job.name}> is nil, "
                        "ignore it.",
                    )
                continue
            if job.queue not in queues:
                self.log.v(
                    3,
                    f"The Queue <{job.queue}> of Job <{job.namespace}/{job.name}> does not "
                    "exist, ignore it.",
                )
                continue
            # Volcano sets the priority on the cache's job, then clones it; set on the
            # clone, it leaves the cache's jobs as a fresh cache builds them.
            kept = carried.get(uid)
            if kept is not None and kept.source is job:
                clone = jobs[uid] = kept.clone
                clone.nodes_fit_errors = {}
                clone.schedule_start_timestamp = job.schedule_start_timestamp
                if kept.group is not group:
                    kept.took(group)
                    changed.append(uid)
                elif uid in written_back:
                    changed.append(uid)
            else:
                clone = jobs[uid] = job.clone()
                clone.touched = touched
                kept = _Carried(job, clone, clone.version)
                kept.took(group)
                changed.append(uid)
            if carries:
                handed[uid] = kept
            statuses[uid] = kept.status
            pc = priority_class(kept.priority_class)
            clone.priority = default if pc is None else pc.value
        self.log.v(
            3,
            f"There are <{len(jobs)}> Jobs, <{len(queues)}> Queues and <{len(nodes)}> Nodes "
            "in total for scheduling.",
        )
        self._handed_jobs = handed
        feed = self._feed(jobs, changed)
        self._handed_changed = feed.changed
        return Snapshot(jobs, nodes, node_list, queues, revocable, total, statuses, feed)

    def _feed(self, jobs: dict[str, JobInfo], changed: list[str]) -> JobFeed:
        """This snapshot's :class:`JobFeed` (``changed``: its jobs that may differ from
        the last snapshot's), and the mark the next one follows from, when it may: the
        carried clones are all that a snapshot does not count as changed, so a conf
        that hands none on has every job counted, with no predecessor to follow."""
        mark = object()
        since, last = self._feed_mark, self._fed_jobs
        # A carried clone keeps its pod group's priority class: its priority moves only
        # with the classes (the model's objects, copy-on-write).
        classes, last_classes = self.cluster.priority_classes, self._fed_classes
        if since is None or not (
            len(classes) == len(last_classes) and all(map(is_, classes, last_classes))
        ):
            feed = JobFeed(mark, None, frozenset(jobs), frozenset())
        else:
            feed = JobFeed(mark, since, frozenset(changed), frozenset(last.keys() - jobs.keys()))
        self._feed_mark = mark if self.carries_jobs else None
        self._fed_jobs, self._fed_classes = jobs, list(classes)
        return feed

    def hand_back(self, cluster: Cluster, settled: Collection[str] = ()) -> None:
        """Keep the last snapshot's clones that the next may hand again (class
        docstring); ``cluster`` is the one ``advance`` made from their session, and
        ``settled`` the jobs the session's close left as they opened, unstamped
        (``Session.stamped``): each is the clone handed back last time, written as it was,
        with the same pod group, which the cluster holds again (checked in C): kept as
        they are."""
        handed, self._handed_jobs = self._handed_jobs, {}
        if not handed:
            return
        last = self._seen.groups
        if len(last) == len(cluster.pod_groups):  # advance keeps the pod groups in place
            written = dict(zip(last, cluster.pod_groups, strict=True))
        else:
            written = {_group_id(pg): pg for pg in cluster.pod_groups}
        fed = self._handed_changed
        rest: Iterable[str] = handed
        if settled and all(map(is_, map(written.get, settled), map(last.__getitem__, settled))):
            self._carried.update(zip(settled, map(handed.__getitem__, settled), strict=True))
            rest = filterfalse(settled.__contains__, handed)
        for uid in rest:
            kept = handed[uid]
            pg = written.get(uid)
            if kept.clone.version != kept.version or pg is None:
                continue
            # A job the feed did not name is the clone handed back last time, with the
            # same pod group, and the cache's job kept its own: found alike then.
            groups = kept.spec_kept() if uid in fed else kept.spec_held
            if groups is None:
                continue
            if pg is last.get(uid):
                # Not written back: the cache's job keeps its pod group, and a new clone
                # would copy that, with the conditions its last writer stamped. Of the
                # clone's, only the conditions may differ: the phase and counts are the
                # status the session opened with, or the updater had written them, and
                # the rest is the spec (spec_kept above and the job contract).
                groups[1].conditions = list(groups[0].conditions)
            else:
                self._rewritten.add(uid)
            kept.written = pg
            self._carried[uid] = kept

    def _session_nodes(
        self,
    ) -> tuple[dict[str, NodeInfo], list[NodeInfo], dict[str, NodeInfo], Resource]:
        """``NodeInfo.Clone`` of every ready node, copy-on-write across sessions: the
        clone the last session was handed is handed again when neither the cache's node
        nor that clone has changed since, as it then holds what a new clone would. Both
        report their task changes (``NodeInfo.report_changes``) and the cache the nodes
        it builds again, so a session pays only for the nodes that changed, not for a
        pass over every node."""
        last = self._handed
        if last is None:
            return self._hand_out()
        stale = {*self._stale, *last.changed}
        self._stale.clear()
        last.changed.clear()
        # ``others`` is copied afresh, as a clone's is: plugins put per-session state there
        # (deviceshare's pools). Only where it was accessed may it differ from a copy.
        touched = {*self._others_touched, *last.others_touched}
        self._others_touched.clear()
        last.others_touched.clear()
        clones = last.clones
        same_total = same_revocable = True
        for name in stale:
            row = last.rows.get(name)
            node = self.nodes.get(name)
            if row is None or node is None or not node.ready:
                return self._hand_out()
            old = clones[row]
            old.report_changes(None)
            old.report_others(None)
            clone = clones[row] = last.by_name[name] = node.clone()
            clone.report_changes(last.changed)
            clone.report_others(last.others_touched)
            same_total = same_total and clone.allocatable.values() == old.allocatable.values()
            same_revocable = same_revocable and not (clone.revocable_zone or old.revocable_zone)
        for name in touched - stale:
            row = last.rows.get(name)
            node = self.nodes.get(name)
            if row is None or node is None:
                return self._hand_out()
            clones[row].take_others(node)
        nodes = dict(last.by_name)
        if not same_revocable:
            last.revocable = _revocable(nodes)
        if not same_total:
            last.total = _total(nodes)
        self.k8s.nodes_replaced(stale)
        return nodes, list(clones), dict(last.revocable), last.total.clone()

    def _hand_out(
        self,
    ) -> tuple[dict[str, NodeInfo], list[NodeInfo], dict[str, NodeInfo], Resource]:
        """Every ready node cloned afresh; kept to hand on only when every node is ready
        and the cache's node order is its node list's (no placeholder nodes)."""
        if self._handed is not None:
            for clone in self._handed.clones:
                clone.report_changes(None)
                clone.report_others(None)
        nodes = {name: ni.clone() for name, ni in self.nodes.items() if ni.ready}
        node_list = [nodes[name] for name in self.node_list if name in nodes]
        revocable = _revocable(nodes)
        total = _total(nodes)
        names = list(nodes)
        self._handed = None
        if len(names) == len(self.nodes) and names == [ni.name for ni in node_list]:
            self._handed = _Handed(list(node_list), names, revocable, total)
        self._stale.clear()
        self._others_touched.clear()
        self.k8s.nodes_replaced(None)
        return nodes, node_list, revocable, total.clone()

    def known_pods(self) -> KnownPods | None:
        """What the cache knows of its cluster's pods and pod groups, for ``advance``;
        None when their keys are not unique."""
        seen = self._seen
        if not seen.incremental:
            return None
        return KnownPods(seen.keys, bool(seen.terminating), seen.groups)

    # -- effects of committed operations ------------------------------------------------------
    def _find(self, task: TaskInfo) -> tuple[JobInfo, TaskInfo]:
        job = self.jobs.get(task.job)
        if job is None or task.uid not in job.tasks:
            raise EngineError(f"failed to find task <{task.namespace}/{task.name}> in the cache")
        return job, job.tasks[task.uid]

    def add_bind_task(self, task: TaskInfo) -> None:
        """``AddBindTask``: the cache node must have idle room, else the bind fails."""
        job, cached = self._find(task)
        self._touched.add(cached.key)
        self._touched_nodes.add(task.node_name)
        node = self.nodes.get(task.node_name)
        if node is None:
            raise EngineError(
                f"failed to bind Task {task.uid} to host {task.node_name}, host does not exist"
            )
        original = cached.status
        job.update_task_status(cached, TaskStatus.Binding)
        try:
            node.add_task(cached)
        except EngineError:
            job.update_task_status(cached, original)
            raise
        self.effects.binds.append((task.key, task.node_name))
        if task.bind_annotations:
            # What the API server holds for the pod once bound (Volcano patches it).
            self.effects.annotations[task.key] = dict(task.bind_annotations)

    def evict(self, task: TaskInfo, reason: str) -> None:
        job, cached = self._find(task)
        self._touched.add(cached.key)
        self._touched_nodes.add(task.node_name)
        job.update_task_status(cached, TaskStatus.Releasing)
        node = self.nodes.get(task.node_name)
        if node is not None and cached.key in node.tasks:
            node.update_task(cached)
        self.effects.evictions.append((task.key, reason))

    def record_event(self, obj: str, type_: str, reason: str, message: str) -> None:
        self.effects.events.append((obj, type_, reason, message))


_OFF_NODE = (TaskStatus.Succeeded, TaskStatus.Failed)


def _group_id(pg: PodGroup) -> str:
    """The id of a pod group's job (``namespace/name``)."""
    return f"{pg.meta.namespace}/{pg.meta.name}"


class _Carried:
    """A job clone a snapshot handed out, and what tells whether the next may hand it
    again (SchedulerCache's "Carried jobs"); with what the snapshot reads of the cache's
    job's pod group, kept while that job keeps the same pod group object (the cache
    never changes one in place), so that a carried job's is not read every session."""

    __slots__ = (
        "clone",
        "group",
        "priority_class",
        "source",
        "spec_held",
        "status",
        "version",
        "written",
    )
    group: PodGroup  # the cache's job's pod group, as last read
    status: PodGroupStatus  # its status: the clone's as the session opens
    priority_class: str  # its priority class name

    def __init__(self, source: JobInfo, clone: JobInfo, version: int) -> None:
        self.source = source  # the cache's job it was cloned from
        self.clone = clone
        # The clone's JobInfo.version when handed out: the hand-back carries a clone only
        # at this version, so it holds while the clone is handed out again.
        self.version = version
        # The pod group advance wrote from it, set by the hand-back that carries it (the
        # next update reads it of the carried clones alone).
        self.written: PodGroup | None = None
        # The source's and the clone's pod groups last found of the same spec.
        self.spec_held: tuple[PodGroup, PodGroup] | None = None

    def spec_kept(self) -> tuple[PodGroup, PodGroup] | None:
        """The source's and the clone's pod groups when the clone's holds the source's
        spec (``same_spec``), else None; asked again only of other pod group objects:
        under the job contract a session writes a pod group's status alone, never its
        spec, and the cache replaces a pod group rather than change it, so objects found
        alike stay alike. The hand-back asks it of every carried clone every session."""
        source, clone = self.source.pod_group, self.clone.pod_group
        if source is None or clone is None:
            return None
        held = self.spec_held
        if held is not None and held[0] is source and held[1] is clone:
            return held
        if not same_spec(source, clone):
            return None
        held = self.spec_held = (source, clone)
        return held

    def took(self, group: PodGroup) -> None:
        """Read what the snapshot needs of ``group``, the cache's job's pod group (the
        clone's is a copy of it)."""
        self.group = group
        self.status = pod_group_status(group)
        self.priority_class = group.priority_class_name


class _Handed:
    """The session nodes the last snapshot handed out, in the cache's node order, and
    the names of those a task change touched since (each reports to ``changed``)."""

    __slots__ = (
        "by_name",
        "changed",
        "clones",
        "names",
        "others_touched",
        "revocable",
        "rows",
        "total",
    )

    def __init__(
        self,
        clones: list[NodeInfo],
        names: list[str],
        revocable: dict[str, NodeInfo],
        total: Resource,
    ) -> None:
        self.clones = clones
        self.names = names
        self.rows = {name: row for row, name in enumerate(names)}
        # The clones by name, patched with them: a snapshot's nodes are a copy of it (a
        # dict's copy clones its table, where building one hashes and probes every name).
        self.by_name = dict(zip(names, clones, strict=True))
        self.revocable = revocable
        self.total = total  # the sum of the nodes' allocatable, in order
        self.changed: set[str] = set()
        self.others_touched: set[str] = set()  # the clones whose ``others`` was accessed
        for clone in clones:
            clone.report_changes(self.changed)
            clone.report_others(self.others_touched)


def _revocable(nodes: dict[str, NodeInfo]) -> dict[str, NodeInfo]:
    return {name: ni for name, ni in nodes.items() if ni.revocable_zone}


def _total(nodes: dict[str, NodeInfo]) -> Resource:
    total = Resource()
    for node in nodes.values():
        total.add(node.allocatable)
    return total


@dataclass
class _Dirty:
    """What changed since the last session: what :meth:`SchedulerCache.update` builds again."""

    jobs: set[str]  # a pod of theirs changed: built again from their pods
    nodes: set[str]  # a pod on them changed: built again from their pods
    regrouped: set[str]  # only the pod group changed: built again with the same tasks
    # The jobs whose pod group object was put in, replaced or taken out; None: not known
    # (every pod group was read).
    moved: set[str] | None = None


class _Seen:
    """The model objects the cache was last brought to, to tell what changed since, and
    where each pod counts (its job and node), to find the pods a rebuild takes."""

    __slots__ = (
        "by_job",
        "by_node",
        "group_list",
        "group_source",
        "groups",
        "incremental",
        "job_of",
        "keys",
        "node_source",
        "nodes",
        "pod_source",
        "pods",
        "terminating",
    )

    def __init__(self, cluster: Cluster, jobs: list[str], incremental: bool) -> None:
        """``jobs``: each pod's job id, in order; ``incremental``: the cache holds no
        placeholder node."""
        self.nodes = list(cluster.nodes)
        self.pods = list(cluster.pods)  # a copy: the caller's list may be reused
        self.group_list = list(cluster.pod_groups)
        # The lists themselves, which a change report goes from (vspec.model.changes).
        self.node_source = cluster.nodes
        self.pod_source = cluster.pods
        self.group_source = cluster.pod_groups
        self.groups = {_group_id(pg): pg for pg in cluster.pod_groups}
        # The pods by id (each held by ``pods``, so their ids are theirs alone), and by
        # key, job and node.
        self.job_of: dict[int, str] = dict(zip(map(id, self.pods), jobs, strict=True))
        self.keys: dict[str, Pod] = {}
        self.by_job: dict[str, dict[int, Pod]] = defaultdict(dict)
        self.by_node: dict[str, dict[int, Pod]] = defaultdict(dict)
        self.terminating: set[int] = set()  # the pods with a deletion timestamp
        for pod, job in zip(self.pods, jobs, strict=True):
            self._index(pod, job)
        # False when the cache holds what an update could not rebuild in part: duplicate
        # pods or pod groups, or placeholder nodes for pods bound to unknown nodes.
        self.incremental = (
            incremental
            and len(self.keys) == len(self.pods) == len(self.job_of)
            and len(self.groups) == len(cluster.pod_groups)
        )

    def _index(self, pod: Pod, job: str) -> None:
        self.keys[pod.meta.key] = pod
        self.by_job[job][id(pod)] = pod
        self.by_node[pod.node_name][id(pod)] = pod
        if pod.meta.deletion_timestamp is not None:
            self.terminating.add(id(pod))

    def _unindex(self, pod: Pod) -> str:
        """Take ``pod`` out of the indexes; its job id."""
        ident = id(pod)
        job = self.job_of.pop(ident)
        if self.keys.get(pod.meta.key) is pod:
            del self.keys[pod.meta.key]
        for index, at in ((self.by_job, job), (self.by_node, pod.node_name)):
            held = index[at]
            del held[ident]
            if not held:
                del index[at]  # a finished job's entry goes with its last pod
        self.terminating.discard(ident)
        return job

    def diff(self, cluster: Cluster, touched: set[str]) -> _Dirty | None:
        """What to build again for ``cluster`` (and ``self`` moved on to it), or None
        when only a whole rebuild will do (``self`` is then left half moved on: the
        cache makes a new one). The changes are those the cluster's maker reported
        (vspec.model.changes, "Change reports") when the report goes from the lists
        last seen, else found by comparing the lists."""
        if not self._same_nodes(cluster):
            return None
        # The pods that stayed must stay in order: a job's and a node's tasks are
        # kept in the cluster's order (as every report keeps them).
        changes = changes_of(cluster.pods_changed, self.pod_source, cluster.pods)
        if changes is None:
            changes = list_changes(self.pods, cluster.pods, keep_order=True)
        if changes is None:
            return None
        gone, added = changes
        dirty_jobs: set[str] = set()
        dirty_nodes: set[str] = set()
        for pod in gone:
            dirty_jobs.add(self._unindex(pod))
            dirty_nodes.add(pod.node_name)
        for pod in added:
            if pod.meta.key in self.keys:
                return None  # a key listed twice
            job = self.job_of[id(pod)] = pod.job_id
            self._index(pod, job)
            dirty_jobs.add(job)
            dirty_nodes.add(pod.node_name)
        for key in touched:
            same = self.keys.get(key)
            if same is not None:  # the same object, touched by the session's effects
                dirty_jobs.add(self.job_of[id(same)])
                dirty_nodes.add(same.node_name)
        found = self._groups_moved_on(cluster, dirty_jobs)
        if found is None:
            return None
        groups, regrouped, moved = found
        dirty_jobs.discard("")
        dirty_nodes.discard("")
        self.pods, self.groups = list(cluster.pods), groups
        self.node_source, self.pod_source = cluster.nodes, cluster.pods
        return _Dirty(dirty_jobs, dirty_nodes, regrouped - dirty_jobs, moved)

    def _same_nodes(self, cluster: Cluster) -> bool:
        """The cluster's nodes are those last seen, in order: reported unchanged, or
        compared."""
        reported = changes_of(cluster.nodes_changed, self.node_source, cluster.nodes)
        if reported is not None and not (reported[0] or reported[1]):
            return True
        return len(cluster.nodes) == len(self.nodes) and all(map(is_, cluster.nodes, self.nodes))

    def _groups_moved_on(
        self, cluster: Cluster, dirty_jobs: set[str]
    ) -> tuple[dict[str, PodGroup], set[str], set[str] | None] | None:
        """The pod groups by job id, in ``pod_groups``' order, those only regrouped
        (their jobs' tasks stay), and the jobs whose pod group object changed (None when
        not known); new and removed ones' jobs go to ``dirty_jobs``. None on a job id
        listed twice. A session writes back a few pod groups in place and the clock
        appends and removes some, so the changes are found by identity and the last
        dict is patched, when that gives the list's order; else every pod group is
        read. The changes are the reported ones when the report goes from the list last
        seen (vspec.model.changes)."""
        pod_groups = cluster.pod_groups
        changes = changes_of(cluster.pod_groups_changed, self.group_source, pod_groups)
        if changes is None:
            changes = list_changes(self.group_list, pod_groups, keep_order=True)
        self.group_source = pod_groups
        if changes is not None:
            patched = self._groups_patched(*changes)
            if patched is None:
                return None
            groups, regrouped, dirty, moved = patched
            if len(groups) == len(pod_groups) and all(map(is_, groups.values(), pod_groups)):
                self.group_list = list(pod_groups)
                dirty_jobs |= dirty
                return groups, regrouped, moved
        regrouped = set()
        groups = {}
        for pg in pod_groups:
            uid = _group_id(pg)
            if uid in groups:
                return None
            groups[uid] = pg
            before = self.groups.get(uid)
            if before is None:
                dirty_jobs.add(uid)
            # A pod group written back is a copy; an equal one is no change.
            elif before is not pg and before != pg:
                regrouped.add(uid)
        dirty_jobs.update(uid for uid in self.groups if uid not in groups)
        self.group_list = list(pod_groups)
        return groups, regrouped, None

    def _groups_patched(
        self, gone: list[PodGroup], added: list[PodGroup]
    ) -> tuple[dict[str, PodGroup], set[str], set[str], set[str]] | None:
        """The last pod groups by job id with ``gone`` taken out and ``added`` put in
        (one replacing another of its job id takes its place), those regrouped, the
        jobs of those new or removed, and the jobs of all in ``gone`` and ``added``;
        None on a job id twice."""
        groups = self.groups.copy()
        removed = {_group_id(pg): pg for pg in gone}
        moved = set(removed)
        regrouped: set[str] = set()
        dirty_jobs: set[str] = set()
        for pg in added:
            uid = _group_id(pg)
            moved.add(uid)
            before = groups.get(uid)
            if before is None:
                dirty_jobs.add(uid)
            elif removed.get(uid) is before:
                del removed[uid]
                if before != pg:  # a pod group written back is a copy; equal is no change
                    regrouped.add(uid)
            else:
                return None
            groups[uid] = pg
        for uid in removed:
            del groups[uid]
            dirty_jobs.add(uid)
        return groups, regrouped, dirty_jobs, moved

    def pods_of(self, jobs: set[str], nodes: set[str]) -> Iterator[Pod]:
        """The pods of ``jobs`` and on ``nodes``, in the cluster's order."""
        wanted: set[int] = set()
        for job in jobs:
            wanted.update(self.by_job.get(job, ()))
        for node in nodes:
            wanted.update(self.by_node.get(node, ()))
        if not wanted:
            return iter(())
        return compress(self.pods, map(wanted.__contains__, map(id, self.pods)))

    def job_order(self, jobs: dict[str, JobInfo]) -> list[str]:
        """A fresh cache's job order: the pod groups', then pod-only jobs by first pod."""
        order = list(self.groups)
        if len(jobs) == len(order) and jobs.keys() >= self.groups.keys():
            return order  # no job known by pods only: no pass over the pods
        extra: dict[str, None] = {}
        job_of = self.job_of
        for pod in self.pods:
            job = job_of[id(pod)]
            if job and job in jobs and job not in self.groups:
                extra.setdefault(job, None)
        return [*order, *extra]
