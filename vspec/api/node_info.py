"""``NodeInfo``: a node's resources and the tasks on it (``api/node_info.go``)."""

from __future__ import annotations

from vspec.api.resource import ZERO, Resource
from vspec.api.task_info import REVOCABLE_ZONE_KEY, TaskInfo
from vspec.api.types import TaskStatus
from vspec.errors import EngineError
from vspec.model.objects import Node

OVERSUBSCRIPTION_NODE = "volcano.sh/oversubscription"
OVERSUBSCRIPTION_CPU = "volcano.sh/oversubscription-cpu"
OVERSUBSCRIPTION_MEMORY = "volcano.sh/oversubscription-memory"


def _parse_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


class NodeInfo:
    """Tasks are stored as clones keyed by ``namespace/name``, as in Volcano."""

    __slots__ = (
        "_future_idle",
        "_others",
        "_others_reports",
        "_reports",
        "_sink",
        "_sink_row",
        "allocatable",
        "capacity",
        "idle",
        "name",
        "node",
        "oversubscription",
        "pipelined",
        "ready",
        "releasing",
        "revocable_zone",
        "tasks",
        "used",
        "version",
    )

    def __init__(self, node: Node | None, name: str = "") -> None:
        self.node = node
        self.name = node.meta.name if node is not None else name
        # Placeholder nodes (a pod bound to an unknown node) are NotReady.
        self.ready = node is not None
        self.oversubscription = Resource()
        self.revocable_zone = ""
        self.tasks: dict[str, TaskInfo] = {}
        self._others: dict[str, object] = {}
        # Where an access to ``others`` reports this node's name (see report_others).
        self._others_reports: set[str] | None = None
        # Bumped by every task change: callers memoise per-node results against it.
        self.version = 0
        self._future_idle: tuple[int, Resource] | None = None
        # Where a task change reports this node's row (see watch).
        self._sink: list[int] | None = None
        self._sink_row = 0
        # Where a task change reports this node's name (see report_changes).
        self._reports: set[str] | None = None
        self.releasing = Resource()
        self.pipelined = Resource()
        self.used = Resource()
        if node is None:
            self.allocatable = Resource()
            self.capacity = Resource()
            self.idle = Resource()
            return
        annotations = node.meta.annotations
        if annotations.get(OVERSUBSCRIPTION_NODE) == "true":
            self.oversubscription.milli_cpu = _parse_float(
                annotations.get(OVERSUBSCRIPTION_CPU, "0")
            )
            self.oversubscription.memory = _parse_float(
                annotations.get(OVERSUBSCRIPTION_MEMORY, "0")
            )
        self.revocable_zone = node.meta.labels.get(REVOCABLE_ZONE_KEY, "")
        self.allocatable = Resource.from_list(node.allocatable).add(self.oversubscription)
        self.capacity = Resource.from_list(node.capacity or node.allocatable).add(
            self.oversubscription
        )
        self.idle = self.allocatable.clone()

    def clone(self) -> NodeInfo:
        """``NodeInfo.Clone``: a fresh node of the same Node with every task re-added (as
        clones). Re-adding would come to the sums this node holds (they were summed in
        the same order, of integral milli-values, exactly), and what ``NewNodeInfo``
        parses from the Node is what this node parsed from it, so both are copied. Every
        slot is assigned on a bare object: ``__init__`` would build seven vectors and a
        dict only for them to be replaced (a snapshot clones each node that changed)."""
        info = NodeInfo.__new__(NodeInfo)
        info.name = self.name
        info.node = self.node
        info.ready = self.ready
        info._others_reports = None
        info._future_idle = None
        info._sink = None
        info._sink_row = 0
        info._reports = None
        info.oversubscription = self.oversubscription.clone()
        info.revocable_zone = self.revocable_zone
        info.allocatable = self.allocatable.clone()
        info.capacity = self.capacity.clone()
        info.idle = self.idle.clone()
        info.used = self.used.clone()
        info.releasing = self.releasing.clone()
        info.pipelined = self.pipelined.clone()
        info._others = dict(self._others)
        info.tasks = {key: task.clone() for key, task in self.tasks.items()}
        info.version = len(info.tasks)
        return info

    def empty(self) -> None:
        """This node without its tasks, in place: ``NewNodeInfo`` of its Node, as the
        cache rebuilds a node whose pods changed. What it parsed from the Node (never
        changed since) is kept, and so is the object, which goes on reporting its
        changes: parsing the quantities again, and freeing a node to make another, cost
        the rebuild most of its time. The version goes on counting, so nothing memoised
        against it matches again."""
        self.tasks = {}
        self._others = {}
        self._future_idle = None
        self.idle = self.allocatable.clone()
        self.used = Resource()
        self.releasing = Resource()
        self.pipelined = Resource()
        self._changed()

    @property
    def others(self) -> dict[str, object]:
        """What plugins keep per node for their session (deviceshare's pools). Each
        access is reported (:meth:`report_others`), as the dict may change through it:
        the cache then copies afresh the ones a session touched, not every node's."""
        reports = self._others_reports
        if reports is not None:
            reports.add(self.name)
        return self._others

    def report_others(self, names: set[str] | None) -> None:
        """Add this node's name to ``names`` on every access to ``others`` from now on
        (None: stop)."""
        self._others_reports = names

    def take_others(self, source: NodeInfo) -> None:
        """``others`` as a clone of ``source`` would hold it; no access reported."""
        self._others = dict(source._others)

    def watch(self, sink: list[int] | None, row: int = 0) -> None:
        """Append ``row`` to ``sink`` on every task change from now on (None: stop), so a
        columnar copy of the session's nodes updates only the rows that changed."""
        self._sink, self._sink_row = sink, row

    def report_changes(self, names: set[str] | None) -> None:
        """Add this node's name to ``names`` on every task change from now on (None:
        stop), so the cache learns which nodes changed without a pass over them all."""
        self._reports = names

    def _changed(self) -> None:
        self.version += 1
        sink = self._sink
        if sink is not None:
            sink.append(self._sink_row)
        reports = self._reports
        if reports is not None:
            reports.add(self.name)

    def future_idle_view(self) -> Resource:
        """``future_idle()`` memoised until the next task change; callers must not mutate it."""
        cached = self._future_idle
        if cached is None or cached[0] != self.version:
            cached = self._future_idle = (self.version, self.future_idle())
        return cached[1]

    def future_idle(self) -> Resource:
        """Idle + Releasing - Pipelined (may be negative)."""
        idle, releasing, pipelined = self.idle, self.releasing, self.pipelined
        scalars = dict(idle.scalars)
        for name, q in releasing.scalars.items():
            scalars[name] = scalars.get(name, 0.0) + q
        if scalars:
            for name, q in pipelined.scalars.items():
                scalars[name] = scalars.get(name, 0.0) - q
        return Resource(
            idle.milli_cpu + releasing.milli_cpu - pipelined.milli_cpu,
            idle.memory + releasing.memory - pipelined.memory,
            scalars,
            idle.max_task_num,
        )

    def add_task(self, task: TaskInfo) -> None:
        """``AddTask``: account the task and store a clone; the caller's task gets our name."""
        if task.node_name and self.name and task.node_name != self.name:
            raise EngineError(
                f"task <{task.namespace}/{task.name}> already on different node <{task.node_name}>"
            )
        if task.key in self.tasks:
            raise EngineError(f"task <{task.namespace}/{task.name}> already on node <{self.name}>")
        ti = task.clone()
        if self.node is not None:
            status = ti.status
            if status is TaskStatus.Releasing:
                self.idle.sub_without_assert(ti.resreq)
                self.releasing.add(ti.resreq)
                self.used.add(ti.resreq)
            elif status is TaskStatus.Pipelined:
                self.pipelined.add(ti.resreq)
            else:
                if status is TaskStatus.Binding:
                    short = ti.resreq.less_equal_with_resources_name(self.idle, ZERO)
                    if short:
                        raise EngineError(
                            f"node {self.name} resources {short} are not enough to put task "
                            f"<{ti.namespace}/{ti.name}>, idle: {self.idle}, req: {ti.resreq}"
                        )
                self.idle.sub_without_assert(ti.resreq)
                self.used.add(ti.resreq)
        task.node_name = self.name
        ti.node_name = self.name
        self.tasks[task.key] = ti
        self._changed()

    def remove_task(self, task: TaskInfo) -> None:
        stored = self.tasks.get(task.key)
        if stored is None:
            return
        if self.node is not None:
            status = stored.status
            if status is TaskStatus.Releasing:
                self.releasing.sub(stored.resreq)
                self.idle.add(stored.resreq)
                self.used.sub(stored.resreq)
            elif status is TaskStatus.Pipelined:
                self.pipelined.sub(stored.resreq)
            else:
                self.idle.add(stored.resreq)
                self.used.sub(stored.resreq)
        del self.tasks[task.key]
        self._changed()

    def update_task(self, task: TaskInfo) -> None:
        self.remove_task(task)
        self.add_task(task)

    def pods(self) -> list[TaskInfo]:
        return list(self.tasks.values())

    def __repr__(self) -> str:
        return f"Node({self.name}: idle <{self.idle}>, used <{self.used}>)"
