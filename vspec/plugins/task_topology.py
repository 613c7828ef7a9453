"""task-topology: co-locate (or spread) the task roles of a job as its pod group's
annotations ask (``plugins/task-topology/*.go``).

Annotations of the PodGroup: ``volcano.sh/task-topology-affinity: "ps,worker;chief"``
(roles that like to share a node; a lone role likes its own kind),
``volcano.sh/task-topology-anti-affinity`` (the opposite) and
``volcano.sh/task-topology-task-order: "ps,worker"``. Each job's pending tasks are
grouped into *buckets* meant for one node each; TaskOrder schedules a bucket at a
time and NodeOrder pulls a bucket towards the nodes its bound tasks already use.
A task's role is its pod's ``volcano.sh/task-spec`` *annotation*.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, ClassVar

from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.resource import ZERO, Resource
from vspec.api.task_info import TaskInfo
from vspec.errors import GoError
from vspec.framework.arguments import Arguments
from vspec.framework.interface import ArgumentSpec, Event, EventHandler, IntArgument, Plugin
from vspec.framework.log import Klog
from vspec.framework.registry import register_plugin
from vspec.model.objects import TASK_SPEC_KEY

if TYPE_CHECKING:
    from vspec.framework.session import Session

PLUGIN_WEIGHT = "task-topology.weight"
PLUGIN_WEIGHT_ARG = IntArgument(PLUGIN_WEIGHT, 1, "weight of the bucket score")
AFFINITY_ANNOTATION = "volcano.sh/task-topology-affinity"
ANTI_AFFINITY_ANNOTATION = "volcano.sh/task-topology-anti-affinity"
TASK_ORDER_ANNOTATION = "volcano.sh/task-topology-task-order"
OUT_OF_BUCKET = -1
MAX_NODE_SCORE = 100

# topologyType values and their priority (selfAntiAffinity=0 ... interAffinity=3).
SELF_ANTI_AFFINITY, INTER_ANTI_AFFINITY, SELF_AFFINITY, INTER_AFFINITY = range(4)
AFFINITY_PRIORITY = {
    SELF_ANTI_AFFINITY: 4,
    INTER_AFFINITY: 3,
    SELF_AFFINITY: 2,
    INTER_ANTI_AFFINITY: 1,
}


class TopologyError(GoError):
    """An annotation names a role the job does not have, or names one twice."""


def task_name(task: TaskInfo) -> str:
    """``getTaskName``: the role from the pod annotation only (not the label)."""
    return task.pod.meta.annotations.get(TASK_SPEC_KEY, "")


def request_score(req: Resource) -> float:
    """A bucket's size: milli-cpu + memory in MiB + every scalar."""
    return req.milli_cpu + req.memory / 1024 / 1024 + sum(req.scalars.values())


class Bucket:
    """Tasks of one job meant to land on one node."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.tasks: dict[str, TaskInfo] = {}  # pending tasks by pod UID
        self.task_name_set: dict[str, int] = {}
        self.req_score = 0.0
        self.request = Resource()
        self.bound_task = 0
        self.node: dict[str, int] = {}

    def add_task(self, name: str, task: TaskInfo) -> None:
        self.task_name_set[name] = self.task_name_set.get(name, 0) + 1
        if task.node_name:
            self.node[task.node_name] = self.node.get(task.node_name, 0) + 1
            self.bound_task += 1
            return
        self.tasks[task.pod.meta.uid] = task
        self.req_score += request_score(task.resreq)
        self.request.add(task.resreq)

    def task_bound(self, task: TaskInfo) -> None:
        self.node[task.node_name] = self.node.get(task.node_name, 0) + 1
        self.bound_task += 1
        self.tasks.pop(task.pod.meta.uid, None)
        self.req_score -= request_score(task.resreq)
        self.request.sub(task.resreq)


class JobManager:
    """One job's topology rules and buckets."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        self.buckets: list[Bucket] = []
        self.pod_in_bucket: dict[str, int] = {}
        self.pod_in_task: dict[str, str] = {}
        self.task_affinity_priority: dict[str, int] = {}
        self.task_exist_order: dict[str, int] = {}
        self.inter_affinity: dict[str, set[str]] = {}
        self.self_affinity: set[str] = set()
        self.inter_anti_affinity: dict[str, set[str]] = {}
        self.self_anti_affinity: set[str] = set()
        self.bucket_max_size = 0
        self.node_task_set: dict[str, dict[str, int]] = {}

    def mark(self, name: str, topology: int) -> None:
        priority = AFFINITY_PRIORITY[topology]
        if priority > self.task_affinity_priority.get(name, 0):
            self.task_affinity_priority[name] = priority

    def apply(
        self, affinity: list[list[str]], anti_affinity: list[list[str]], order: list[str]
    ) -> None:
        for rules, own, inter, self_kind, inter_kind in (
            (affinity, self.self_affinity, self.inter_affinity, SELF_AFFINITY, INTER_AFFINITY),
            (
                anti_affinity,
                self.self_anti_affinity,
                self.inter_anti_affinity,
                SELF_ANTI_AFFINITY,
                INTER_ANTI_AFFINITY,
            ),
        ):
            for group in rules:
                if len(group) == 1:
                    own.add(group[0])
                    self.mark(group[0], self_kind)
                    continue
                for index, src in enumerate(group):
                    for dst in group[:index]:
                        inter.setdefault(src, set()).add(dst)
                        inter.setdefault(dst, set()).add(src)
                    self.mark(src, inter_kind)
        for index, name in enumerate(order):
            self.task_exist_order[name] = len(order) - index

    def affinity_order(self, left: TaskInfo, right: TaskInfo) -> int:
        """Positive when ``left``'s role comes first (explicit order, then priority)."""
        ln = self.pod_in_task.get(left.pod.meta.uid, "")
        rn = self.pod_in_task.get(right.pod.meta.uid, "")
        if ln == rn:
            return 0
        lo, ro = self.task_exist_order.get(ln, 0), self.task_exist_order.get(rn, 0)
        if lo != ro:
            return 1 if lo > ro else -1
        lp, rp = self.task_affinity_priority.get(ln, 0), self.task_affinity_priority.get(rn, 0)
        if lp != rp:
            return 1 if lp > rp else -1
        return 0

    def task_set_affinity(self, name: str, name_set: dict[str, int], *, only_anti: bool) -> int:
        """How much ``name`` likes (+) or dislikes (-) the roles counted in ``name_set``."""
        score = 0
        if not name:
            return score
        for other, count in name_set.items():
            same = other == name
            if not only_anti:
                liked = (
                    name in self.self_affinity
                    if same
                    else other in self.inter_affinity.get(name, ())
                )
                if liked:
                    score += count
            disliked = (
                name in self.self_anti_affinity
                if same
                else other in self.inter_anti_affinity.get(name, ())
            )
            if disliked:
                score -= count
        return score

    def _build_task_info(self, tasks: dict[str, TaskInfo]) -> list[TaskInfo]:
        with_topology = []
        for task in tasks.values():
            uid = task.pod.meta.uid
            name = task_name(task)
            if not name or name not in self.task_affinity_priority:
                self.pod_in_bucket[uid] = OUT_OF_BUCKET
                continue
            self.pod_in_task[uid] = name
            with_topology.append(task)
        return with_topology

    def _less(self, left: TaskInfo, right: TaskInfo) -> bool:
        """``TaskOrder.Less`` (used reversed): bound tasks, then role order, then name."""
        if left.node_name or right.node_name:
            if bool(left.node_name) != bool(right.node_name):
                return not left.node_name
            return left.node_name > right.node_name
        result = self.affinity_order(left, right)
        if result == 0:
            return left.name > right.name
        return result < 0

    def construct_buckets(self, tasks: dict[str, TaskInfo], session: Session) -> None:
        ordered = self._build_task_info(tasks)

        def reverse_cmp(a: TaskInfo, b: TaskInfo) -> int:
            if self._less(b, a):
                return -1
            return 1 if self._less(a, b) else 0

        ordered.sort(key=functools.cmp_to_key(reverse_cmp))
        self._build_buckets(ordered, session)

    def _build_buckets(self, ordered: list[TaskInfo], ssn: Session) -> None:
        node_buckets: dict[str, Bucket] = {}
        for task in ordered:
            ssn.log.v(5, f"jobID {self.job_id} task with order task {task.namespace}/{task.name}")
            selected: Bucket | None = None
            max_affinity = -(2**31)
            name = task_name(task)
            if task.node_name:
                max_affinity = 0
                selected = node_buckets.get(task.node_name)
            else:
                for bucket in self.buckets:
                    affinity = self.task_set_affinity(name, bucket.task_name_set, only_anti=False)
                    if affinity > max_affinity:
                        max_affinity, selected = affinity, bucket
                    elif (
                        affinity == max_affinity
                        and selected is not None
                        and bucket.req_score < selected.req_score
                    ):
                        selected = bucket
            if max_affinity < 0 or selected is None:
                selected = Bucket(len(self.buckets))
                self.buckets.append(selected)
                if task.node_name:
                    node_buckets[task.node_name] = selected
            self.pod_in_bucket[task.pod.meta.uid] = selected.index
            selected.add_task(name, task)
            self.bucket_max_size = max(
                self.bucket_max_size, len(selected.tasks) + selected.bound_task
            )

    def task_bound(self, task: TaskInfo) -> None:
        name = task_name(task)
        if name:
            counts = self.node_task_set.setdefault(task.node_name, {})
            counts[name] = counts.get(name, 0) + 1
        bucket = self.bucket_of(task)
        if bucket is not None:
            bucket.task_bound(task)

    def bucket_of(self, task: TaskInfo) -> Bucket | None:
        index = self.pod_in_bucket.get(task.pod.meta.uid, OUT_OF_BUCKET)
        return None if index == OUT_OF_BUCKET else self.buckets[index]


def _check(job: JobInfo, groups: list[list[str]]) -> None:
    """``affinityCheck``: every named role exists in the job, once per group."""
    roles = {task.task_role for task in job.tasks.values()}
    for group in groups:
        seen: set[str] = set()
        for name in group:
            if not name:
                continue
            if name not in roles:
                raise TopologyError(f"task {name} do not exist in job <{job.namespace}/{job.name}>")
            if name in seen:
                raise TopologyError(
                    f"task {name} is duplicated in job <{job.namespace}/{job.name}>"
                )
            seen.add(name)


def read_topology(job: JobInfo) -> tuple[list[list[str]], list[list[str]], list[str]] | None:
    """The (affinity, anti-affinity, order) of the PodGroup annotations; None without any."""
    annotations = job.pod_group.meta.annotations if job.pod_group is not None else {}
    keys = (AFFINITY_ANNOTATION, ANTI_AFFINITY_ANNOTATION, TASK_ORDER_ANNOTATION)
    if not any(key in annotations for key in keys):
        return None
    rules: list[list[list[str]]] = []
    for key in keys[:2]:
        groups = (
            [part.split(",") for part in annotations[key].split(";")] if key in annotations else []
        )
        _check(job, groups)
        rules.append(groups)
    order: list[str] = []
    if TASK_ORDER_ANNOTATION in annotations:
        order = annotations[TASK_ORDER_ANNOTATION].split(",")
        _check(job, [order])
    return rules[0], rules[1], order


@register_plugin
class TaskTopologyPlugin(Plugin):
    """TaskOrder and NodeOrder that co-locate a job's task roles per its annotations."""

    name: ClassVar[str] = "task-topology"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (PLUGIN_WEIGHT_ARG,)

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.weight = PLUGIN_WEIGHT_ARG.read(arguments)
        self.managers: dict[str, JobManager] = {}

    def on_session_open(self, ssn: Session) -> None:
        ssn.log.v(
            3,
            f"start to init task topology plugin, weight[{self.weight}], defined order "
            "map[0:4 1:1 2:2 3:3]",
        )
        self._init_buckets(ssn)
        ssn.add_task_order_fn(self.name, self.task_order)
        ssn.add_node_order_fn(self.name, lambda task, node: self.node_order(ssn, task, node))
        ssn.add_event_handler(EventHandler(allocate_func=self._allocated))
        # vspec's clock does not move within a session.
        ssn.log.v(3, "finished to init task topology plugin, using time 0s")

    def on_session_close(self, ssn: Session) -> None:
        self.managers = {}

    def _init_buckets(self, ssn: Session) -> None:
        for job_id, job in ssn.jobs.items():
            if not job.has_pending_tasks():
                ssn.log.v(
                    4,
                    f"No pending tasks in job <{job.namespace}/{job.name}> by plugin {self.name}.",
                )
                continue
            try:
                topology = read_topology(job)
            except TopologyError as err:
                ssn.log.v(
                    4,
                    f"Failed to read task topology from job <{job.namespace}/{job.name}> "
                    f"annotations, error: {err}.",
                )
                continue
            if topology is None:
                continue
            manager = JobManager(job_id)
            manager.apply(*topology)
            manager.construct_buckets(job.tasks, ssn)
            self.managers[job.uid] = manager

    def _allocated(self, event: Event) -> None:
        manager = self.managers.get(event.task.job)
        if manager is not None:
            manager.task_bound(event.task)

    def task_order(self, left: TaskInfo, right: TaskInfo) -> int:
        """Tasks in buckets first; within a job, fuller buckets, then lower index."""
        lm, rm = self.managers.get(left.job), self.managers.get(right.job)
        if lm is None or rm is None:
            return 0
        lb, rb = lm.bucket_of(left), rm.bucket_of(right)
        if (lb is None) != (rb is None):
            return -1 if lb is not None else 1
        if left.job != right.job or lb is None or rb is None:
            return 0
        if len(lb.tasks) != len(rb.tasks):
            return -1 if len(lb.tasks) > len(rb.tasks) else 1
        if lb.index == rb.index:
            return -lm.affinity_order(left, right)
        return -1 if lb.index < rb.index else 1

    def bucket_score(
        self, task: TaskInfo, node: NodeInfo, log: Klog
    ) -> tuple[int, JobManager | None]:
        """``calcBucketScore``: bound bucket-mates on the node, plus what of the bucket
        would still fit there."""
        max_resource = node.idle.clone().add(node.releasing)
        if max_resource.less_partly(task.resreq, ZERO):
            return 0, None
        manager = self.managers.get(task.job)
        if manager is None:
            return 0, None
        bucket = manager.bucket_of(task)
        if bucket is None:
            return 0, manager
        score = bucket.node.get(node.name, 0)
        node_tasks = manager.node_task_set.get(node.name)
        if node_tasks is not None:
            affinity = manager.task_set_affinity(task_name(task), node_tasks, only_anti=True)
            if affinity < 0:
                score += affinity
        log.v(
            4,
            f"task {task.namespace}/{task.name}, node {node.name}, additional score {score}, "
            f"task {len(bucket.tasks)}",
        )
        return score + self._fitting_tasks(bucket, task, max_resource), manager

    @staticmethod
    def _fitting_tasks(bucket: Bucket, task: TaskInfo, max_resource: Resource) -> int:
        """The bucket's pending tasks, minus those dropped until the rest fits the node
        (Go walks a map here, so which ones are dropped first is random)."""
        score = len(bucket.tasks)
        if bucket.request.less_equal(max_resource, ZERO):
            return score
        remains = bucket.request.clone()
        for uid, other in bucket.tasks.items():
            if uid == task.pod.meta.uid:
                continue
            remains.sub(other.resreq)
            score -= 1
            if remains.less_equal(max_resource, ZERO):
                break
        return score

    def node_order(self, ssn: Session, task: TaskInfo, node: NodeInfo) -> float:
        log = ssn.log
        score, manager = self.bucket_score(task, node, log)
        result = float(score * self.weight)
        if manager is not None and manager.bucket_max_size != 0:
            result = result * MAX_NODE_SCORE / manager.bucket_max_size
        log.v(
            4,
            f"task {task.namespace}/{task.name} at node {node.name} has bucket score {score}, "
            f"score {result:f}",
        )
        return result
