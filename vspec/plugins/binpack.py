"""binpack: prefer nodes that the task fills most (``plugins/binpack/binpack.go``)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from operator import attrgetter, methodcaller
from typing import TYPE_CHECKING, ClassVar

from vspec.api.node_info import NodeInfo
from vspec.api.resource import CPU, MEMORY, Resource
from vspec.api.task_info import TaskInfo
from vspec.framework.arguments import Arguments
from vspec.framework.interface import ArgumentSpec, IntArgument, Plugin
from vspec.framework.log import Klog
from vspec.framework.registry import register_plugin
from vspec.golang import go_float

if TYPE_CHECKING:
    from vspec.framework.columns import Column, NodeColumns
    from vspec.framework.session import Session

BINPACK_WEIGHT = "binpack.weight"
BINPACK_WEIGHT_ARG = IntArgument(BINPACK_WEIGHT, 1, "weight of the whole score; 0 disables it")
BINPACK_CPU = "binpack.cpu"
BINPACK_CPU_ARG = IntArgument(BINPACK_CPU, 1, "weight of cpu; negative means 1")
BINPACK_MEMORY = "binpack.memory"
BINPACK_MEMORY_ARG = IntArgument(BINPACK_MEMORY, 1, "weight of memory; negative means 1")
BINPACK_RESOURCES = "binpack.resources"
BINPACK_RESOURCES_PREFIX = BINPACK_RESOURCES + "."
MAX_NODE_SCORE = 100


@dataclass
class PriorityWeight:
    """The plugin weight and one weight per resource (cpu and memory always present)."""

    weight: int = BINPACK_WEIGHT_ARG.value
    cpu: int = BINPACK_CPU_ARG.value
    memory: int = BINPACK_MEMORY_ARG.value
    resources: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_arguments(cls, args: Arguments) -> PriorityWeight:
        """``calculateWeight``: negative resource weights become 1; a plugin weight of 0
        disables scoring."""
        w = cls()
        w.weight = BINPACK_WEIGHT_ARG.read(args)
        w.cpu = BINPACK_CPU_ARG.read(args)
        if w.cpu < 0:
            w.cpu = 1
        w.memory = BINPACK_MEMORY_ARG.read(args)
        if w.memory < 0:
            w.memory = 1
        listed = args.get(BINPACK_RESOURCES)
        for raw in (listed if isinstance(listed, str) else "").split(","):
            resource = raw.strip()
            if not resource:
                continue
            weight = args.get_int(BINPACK_RESOURCES_PREFIX + resource, 1)
            w.resources[resource] = 1 if weight < 0 else weight
        # cpu and memory weights win over a "binpack.resources" entry of the same name.
        w.resources[CPU] = w.cpu
        w.resources[MEMORY] = w.memory
        return w

    def __str__(self) -> str:
        parts = [
            f"{BINPACK_WEIGHT}[{self.weight}]",
            f"{BINPACK_CPU}[{self.cpu}]",
            f"{BINPACK_MEMORY}[{self.memory}]",
        ]
        parts.extend(f"{name}[{weight}]" for name, weight in self.resources.items())
        return ", ".join(parts)


# A resource binpack weighs for a task: its name, how to read it off a node's vector
# (``get``), the task's request and its weight.
Term = tuple[str, Callable[[Resource], float], float, int]


def _reader(resource: str) -> Callable[[Resource], float]:
    """``vector.get(resource)``; cpu and memory by an attribute getter, which runs no
    Python frame (a node's score reads two resources of two vectors)."""
    if resource == CPU:
        return attrgetter("milli_cpu")
    if resource == MEMORY:
        return attrgetter("memory")
    return methodcaller("get", resource)


def _weighed_requests(task: TaskInfo, weight: PriorityWeight) -> list[Term]:
    """The task's requested resources that binpack weighs (a zero request or a resource
    without a weight is left out), in ``resource_names`` order: the same for every node,
    so worked out once when several nodes are scored."""
    terms: list[Term] = []
    requested = task.resreq
    for resource in requested.resource_names():
        request = requested.get(resource)
        resource_weight = weight.resources.get(resource)
        if request != 0 and resource_weight is not None:
            terms.append((resource, _reader(resource), request, resource_weight))
    return terms


def binpacking_score(
    task: TaskInfo, node: NodeInfo, terms: list[Term], weight: PriorityWeight, log: Klog
) -> float:
    """Weighted mean of (used + request) / allocatable over the task's weighed resources
    (``terms``, its :func:`_weighed_requests`), times 100 * binpack.weight; 0 on a node
    where any of them would not fit.

    A resource the node has none of scores 0 but its weight still counts.
    """
    score = 0.0
    weight_sum = 0
    allocatable, used = node.allocatable, node.used
    detail = log.enabled(5)  # asked once: the level holds for the call
    for resource, read, request, resource_weight in terms:
        capacity = read(allocatable)
        node_used = read(used)
        resource_score = 0.0
        if capacity != 0 and resource_weight != 0:
            used_finally = request + node_used
            if used_finally > capacity:
                if log.enabled(4):
                    log.v(
                        4,
                        f"task {task.namespace}/{task.name} cannot binpack node {node.name}: "
                        f"resource: {resource} is not enough, need {request:f}, used "
                        f"{node_used:f}, allocatable {capacity:f}",
                    )
                return 0.0
            resource_score = used_finally * resource_weight / capacity
        if detail:
            log.v(
                5,
                f"task {task.namespace}/{task.name} on node {node.name} resource {resource}, "
                f"need {request:f}, used {node_used:f}, allocatable {capacity:f}, weight "
                f"{resource_weight}, score {resource_score:f}",
            )
        score += resource_score
        weight_sum += resource_weight
    if weight_sum > 0:
        score /= weight_sum
    return score * float(MAX_NODE_SCORE * weight.weight)


def binpacking_scores(
    task: TaskInfo, cols: NodeColumns, rows: Column, weight: PriorityWeight
) -> Column:
    """:func:`binpacking_score` for the nodes at ``rows`` at once, the same float64 steps
    in the same order (a node where some resource would not fit scores 0)."""
    import numpy as np

    score = np.zeros(len(rows), dtype=np.float64)
    overflow = np.zeros(len(rows), dtype=np.bool_)
    weight_sum = 0
    for resource, _, request, resource_weight in _weighed_requests(task, weight):
        if resource_weight != 0:
            capacity = cols.allocatable(resource)[rows]
            has = capacity != 0
            used_finally = request + cols.used(resource)[rows]
            overflow |= has & (used_finally > capacity)
            safe = np.where(has, capacity, 1.0)
            score = score + np.where(has, used_finally * float(resource_weight) / safe, 0.0)
        else:
            score = score + 0.0
        weight_sum += resource_weight
    if weight_sum > 0:
        score = score / float(weight_sum)
    result: Column = np.where(overflow, 0.0, score * float(MAX_NODE_SCORE * weight.weight))
    return result


@register_plugin
class BinpackPlugin(Plugin):
    """Best-fit node scoring over cpu, memory and configured extended resources."""

    name: ClassVar[str] = "binpack"
    carries_jobs: ClassVar[bool] = True
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (
        BINPACK_WEIGHT_ARG,
        BINPACK_CPU_ARG,
        BINPACK_MEMORY_ARG,
        ArgumentSpec(
            BINPACK_RESOURCES,
            "string",
            "",
            "comma-separated extra resource names to score (e.g. nvidia.com/gpu)",
        ),
        ArgumentSpec(
            BINPACK_RESOURCES_PREFIX + "<name>",
            "int",
            "1",
            "weight of a resource listed in binpack.resources; negative means 1",
        ),
    )

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.weight = PriorityWeight.from_arguments(arguments)

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log
        log.v(5, "Enter binpack plugin ...")
        if log.enabled(4):
            missing = [
                resource
                for resource in self.weight.resources
                if not any(n.allocatable.get(resource) > 0 for n in ssn.nodes.values())
            ]
            log.v(4, f"resources [{', '.join(missing)}] record in weight but not found on any node")
        weight = self.weight

        # Memo: a node's score only changes with its tasks (NodeInfo.version) or the
        # request; tasks of one job share requests, so most calls are hits.
        memo: dict[str, tuple[int, Hashable, float]] = {}
        # Per request, its weighed resources (the tasks of a job share one request).
        weighed: dict[Hashable, list[Term]] = {}

        def terms_of(task: TaskInfo, signature: Hashable) -> list[Term]:
            terms = weighed.get(signature)
            if terms is None:
                terms = weighed[signature] = _weighed_requests(task, weight)
            return terms

        def node_order(task: TaskInfo, node: NodeInfo) -> float:
            key = task.resreq.signature()
            hit = memo.get(node.name)
            if hit is not None and hit[0] == node.version and hit[1] == key and not log.enabled(4):
                score = hit[2]
            else:
                score = binpacking_score(task, node, terms_of(task, key), weight, log)
                memo[node.name] = (node.version, key, score)
            if log.enabled(4):
                log.v(
                    4,
                    f"Binpack score for Task {task.namespace}/{task.name} on node {node.name} "
                    f"is: {go_float(score)}",
                )
            return score

        def node_local(task: TaskInfo) -> Hashable | None:
            """The score reads the request and the node's used/allocatable only; memoisable
            unless its V(4)/V(5) lines are kept."""
            return None if log.enabled(4) else task.resreq.signature()

        def columnar(task: TaskInfo, cols: NodeColumns, rows: Column) -> Column:
            import numpy as np

            if cols.few(len(rows)):  # row by row is cheaper (no log line below V(4))
                terms = terms_of(task, task.resreq.signature())
                nodes = cols.nodes
                return np.array(
                    [binpacking_score(task, nodes[r], terms, weight, log) for r in rows.tolist()]
                )
            return binpacking_scores(task, cols, rows, weight)

        if weight.weight != 0:
            ssn.add_node_order_fn(
                self.name, node_order, node_local=node_local, columnar=columnar, lasting=True
            )
        else:
            log.v(0, "binpack weight is zero, skip node order function")
        log.v(5, f"Leaving binpack plugin. {weight} ...")
