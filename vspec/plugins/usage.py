"""usage: keep new pods off nodes whose measured load is high, and prefer idle nodes
(``plugins/usage/usage.go``).

The load is the node's average CPU and memory use over the metrics period (``10m``),
as Volcano's metrics source fills ``NodeInfo.ResourceUsage`` (vspec: ``node.usage``).
Metrics older than five minutes (or missing) switch the plugin off for that node.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, ClassVar

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import Code, Status
from vspec.api.unschedule_info import FitError
from vspec.framework.arguments import Arguments
from vspec.framework.interface import ArgumentSpec, IntArgument, Plugin
from vspec.framework.registry import register_plugin
from vspec.golang import format_go_duration, format_go_time, go_divide, go_float, go_map, go_value
from vspec.model.objects import NodeUsage

if TYPE_CHECKING:
    from vspec.framework.session import Session

THRESHOLDS = "thresholds"
METRICS_ACTIVE_TIME = timedelta(minutes=5)
NODE_METRICS_PERIOD = "10m"  # Volcano's source.NODE_METRICS_PERIOD
MAX_NODE_SCORE = 100
NODE_USAGE_CPU_EXTEND = "the CPU load of the node exceeds the upper limit."
NODE_USAGE_MEMORY_EXTEND = "the memory load of the node exceeds the upper limit."
_NO_USAGE = NodeUsage()


def node_usage(node: NodeInfo) -> NodeUsage:
    return node.node.usage if node.node is not None and node.node.usage is not None else _NO_USAGE


USAGE_WEIGHT = IntArgument("usage.weight", 5, "weight of the usage score")
CPU_WEIGHT = IntArgument("cpu.weight", 1, "weight of CPU idleness within the score")
MEMORY_WEIGHT = IntArgument("memory.weight", 1, "weight of memory idleness within the score")


@register_plugin
class UsagePlugin(Plugin):
    """Predicate and NodeOrder from the nodes' measured CPU and memory load."""

    name: ClassVar[str] = "usage"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (
        USAGE_WEIGHT,
        CPU_WEIGHT,
        MEMORY_WEIGHT,
        ArgumentSpec(
            THRESHOLDS,
            "map",
            "{cpu: 80, mem: 80}",
            "load in percent above which a node takes no new pod (integer values only)",
        ),
    )

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.usage_weight = USAGE_WEIGHT.read(arguments)
        self.cpu_weight = CPU_WEIGHT.read(arguments)
        self.memory_weight = MEMORY_WEIGHT.read(arguments)
        self.cpu_thresholds = 80.0
        self.mem_thresholds = 80.0
        self.period = NODE_METRICS_PERIOD
        self.argument_errors: list[str] = []
        thresholds = arguments.get(THRESHOLDS)
        if thresholds is None:
            self.argument_errors.append(
                "Failed to obtain thresholds information, usage plugin arguments is "
                f"{go_value(dict(arguments))}"
            )
        elif not isinstance(thresholds, Mapping):
            self.argument_errors.append(
                "Failed to convert the thresholds information, thresholds args values is "
                f"{go_value(thresholds)}"
            )
        else:
            for resource, threshold in thresholds.items():
                # Quirk kept: a value that is not a YAML integer counts as 0.
                value = threshold if isinstance(threshold, int) else 0
                if resource == "cpu":
                    self.cpu_thresholds = float(value)
                elif resource == "mem":
                    self.mem_thresholds = float(value)

    def _stale(self, ssn: Session, usage: NodeUsage) -> bool:
        return not self.period or ssn.now - usage.time > METRICS_ACTIVE_TIME

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log
        for message in self.argument_errors:
            log.error(message)
        log.v(5, "Enter usage plugin ...")
        if log.enabled(4):
            for name, info in ssn.nodes.items():
                usage = node_usage(info)
                log.v(
                    4,
                    f"node:{name}, cpu usage:{go_map(usage.cpu)}, mem usage:"
                    f"{go_map(usage.memory)}, metrics time is {format_go_time(usage.time)}",
                )
        period = self.period
        active = format_go_duration(METRICS_ACTIVE_TIME)

        def predicate(task: TaskInfo, node: NodeInfo) -> None:
            usage = node_usage(node)
            if self._stale(ssn, usage):
                log.v(
                    4,
                    f"The period({period}) is empty or the usage metrics data is not updated "
                    f"for more than {active} minutes, Usage plugin filter for task "
                    f"{task.namespace}/{task.name} on node {node.name} pass, metrics time is "
                    f"{format_go_time(usage.time)}. ",
                )
                return
            log.v(
                4,
                f"predicateFn cpuUsageAvg:{go_float(self.cpu_thresholds)},predicateFn "
                f"memUsageAvg:{go_float(self.mem_thresholds)}",
            )
            cpu = usage.cpu.get(period, 0.0)
            if cpu > self.cpu_thresholds:
                log.v(
                    3,
                    f"Node {node.name} cpu usage {cpu:f} exceeds the threshold "
                    f"{self.cpu_thresholds:f}",
                )
                raise self._fit_error(task, node, NODE_USAGE_CPU_EXTEND)
            memory = usage.memory.get(period, 0.0)
            if memory > self.mem_thresholds:
                log.v(
                    3,
                    f"Node {node.name} mem usage {memory:f} exceeds the threshold "
                    f"{self.mem_thresholds:f}",
                )
                raise self._fit_error(task, node, NODE_USAGE_MEMORY_EXTEND)
            log.v(
                4,
                f"Usage plugin filter for task {task.namespace}/{task.name} on node "
                f"{node.name} pass.",
            )

        def node_order(task: TaskInfo, node: NodeInfo) -> float:
            usage = node_usage(node)
            if self._stale(ssn, usage):
                log.v(
                    4,
                    f"The period({period}) is empty or the usage metrics data is not updated "
                    f"for more than {active} minutes, Usage plugin score for task "
                    f"{task.namespace}/{task.name} on node {node.name} is 0, metrics time is "
                    f"{format_go_time(usage.time)}. ",
                )
                return 0.0
            cpu = usage.cpu.get(period)
            log.v(4, f"Node {node.name} cpu usage is {cpu or 0.0:f}.")
            if cpu is None:
                return 0.0
            cpu_score = (100 - cpu) / 100 * self.cpu_weight
            memory = usage.memory.get(period)
            log.v(4, f"Node {node.name} memory usage is {memory or 0.0:f}.")
            if memory is None:
                return 0.0
            memory_score = (100 - memory) / 100 * self.memory_weight
            score = go_divide(cpu_score + memory_score, self.cpu_weight + self.memory_weight)
            score *= MAX_NODE_SCORE * self.usage_weight
            log.v(4, f"Node {node.name} score for task {task.name} is {score:f}.")
            return score

        ssn.add_predicate_fn(self.name, predicate)
        ssn.add_node_order_fn(self.name, node_order)
        log.v(5, "Leaving usage plugin ...")

    @staticmethod
    def _fit_error(task: TaskInfo, node: NodeInfo, reason: str) -> FitError:
        return FitError.with_status(
            task, node.name, Status(Code.UnschedulableAndUnresolvable, reason, "usage")
        )
