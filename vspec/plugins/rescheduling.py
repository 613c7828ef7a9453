"""rescheduling: evict pods from over-utilised nodes so they can land on under-utilised
ones (``plugins/rescheduling/*.go``, strategy ``lowNodeUtilization``).

Utilisation is the nodes' *measured* load (``node.usage``, period ``metricsPeriod``),
not their requests. The strategy only runs once per ``interval``, counted from the
scheduler's start, so in a short simulation it needs a short interval. Its VictimTasks
function is what shuffle evicts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.log import Klog
from vspec.framework.registry import register_plugin
from vspec.golang import go_float, go_value, parse_duration
from vspec.k8s.qos import BEST_EFFORT, BURSTABLE, GUARANTEED, pod_qos_class
from vspec.model.objects import Node, Pod
from vspec.model.quantity import milli_value, value
from vspec.plugins._job_accounting import format_tasks
from vspec.plugins._process_state import process_memory

if TYPE_CHECKING:
    from vspec.framework.session import Session

DEFAULT_INTERVAL = timedelta(minutes=5)
DEFAULT_METRICS_PERIOD = "5m"
LOW_NODE_UTILIZATION = "lowNodeUtilization"
LAST_RESCHEDULE_TIME = "rescheduling.lastRescheduleTime"
METRICS_PERIOD = "rescheduling.MetricsPeriod"
RESOURCES = ("cpu", "memory")


def _default_thresholds() -> dict[str, float]:
    return {"cpu": 100.0, "memory": 100.0, "pods": 100.0}


@dataclass
class LowNodeUtilizationConf:
    """Below ``thresholds`` a node is a target, above ``target_thresholds`` a source."""

    thresholds: dict[str, float] = field(default_factory=_default_thresholds)
    target_thresholds: dict[str, float] = field(default_factory=_default_thresholds)

    def parse(self, params: Mapping[str, Any] | None, log: Klog) -> None:
        """Only YAML maps are read; Volcano's own default (a typed Go map) is not, with a
        warning, so the built-in strategy always uses 100% everywhere."""
        if params is None:
            log.warning("Assert lowThresholdsConfigs to map error, abort the configuration parse.")
            return
        for key, into, what in (
            ("thresholds", self.thresholds, "lowThresholdsConfigs"),
            ("targetThresholds", self.target_thresholds, "targetThresholdsConfigs"),
        ):
            if key not in params:
                continue
            raw = params[key]
            if not isinstance(raw, Mapping):
                log.warning(f"Assert {what} to map error, abort the configuration parse.")
                return
            # Quirk kept: the pod-count key read is "pod", not "pods".
            for name in ("cpu", "memory", "pod"):
                if name in raw:
                    into[name] = float(raw[name])


@dataclass
class Strategy:
    name: str
    params: Mapping[str, Any] | None  # None: Volcano's built-in default (not a YAML map)


@dataclass
class NodeUtilization:
    node: Node
    utilization: dict[str, float]
    pods: list[Pod]


def _pod_order_key(pod: Pod) -> tuple[int, int, int]:
    """``sortPods``: no priority first, then lower priority, then BestEffort, Burstable,
    Guaranteed. (Go's sort.Slice is not stable; ties keep node order here.)"""
    rank = {BEST_EFFORT: 0, BURSTABLE: 1, GUARANTEED: 2}[pod_qos_class(pod)]
    if pod.priority is None:
        return (0, 0, rank)
    return (1, pod.priority, rank)


def _capacity(node: Node) -> tuple[int, int]:
    """(milli-cpu, memory bytes) of ``getNodeCapacity``: allocatable, else capacity."""
    resources = node.allocatable or node.capacity
    cpu, mem = resources.get("cpu"), resources.get("memory")
    return (milli_value(cpu) if cpu is not None else 0, value(mem) if mem is not None else 0)


def _percent_to_amount(name: str, percent: float, node: Node) -> int:
    cpu, mem = _capacity(node)
    return int(percent * (cpu if name == "cpu" else mem) * 0.01)


def _amount_to_percent(name: str, amount: float, node: Node) -> float:
    """Against ``status.capacity`` (not allocatable), as Volcano does."""
    q = node.capacity.get(name)
    total = float(q) if q is not None else 0.0
    amount = amount / 1000 if name == "cpu" else amount
    if total == 0:
        return math.copysign(math.inf, amount) if amount else math.nan
    return amount * 100 / total


class LowNodeUtilization:
    """The ``lowNodeUtilization`` victim function for one session."""

    def __init__(self, ssn: Session, conf: LowNodeUtilizationConf, period: str) -> None:
        self.ssn = ssn
        self.conf = conf
        self.period = period

    def node_utilization(self) -> list[NodeUtilization]:
        result = []
        for info in self.ssn.nodes.values():
            node = info.node
            if node is None:
                continue
            usage = node.usage
            utilization = {
                "cpu": usage.cpu.get(self.period, 0.0) if usage else 0.0,
                "memory": usage.memory.get(self.period, 0.0) if usage else 0.0,
            }
            result.append(NodeUtilization(node, utilization, self._pods(info)))
            self.ssn.log.v(
                4,
                f"node: {node.meta.name}, cpu: {go_float(utilization['cpu'])}, memory: "
                f"{go_float(utilization['memory'])}",
            )
        return result

    @staticmethod
    def _pods(info: NodeInfo) -> list[Pod]:
        return [task.pod for task in info.tasks.values()]

    def is_low(self, usage: NodeUtilization) -> bool:
        if usage.node.unschedulable:
            return False
        thresholds = self.conf.thresholds
        return all(
            percent < thresholds[name]
            for name, percent in usage.utilization.items()
            if name in thresholds
        )

    def is_high(self, usage: NodeUtilization) -> bool:
        targets = self.conf.target_thresholds
        return any(
            percent > targets[name]
            for name, percent in usage.utilization.items()
            if name in targets
        )

    def keep_evicting(self, usage: NodeUtilization, room: dict[str, int]) -> bool:
        """The source node is still at or above its target and the targets have room
        (any non-zero amount, negative included, as in Volcano)."""
        targets = self.conf.target_thresholds
        overused = any(
            percent >= targets[name]
            for name, percent in usage.utilization.items()
            if name in targets
        )
        return overused and all(amount != 0 for amount in room.values())

    def __call__(self, tasks: list[TaskInfo]) -> list[TaskInfo]:
        log = self.ssn.log
        nodes = self.node_utilization()
        low = [n for n in nodes if self.is_low(n)]
        high = [n for n in nodes if not self.is_low(n) and self.is_high(n)]
        log.v(4, f"lowNodes: {[n.node.meta.name for n in low]}")
        log.v(4, f"highNodes: {[n.node.meta.name for n in high]}")
        if not low:
            log.v(4, "The resource utilization of all nodes is above the threshold")
            return []
        if len(low) == len(self.ssn.nodes):
            log.v(4, "The resource utilization of all nodes is below the threshold")
            return []
        if not high:
            log.v(4, "The resource utilization of all nodes is below the target threshold")
            return []
        return self.evict_from(high, low, tasks)

    def evict_from(
        self, sources: list[NodeUtilization], targets: list[NodeUtilization], tasks: list[TaskInfo]
    ) -> list[TaskInfo]:
        log = self.ssn.log
        room = {"cpu": 0, "memory": 0}
        for target in targets:
            for name in RESOURCES:
                room[name] += _percent_to_amount(
                    name, self.conf.target_thresholds[name], target.node
                )
                room[name] -= _percent_to_amount(name, target.utilization[name], target.node)
        log.v(4, f"totalAllocatableResource: {room}")
        sources.sort(key=lambda n: n.utilization["cpu"] + n.utilization["memory"], reverse=True)
        victims: list[TaskInfo] = []
        for source in sources:
            if not source.pods:
                log.v(4, f"No pods can be removed on node: {source.node.meta.name}")
                continue
            source.pods.sort(key=_pod_order_key)
            victims.extend(self._evict(source, room, tasks))
        log.v(3, f"victims: {format_tasks(victims)}")
        return victims

    def _evict(
        self, source: NodeUtilization, room: dict[str, int], tasks: list[TaskInfo]
    ) -> list[TaskInfo]:
        log = self.ssn.log
        victims: list[TaskInfo] = []
        for pod in source.pods:
            if not self.keep_evicting(source, room):
                log.v(3, "stop evict pods")
                return victims
            # Quirk kept: candidates are matched by pod name only, not namespace.
            task = next((t for t in tasks if t.pod.meta.name == pod.meta.name), None)
            if task is None:
                continue
            used_cpu, used_mem = int(task.resreq.milli_cpu), int(task.resreq.memory)
            room["cpu"] -= used_cpu
            room["memory"] -= used_mem
            source.utilization["cpu"] -= _amount_to_percent("cpu", used_cpu, source.node)
            source.utilization["memory"] -= _amount_to_percent("memory", used_mem, source.node)
            log.v(4, f"totalAllocatableResource: {room}")
            log.v(
                4,
                f"node: {source.node.meta.name}, utilization: "
                f"map[cpu:{go_float(source.utilization['cpu'])} "
                f"memory:{go_float(source.utilization['memory'])}]",
            )
            victims.append(task)
        return victims


@register_plugin
class ReschedulingPlugin(Plugin):
    """VictimTasks: evict from nodes whose measured load is above target (lowNodeUtilization)."""

    name: ClassVar[str] = "rescheduling"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (
        ArgumentSpec("interval", "duration", "5m", "least time between two runs, from start"),
        ArgumentSpec("metricsPeriod", "string", "5m", "the usage period read from node.usage"),
        ArgumentSpec(
            "strategies",
            "list",
            "[{name: lowNodeUtilization}]",
            "strategies with params {thresholds, targetThresholds} (percent per resource)",
        ),
    )

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log
        log.v(5, "Enter rescheduling plugin ...")
        memory = process_memory(ssn)
        interval, strategies = self._parse_arguments(ssn, memory)
        period = memory.get(METRICS_PERIOD)
        if not self._time_to_run(ssn.now, interval, memory):
            log.v(3, "It is not the time to execute rescheduling strategies.")
            log.v(5, "Leaving rescheduling plugin.")
            return
        fns = []
        for strategy in strategies:
            if strategy.name == LOW_NODE_UTILIZATION:
                log.v(4, f"strategy: {strategy.name}")
                conf = LowNodeUtilizationConf()
                conf.parse(strategy.params, log)
                fns.append(LowNodeUtilization(ssn, conf, str(period)))
        ssn.add_victim_tasks_fns(self.name, fns)
        log.v(5, "Leaving rescheduling plugin.")

    @staticmethod
    def _time_to_run(now: datetime, interval: timedelta, memory: dict[str, object]) -> bool:
        """Once per interval, counted from the scheduler's start (the first session).

        Go compares with a strict ``Before`` on a clock that always moves on between
        start-up and a session; on vspec's discrete clock the interval is inclusive.
        """
        last = memory.setdefault(LAST_RESCHEDULE_TIME, now)
        assert isinstance(last, datetime)
        if last + interval <= now:
            memory[LAST_RESCHEDULE_TIME] = now
            return True
        return False

    def _parse_arguments(
        self, ssn: Session, memory: dict[str, object]
    ) -> tuple[timedelta, list[Strategy]]:
        log = ssn.log
        args = self.arguments
        raw_interval = args.get("interval", "")
        try:
            interval = parse_duration(str(raw_interval))
        except ValueError:
            log.v(4, "Parse rescheduling interval failed. Reset the interval to 5m by default.")
            interval = DEFAULT_INTERVAL
        # MetricsPeriod is a package variable: once set it stays for later sessions.
        if "metricsPeriod" in args:
            memory[METRICS_PERIOD] = str(args["metricsPeriod"])
        if not memory.get(METRICS_PERIOD):
            memory[METRICS_PERIOD] = DEFAULT_METRICS_PERIOD
        strategies = [Strategy(LOW_NODE_UTILIZATION, None)]
        raw = args.get("strategies")
        if raw is not None:
            entries = raw if isinstance(raw, list) else []
            if entries:
                strategies = []
            for entry in entries:
                if not isinstance(entry, Mapping):
                    log.v(3, f"Decode error: '' expected a map, got '{type(entry).__name__}'")
                    continue
                params = entry.get("params")
                strategies.append(
                    Strategy(
                        str(entry.get("name", "")), params if isinstance(params, Mapping) else {}
                    )
                )
            registered = {s.name: s.params for s in strategies}
            log.v(3, f"RegisteredStrategyConfigs: {go_value(registered)}")
        for strategy in strategies:
            params = "map[]" if strategy.params is None else go_value(strategy.params)
            log.v(3, f"strategy: {strategy.name}, params: {params}")
        return interval, strategies
