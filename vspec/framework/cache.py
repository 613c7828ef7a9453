"""The scheduler cache: the cluster as Volcano's informers see it (``pkg/scheduler/cache``).

A cache is built from the :class:`~vspec.model.objects.Cluster` model, snapshotted into
each session, and receives the session's committed effects (binds and evictions), which
vspec records instead of calling the API server.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import TaskStatus
from vspec.errors import EngineError
from vspec.framework.log import Klog
from vspec.model.conf import SchedulerOptions
from vspec.model.objects import Cluster, PriorityClass


@dataclass
class Snapshot:
    jobs: dict[str, JobInfo]
    nodes: dict[str, NodeInfo]
    node_list: list[NodeInfo]
    queues: dict[str, QueueInfo]
    revocable_nodes: dict[str, NodeInfo]


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
    def __init__(self, cluster: Cluster, options: SchedulerOptions, log: Klog) -> None:
        self.cluster = cluster
        self.options = options
        self.log = log
        self.effects = Effects()
        self.priority_classes: dict[str, PriorityClass] = {
            pc.meta.name: pc for pc in cluster.priority_classes
        }
        self.default_priority = 0
        for pc in cluster.priority_classes:
            if pc.global_default:
                self.default_priority = pc.value
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
        names = set(options.scheduler_names)
        for pod in cluster.pods:
            if pod.scheduled_by(names) or pod.node_name:
                self._add_task(TaskInfo(pod))
        self.queues: dict[str, QueueInfo] = {q.meta.name: QueueInfo(q) for q in cluster.queues}

    def _add_task(self, task: TaskInfo) -> None:
        if task.node_name:
            node = self.nodes.get(task.node_name)
            if node is None:
                # Volcano keeps a NotReady placeholder for a pod bound to an unknown node.
                node = self.nodes[task.node_name] = NodeInfo(None, task.node_name)
            if task.status not in (TaskStatus.Succeeded, TaskStatus.Failed):
                node.add_task(task)
        if not task.job:
            return
        job = self.jobs.get(task.job)
        if job is None:
            job = self.jobs[task.job] = JobInfo(task.job)
        job.add_task_info(task)

    def snapshot(self) -> Snapshot:
        nodes = {name: ni.clone() for name, ni in self.nodes.items() if ni.ready}
        node_list = [nodes[name] for name in self.node_list if name in nodes]
        revocable = {name: ni for name, ni in nodes.items() if ni.revocable_zone}
        queues = dict(self.queues)
        jobs: dict[str, JobInfo] = {}
        for uid, job in self.jobs.items():
            if job.pod_group is None:
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
            job.priority = self.default_priority
            pc = self.priority_classes.get(job.pod_group.priority_class_name)
            if pc is not None:
                job.priority = pc.value
            jobs[uid] = job.clone()
        self.log.v(
            3,
            f"There are <{len(jobs)}> Jobs, <{len(queues)}> Queues and <{len(nodes)}> Nodes "
            "in total for scheduling.",
        )
        return Snapshot(jobs, nodes, node_list, queues, revocable)

    # -- effects of committed operations ------------------------------------------------------
    def _find(self, task: TaskInfo) -> tuple[JobInfo, TaskInfo]:
        job = self.jobs.get(task.job)
        if job is None or task.uid not in job.tasks:
            raise EngineError(f"failed to find task <{task.namespace}/{task.name}> in the cache")
        return job, job.tasks[task.uid]

    def add_bind_task(self, task: TaskInfo) -> None:
        """``AddBindTask``: the cache node must have idle room, else the bind fails."""
        job, cached = self._find(task)
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
        job.update_task_status(cached, TaskStatus.Releasing)
        node = self.nodes.get(task.node_name)
        if node is not None and cached.key in node.tasks:
            node.update_task(cached)
        self.effects.evictions.append((task.key, reason))

    def record_event(self, obj: str, type_: str, reason: str, message: str) -> None:
        self.effects.events.append((obj, type_, reason, message))
