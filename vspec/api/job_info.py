"""``JobInfo``: a pod group and its tasks (``api/job_info.go``).

Go keeps ``TaskStatusIndex`` as maps whose iteration order is random; here every map
keeps insertion order, so "the first task with a fit error" is deterministic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import NamedTuple

from vspec.api.resource import ZERO, Resource, exceeded_part
from vspec.api.task_info import PREEMPTABLE_KEY, REVOCABLE_ZONE_KEY, TaskInfo, parse_go_bool
from vspec.api.types import ALLOCATED_STATUSES, TaskStatus, allocated_status
from vspec.api.unschedule_info import FitErrors, histogram
from vspec.golang import parse_duration
from vspec.model.corev1 import Condition
from vspec.model.objects import ZERO_TIME, PodGroup, shallow_copy

SLA_WAITING_TIME_KEYS = ("volcano.sh/sla-waiting-time", "sla-waiting-time")
JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
POD_GROUP_NOT_READY = "pod group is not ready"
# The statuses ReadyTaskNum counts.
_READY = frozenset(
    {
        TaskStatus.Bound,
        TaskStatus.Binding,
        TaskStatus.Running,
        TaskStatus.Allocated,
        TaskStatus.Succeeded,
    }
)

# The statuses ValidTaskNum counts besides the allocated ones.
_VALID_UNALLOCATED = frozenset({TaskStatus.Succeeded, TaskStatus.Pipelined, TaskStatus.Pending})


class StatusCounts(NamedTuple):
    """What gang's ``JobValid`` and the job updater count of a job's tasks at every
    session, at the job's ``version`` (see :meth:`JobInfo.status_counts`)."""

    version: int
    running: int
    succeeded: int
    failed: int
    allocated: int  # in the statuses allocated_status names
    valid: int  # ValidTaskNum


def same_spec(old: PodGroup, new: PodGroup) -> bool:
    """Whether ``new`` holds all that ``SetPodGroup`` reads of ``old`` but its status."""
    return (
        new.meta is old.meta
        and new.min_member == old.min_member
        and new.queue == old.queue
        and new.min_task_member == old.min_task_member
    )


class JobInfo:
    """Per-session job state; ``pod_group`` is this session's copy of the PodGroup."""

    def __init__(self, uid: str, pod_group: PodGroup | None = None) -> None:
        self.uid = uid
        self.pg_uid = ""
        self.name = ""
        self.namespace = ""
        self.queue = ""
        self.priority = 0
        self.min_available = 0
        self.waiting_time: timedelta | None = None
        self.job_fit_errors = ""
        self.nodes_fit_errors: dict[str, FitErrors] = {}
        self.task_status_index: dict[TaskStatus, dict[str, TaskInfo]] = {}
        # Best-effort tasks in the Pending bucket of the index: gang's JobOrderFn asks
        # is_ready at every comparison of allocate's job queues.
        self.pending_best_effort = 0
        # Tasks in the index's buckets of the statuses ReadyTaskNum counts: gang's
        # JobOrderFn asks it twice per comparison, about 16 comparisons per job popped.
        self.ready = 0
        self.tasks: dict[str, TaskInfo] = {}
        # The index, the sums and pending_best_effort are what add_task_info over
        # ``tasks`` in order gives: no task was taken out or replaced since.
        self._in_order = True
        # Counts every task added or taken out (a status change is both): a session's
        # clone whose count did not move had no task touched (SchedulerCache.hand_back).
        self.version = 0
        # Where a session's clone reports that its tasks or its phase moved (the cache's
        # set of the jobs touched since its last snapshot: SchedulerCache, "The job
        # feed"); None for the cache's own jobs.
        self.touched: set[str] | None = None
        # What plugins derive from the tasks at session open, under their own keys. A
        # clone handed to the next session (SchedulerCache, "Carried jobs") has the same
        # tasks in the same statuses as when it was derived, so it keeps it; every new
        # clone starts empty.
        self.derived: dict[str, object] = {}
        self._counts: StatusCounts | None = None
        self.task_min_available: dict[str, int] = {}
        self.task_min_available_total = 0
        self.allocated = Resource()
        self.total_request = Resource()
        self.creation_timestamp: datetime = ZERO_TIME
        self.pod_group: PodGroup | None = None
        self.schedule_start_timestamp: datetime | None = None
        self.preemptable = False
        self.revocable_zone = ""
        self.budget: tuple[str, str] = ("", "")
        if pod_group is not None:
            self.set_pod_group(pod_group)

    def clone(self) -> JobInfo:
        """``JobInfo.Clone``: tasks cloned, the PodGroup copied (conditions too), the
        nodes' fit errors dropped. What ``SetPodGroup`` derives from the PodGroup is
        copied rather than derived again: it is the same PodGroup."""
        info = shallow_copy(self)
        if self.pod_group is not None:
            pg = info.pod_group = shallow_copy(self.pod_group)
            pg.conditions = list(pg.conditions)
        info.task_min_available = dict(self.task_min_available)
        info.nodes_fit_errors = {}
        info.derived = {}
        if self._in_order:
            # The index and sums are what adding the tasks in order gives: a clone's,
            # added in the same order, are the same, so they are copied, not summed.
            info.tasks = tasks = {uid: task.clone() for uid, task in self.tasks.items()}
            info.task_status_index = {
                status: {uid: tasks[uid] for uid in bucket}
                for status, bucket in self.task_status_index.items()
            }
            info.allocated = self.allocated.clone()
            info.total_request = self.total_request.clone()
            return info
        info.task_status_index = {}
        info._counts = None
        info.pending_best_effort = 0
        info.ready = 0
        info.tasks = {}
        info.allocated = Resource()
        info.total_request = Resource()
        info._in_order = True
        for task in self.tasks.values():
            info.add_task_info(task.clone())
        return info

    # -- pod group ------------------------------------------------------------------------
    def set_pod_group(self, pg: PodGroup) -> None:
        """``SetPodGroup``; the PodGroup is copied so a session can change its status."""
        old = self.pod_group
        pg = shallow_copy(pg)
        pg.conditions = list(pg.conditions)
        if old is not None and same_spec(old, pg):
            # Only the status moved (the job updater wrote it back): what
            # SetPodGroup derives from the rest is what it derived last time.
            self.pod_group = pg
            return
        self.name = pg.meta.name
        self.namespace = pg.meta.namespace
        self.min_available = pg.min_member
        self.queue = pg.queue or "default"
        self.creation_timestamp = pg.meta.creation_timestamp
        self.waiting_time = None
        for key in SLA_WAITING_TIME_KEYS:
            raw = pg.meta.annotations.get(key)
            if raw is None:
                continue
            try:
                self.waiting_time = parse_duration(raw)
            except ValueError:
                self.waiting_time = None
            if self.waiting_time is not None:
                break
        self.preemptable = self._extract_preemptable(pg)
        self.revocable_zone = self._extract_revocable_zone(pg)
        annotations = pg.meta.annotations
        if JDB_MIN_AVAILABLE in annotations:
            self.budget = (annotations[JDB_MIN_AVAILABLE], "")
        elif JDB_MAX_UNAVAILABLE in annotations:
            self.budget = ("", annotations[JDB_MAX_UNAVAILABLE])
        else:
            self.budget = ("", "")
        self.task_min_available = dict(pg.min_task_member)
        self.task_min_available_total = sum(pg.min_task_member.values())
        self.pg_uid = pg.meta.uid
        self.pod_group = pg

    @staticmethod
    def _extract_preemptable(pg: PodGroup) -> bool:
        for source in (pg.meta.annotations, pg.meta.labels):
            if PREEMPTABLE_KEY in source:
                return parse_go_bool(source[PREEMPTABLE_KEY]) is True
        return False

    @staticmethod
    def _extract_revocable_zone(pg: PodGroup) -> str:
        annotations = pg.meta.annotations
        if REVOCABLE_ZONE_KEY in annotations:
            return "*" if annotations[REVOCABLE_ZONE_KEY] == "*" else ""
        if PREEMPTABLE_KEY in annotations and parse_go_bool(annotations[PREEMPTABLE_KEY]):
            return "*"
        return ""

    def min_resources(self) -> Resource:
        if self.pod_group is None or self.pod_group.min_resources is None:
            return Resource()
        return Resource.from_list(self.pod_group.min_resources)

    def has_min_resources(self) -> bool:
        return self.pod_group is not None and self.pod_group.min_resources is not None

    def sch_gated_resources(self) -> Resource:
        res = Resource()
        for task in self.tasks.values():
            if task.sch_gated:
                res.add(task.resreq)
        return res

    def deduct_sch_gated_resources(self, res: Resource) -> Resource:
        gated = self.sch_gated_resources()
        if gated.is_empty():
            return res
        result = res.clone()
        result.milli_cpu = max(result.milli_cpu - gated.milli_cpu, 0.0)
        result.memory = max(result.memory - gated.memory, 0.0)
        for name, q in res.scalars.items():
            if name in gated.scalars:
                result.scalars[name] = max(q - gated.scalars[name], 0.0)
        return result

    def elastic_resources(self, *, exceeded: bool = True) -> Resource:
        """The part of allocated above minResources, per dimension. v1.10.0 (``exceeded``
        False) gave nothing when any dimension was within the minimum and else
        subtracted, an asserting Sub that panics when another dimension is short (gate
        elastic_exceeded_part, upstream 9a1bcc682 "fix panic when get job's elastic
        resource")."""
        if exceeded:
            return exceeded_part(self.allocated, self.min_resources())
        minimum = self.min_resources()
        if self.allocated.less_equal_partly(minimum, ZERO):
            return Resource()
        return self.allocated.clone().sub(minimum)

    # -- tasks ----------------------------------------------------------------------------
    def add_task_info(self, task: TaskInfo) -> None:
        self.version += 1
        if self.touched is not None:
            self.touched.add(self.uid)
        if task.uid in self.tasks:
            self._in_order = False  # replaced in place: the index may hold the old one
        self.tasks[task.uid] = task
        self.task_status_index.setdefault(task.status, {})[task.uid] = task
        if task.status in _READY:
            self.ready += 1
        elif task.best_effort and task.status is TaskStatus.Pending:
            self.pending_best_effort += 1
        self.total_request.add(task.resreq)
        if allocated_status(task.status):
            self.allocated.add(task.resreq)

    def delete_task_info(self, task: TaskInfo) -> None:
        found = self.tasks.get(task.uid)
        if found is None:
            return
        self.version += 1
        if self.touched is not None:
            self.touched.add(self.uid)
        self._in_order = False
        self.total_request.sub(found.resreq)
        if allocated_status(found.status):
            self.allocated.sub(found.resreq)
        del self.tasks[found.uid]
        bucket = self.task_status_index.get(found.status)
        if bucket is not None:
            popped = bucket.pop(found.uid, None)
            if popped is not None:
                if found.status in _READY:
                    self.ready -= 1
                elif popped.best_effort and found.status is TaskStatus.Pending:
                    self.pending_best_effort -= 1
            if not bucket:
                del self.task_status_index[found.status]

    def set_phase(self, phase: str) -> None:
        """Write the pod group's phase in a session (enqueue's Inqueue), reported as a
        task change is: before the close, nothing writes a phase otherwise (the job
        contract)."""
        assert self.pod_group is not None
        self.pod_group.phase = phase
        if self.touched is not None:
            self.touched.add(self.uid)

    def update_task_status(self, task: TaskInfo, status: TaskStatus) -> None:
        """Statuses are never validated in v1.11 (``validateStatusUpdate`` returns nil)."""
        if task.uid in self.tasks:
            self.delete_task_info(task)
        task.status = status
        self.add_task_info(task)

    def tasks_in(self, status: TaskStatus) -> list[TaskInfo]:
        return list(self.task_status_index.get(status, {}).values())

    def count(self, status: TaskStatus) -> int:
        bucket = self.task_status_index.get(status)
        return len(bucket) if bucket else 0

    # -- gang arithmetic --------------------------------------------------------------------
    def ready_task_num(self) -> int:
        return self.ready

    def waiting_task_num(self) -> int:
        return self.count(TaskStatus.Pipelined)

    def pending_best_effort_task_num(self) -> int:
        return self.pending_best_effort

    def status_counts(self) -> StatusCounts:
        """The counts, worked out once per ``version``: every status change moves it,
        and nothing else changes the index, so at an equal version every bucket holds
        what it held when counted. Gang asks twice a session and the job updater once,
        for every live job, and most live jobs have had no task touched for many
        sessions (a clone carried to the next session keeps its counts; one copied in
        order has the index, and the version, its source had)."""
        counts = self._counts
        if counts is not None and counts.version == self.version:
            return counts
        allocated = valid = 0
        for status, tasks in self.task_status_index.items():
            if status in ALLOCATED_STATUSES:
                allocated += len(tasks)
            elif status in _VALID_UNALLOCATED:
                valid += len(tasks)
        counts = self._counts = StatusCounts(
            self.version,
            self.count(TaskStatus.Running),
            self.count(TaskStatus.Succeeded),
            self.count(TaskStatus.Failed),
            allocated,
            valid + allocated,
        )
        return counts

    def valid_task_num(self) -> int:
        return self.status_counts().valid

    def is_ready(self) -> bool:
        return self.ready + self.pending_best_effort >= self.min_available

    def is_pipelined(self) -> bool:
        return (
            self.waiting_task_num() + self.ready_task_num() + self.pending_best_effort_task_num()
            >= self.min_available
        )

    def is_starving(self) -> bool:
        return self.waiting_task_num() + self.ready_task_num() < self.min_available

    def is_pending(self) -> bool:
        return self.pod_group is None or self.pod_group.phase in ("Pending", "")

    def has_pending_tasks(self) -> bool:
        return self.count(TaskStatus.Pending) != 0

    def _role_counts(self, *, pipelined: bool, pending_empty: bool, pending: bool) -> Counter[str]:
        counts: Counter[str] = Counter()
        for status, tasks in self.task_status_index.items():
            if (
                allocated_status(status)
                or status is TaskStatus.Succeeded
                or (pipelined and status is TaskStatus.Pipelined)
                or (pending and status is TaskStatus.Pending)
            ):
                for task in tasks.values():
                    counts[task.task_role] += 1
            elif pending_empty and status is TaskStatus.Pending:
                for task in tasks.values():
                    if task.init_resreq.is_empty():
                        counts[task.task_role] += 1
        return counts

    def _roles_meet_min(self, counts: Counter[str]) -> bool:
        return all(counts[role] >= n for role, n in self.task_min_available.items())

    def check_task_valid(self) -> bool:
        if not self.task_min_available or self.min_available < self.task_min_available_total:
            return True  # no role has a minimum: nothing to count
        actual = self._role_counts(pipelined=True, pending_empty=False, pending=True)
        return all(
            n == 0 or (role in actual and actual[role] >= n)
            for role, n in self.task_min_available.items()
        )

    def check_task_ready(self) -> bool:
        if not self.task_min_available or self.min_available < self.task_min_available_total:
            return True  # no role has a minimum: nothing to count
        return self._roles_meet_min(
            self._role_counts(pipelined=False, pending_empty=True, pending=False)
        )

    def check_task_pipelined(self) -> bool:
        if not self.task_min_available or self.min_available < self.task_min_available_total:
            return True  # no role has a minimum: nothing to count
        return self._roles_meet_min(
            self._role_counts(pipelined=True, pending_empty=True, pending=False)
        )

    def fit_failed_roles(self) -> set[str]:
        return {self.tasks[uid].task_role for uid in self.nodes_fit_errors if uid in self.tasks}

    def task_has_fit_errors(self, task: TaskInfo) -> bool:
        return bool(task.task_role) and task.task_role in self.fit_failed_roles()

    def need_continue_allocating(self) -> bool:
        if self.min_available == len(self.tasks):
            return False
        failed = self.fit_failed_roles()
        pending: Counter[str] = Counter(t.task_role for t in self.tasks_in(TaskStatus.Pending))
        if self.min_available < self.task_min_available_total:
            left = sum(n for role, n in pending.items() if role not in failed)
            return self.ready_task_num() + left >= self.min_available
        allocated = self._role_counts(pipelined=False, pending_empty=True, pending=False)
        for role in failed:
            minimum = self.task_min_available.get(role, 0)
            if minimum and allocated[role] < minimum:
                return False
        return True

    # -- messages -------------------------------------------------------------------------
    def task_scheduling_reason(self, uid: str) -> tuple[str, str, str]:
        """(reason, message, nominated node) for a task's PodScheduled condition."""
        task = self.tasks.get(uid)
        if task is None:
            return "", "", ""
        ctx = task.last_transaction or task.transaction_context()
        msg = self.job_fit_errors
        if ctx.status is TaskStatus.Allocated:
            return (
                "Schedulable",
                f"Pod {task.namespace}/{task.name} can possibly be assigned to {ctx.node_name}",
                "",
            )
        if ctx.status is TaskStatus.Pipelined:
            msg = (
                f"Pod {task.namespace}/{task.name} can possibly be assigned to "
                f"{ctx.node_name}, once resource is released"
            )
            return "Unschedulable", msg, ctx.node_name if ctx.eviction_occurred else ""
        if ctx.status is TaskStatus.Pending:
            fe = self.nodes_fit_errors.get(uid)
            return "Unschedulable", str(fe) if fe is not None else msg, ""
        return str(ctx.status), msg, ""

    def fit_error(self) -> str:
        """``FitError()``: the job-level message of gang's Unschedulable condition."""
        reasons: Counter[str] = Counter()
        for status, tasks in self.task_status_index.items():
            reasons[str(status)] += len(tasks)
        reasons["minAvailable"] = self.min_available
        parts = sorted(f"{n} {reason}" for reason, n in reasons.items())
        msg = f"{POD_GROUP_NOT_READY}, {', '.join(parts)}"
        pending = [
            self.task_scheduling_reason(uid)[0]
            for uid in self.task_status_index.get(TaskStatus.Pending, {})
        ]
        if pending:
            msg += f"; Pending: {', '.join(histogram(pending))}"
        if self.job_fit_errors:
            msg += ". Origin reason is: " + self.job_fit_errors
        else:
            for task in self.tasks.values():
                fe = self.nodes_fit_errors.get(task.uid)
                if fe is not None:
                    msg += f". Origin reason is {task.name}: {fe}"
                    break
        return msg

    def condition(self, type_: str) -> Condition | None:
        if self.pod_group is None:
            return None
        for cond in self.pod_group.conditions:
            if cond.type == type_:
                return cond
        return None

    def go_string(
        self,
        task_text: Callable[[TaskInfo], str] = str,
        tasks: str | None = None,
        pod_group_text: Callable[[PodGroup], str] | None = None,
    ) -> str:
        """``JobInfo.String()`` (job_info.go): the job's fields with the pod group's
        ``%+v`` (see :mod:`vspec.api.pod_group_info` for where that text can differ from
        a real scheduler's), then one ``\n\t <i>: <TaskInfo.String()>`` per task.

        Go walks ``ji.Tasks``, a map, so a real scheduler lists the tasks in a random
        order; vspec lists them in the order the cluster declares them. ``task_text``
        prints a task (:class:`~vspec.api.task_info.TaskTexts` keeps them over sessions);
        ``tasks`` is :meth:`tasks_go_string`'s text, when the caller kept it;
        ``pod_group_text`` prints the pod group
        (:class:`~vspec.api.pod_group_info.PodGroupTexts` keeps them over sessions).
        """
        # Every verb here prints its value plainly (``%v``/``%+v`` of strings and a bool,
        # ``%d`` of an int32), so the line is an f-string: logprint prints it for every
        # ready job at V(1), where fmt's general rendering cost a small session a tenth.
        if pod_group_text is None:
            from vspec.api import pod_group_info  # only logprint prints jobs

            pod_group_text = pod_group_info.pod_group_text

        if tasks is None:
            tasks = self.tasks_go_string(task_text)
        pod_group = pod_group_text(self.pod_group) if self.pod_group else "<nil>"
        min_available, max_unavailable = self.budget
        preemptable = "true" if self.preemptable else "false"
        return (
            f"Job ({self.uid}): namespace {self.namespace} ({self.queue}), name {self.name}, "
            f"minAvailable {self.min_available}, podGroup {pod_group}, "
            f"preemptable {preemptable}, revocableZone {self.revocable_zone}, "
            f"minAvailable {min_available}, maxAvailable {max_unavailable}{tasks}"
        )

    def printed(self) -> tuple[object, ...]:
        """Everything :meth:`go_string` and :meth:`is_pending` and :meth:`is_ready` read,
        as a key to compare with ``==`` (not to hash; one tuple, as logprint asks it of
        every job every session): first the version (the tasks print as they did and the
        counts are what they were while it stands: only the task methods, which move
        it, change a session's tasks, the job contract), the job's own fields, and the
        pod group's as :func:`~vspec.api.pod_group_info.pod_group_text` prints them,
        its metadata and the tasks' minimums as the objects that hold them (the model
        is copy-on-write: changed, either is a new object, as :func:`same_spec` and the
        scheduler cache take it), its status by value, the conditions last (frozen,
        every field printed). Equal values held by the very objects they were compare
        by identity, so comparing with the key of a job carried from the last session
        reads no object but the job and its pod group."""
        own = (
            self.version,
            self.uid,
            self.namespace,
            self.queue,
            self.name,
            self.min_available,
            self.preemptable,
            self.revocable_zone,
            self.budget,
        )
        pg = self.pod_group
        if pg is None:
            return own
        return (
            *own,
            pg.meta,
            pg.min_task_member,
            pg.min_member,
            pg.queue,
            pg.priority_class_name,
            pg.min_resources is None,
            pg.phase,
            pg.running,
            pg.succeeded,
            pg.failed,
            *pg.conditions,
        )

    def tasks_go_string(self, task_text: Callable[[TaskInfo], str] = str) -> str:
        """The tail of :meth:`go_string`: one ``\n\t <i>: <task>`` per task, in order."""
        return "".join(f"\n\t {i}: {task_text(task)}" for i, task in enumerate(self.tasks.values()))

    def __repr__(self) -> str:
        return f"Job({self.uid}, minAvailable {self.min_available}, tasks {len(self.tasks)})"
