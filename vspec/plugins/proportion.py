"""proportion: share the cluster between queues by weight (``plugins/proportion/proportion.go``).

Each queue that has jobs in the session deserves a part of the cluster computed by
weighted water-filling, capped by what it requests and by its real capability and
raised to its guarantee. A queue's ``spec.deserved`` is ignored (capacity reads it).
"""

from __future__ import annotations

import sys
from collections.abc import Set
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from vspec.api.job_info import JobInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import INFINITY, ZERO, Resource, helpers_max, unguaranteed
from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT, REJECT, TaskStatus, allocated_status
from vspec.framework.arguments import Arguments
from vspec.framework.interface import (
    ArgumentSpec,
    EnqueueRoom,
    Event,
    EventHandler,
    Plugin,
    QueueShares,
)
from vspec.framework.log import Klog
from vspec.framework.registry import register_plugin
from vspec.golang import go_float
from vspec.plugins._job_accounting import (
    dominant_share,
    format_tasks,
    running_job_reservation,
)

if TYPE_CHECKING:
    from vspec.framework.cache import JobFeed
    from vspec.framework.session import Session

QUOTA_INSUFFICIENT = "queue resource quota insufficient"


class QueueAttr:
    """One queue's proportion state for the session (``queueAttr``)."""

    __slots__ = (
        "allocated",
        "capability",
        "deserved",
        "elastic",
        "guarantee",
        "inqueue",
        "name",
        "queue_id",
        "real_capability",
        "request",
        "share",
        "weight",
    )

    def __init__(
        self, queue: QueueInfo, total: Resource, total_guarantee: Resource, *, exceeded: bool
    ) -> None:
        spec = queue.queue
        self.queue_id = queue.uid
        self.name = queue.name
        self.weight = queue.weight
        self.share = 0.0
        self.deserved = Resource()
        self.allocated = Resource()
        self.request = Resource()
        self.elastic = Resource()
        self.inqueue = Resource()
        self.guarantee = Resource.from_list(spec.guarantee) if spec.guarantee else Resource()
        self.capability: Resource | None = None
        if spec.capability:
            capability = Resource.from_list(spec.capability)
            # A capability without cpu or memory leaves that dimension unlimited.
            if capability.milli_cpu <= 0:
                capability.milli_cpu = sys.float_info.max
            if capability.memory <= 0:
                capability.memory = sys.float_info.max
            self.capability = capability
        real = unguaranteed(total, total_guarantee, exceeded=exceeded).add(self.guarantee)
        if self.capability is not None:
            real.min_dimension_resource(self.capability, INFINITY)
        self.real_capability = real

    def update_share(self) -> None:
        """Share: the largest fraction of the deserved amount the queue holds."""
        self.share = dominant_share(self.allocated, self.deserved)[1]


class _TaskSums(NamedTuple):
    """A job's tasks summed as ``_account_job`` adds them into its queue: those of an
    allocated status, and those together with the pending ones, in the index's order."""

    allocated: Resource
    request: Resource
    whole: bool  # every quantity summed a whole number (of bytes, millicores...)
    version: int  # the job's JobInfo.version when summed


# Whole numbers of float64 add exactly, in any order and grouping, while every partial
# sum stays below this (2**53: from it on not every whole number is a float64).
_EXACT_BOUND = float(2**53)
_EXACT_SUM = 2**53  # the same bound on QueueSums' integer sums


class _KeptElastic(NamedTuple):
    exceeded: bool  # the gate it was worked out under
    version: int  # the job's JobInfo.version then
    elastic: Resource


@register_plugin
class ProportionPlugin(Plugin):
    """Weighted fair share between queues, bounded by capability and guarantee."""

    name: ClassVar[str] = "proportion"
    carries_jobs: ClassVar[bool] = True
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.total_resource = Resource()
        self.total_guarantee = Resource()
        self.queue_opts: dict[str, QueueAttr] = {}

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log
        self.total_resource.add(ssn.total_resource)
        log.infof(4, "The total resource is <{}>", self.total_resource.values())
        for queue in ssn.queues.values():
            if queue.queue.guarantee:
                self.total_guarantee.add(Resource.from_list(queue.queue.guarantee))
        log.infof(4, "The total guarantee resource is <{}>", self.total_guarantee.values())
        sums = self._kept_sums(ssn)
        if sums is not None:
            self._take_sums(ssn, sums)
        else:
            by_job = self._exact_sums(ssn)
            for job in ssn.jobs.values():
                self._account_job(ssn, job, None if by_job is None else by_job[job.uid])
        self._compute_deserved(log)
        self._register(ssn)

    def queue_shares(self, queue_uid: str) -> QueueShares | None:
        attr = self.queue_opts.get(queue_uid)
        return None if attr is None else QueueShares.of(attr)

    def enqueue_room(self, job: JobInfo) -> EnqueueRoom | None:
        attr = self.queue_opts.get(job.queue)
        if attr is None:
            return None
        held = attr.allocated.clone().add(attr.inqueue).sub_without_assert(attr.elastic)
        where = f"queue {attr.name}: realCapability; held = allocated + inqueue - elastic"
        return EnqueueRoom(where, attr.real_capability.clone(), held)

    # -- attributes --------------------------------------------------------------------------
    @staticmethod
    def _kept_sums(ssn: Session) -> QueueSums | None:
        """The queue sums kept from the last session, brought up to this one, when they
        are what the job-by-job accounting gives (:meth:`QueueSums.update`); None where
        that accounting runs: jobs are not carried (a fresh clone of each, nothing to
        keep), or its V(4) and V(5) lines are kept (they are logged job by job)."""
        if not ssn.cache.carries_jobs or ssn.log.enabled(4):
            return None
        sums = ssn.state.memo(QueueSums)
        exceeded = ssn.gates.elastic_exceeded_part
        return sums if sums.update(ssn.jobs, ssn.job_feed, exceeded) else None

    def _take_sums(self, ssn: Session, sums: QueueSums) -> None:
        """The attributes the job-by-job accounting makes, from the kept sums: one per
        queue with a job in the session, made in the order of each queue's first job."""
        wanted = {queue for queue, count in sums.jobs_in.items() if count}
        for job in ssn.jobs.values():
            if not wanted:
                break
            if job.queue not in wanted:
                continue
            wanted.discard(job.queue)
            attr = QueueAttr(
                ssn.queues[job.queue],
                self.total_resource,
                self.total_guarantee,
                exceeded=ssn.gates.real_capability_exceeded_part,
            )
            sums.fill(job.queue, attr)
            self.queue_opts[job.queue] = attr

    def _exact_sums(self, ssn: Session) -> dict[str, _TaskSums] | None:
        """Each job's task sums, when adding them to the queues job by job gives exactly
        what Volcano's task by task gives: every quantity a whole number (as Kubernetes
        quantities read as milli-units and bytes are) and every sum within
        ``_EXACT_BOUND``, so that no addition rounds; else None (add task by task). A job
        carried from the last session (``JobInfo.derived``) keeps its sums."""
        by_job: dict[str, _TaskSums] = {}
        bound = Resource()
        for job in ssn.jobs.values():
            sums = _task_sums(job)
            if not sums.whole:
                return None
            bound.add(sums.request)
            by_job[job.uid] = sums
        if bound.milli_cpu >= _EXACT_BOUND or bound.memory >= _EXACT_BOUND:
            return None
        if any(q >= _EXACT_BOUND for q in bound.scalars.values()):
            return None
        return by_job

    def _account_job(self, ssn: Session, job: JobInfo, sums: _TaskSums | None) -> None:
        """Only queues with at least one job in the session get an attribute."""
        log = ssn.log
        verbose = log.enabled(4)  # klog.V(4): formatted only when kept (once per job)
        if verbose:
            log.v(4, f"Considering Job <{job.namespace}/{job.name}>.")
        attr = self.queue_opts.get(job.queue)
        if attr is None:
            attr = QueueAttr(
                ssn.queues[job.queue],
                self.total_resource,
                self.total_guarantee,
                exceeded=ssn.gates.real_capability_exceeded_part,
            )
            self.queue_opts[job.queue] = attr
            if verbose:
                log.v(4, f"Added Queue <{job.queue}> attributes.")
        if sums is not None:
            attr.allocated.add(sums.allocated)
            attr.request.add(sums.request)
        else:
            _add_tasks(job, attr.allocated, attr.request)
        held = _inqueue(job)
        if held is not None:
            attr.inqueue.add(held)
        attr.elastic.add(_elastic(job, ssn.gates.elastic_exceeded_part))
        if log.enabled(5):
            log.v(
                5,
                f"Queue {attr.name} allocated <{attr.allocated}> request <{attr.request}> "
                f"inqueue <{attr.inqueue}> elastic <{attr.elastic}>",
            )

    def _compute_deserved(self, log: Klog) -> None:
        """Weighted water-filling of the cluster total over the unmet queues."""
        remaining = self.total_resource.clone()
        met: set[str] = set()
        while True:
            total_weight = sum(
                attr.weight for attr in self.queue_opts.values() if attr.queue_id not in met
            )
            if total_weight == 0:
                log.v(4, "Exiting when total weight is 0")
                break
            old_remaining = remaining.clone()
            increased_total, decreased_total = Resource(), Resource()
            for attr in self.queue_opts.values():
                if log.enabled(4):
                    log.v(
                        4,
                        f"Considering Queue <{attr.name}>: weight <{attr.weight}>, "
                        f"total weight <{total_weight}>.",
                    )
                if attr.queue_id in met:
                    continue
                increased, decreased = self._fill(attr, remaining, total_weight, met, log)
                increased_total.add(increased)
                decreased_total.add(decreased)
            remaining.sub(increased_total).add(decreased_total)
            log.infof(4, "Remaining resource is  <{}>", remaining.values())
            if remaining.is_empty() or remaining == old_remaining:
                log.infof(
                    4,
                    "Exiting when remaining is empty or no queue has more resource request:  <{}>",
                    remaining.values(),
                )
                break

    @staticmethod
    def _fill(
        attr: QueueAttr, remaining: Resource, total_weight: int, met: set[str], log: Klog
    ) -> tuple[Resource, Resource]:
        """One queue's turn of a water-filling round: how much its deserved rose and fell."""
        old_deserved = attr.deserved.clone()
        attr.deserved.add(remaining.clone().multi(attr.weight / total_weight))
        attr.deserved.min_dimension_resource(attr.real_capability, INFINITY)
        attr.deserved.min_dimension_resource(attr.request, ZERO)
        attr.deserved = helpers_max(attr.deserved, attr.guarantee)
        attr.update_share()
        verbose = log.enabled(4)
        if verbose:
            log.v(4, f"Format queue <{attr.name}> deserved resource to <{attr.deserved}>")
        if attr.request.less_equal(attr.deserved, ZERO):
            met.add(attr.queue_id)
            log.v(4, f"queue <{attr.name}> is meet")
        elif attr.deserved == old_deserved:
            met.add(attr.queue_id)
            log.v(4, f"queue <{attr.name}> is meet cause of the capability")
        if verbose:
            log.v(
                4,
                f"The attributes of queue <{attr.name}> in proportion: deserved "
                f"<{attr.deserved}>, realCapability <{attr.real_capability}>, allocate "
                f"<{attr.allocated}>, request <{attr.request}>, elastic <{attr.elastic}>, "
                f"share <{attr.share:0.2f}>",
            )
        return attr.deserved.diff(old_deserved, ZERO)

    # -- session functions --------------------------------------------------------------------
    def _register(self, ssn: Session) -> None:
        ssn.add_queue_order_fn(self.name, self.queue_order, own_state=True)
        ssn.add_reclaimable_fn(self.name, lambda r, cs: self.reclaimable(ssn, r, cs))
        ssn.add_overused_fn(self.name, lambda q: self.overused(ssn, q), own_state=True)
        ssn.add_allocatable_fn(self.name, lambda q, t: self.allocatable(ssn, q, t))
        if ssn.gates.reclaim_preemptive_only:  # v1.10.0 had none (upstream 61f9c9d62)
            ssn.add_preemptive_fn(self.name, lambda q, t: self.allocatable(ssn, q, t))
        ssn.add_job_enqueueable_fn(self.name, lambda j: self.job_enqueueable(ssn, j))
        # partial, not a lambda: no Python frame of its own on every (de)allocation.
        ssn.add_event_handler(
            EventHandler(
                allocate_func=partial(self.on_event, ssn, allocate=True),
                deallocate_func=partial(self.on_event, ssn, allocate=False),
            )
        )

    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        """Higher ``spec.priority`` first, then the smaller share."""
        lp, rp = left.queue.priority, right.queue.priority
        if lp != rp:
            return rp - lp
        lshare, rshare = self.queue_opts[left.uid].share, self.queue_opts[right.uid].share
        if lshare == rshare:
            return 0
        return -1 if lshare < rshare else 1

    def reclaimable(
        self, ssn: Session, reclaimer: TaskInfo, reclaimees: list[TaskInfo]
    ) -> tuple[list[TaskInfo], int]:
        """Take from a queue only while its (running) allocation exceeds its deserved."""
        victims: list[TaskInfo] = []
        allocations: dict[str, Resource] = {}
        for reclaimee in reclaimees:
            job = ssn.jobs[reclaimee.job]
            attr = self.queue_opts[job.queue]
            if job.queue not in allocations:
                allocations[job.queue] = attr.allocated.clone()
            allocated = allocations[job.queue]
            if allocated.less_partly(reclaimer.resreq, ZERO):
                ssn.log.v(
                    3,
                    f"Failed to allocate resource for Task <{reclaimee.namespace}/"
                    f"{reclaimee.name}> in Queue <{job.queue}>, not enough resource.",
                )
                continue
            if not allocated.less_equal(attr.deserved, ZERO):
                allocated.sub(reclaimee.resreq)
                victims.append(reclaimee)
        if ssn.log.enabled(4):
            ssn.log.v(4, f"Victims from proportion plugins are {format_tasks(victims)}")
        return victims, PERMIT

    def overused(self, ssn: Session, queue: QueueInfo) -> bool:
        """Deserved <= allocated in every dimension: a queue deserving nothing is overused."""
        attr = self.queue_opts[queue.uid]
        overused = attr.deserved.less_equal(attr.allocated, ZERO)
        if overused:
            ssn.log.infof(
                3,
                "Queue <{}>: deserved <{}>, allocated <{}>, share <{}>",
                queue.name,
                attr.deserved.values(),
                attr.allocated.values(),
                go_float(attr.share),
            )
        return overused

    def allocatable(self, ssn: Session, queue: QueueInfo, candidate: TaskInfo) -> bool:
        """The task fits the queue's deserved on the dimensions it requests."""
        attr = self.queue_opts[queue.uid]
        future_used = attr.allocated.clone().add(candidate.resreq)
        allocatable = future_used.less_equal_with_dimension(attr.deserved, candidate.resreq)
        if not allocatable:
            ssn.log.infof(
                3,
                "Queue <{}>: deserved <{}>, allocated <{}>; Candidate <{}>: resource request <{}>",
                queue.name,
                attr.deserved.values(),
                attr.allocated.values(),
                candidate.name,
                candidate.resreq.values(),
            )
        return allocatable

    def job_enqueueable(self, ssn: Session, job: JobInfo) -> int:
        """minResources plus what the queue holds and has admitted fits its real capability.

        Volcano's "capability not set" branch is unreachable (realCapability is always
        computed) and is left out.
        """
        log = ssn.log
        attr = self.queue_opts[job.queue]
        if not job.has_min_resources():
            log.v(4, f"job {job.name} MinResources is null.")
            return PERMIT
        min_req = job.min_resources()
        log.v(
            5,
            f"job {job.name} min resource <{min_req}>, queue {job.queue} capability "
            f"<{attr.real_capability}> allocated <{attr.allocated}> inqueue <{attr.inqueue}> "
            f"elastic <{attr.elastic}>",
        )
        wanted = min_req.clone().add(attr.allocated).add(attr.inqueue).sub(attr.elastic)
        inqueue = wanted.less_equal_with_dimension(attr.real_capability, min_req)
        log.v(5, f"job {job.name} inqueue {str(inqueue).lower()}")
        if inqueue:
            # Gated pods' requests are not reserved, so they do not block other jobs.
            attr.inqueue.add(job.deduct_sch_gated_resources(min_req))
            return PERMIT
        ssn.record_pod_group_event(job, "Normal", "Unschedulable", QUOTA_INSUFFICIENT)
        return REJECT

    def on_event(self, ssn: Session, event: Event, *, allocate: bool) -> None:
        task = event.task
        attr = self.queue_opts[ssn.jobs[task.job].queue]
        if allocate:
            attr.allocated.add(task.resreq)
        else:
            attr.allocated.sub(task.resreq)
        attr.update_share()
        if ssn.log.enabled(4):
            kind = "AllocateFunc" if allocate else "EvictFunc"
            ssn.log.v(
                4,
                f"Proportion {kind}: task <{task.namespace}/{task.name}>, resreq <{task.resreq}>,  "
                f"share <{go_float(attr.share)}>",
            )


_SUMS = "proportion task sums"  # the key of a job's _TaskSums in JobInfo.derived
_ELASTIC = "proportion elastic"  # and of its _KeptElastic


def _elastic(job: JobInfo, exceeded: bool) -> Resource:
    """``job.elastic_resources``, worked out from the job's allocation and its pod
    group's minResources: a job carried from the last session (``JobInfo.derived``)
    has both as they were, so what was worked out then is what it gives now. Only
    read (added to the queue's elastic), never changed."""
    kept = job.derived.get(_ELASTIC)
    if isinstance(kept, _KeptElastic) and (kept.exceeded, kept.version) == (exceeded, job.version):
        return kept.elastic
    elastic = job.elastic_resources(exceeded=exceeded)
    job.derived[_ELASTIC] = _KeptElastic(exceeded, job.version, elastic)
    return elastic


def _inqueue(job: JobInfo) -> Resource | None:
    """What the job adds to its queue's inqueue: minResources while its pod group is
    Inqueue, or what a Running one still reserves (the phases exclude each other)."""
    assert job.pod_group is not None  # the snapshot drops jobs without one
    if job.pod_group.phase == "Inqueue":
        return job.deduct_sch_gated_resources(job.min_resources())
    return running_job_reservation(job)


class _Part(NamedTuple):
    """A resource as whole numbers, its scalars in their order."""

    milli_cpu: int
    memory: int
    scalars: tuple[tuple[str, int], ...]


_NOTHING = _Part(0, 0, ())


def _part(res: Resource) -> _Part | None:
    """None when a quantity is not a whole number >= 0 (nan and inf included)."""
    values = (res.milli_cpu, res.memory, *res.scalars.values())
    # C loops, no generator frame: three parts a changed job, every session. Only once
    # all are whole (no nan) is min() the least.
    if not all(map(float.is_integer, values)) or min(values) < 0:
        return None
    scalars = tuple((name, int(q)) for name, q in res.scalars.items())
    return _Part(int(res.milli_cpu), int(res.memory), scalars)


class _Parts(NamedTuple):
    """A job's part of each of its queue's sums."""

    allocated: _Part
    request: _Part
    inqueue: _Part
    elastic: _Part


def _parts(job: JobInfo, exceeded: bool) -> _Parts | None:
    """The job's parts, or None when a quantity in one is not a whole number >= 0
    (then only the job-by-job accounting gives Volcano's sums)."""
    sums = _task_sums(job)
    if not sums.whole:
        return None
    held = _inqueue(job)
    parts = (
        _part(sums.allocated),
        _part(sums.request),
        _NOTHING if held is None else _part(held),
        _part(_elastic(job, exceeded)),
    )
    if None in parts:
        return None
    return _Parts(*parts)  # type: ignore[arg-type]


class _Sum:
    """One of a queue's sums, over the jobs' parts, with what says whether it is the
    float64 sum Volcano's order gives and which scalars it holds in which order."""

    __slots__ = ("_names", "_reshaped", "memory", "milli_cpu", "named", "scalars", "shapes")

    def __init__(self) -> None:
        self.milli_cpu = 0
        self.memory = 0
        self.scalars: dict[str, int] = {}
        self.named: dict[str, int] = {}  # scalar name -> parts that hold it
        # The parts' scalar names (when any) -> parts with them: a sum holds a name from
        # the first part that has it on, in that part's order.
        self.shapes: dict[tuple[str, ...], int] = {}
        self._names: tuple[str, ...] | None = ()  # names() while the shapes stay
        self._reshaped = False  # a shape came or went since

    def count(self, part: _Part, sign: int) -> None:
        self.milli_cpu += sign * part.milli_cpu
        self.memory += sign * part.memory
        if not part.scalars:
            return
        scalars, named = self.scalars, self.named
        for name, q in part.scalars:
            scalars[name] = scalars.get(name, 0) + sign * q
            named[name] = named.get(name, 0) + sign
            if not named[name]:
                del named[name], scalars[name]
        shape = tuple(map(itemgetter(0), part.scalars))
        left = self.shapes[shape] = self.shapes.get(shape, 0) + sign
        if not left:
            del self.shapes[shape]
        if left in (0, 1):
            self._reshaped = True

    def names(self) -> tuple[str, ...] | None:
        """The scalar names of the float64 sum in Volcano's order, whatever the jobs'
        order: when every part's names begin the longest part's, the sum has that
        one's. None when it depends on the order."""
        if self._reshaped:
            longest = max(self.shapes, key=len, default=())
            fits = all(longest[: len(shape)] == shape for shape in self.shapes)
            self._names = longest if fits else None
            self._reshaped = False
        return self._names

    def exact(self) -> bool:
        """No partial sum of Volcano's order rounds: all below 2**53 (the parts being
        whole numbers >= 0, every partial sum is at most the whole)."""
        return max(self.milli_cpu, self.memory, *self.scalars.values()) < _EXACT_SUM

    def resource(self) -> Resource:
        names = self.names()
        assert names is not None
        scalars = {name: float(self.scalars[name]) for name in names}
        return Resource(float(self.milli_cpu), float(self.memory), scalars)


class _QueueSum(NamedTuple):
    allocated: _Sum
    request: _Sum
    inqueue: _Sum
    elastic: _Sum


@dataclass(slots=True)
class _Counted:
    """A job's parts as the sums hold them, and what they were worked out from."""

    job: JobInfo  # the session's clone (held, so no other object takes its id)
    version: int  # its JobInfo.version then: its tasks and their statuses
    phase: str  # its pod group's phase then (enqueue changes it and no task)
    queue: str
    parts: _Parts | None  # None: not summable here (_parts)


class QueueSums:
    """Proportion's per-queue sums kept from session to session (in the scheduler's
    :meth:`~vspec.framework.session.SchedulerState.memo`), so that a session pays for
    the jobs that changed since the last one instead of summing every job.

    A job's parts are kept with the clone they came from; the next session that holds
    the very same clone (a carried job, vspec.framework.cache) at the same
    ``JobInfo.version`` and pod group phase has them unchanged: its tasks, their
    statuses, its allocation and its pod group's spec are the same (the job contract).
    Any other job's old parts are taken out and its new parts put in.

    The sums are Python integers, exact in any order. Volcano adds float64s job by job
    (task by task); with every quantity a whole number >= 0 and every sum below 2**53,
    no partial sum of that order rounds, so its result is the integer sum. Otherwise
    (or where the order of a sum's scalar names depends on the jobs' order)
    :meth:`update` says no and the job-by-job accounting runs, the parts kept up to
    date all the same.
    """

    __slots__ = (
        "_counted",
        "_exceeded",
        "_fine",
        "_inexact",
        "_mark",
        "_sums",
        "_touched",
        "jobs_in",
    )

    def __init__(self) -> None:
        self._exceeded: bool | None = None  # the elastic gate the parts were worked out under
        self._counted: dict[str, _Counted] = {}
        self._sums: dict[str, _QueueSum] = {}
        self.jobs_in: dict[str, int] = {}  # queue -> its jobs in the sums
        self._inexact = 0  # jobs whose parts are None
        # Whether each queue's sums are Volcano's, checked again for those counted in.
        self._fine: dict[str, bool] = {}
        self._touched: set[str] = set()
        # The feed mark of the session the sums were last brought to (JobFeed).
        self._mark: object | None = None

    def update(self, jobs: dict[str, JobInfo], feed: JobFeed, exceeded: bool) -> bool:
        """Bring the sums to ``jobs``; whether they are the job-by-job accounting's.

        When the snapshot's feed follows the last update's, only the jobs it names are
        read: every other job is the clone of then, at the version it was handed out
        with and with the pod group status it opened with then (SchedulerCache's
        "Carried jobs" and "The job feed"), which its parts were worked out at. Else
        every job is checked against the clone, version and phase its parts came from."""
        if exceeded is not self._exceeded:
            self._counted, self._sums, self.jobs_in, self._inexact = {}, {}, {}, 0
            self._fine, self._mark = {}, None
            self._exceeded = exceeded
        counted = self._counted
        examine: Set[str]
        if feed.follows(self._mark):
            examine = feed.changed | feed.gone
        else:
            examine = jobs.keys() | counted.keys()
        for uid in sorted(examine):  # the sums are exact in any order; sorted for a fixed one
            kept = counted.get(uid)
            job = jobs.get(uid)
            if job is None:
                if kept is not None:
                    self._count(counted.pop(uid), -1)
                continue
            pg = job.pod_group
            assert pg is not None  # the snapshot drops jobs without one
            if (
                kept is not None
                and kept.job is job
                and kept.version == job.version
                and kept.phase == pg.phase
            ):
                continue
            if kept is not None:
                self._count(kept, -1)
            kept = counted[uid] = _Counted(
                job, job.version, pg.phase, job.queue, _parts(job, exceeded)
            )
            self._count(kept, 1)
        self._mark = feed.mark
        for queue in self._touched:
            self._fine[queue] = all(
                one.exact() and one.names() is not None for one in self._sums[queue]
            )
        self._touched.clear()
        return not self._inexact and all(self._fine.values())

    def _count(self, kept: _Counted, sign: int) -> None:
        self.jobs_in[kept.queue] = self.jobs_in.get(kept.queue, 0) + sign
        if kept.parts is None:
            self._inexact += sign
            return
        sums = self._sums.get(kept.queue)
        if sums is None:
            sums = self._sums[kept.queue] = _QueueSum(_Sum(), _Sum(), _Sum(), _Sum())
        self._touched.add(kept.queue)
        for one, part in zip(sums, kept.parts, strict=True):
            one.count(part, sign)

    def fill(self, queue: str, attr: QueueAttr) -> None:
        """Set the queue's allocated, request, inqueue and elastic from the sums."""
        sums = self._sums[queue]
        attr.allocated = sums.allocated.resource()
        attr.request = sums.request.resource()
        attr.inqueue = sums.inqueue.resource()
        attr.elastic = sums.elastic.resource()


def _add_tasks(job: JobInfo, allocated: Resource, request: Resource) -> None:
    """Add the job's tasks as Volcano does: each of an allocated status to both, each
    pending one to ``request``."""
    for status, tasks in job.task_status_index.items():
        if allocated_status(status):
            for task in tasks.values():
                allocated.add(task.resreq)
                request.add(task.resreq)
        elif status is TaskStatus.Pending:
            for task in tasks.values():
                request.add(task.resreq)


def _task_sums(job: JobInfo) -> _TaskSums:
    """The sums, and whether every quantity added to them is a whole number: kept in
    ``JobInfo.derived`` while the job's tasks are as they were (a carried job's are)."""
    kept = job.derived.get(_SUMS)
    if isinstance(kept, _TaskSums) and kept.version == job.version:
        return kept
    allocated, request = Resource(), Resource()
    _add_tasks(job, allocated, request)
    sums = job.derived[_SUMS] = _TaskSums(allocated, request, _whole(job), job.version)
    return sums


def _whole(job: JobInfo) -> bool:
    """Whether every quantity :func:`_add_tasks` adds is a whole number: loops rather
    than generators (a frame resumed per task and per scalar), for every changed job."""
    for status, bucket in job.task_status_index.items():
        if not (allocated_status(status) or status is TaskStatus.Pending):
            continue
        for task in bucket.values():
            res = task.resreq
            if not (
                res.milli_cpu.is_integer()
                and res.memory.is_integer()
                and all(map(float.is_integer, res.scalars.values()))
            ):
                return False
    return True
