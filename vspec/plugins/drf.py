"""drf: dominant resource fairness between jobs, optionally hierarchical between queues
(``plugins/drf/drf.go``).

Each job's share is its largest fraction of any cluster resource; jobs with smaller
shares go first and may preempt jobs with larger ones. With ``enableHierarchy`` the
queues' ``volcano.sh/hierarchy`` annotations form a tree (hDRF) that orders queues
and decides reclaims.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Set
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from vspec.api.job_info import JobInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import Resource, ResourceValues
from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT, allocated_status
from vspec.errors import EngineError
from vspec.framework.arguments import Arguments
from vspec.framework.interface import ArgumentSpec, Event, EventHandler, Plugin
from vspec.framework.log import Klog
from vspec.framework.registry import register_plugin
from vspec.golang import go_float, parse_go_float
from vspec.plugins._job_accounting import dominant_share, format_tasks

if TYPE_CHECKING:
    from vspec.framework.cache import JobFeed
    from vspec.framework.session import Session

SHARE_DELTA = 0.000001
HIERARCHY_FLAG = "hierarchy"


# strconv.ParseFloat's decimal syntax (plus inf/nan); Python's float() is laxer.
@dataclass
class DrfAttr:
    """``drfAttr``: a job's or queue's allocation and its dominant resource and share."""

    share: float = 0.0
    dominant_resource: str = ""
    allocated: Resource = field(default_factory=Resource)

    def __str__(self) -> str:
        return (
            f"dominant resource <{self.dominant_resource}>, dominant share {self.share:f}, "
            f"allocated {self.allocated}"
        )


@dataclass
class HierarchicalNode:
    """A node of the hDRF tree: a queue path element, or a job leaf (``children`` None)."""

    hierarchy: str
    attr: DrfAttr
    request: Resource
    weight: float = 1.0
    saturated: bool = False
    children: dict[str, HierarchicalNode] | None = None

    def clone(self) -> HierarchicalNode:
        node = HierarchicalNode(
            hierarchy=self.hierarchy,
            attr=DrfAttr(self.attr.share, self.attr.dominant_resource, self.attr.allocated.clone()),
            request=self.request.clone(),
            weight=self.weight,
            saturated=self.saturated,
        )
        if self.children is not None:
            node.children = {c.hierarchy: c.clone() for c in self.children.values()}
        return node

    def child(self, name: str) -> HierarchicalNode:
        """Go follows a nil child and panics; a queue path without jobs has no node."""
        found = None if self.children is None else self.children.get(name)
        if found is None:
            raise EngineError(f"drf: hierarchy node {self.hierarchy!r} has no child {name!r}")
        return found


def resource_saturated(allocated: Resource, request: Resource, demanding: set[str]) -> bool:
    """A job holds all it asked for of some resource, or asks for one nobody lacks."""
    for name in allocated.resource_names():
        held, wanted = allocated.get(name), request.get(name)
        if held != 0 and wanted != 0 and held >= wanted:
            return True
        if name not in demanding and wanted != 0:
            return True
    return False


class _KeptAttr(NamedTuple):
    total: ResourceValues  # the total the share was taken of
    version: int  # the job's JobInfo.version then
    attr: DrfAttr


class JobAttrs:
    """Drf's job attributes kept from session to session (in the scheduler's
    :meth:`~vspec.framework.session.SchedulerState.memo`), so that a session works out
    only those of the jobs that changed since the last one; used without hierarchy,
    where each attribute is its job's alone and nothing is summed across jobs.

    An attribute is kept with the clone it came from and the total its share was taken
    of. The next session that holds the very same clone (a carried job,
    vspec.framework.cache) at the same ``JobInfo.version`` over the same total has
    the tasks in the statuses it was summed from, so it is what summing again gives.
    A session changes an attribute only on an allocate or deallocate event, which
    forgets it (:meth:`forget`), as its task's status change ends the carrying anyway."""

    __slots__ = ("_attrs", "_forgotten", "_from", "_mark", "_total")

    def __init__(self) -> None:
        self._total: ResourceValues | None = None
        self._attrs: dict[str, DrfAttr] = {}
        self._from: dict[str, tuple[JobInfo, int]] = {}  # uid -> (clone, version)
        # The feed mark of the session the attributes were last brought to (JobFeed),
        # and the jobs forgotten since.
        self._mark: object | None = None
        self._forgotten: set[str] = set()

    def update(
        self,
        jobs: dict[str, JobInfo],
        feed: JobFeed,
        total: ResourceValues,
        work_out: Callable[[JobInfo, ResourceValues], DrfAttr],
    ) -> dict[str, DrfAttr]:
        """Every job's attribute over ``total``: a new dict, as the session keeps it.

        When the snapshot's feed follows the last update's, only the jobs it names (and
        those forgotten since) are read: every other job is the clone of then, at the
        version it was handed out with (SchedulerCache's "Carried jobs"), the version
        its attribute was worked out at. Else every job is checked against the clone
        and version its attribute came from."""
        if total != self._total:
            self._total, self._from, self._mark = total, {}, None
        attrs, worked_from = self._attrs, self._from
        examine: Set[str]
        if feed.follows(self._mark):
            examine = feed.changed | feed.gone | self._forgotten
        else:
            examine = jobs.keys() | attrs.keys()
        for uid in sorted(examine):  # sorted: a fixed order
            job = jobs.get(uid)
            if job is None:
                continue  # gone: dropped below
            kept = worked_from.get(uid)
            if kept is None or kept[0] is not job or kept[1] != job.version:
                attrs[uid] = work_out(job, total)
                worked_from[uid] = (job, job.version)
        if len(attrs) != len(jobs):  # forgotten, then gone (or kept over another total)
            for uid in attrs.keys() - jobs.keys():
                del attrs[uid]
                worked_from.pop(uid, None)
        self._mark, self._forgotten = feed.mark, set()
        return dict(attrs)

    def forget(self, uid: str) -> None:
        self._from.pop(uid, None)
        self._forgotten.add(uid)


@register_plugin
class DrfPlugin(Plugin):
    """Dominant resource fairness between jobs; flag enableHierarchy adds hierarchical DRF."""

    name: ClassVar[str] = "drf"
    carries_jobs: ClassVar[bool] = True
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.total_resource = Resource()
        self.total_allocated = Resource()
        self.job_attrs: dict[str, DrfAttr] = {}
        self.root = HierarchicalNode("root", DrfAttr(), Resource(), children={})
        # The session's log once the session opens (the tree is only built from then on).
        self._log = Klog(verbosity=0)
        # Whether its V(4) lines are kept, asked once per session: allocate's job heaps
        # call job_order about 20 times per job popped.
        self._verbose = False
        # The attributes kept between sessions, when this session's came from them.
        self._kept: JobAttrs | None = None

    @staticmethod
    def hierarchy_enabled(ssn: Session) -> bool:
        """The first ``drf`` entry of the tiers decides (``enableHierarchy``, never defaulted)."""
        return ssn.plugin_enabled(DrfPlugin.name, HIERARCHY_FLAG)

    # -- shares ------------------------------------------------------------------------------
    def update_share(self, attr: DrfAttr) -> None:
        attr.dominant_resource, attr.share = dominant_share(attr.allocated, self.total_resource)

    def compare_queues(self, root: HierarchicalNode, left: QueueInfo, right: QueueInfo) -> float:
        """Saturated subtrees last; else share/weight, level by level down the common path."""
        lnode, rnode = root, root
        lpaths, rpaths = left.hierarchy.split("/"), right.hierarchy.split("/")
        depth = min(len(lpaths), len(rpaths))
        for i in range(depth):
            if not lnode.saturated and rnode.saturated:
                return -1
            if lnode.saturated and not rnode.saturated:
                return 1
            lvalue = lnode.attr.share / lnode.weight
            rvalue = rnode.attr.share / rnode.weight
            if lvalue != rvalue:
                return lvalue - rvalue
            if i < depth - 1:
                lnode, rnode = lnode.child(lpaths[i + 1]), rnode.child(rpaths[i + 1])
        return 0

    # -- the hDRF tree -----------------------------------------------------------------------
    def build_hierarchy(
        self, root: HierarchicalNode, job: JobInfo, attr: DrfAttr, hierarchy: str, weights: str
    ) -> None:
        """Create the queue path's missing nodes, then (re)place the job's leaf."""
        log = self._log
        inode = root
        paths, weight_texts = hierarchy.split("/"), weights.split("/")
        for i in range(1, len(paths)):
            children = inode.children
            assert children is not None  # only job leaves have no children
            found = children.get(paths[i])
            if found is not None:
                inode = found
                continue
            if i >= len(weight_texts):
                raise EngineError(
                    f"drf: queue hierarchy {hierarchy!r} has more levels than its weights "
                    f"{weights!r} (Volcano panics: index out of range)"
                )
            # Weights below 1 are raised to 1.
            weight = max(parse_go_float(weight_texts[i]), 1.0)
            node = HierarchicalNode(paths[i], DrfAttr(), Resource(), weight, children={})
            if log.enabled(4):
                log.v(4, f"Node {node.hierarchy} added to {inode.hierarchy}, weight {weight:f}")
            children[paths[i]] = node
            inode = node
        assert inode.children is not None
        inode.children[job.uid] = HierarchicalNode(job.uid, attr, job.total_request.clone())
        if log.enabled(4):
            log.v(
                4,
                f"Job <{job.namespace}/{job.name}> added to {inode.hierarchy}, weights {weights}, "
                f"attr {attr}, total request: {job.total_request}",
            )

    def _update_node(self, node: HierarchicalNode, demanding: set[str]) -> None:
        """Bottom up: a parent holds its children's allocations, each unsaturated child
        scaled to the smallest dominant share among them."""
        log = self._log
        if node.children is None:
            node.saturated = resource_saturated(node.attr.allocated, node.request, demanding)
            if log.enabled(4):
                log.v(
                    4,
                    f"Update hierarchical node {node.hierarchy}, share {node.attr.share:f}, "
                    f"dominant {node.attr.dominant_resource}, resource {node.attr.allocated}, "
                    f"saturated: {str(node.saturated).lower()}",
                )
            return
        mdr = 1.0
        for child in node.children.values():
            self._update_node(child, demanding)
            if child.attr.share != 0 and not child.saturated:
                _, child_share = dominant_share(child.attr.allocated, self.total_resource)
                mdr = min(mdr, child_share)
        allocated = Resource()
        saturated = True
        for child in node.children.values():
            if not child.saturated:
                saturated = False
            if child.attr.share == 0:
                continue
            if child.saturated:
                allocated.add(child.attr.allocated)
            else:
                allocated.add(child.attr.allocated.clone().multi(mdr / child.attr.share))
        node.attr.allocated = allocated
        node.attr.dominant_resource, node.attr.share = dominant_share(
            allocated, self.total_resource
        )
        node.saturated = saturated
        if log.enabled(4):
            log.v(
                4,
                f"Update hierarchical node {node.hierarchy}, share {node.attr.share:f}, "
                f"dominant resource {node.attr.dominant_resource}, resource "
                f"{node.attr.allocated}, saturated: {str(node.saturated).lower()}",
            )

    def update_hierarchical_share(
        self,
        root: HierarchicalNode,
        total_allocated: Resource,
        job: JobInfo,
        attr: DrfAttr,
        queue: QueueInfo,
    ) -> None:
        total = self.total_resource
        demanding = {
            name for name in total.resource_names() if total_allocated.get(name) < total.get(name)
        }
        self.build_hierarchy(root, job, attr, queue.hierarchy, queue.weights)
        self._update_node(root, demanding)

    # -- session -------------------------------------------------------------------------------
    def on_session_open(self, ssn: Session) -> None:
        log = self._log = ssn.log
        self._verbose = log.enabled(4)
        self.total_resource.add(ssn.total_resource)
        if log.enabled(4):
            log.v(4, f"Total Allocatable {self.total_resource}")
        hierarchy = self.hierarchy_enabled(ssn)

        total = self.total_resource.values()
        self._kept = None if hierarchy else self._kept_attrs(ssn)
        if self._kept is not None:
            self.job_attrs = self._kept.update(ssn.jobs, ssn.job_feed, total, self._job_attr)
        else:
            for job in ssn.jobs.values():
                attr = self._job_attr(job, total)
                self.job_attrs[job.uid] = attr
                if hierarchy:
                    self.total_allocated.add(attr.allocated)
                    self.update_hierarchical_share(
                        self.root, self.total_allocated, job, attr, ssn.queues[job.queue]
                    )

        ssn.add_preemptable_fn(self.name, lambda p, cs: self.preemptable(ssn, p, cs))
        if hierarchy:
            ssn.add_queue_order_fn(self.name, self.queue_order)
            ssn.add_reclaimable_fn(self.name, lambda r, cs: self.reclaimable(ssn, r, cs))
        # A job's share moves only by its own tasks' events; the hDRF queue order reads
        # the tree its siblings' events move too, so it is not declared own-state.
        ssn.add_job_order_fn(self.name, self.job_order, own_state=True)
        # partial, not a lambda: no Python frame of its own on every (de)allocation.
        ssn.add_event_handler(
            EventHandler(
                allocate_func=partial(self.on_event, ssn, hierarchy=hierarchy, allocate=True),
                deallocate_func=partial(self.on_event, ssn, hierarchy=hierarchy, allocate=False),
            )
        )

    @staticmethod
    def _kept_attrs(ssn: Session) -> JobAttrs | None:
        """The attributes kept from the last session, when jobs are carried (else each
        is a fresh clone and nothing is kept). Only without hierarchy: the hDRF tree
        sums the jobs in order, and it is built job by job."""
        return ssn.state.memo(JobAttrs) if ssn.cache.carries_jobs else None

    def _job_attr(self, job: JobInfo, total: ResourceValues) -> DrfAttr:
        """The job's allocation and share. A job carried from the last session
        (``JobInfo.derived``) has the tasks in the statuses its attribute was summed
        from, so over the same total the attribute is what summing again gives; it is
        handed on as it is, as it changes only on an allocate or deallocate event, which
        changes a task's status and so ends the carrying."""
        kept = job.derived.get(self.name)
        if isinstance(kept, _KeptAttr) and kept.total == total and kept.version == job.version:
            return kept.attr
        attr = DrfAttr()
        for status, tasks in job.task_status_index.items():
            if allocated_status(status):
                for task in tasks.values():
                    attr.allocated.add(task.resreq)
        self.update_share(attr)
        job.derived[self.name] = _KeptAttr(total, job.version, attr)
        return attr

    def preemptable(
        self, ssn: Session, preemptor: TaskInfo, preemptees: list[TaskInfo]
    ) -> tuple[list[TaskInfo], int]:
        """Victims whose job, without them, still has at least the preemptor's share."""
        victims: list[TaskInfo] = []
        lalloc = self.job_attrs[preemptor.job].allocated.clone().add(preemptor.resreq)
        _, ls = dominant_share(lalloc, self.total_resource)
        allocations: dict[str, Resource] = {}
        for preemptee in preemptees:
            if preemptee.job not in allocations:
                allocations[preemptee.job] = self.job_attrs[preemptee.job].allocated.clone()
            # Cumulative per job, with the asserting Sub (Volcano panics when short).
            ralloc = allocations[preemptee.job].sub(preemptee.resreq)
            _, rs = dominant_share(ralloc, self.total_resource)
            if ls < rs or math.fabs(ls - rs) <= SHARE_DELTA:
                victims.append(preemptee)
        if ssn.log.enabled(4):
            ssn.log.v(4, f"Victims from DRF plugins are {format_tasks(victims)}")
        return victims, PERMIT

    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        result = self.compare_queues(self.root, left, right)
        if result < 0:
            return -1
        return 1 if result > 0 else 0

    def reclaimable(
        self, ssn: Session, reclaimer: TaskInfo, reclaimees: list[TaskInfo]
    ) -> tuple[list[TaskInfo], int]:
        """On a copy of the tree, give the reclaimer its request and take each reclaimee
        away in turn: a victim if the reclaimer's queue then comes strictly first."""
        victims: list[TaskInfo] = []
        total_allocated = self.total_allocated.clone()
        root = self.root.clone()

        ljob = ssn.jobs[reclaimer.job]
        lqueue = ssn.queues[ljob.queue]
        lattr = DrfAttr(allocated=self.job_attrs[ljob.uid].allocated.clone())
        lattr.allocated.add(reclaimer.resreq)
        total_allocated.add(reclaimer.resreq)
        self.update_share(lattr)
        self.update_hierarchical_share(root, total_allocated, ljob, lattr, lqueue)

        for reclaimee in reclaimees:
            rjob = ssn.jobs[reclaimee.job]
            rqueue = ssn.queues[rjob.queue]
            total_allocated.sub(reclaimee.resreq)
            rattr = DrfAttr(allocated=self.job_attrs[rjob.uid].allocated.clone())
            rattr.allocated.sub(reclaimee.resreq)
            self.update_share(rattr)
            self.update_hierarchical_share(root, total_allocated, rjob, rattr, rqueue)

            result = self.compare_queues(root, lqueue, rqueue)

            total_allocated.add(reclaimee.resreq)
            rattr.allocated.add(reclaimee.resreq)
            self.update_share(rattr)
            self.update_hierarchical_share(root, total_allocated, rjob, rattr, rqueue)
            if result < 0:
                victims.append(reclaimee)
        if ssn.log.enabled(4):
            ssn.log.v(4, f"Victims from HDRF plugins are {format_tasks(victims)}")
        return victims, PERMIT

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        attrs = self.job_attrs
        lshare, rshare = attrs[left.uid].share, attrs[right.uid].share
        if self._verbose:
            self._log.v(
                4,
                f"DRF JobOrderFn: <{left.namespace}/{left.name}> share state: {go_float(lshare)}, "
                f"<{right.namespace}/{right.name}> share state: {go_float(rshare)}",
            )
        if lshare == rshare:
            return 0
        return -1 if lshare < rshare else 1

    def on_event(self, ssn: Session, event: Event, hierarchy: bool, *, allocate: bool) -> None:
        """Keep the job's allocation and share (and the hDRF tree) current."""
        task = event.task
        attr = self.job_attrs[task.job]
        if self._kept is not None:
            self._kept.forget(task.job)  # the attribute changes: worked out again next time
        if allocate:
            attr.allocated.add(task.resreq)
        else:
            attr.allocated.sub(task.resreq)
        self.update_share(attr)
        if hierarchy:
            job = ssn.jobs[task.job]
            if allocate:
                self.total_allocated.add(task.resreq)
            else:
                self.total_allocated.sub(task.resreq)
            self.update_hierarchical_share(
                self.root, self.total_allocated, job, attr, ssn.queues[job.queue]
            )
        log = ssn.log
        if log.enabled(4):
            kind = "AllocateFunc" if allocate else "EvictFunc"
            # Namespace shares are gone from v1.11; Volcano still logs the -1 placeholder.
            log.v(
                4,
                f"DRF {kind}: task <{task.namespace}/{task.name}>, resreq <{task.resreq}>,  "
                f"share <{go_float(attr.share)}>, namespace share <-1>",
            )
