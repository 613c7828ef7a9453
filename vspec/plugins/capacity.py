"""capacity: elastic queue quotas from ``spec.deserved`` and ``spec.capability``, flat or
as a queue tree (``plugins/capacity/capacity.go``).

Unlike proportion, a queue's deserved share is what the user wrote, not a water-filling
result, and the plugin registers no Overused: allocate never drops a capacity queue,
each task is checked by Allocatable against the queue's *capability* instead.
With ``enableHierarchy`` queues form a tree under ``root`` (``spec.parent``): allocations
roll up to the ancestors and a task must fit every ancestor's capability.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, ClassVar

from vspec.api.job_info import JobInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import INFINITY, ZERO, Resource, helpers_max, unguaranteed
from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT, REJECT, TaskStatus, allocated_status
from vspec.errors import EngineError, GoError
from vspec.framework.arguments import Arguments
from vspec.framework.interface import (
    ArgumentSpec,
    EnqueueRoom,
    Event,
    EventHandler,
    Plugin,
    QueueShares,
)
from vspec.framework.registry import register_plugin
from vspec.golang import go_float
from vspec.plugins._job_accounting import format_tasks, running_job_reservation, share

if TYPE_CHECKING:
    from vspec.framework.session import Session

ROOT_QUEUE = "root"
MAX_FLOAT = sys.float_info.max  # Go's math.MaxFloat64: "no limit" in a capability
NOT_READY = "Capacity plugin failed to check queue's hierarchical structure!"


class HierarchyError(GoError):
    """The queue tree is inconsistent; every capacity function then refuses."""


class QueueAttr:
    """One queue's quota state for the session (``queueAttr``)."""

    __slots__ = (
        "allocated",
        "ancestors",
        "capability",
        "children",
        "deserved",
        "elastic",
        "guarantee",
        "inqueue",
        "name",
        "queue_id",
        "real_capability",
        "request",
        "share",
    )

    def __init__(self, queue: QueueInfo, capability: Resource | None) -> None:
        spec = queue.queue
        self.queue_id = queue.uid
        self.name = queue.name
        self.share = 0.0
        self.ancestors: list[str] = []  # root first
        self.children: dict[str, QueueAttr] = {}
        self.deserved = Resource.from_list(spec.deserved)
        self.allocated = Resource()
        self.request = Resource()
        # The sum of the jobs' allocations beyond their minResources.
        self.elastic = Resource()
        # minResources of the jobs already admitted by enqueue but not yet allocated.
        self.inqueue = Resource()
        self.capability = capability
        # The limit a queue may really reach: capability, cut by the others' guarantees.
        self.real_capability: Resource | None = None
        self.guarantee = Resource.from_list(spec.guarantee) if spec.guarantee else Resource()

    def update_share(self) -> None:
        """The dominant share of allocated over deserved."""
        result = 0.0
        for name in self.deserved.resource_names():
            result = max(result, share(self.allocated.get(name), self.deserved.get(name)))
        self.share = result

    def add_job(self, job: JobInfo, *, exceeded: bool) -> None:
        """Account a job's tasks, admitted minResources and elastic part (``exceeded``:
        gate elastic_exceeded_part)."""
        for status, tasks in job.task_status_index.items():
            if allocated_status(status):
                for task in tasks.values():
                    self.allocated.add(task.resreq)
                    self.request.add(task.resreq)
            elif status is TaskStatus.Pending:
                for task in tasks.values():
                    self.request.add(task.resreq)
        pg = job.pod_group
        if pg is not None and pg.phase == "Inqueue":
            # Gated pods' resources are deducted so they do not block other jobs.
            self.inqueue.add(job.deduct_sch_gated_resources(job.min_resources()))
        reserved = running_job_reservation(job)
        if reserved is not None:
            self.inqueue.add(reserved)
        self.elastic.add(job.elastic_resources(exceeded=exceeded))

    def describe(self) -> str:
        return (
            f"The attributes of queue <{self.name}> in capacity: deserved <{self.deserved}>, "
            f"realCapability <{self.real_capability}>, allocate <{self.allocated}>, "
            f"request <{self.request}>, elastic <{self.elastic}>, share <{self.share:0.2f}>"
        )


def _compare_share(left: float, right: float) -> int:
    if left == right:
        return 0
    return -1 if left < right else 1


def queue_level(left: QueueAttr, right: QueueAttr) -> int:
    """``getQueueLevel``: the depth of the deepest common ancestor (0 is root)."""
    level = 0
    for i in range(min(len(left.ancestors), len(right.ancestors))):
        if left.ancestors[i] != right.ancestors[i]:
            return level
        level = i
    return level


@register_plugin
class CapacityPlugin(Plugin):
    """Queue quotas from spec.deserved/capability/guarantee; a queue tree with enableHierarchy."""

    name: ClassVar[str] = "capacity"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.total_resource = Resource()
        self.total_guarantee = Resource()
        self.queue_opts: dict[str, QueueAttr] = {}

    def queue_shares(self, queue_uid: str) -> QueueShares | None:
        attr = self.queue_opts.get(queue_uid)
        return None if attr is None else QueueShares.of(attr)

    def enqueue_room(self, job: JobInfo) -> EnqueueRoom | None:
        attr = self.queue_opts.get(job.queue)
        if attr is None or attr.real_capability is None:
            return None
        held = attr.allocated.clone().add(attr.inqueue).sub_without_assert(attr.elastic)
        where = f"queue {attr.name}: realCapability; held = allocated + inqueue - elastic"
        return EnqueueRoom(where, attr.real_capability.clone(), held)

    # -- session open ------------------------------------------------------------------
    def hierarchy_enabled(self, ssn: Session) -> bool:
        """``enableHierarchy``; v1.10.0's capacity had no hierarchy and ignored it (gate
        capacity_hierarchy, upstream a241d810b "add open hierarchical queues",
        29c8027d3, 751d450ba)."""
        return ssn.gates.capacity_hierarchy and ssn.plugin_enabled(self.name, "hierarchy")

    def on_session_open(self, ssn: Session) -> None:
        self.total_resource.add(ssn.total_resource)
        ssn.log.v(4, f"The total resource is <{self.total_resource}>")
        hierarchy = self.hierarchy_enabled(ssn)
        ready = True
        if hierarchy:
            ready = self._build_hierarchical_queue_attrs(ssn)
        else:
            self._build_queue_attrs(ssn)
        self._register(ssn, hierarchy=hierarchy, ready=ready)

    def on_session_close(self, ssn: Session) -> None:
        self.queue_opts = {}

    def _register(self, ssn: Session, *, hierarchy: bool, ready: bool) -> None:
        log = ssn.log
        opts = self.queue_opts

        def reclaimable(
            reclaimer: TaskInfo, reclaimees: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            victims: list[TaskInfo] = []
            if not ready:
                log.v(3, NOT_READY)
                return victims, REJECT
            allocations: dict[str, Resource] = {}
            for reclaimee in reclaimees:
                job = ssn.jobs[reclaimee.job]
                attr = opts[job.queue]
                allocated = allocations.get(job.queue)
                if allocated is None:
                    allocated = allocations[job.queue] = attr.allocated.clone()
                if allocated.less_partly(reclaimer.resreq, ZERO):
                    log.v(
                        3,
                        f"Failed to allocate resource for Task <{reclaimee.namespace}/"
                        f"{reclaimee.name}> in Queue <{job.queue}>, not enough resource.",
                    )
                    continue
                except_reclaimee = allocated.clone().sub(reclaimee.resreq)
                # A scalar missing from deserved (e.g. pods) counts as unlimited, so such a
                # queue is never reclaimed for it.
                if allocated.less_equal(attr.deserved, INFINITY) or not attr.guarantee.less_equal(
                    except_reclaimee, ZERO
                ):
                    continue
                allocated.sub(reclaimee.resreq)
                victims.append(reclaimee)
            if log.enabled(4):
                log.v(
                    4,
                    f"Victims from capacity plugin, victims={format_tasks(victims)} "
                    f"reclaimer={reclaimer}",
                )
            return victims, PERMIT

        def preemptive(queue: QueueInfo, task: TaskInfo) -> bool:
            if not ready:
                log.v(3, NOT_READY)
                return False
            attr = opts[queue.uid]
            future_used = attr.allocated.clone().add(task.resreq)
            overused = not future_used.less_equal_with_dimension(attr.deserved, task.resreq)
            if overused:
                log.v(
                    3,
                    f"Queue <{queue.name}> can not reclaim, deserved <{attr.deserved}>, "
                    f"allocated <{attr.allocated}>, share <{go_float(attr.share)}>",
                )
            # As long as one requested dimension is below deserved, the queue may reclaim.
            return not overused

        def queue_allocatable(queue: QueueInfo, task: TaskInfo) -> bool:
            attr = opts[queue.uid]
            real = attr.real_capability
            if real is None:
                raise EngineError(f"queue <{queue.name}> has no real capability (not under root)")
            future_used = attr.allocated.clone().add(task.resreq)
            fits = future_used.less_equal_with_dimension(real, task.resreq)
            if not fits:
                log.v(
                    3,
                    f"Queue <{queue.name}>: realCapability <{real}>, allocated "
                    f"<{attr.allocated}>; Candidate <{task.name}>: resource request "
                    f"<{task.resreq}>",
                )
            return fits

        def allocatable(queue: QueueInfo, task: TaskInfo) -> bool:
            if not ready:
                log.v(3, NOT_READY)
                return False
            if hierarchy and not self.is_leaf_queue(queue.uid):
                log.v(
                    3,
                    f"Queue <{queue.name}> is not a leaf queue, can not allocate task "
                    f"<{task.name}>.",
                )
                return False
            chain = [*opts[queue.uid].ancestors, queue.uid]
            for i in range(len(chain) - 1, -1, -1):
                if not queue_allocatable(ssn.queues[chain[i]], task):
                    if log.enabled(5):
                        # Volcano evaluates the remaining ancestors only for their log lines.
                        for j in range(i - 1, -1, -1):
                            queue_allocatable(ssn.queues[chain[j]], task)
                    return False
            return True

        def job_enqueueable(job: JobInfo) -> int:
            if not ready:
                log.v(3, NOT_READY)
                return REJECT
            if hierarchy and not self.is_leaf_queue(job.queue):
                return REJECT
            attr = opts[job.queue]
            queue = ssn.queues[job.queue]
            real = attr.real_capability
            if real is None:
                log.v(
                    4,
                    f"Capability of queue <{queue.name}> was not set, allow job "
                    f"<{job.namespace}/{job.name}> to Inqueue.",
                )
                return PERMIT
            if not job.has_min_resources():
                log.v(4, f"job {job.name} MinResources is null.")
                return PERMIT
            min_req = job.min_resources()
            log.v(
                5,
                f"job {job.name} min resource <{min_req}>, queue {queue.name} capability "
                f"<{real}> allocated <{attr.allocated}> inqueue <{attr.inqueue}> "
                f"elastic <{attr.elastic}>",
            )
            wanted = min_req.clone().add(attr.allocated).add(attr.inqueue).sub(attr.elastic)
            inqueue = wanted.less_equal_with_dimension(real, min_req)
            log.v(5, f"job {job.name} inqueue {str(inqueue).lower()}")
            if inqueue:
                attr.inqueue.add(job.deduct_sch_gated_resources(min_req))
                return PERMIT
            ssn.record_pod_group_event(
                job, "Normal", "Unschedulable", "queue resource quota insufficient"
            )
            return REJECT

        def on_allocate(event: Event) -> None:
            self._account(ssn, event.task, hierarchy=hierarchy, add=True)

        def on_deallocate(event: Event) -> None:
            self._account(ssn, event.task, hierarchy=hierarchy, add=False)

        ssn.add_reclaimable_fn(self.name, reclaimable)
        ssn.add_preemptive_fn(self.name, preemptive)
        ssn.add_allocatable_fn(self.name, allocatable)
        ssn.add_job_enqueueable_fn(self.name, job_enqueueable)
        ssn.add_event_handler(
            EventHandler(allocate_func=on_allocate, deallocate_func=on_deallocate)
        )

    def _account(self, ssn: Session, task: TaskInfo, *, hierarchy: bool, add: bool) -> None:
        """The event handlers: keep the queue's (and its ancestors') allocation current.

        Quirk kept: only the queue's own share is refreshed, not its ancestors'.
        """
        job = ssn.jobs[task.job]
        attr = self.queue_opts.get(job.queue)
        if attr is None:
            # Reached when building the hierarchy failed part-way (e.g. no root queue).
            raise EngineError(
                f"capacity has no attributes for queue <{job.queue}>: Volcano dereferences "
                "a nil queue attribute here and panics"
            )
        change = attr.allocated.add if add else attr.allocated.sub
        change(task.resreq)
        attr.update_share()
        if hierarchy:
            for ancestor in attr.ancestors:
                allocated = self.queue_opts[ancestor].allocated
                (allocated.add if add else allocated.sub)(task.resreq)
        ssn.log.v(
            4,
            f"Capacity {'AllocateFunc' if add else 'EvictFunc'}: task <{task.namespace}/"
            f"{task.name}>, resreq <{task.resreq}>,  share <{go_float(attr.share)}>",
        )

    def is_leaf_queue(self, queue_id: str) -> bool:
        return not self.queue_opts[queue_id].children

    # -- flat queues -------------------------------------------------------------------
    def _build_queue_attrs(self, ssn: Session) -> None:
        """``buildQueueAttrs``: attributes only for queues that hold a job of the session."""
        log = ssn.log
        for queue in ssn.queues.values():
            if queue.queue.guarantee:
                self.total_guarantee.add(Resource.from_list(queue.queue.guarantee))
        log.v(4, f"The total guarantee resource is <{self.total_guarantee}>")
        for job in ssn.jobs.values():
            log.v(4, f"Considering Job <{job.namespace}/{job.name}>.")
            attr = self.queue_opts.get(job.queue)
            if attr is None:
                attr = self._new_flat_attr(ssn, ssn.queues[job.queue])
                self.queue_opts[job.queue] = attr
                log.v(4, f"Added Queue <{job.queue}> attributes.")
            attr.add_job(job, exceeded=ssn.gates.elastic_exceeded_part)
            log.v(
                5,
                f"Queue {attr.name} allocated <{attr.allocated}> request <{attr.request}> "
                f"inqueue <{attr.inqueue}> elastic <{attr.elastic}>",
            )
        for attr in self.queue_opts.values():
            if attr.real_capability is not None:
                attr.deserved.min_dimension_resource(attr.real_capability, INFINITY)
            # A scalar deserved does not name (e.g. pods) stays unlimited: Infinity.
            attr.deserved.min_dimension_resource(attr.request, INFINITY)
            attr.deserved = helpers_max(attr.deserved, attr.guarantee)
            attr.update_share()
            log.v(4, attr.describe())

        def queue_order(left: QueueInfo, right: QueueInfo) -> int:
            lp, rp = left.queue.priority, right.queue.priority
            if lp != rp:
                return rp - lp  # higher priority first
            return _compare_share(self.queue_opts[left.uid].share, self.queue_opts[right.uid].share)

        ssn.add_queue_order_fn(self.name, queue_order)

    def _new_flat_attr(self, ssn: Session, queue: QueueInfo) -> QueueAttr:
        capability = None
        if queue.queue.capability:
            capability = Resource.from_list(queue.queue.capability)
            if capability.milli_cpu <= 0:
                capability.milli_cpu = MAX_FLOAT
            if capability.memory <= 0:
                capability.memory = MAX_FLOAT
        attr = QueueAttr(queue, capability)
        rest = unguaranteed(
            self.total_resource,
            self.total_guarantee,
            exceeded=ssn.gates.real_capability_exceeded_part,
        )
        real = rest.add(attr.guarantee)
        if capability is not None:
            real.min_dimension_resource(capability, INFINITY)
        attr.real_capability = real
        return attr

    # -- the queue tree ----------------------------------------------------------------
    def _build_hierarchical_queue_attrs(self, ssn: Session) -> bool:
        """``buildHierarchicalQueueAttrs``: false when the tree is inconsistent."""
        log = ssn.log
        for queue in ssn.queues.values():
            if queue.uid in self.queue_opts:
                continue
            self.queue_opts[queue.uid] = self._new_tree_attr(queue)
            try:
                self._update_ancestors(queue, ssn)
            except HierarchyError as err:
                log.error(f"Failed to update Queue <{queue.name}> attributes, error: {err}")
                return False

        for job in ssn.jobs.values():
            log.v(4, f"Considering Job <{job.namespace}/{job.name}>.")
            attr = self.queue_opts[job.queue]
            if attr.children:
                log.error(
                    f"The Queue <{attr.name}> of Job <{job.namespace}/{job.name}> is not leaf queue"
                )
                return False
            old = [r.clone() for r in (attr.allocated, attr.request, attr.inqueue, attr.elastic)]
            attr.add_job(job, exceeded=ssn.gates.elastic_exceeded_part)
            for ancestor_id in attr.ancestors:
                ancestor = self.queue_opts[ancestor_id]
                ancestor.allocated.add(attr.allocated.clone().sub(old[0]))
                ancestor.request.add(attr.request.clone().sub(old[1]))
                ancestor.inqueue.add(attr.inqueue.clone().sub(old[2]))
                ancestor.elastic.add(attr.elastic.clone().sub(old[3]))
            log.v(
                5,
                f"Queue {attr.name} allocated <{attr.allocated}> request <{attr.request}> "
                f"inqueue <{attr.inqueue}> elastic <{attr.elastic}>",
            )

        root = self.queue_opts.get(ROOT_QUEUE)
        if root is None:
            # Volcano dereferences a nil root attribute here.
            raise EngineError("capacity hierarchy needs a queue named root")
        # Quirk kept: root's capability, realCapability and deserved are one object.
        root.capability = self.total_resource
        root.real_capability = self.total_resource
        root.deserved = self.total_resource
        try:
            self._check_hierarchical_queue(root)
        except HierarchyError as err:
            log.error(f"Failed to check queue's hierarchical structure, error: {err}")
            return False
        log.v(4, "Successfully checked queue's hierarchical structure.")
        ssn.total_guarantee = self.total_guarantee
        for attr in self.queue_opts.values():
            attr.update_share()
            log.v(4, attr.describe())

        ssn.add_queue_order_fn(self.name, self._tree_queue_order)
        ssn.add_victim_queue_order_fn(self.name, self._victim_queue_order)
        return True

    def _tree_queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        """Priority, then leaves first, then the shares of the two queues' branches
        just below their deepest common ancestor."""
        lp, rp = left.queue.priority, right.queue.priority
        if lp != rp:
            return rp - lp
        opts = self.queue_opts
        left_leaf, right_leaf = self.is_leaf_queue(left.uid), self.is_leaf_queue(right.uid)
        if left_leaf != right_leaf:
            return -1 if left_leaf else 1
        if not left_leaf:
            return _compare_share(opts[left.uid].share, opts[right.uid].share)
        la, ra = opts[left.uid], opts[right.uid]
        level = queue_level(la, ra)
        lid = la.ancestors[level + 1] if level + 1 < len(la.ancestors) else la.queue_id
        rid = ra.ancestors[level + 1] if level + 1 < len(ra.ancestors) else ra.queue_id
        return _compare_share(opts[lid].share, opts[rid].share)

    def _victim_queue_order(self, left: QueueInfo, right: QueueInfo, preemptor: QueueInfo) -> int:
        """Victims first from the queue closest to the preemptor's in the tree."""
        opts = self.queue_opts
        left_level = queue_level(opts[left.uid], opts[preemptor.uid])
        right_level = queue_level(opts[right.uid], opts[preemptor.uid])
        if left_level == right_level:
            return 0
        return -1 if left_level > right_level else 1

    @staticmethod
    def _new_tree_attr(queue: QueueInfo) -> QueueAttr:
        spec = queue.queue
        capability = Resource.from_list(spec.capability) if spec.capability else Resource()
        return QueueAttr(queue, capability)

    def _update_ancestors(self, queue: QueueInfo, ssn: Session) -> None:
        if queue.name == ROOT_QUEUE:
            return
        parent_name = queue.queue.parent or ROOT_QUEUE
        parent = ssn.queues.get(parent_name)
        if parent is None:
            raise HierarchyError(f"the queue {queue.name} has invalid parent queue {parent_name}")
        if parent.uid not in self.queue_opts:
            self.queue_opts[parent.uid] = self._new_tree_attr(parent)
            self._update_ancestors(parent, ssn)
        parent_attr = self.queue_opts[parent.uid]
        parent_attr.children[queue.uid] = self.queue_opts[queue.uid]
        self.queue_opts[queue.uid].ancestors = [*parent_attr.ancestors, parent.uid]

    def _check_hierarchical_queue(self, attr: QueueAttr) -> None:
        """Derive the children's real capability and deserved, top down, and check that
        no child asks for more than its parent can give."""
        capability = attr.capability
        assert capability is not None  # every tree attribute has one
        total_guarantee = Resource()
        total_deserved = Resource()
        for child in attr.children.values():
            total_deserved.add(child.deserved)
            total_guarantee.add(child.guarantee)
            child_capability = child.capability
            assert child_capability is not None
            # Unset cpu or memory capability is inherited from the parent.
            if child_capability.milli_cpu <= 0:
                child_capability.milli_cpu = capability.milli_cpu
            if child_capability.memory <= 0:
                child_capability.memory = capability.memory
            if capability.less_partly(child_capability, ZERO):
                raise HierarchyError(
                    f"queue <{attr.name}> capability is less than its child queue <{child.name}>"
                )
        if attr.name == ROOT_QUEUE:
            attr.guarantee = total_guarantee
            self.total_guarantee = total_guarantee
        parent_real = attr.real_capability
        assert parent_real is not None  # set by the parent's check, or root's own
        for child in attr.children.values():
            real = parent_real.clone().sub(total_guarantee).add(child.guarantee)
            assert child.capability is not None
            real.min_dimension_resource(child.capability, INFINITY)
            child.real_capability = real
            old_deserved = child.deserved.clone()
            child.deserved.min_dimension_resource(real, INFINITY)
            child.deserved.min_dimension_resource(child.request, ZERO)
            child.deserved = helpers_max(child.deserved, child.guarantee)
            total_deserved.sub(old_deserved).add(child.deserved)
        if attr.deserved.less_partly(total_deserved, ZERO):
            raise HierarchyError(
                f"deserved resources of queue <{attr.name}> are less than the sum of its "
                "child queues' deserved resources"
            )
        if attr.guarantee.less_partly(total_guarantee, ZERO):
            raise HierarchyError(
                f"guarantee resources of queue <{attr.name}> are less than the sum of its "
                "child queues' guarantee resources"
            )
        for child in attr.children.values():
            self._check_hierarchical_queue(child)
