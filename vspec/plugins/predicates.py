"""predicates: Kubernetes filters as Volcano runs them (``plugins/predicates/predicates.go``,
``proportional.go``, ``cache.go``).

There is no cpu/memory fit check here (actions do it). The Kubernetes PreFilter states
live in one CycleState for the whole session, as in Volcano: a Filter reads what the
last PreFilter of that plugin wrote, and a task whose PreFilter once said "Skip" skips
that Filter for the rest of the session.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, TypeVar

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import Code, Status
from vspec.api.unschedule_info import NODE_POD_NUMBER_EXCEEDED, FitError
from vspec.errors import GoError
from vspec.framework.arguments import Arguments
from vspec.framework.interface import ArgumentSpec, BoolArgument, Event, EventHandler, Plugin
from vspec.framework.registry import register_plugin
from vspec.k8s.filters import (
    InterPodAffinityState,
    PreFilterError,
    TopologySpreadState,
    inter_pod_affinity,
    inter_pod_affinity_pre_filter,
    node_affinity,
    node_ports,
    node_ports_pre_filter,
    node_unschedulable,
    pod_topology_spread,
    pod_topology_spread_pre_filter,
    taint_toleration,
)
from vspec.k8s.labels import RequiredNodeAffinity
from vspec.k8s.nodeinfo import K8sNodeInfo, Snapshot
from vspec.k8s.podinfo import HostPort, PodInfo
from vspec.model.corev1 import NodeSelectorTerm, Toleration

if TYPE_CHECKING:
    from vspec.framework.columns import Column, NodeColumns, Verdicts
    from vspec.framework.session import Session

NODE_AFFINITY_ENABLE = "predicate.NodeAffinityEnable"
NODE_AFFINITY_ENABLE_ARG = BoolArgument(
    NODE_AFFINITY_ENABLE, True, "nodeSelector and node affinity"
)
NODE_PORTS_ENABLE = "predicate.NodePortsEnable"
NODE_PORTS_ENABLE_ARG = BoolArgument(NODE_PORTS_ENABLE, True, "host port conflicts")
TAINT_TOLERATION_ENABLE = "predicate.TaintTolerationEnable"
TAINT_TOLERATION_ENABLE_ARG = BoolArgument(
    TAINT_TOLERATION_ENABLE, True, "NoSchedule/NoExecute taints"
)
POD_AFFINITY_ENABLE = "predicate.PodAffinityEnable"
POD_AFFINITY_ENABLE_ARG = BoolArgument(
    POD_AFFINITY_ENABLE, True, "required inter-pod (anti-)affinity"
)
NODE_VOLUME_LIMITS_ENABLE = "predicate.NodeVolumeLimitsEnable"
NODE_VOLUME_LIMITS_ENABLE_ARG = BoolArgument(
    NODE_VOLUME_LIMITS_ENABLE, True, "CSI volume limits (no volumes are modelled)"
)
VOLUME_ZONE_ENABLE = "predicate.VolumeZoneEnable"
VOLUME_ZONE_ENABLE_ARG = BoolArgument(
    VOLUME_ZONE_ENABLE, True, "volume zones (no volumes are modelled)"
)
POD_TOPOLOGY_SPREAD_ENABLE = "predicate.PodTopologySpreadEnable"
POD_TOPOLOGY_SPREAD_ENABLE_ARG = BoolArgument(
    POD_TOPOLOGY_SPREAD_ENABLE, True, "DoNotSchedule topology spread constraints"
)
CACHE_PREDICATE = "predicate.CacheEnable"
CACHE_PREDICATE_ARG = BoolArgument(
    CACHE_PREDICATE,
    False,
    "cache the node affinity/taint/unschedulable result per node and pod annotation "
    "volcano.sh/template-uid for the session",
)
PROPORTIONAL_PREDICATE = "predicate.ProportionalEnable"
PROPORTIONAL_PREDICATE_ARG = BoolArgument(
    PROPORTIONAL_PREDICATE,
    False,
    "keep cpu/memory in proportion to idle scalar resources of predicate.resources",
)
PROPORTIONAL_RESOURCE = "predicate.resources"
PROPORTIONAL_RESOURCES_PREFIX = PROPORTIONAL_RESOURCE + "."

POD_TEMPLATE_KEY = "volcano.sh/template-uid"

# Kubernetes plugin names (the skip set and error messages use them).
NODE_PORTS = "NodePorts"
INTER_POD_AFFINITY = "InterPodAffinity"
POD_TOPOLOGY_SPREAD = "PodTopologySpread"

# What Filter reports when its PreFilter never wrote a state this session.
_MISSING_STATE = {
    NODE_PORTS: 'reading "PreFilterNodePorts" from cycleState: not found',
    INTER_POD_AFFINITY: 'error reading "PreFilterInterPodAffinity" from cycleState: not found',
    POD_TOPOLOGY_SPREAD: 'reading "PreFilterPodTopologySpread" from cycleState: not found',
}
_NO_SKIPS: frozenset[str] = frozenset()
_ABORT_CODES = frozenset({Code.UnschedulableAndUnresolvable, Code.Error, Code.Wait, Code.Skip})


class PrePredicateError(GoError):
    """A PreFilter failed: the task is not tried on any node."""


def fit_error(task: TaskInfo, node_name: str, statuses: list[Status]) -> FitError:
    """``NewFitErrWithStatus``."""
    return FitError(task.namespace, task.name, node_name, list(statuses))


def should_abort(status: Status) -> bool:
    """``ShouldAbort``: stop checking further predicates for this node."""
    return status.code in _ABORT_CODES


@dataclass(frozen=True)
class BaseResource:
    """``baseResource``: the share of a node's idle cpu and memory the proportional
    predicate keeps for tasks of one scalar resource (a rate, 0 to 1)."""

    cpu: float
    memory: float


@dataclass
class PredicateEnable:
    """``predicateEnable``: which filters the plugin's arguments turn on."""

    node_affinity: bool = NODE_AFFINITY_ENABLE_ARG.value
    node_ports: bool = NODE_PORTS_ENABLE_ARG.value
    taint_toleration: bool = TAINT_TOLERATION_ENABLE_ARG.value
    pod_affinity: bool = POD_AFFINITY_ENABLE_ARG.value
    node_volume_limits: bool = NODE_VOLUME_LIMITS_ENABLE_ARG.value
    volume_zone: bool = VOLUME_ZONE_ENABLE_ARG.value
    pod_topology_spread: bool = POD_TOPOLOGY_SPREAD_ENABLE_ARG.value
    cache: bool = CACHE_PREDICATE_ARG.value
    proportional: bool = PROPORTIONAL_PREDICATE_ARG.value
    proportional_resources: dict[str, BaseResource] = field(default_factory=dict)

    @classmethod
    def from_arguments(cls, args: Arguments) -> PredicateEnable:
        """``enablePredicate``; a negative proportional rate becomes 1."""
        e = cls()
        e.node_affinity = NODE_AFFINITY_ENABLE_ARG.read(args)
        e.node_ports = NODE_PORTS_ENABLE_ARG.read(args)
        e.taint_toleration = TAINT_TOLERATION_ENABLE_ARG.read(args)
        e.pod_affinity = POD_AFFINITY_ENABLE_ARG.read(args)
        e.node_volume_limits = NODE_VOLUME_LIMITS_ENABLE_ARG.read(args)
        e.volume_zone = VOLUME_ZONE_ENABLE_ARG.read(args)
        e.pod_topology_spread = POD_TOPOLOGY_SPREAD_ENABLE_ARG.read(args)
        e.cache = CACHE_PREDICATE_ARG.read(args)
        e.proportional = PROPORTIONAL_PREDICATE_ARG.read(args)
        listed = args.get(PROPORTIONAL_RESOURCE)
        for raw in (listed if isinstance(listed, str) else "").split(","):
            resource = raw.strip()
            if not resource:
                continue
            prefix = PROPORTIONAL_RESOURCES_PREFIX + resource
            cpu = args.get_float(prefix + ".cpu", 1.0)
            memory = args.get_float(prefix + ".memory", 1.0)
            e.proportional_resources[resource] = BaseResource(
                1.0 if cpu < 0 else cpu, 1.0 if memory < 0 else memory
            )
        return e


StableKey = tuple[
    tuple[tuple[str, str], ...], tuple[NodeSelectorTerm, ...] | None, tuple[Toleration, ...]
]


class TaskFacts:
    """What the filters need from one pending task, derived once per session (its
    PodInfo is the cache's, derived once while the pod lives, shared with other plugins)."""

    __slots__ = ("key", "node_affinity", "pod", "stable_key", "template_uid", "tolerations")

    def __init__(
        self, task: TaskInfo, pod_info: PodInfo, stable_keys: dict[StableKey, StableKey]
    ) -> None:
        pod = task.pod
        self.key = task.key
        self.pod = pod_info
        self.tolerations: list[Toleration] = pod.tolerations
        required = RequiredNodeAffinity(
            pod.node_selector, pod.affinity.node_affinity if pod.affinity else None
        )
        # None when every node matches (no nodeSelector, no required node affinity).
        self.node_affinity = None if required.always else required
        self.template_uid = pod.meta.annotations.get(POD_TEMPLATE_KEY, "")
        # NodeUnschedulable/NodeAffinity/TaintToleration depend only on these pod fields
        # and the (immutable) node: pods alike share one interned key.
        node_affinity = pod.affinity.node_affinity if pod.affinity else None
        key = (
            tuple(sorted(pod.node_selector.items())),
            node_affinity.required if node_affinity else None,
            tuple(pod.tolerations),
        )
        self.stable_key = stable_keys.setdefault(key, key)


def check_proportional(
    task: TaskInfo, node: NodeInfo, proportional: dict[str, BaseResource]
) -> Status | None:
    """``checkNodeResourceIsProportional``: keep cpu/memory for the listed scalar resources.

    A task requesting any listed resource passes; otherwise, per listed resource the
    node has idle, idle cpu/memory after the task must stay >= idle * rate (memory * 10^6).
    """
    for name in proportional:
        if task.resreq.scalars.get(name, 0.0) > 0:
            return None
    idle, req = node.idle, task.resreq
    for name, rate in proportional.items():
        value = idle.scalars.get(name)
        if value is None:
            continue
        cpu_reserved = value * rate.cpu
        memory_reserved = value * rate.memory * 1000 * 1000
        if (
            idle.milli_cpu - req.milli_cpu < cpu_reserved
            or idle.memory - req.memory < memory_reserved
        ):
            return Status(
                Code.UnschedulableAndUnresolvable,
                f"proportional of resource {name} check failed",
                PROPORTIONAL_PREDICATE,
            )
    return None


_State = TypeVar("_State")
_Pod = TypeVar("_Pod")


def _pre_filter(
    plugin: str, run: Callable[[_Pod, Snapshot], _State | None], pod: _Pod, snapshot: Snapshot
) -> _State | None:
    """Run a PreFilter (None: skip its Filter); a failure rejects the task in Volcano's words.
    Handed the filter and its arguments, not a closure: a frame less on every task."""
    try:
        return run(pod, snapshot)
    except PreFilterError as err:
        raise PrePredicateError(f"plugin {plugin} pre-predicates failed {err}") from err


@register_plugin
class PredicatesPlugin(Plugin):
    """Kubernetes filters (node affinity/selector, taints, ports, pod (anti-)affinity,
    topology spread) plus the pod-count check, with an event handler that keeps the
    session's Kubernetes node map current."""

    name: ClassVar[str] = "predicates"
    carries_jobs: ClassVar[bool] = True
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (
        NODE_AFFINITY_ENABLE_ARG,
        NODE_PORTS_ENABLE_ARG,
        TAINT_TOLERATION_ENABLE_ARG,
        POD_AFFINITY_ENABLE_ARG,
        NODE_VOLUME_LIMITS_ENABLE_ARG,
        VOLUME_ZONE_ENABLE_ARG,
        POD_TOPOLOGY_SPREAD_ENABLE_ARG,
        CACHE_PREDICATE_ARG,
        PROPORTIONAL_PREDICATE_ARG,
        ArgumentSpec(PROPORTIONAL_RESOURCE, "string", "", "comma list of scalar resources"),
        ArgumentSpec(
            PROPORTIONAL_RESOURCES_PREFIX + "<name>.cpu", "float", "1", "cpu cores kept per unit"
        ),
        ArgumentSpec(
            PROPORTIONAL_RESOURCES_PREFIX + "<name>.memory", "float", "1", "memory GB kept per unit"
        ),
    )

    _ssn: Session
    _snapshot: Snapshot

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.enable = PredicateEnable()
        self._facts: dict[str, TaskFacts] = {}
        # The shared CycleState: the last PreFilter state each plugin wrote.
        self._ports_state: tuple[HostPort, ...] | None = None
        self._affinity_state: InterPodAffinityState | None = None
        self._spread_state: TopologySpreadState | None = None
        self._skip: dict[str, set[str]] = {}
        self._stable_keys: dict[StableKey, StableKey] = {}
        # Per node, the last stable-filter result and the pod spec it was for: tasks of
        # one job are tried one after another, so this bounded memo hits most of the time.
        self._stable_last: dict[str, tuple[StableKey, Status | None]] = {}
        self._skippable = 0
        # predicate.CacheEnable: node name -> template uid -> fit.
        self._cache: dict[str, dict[str, bool]] = {}
        # The columnar variant's per-session tables: per stable key, a code per node row.
        self._stable_columns: dict[StableKey, tuple[Column, list[Status]]] = {}
        self._stable_rows: dict[str, int] = {}  # node name -> its row in those tables

    def on_session_open(self, ssn: Session) -> None:
        self.enable = PredicateEnable.from_arguments(self.arguments)
        self._ssn = ssn
        # v1.10.0 returned at the first failing filter, and a node whose only failure was
        # its pod count passed (gate predicate_statuses, upstream e41535577).
        self._collect = ssn.gates.predicate_statuses
        # v1.10.0 kept InterPodAffinity's own code (gate pod_affinity_unresolvable).
        self._affinity_unresolvable = ssn.gates.pod_affinity_unresolvable
        self._snapshot = ssn.k8s_snapshot()
        e = self.enable
        self._skippable = sum((e.node_ports, e.pod_affinity, e.pod_topology_spread))
        ssn.add_event_handler(
            EventHandler(allocate_func=self._on_allocate, deallocate_func=self._on_deallocate)
        )
        ssn.add_pre_predicate_fn(self.name, self.pre_predicate)
        ssn.add_predicate_fn(
            self.name,
            self.predicate,
            node_local=self.node_local_key,
            columnar=self.verdicts,
            lasting=True,
        )

    # -- node map upkeep ------------------------------------------------------------------------
    def _on_allocate(self, event: Event) -> None:
        task, log = event.task, self._ssn.log
        node_name = task.node_name
        verbose = log.enabled(4)  # klog.V(4): formatted only when kept (twice per bind)
        if verbose:
            log.v(4, f"predicates, allocate {node_name}")
        k8s_node = self._ssn.node_map.get(node_name)
        if k8s_node is None:
            log.error(
                f"predicates, update pod {task.namespace}/{task.name} allocate to NOT EXIST "
                f"node [{node_name}]"
            )
            return
        if node_name not in self._ssn.nodes:
            log.error(f"Failed to get node {node_name} info from cache")
            return
        k8s_node.add_task(task, self._ssn.pod_info(task.pod))
        if verbose:
            log.v(
                4,
                f"predicates, update pod {task.namespace}/{task.name} "
                f"allocate to node [{node_name}]",
            )

    def _on_deallocate(self, event: Event) -> None:
        task, log = event.task, self._ssn.log
        node_name = task.node_name
        log.v(4, f"predicates, deallocate {node_name}")
        k8s_node = self._ssn.node_map.get(node_name)
        if k8s_node is None:
            log.error(
                f"predicates, update pod {task.namespace}/{task.name} allocate from NOT EXIST "
                f"node [{node_name}]"
            )
            return
        if node_name not in self._ssn.nodes:
            log.error(f"Failed to get node {node_name} info from cache")
            return
        if not k8s_node.remove_task(task):
            log.error(
                f"predicates, remove pod {task.namespace}/{task.name} from node [{node_name}] "
                f"error: no corresponding pod {task.name} in pods of node {node_name}"
            )
            return
        log.v(
            4,
            f"predicates, update pod {task.namespace}/{task.name} deallocate from node "
            f"[{node_name}]",
        )

    # -- PrePredicate -----------------------------------------------------------------------------
    def _task_facts(self, task: TaskInfo) -> TaskFacts:
        facts = self._facts.get(task.key)
        if facts is None or facts.pod.pod is not task.pod:
            facts = TaskFacts(task, self._ssn.pod_info(task.pod), self._stable_keys)
            self._facts[task.key] = facts
        return facts

    def _mark_skip(self, task: TaskInfo, plugin: str) -> None:
        self._skip.setdefault(task.key, set()).add(plugin)
        if self._ssn.log.enabled(5):
            self._ssn.log.v(
                5,
                f"pod({task.namespace}/{task.name}) affinity require information is nil, "
                f"plugin {plugin} is skipped",
            )

    def pre_predicate(self, task: TaskInfo) -> None:
        """NodePorts, InterPodAffinity and PodTopologySpread PreFilters.

        (Volcano also rejects restartable init containers when the SidecarContainers
        feature is off; it is on by default in Kubernetes v1.31.)
        """
        facts = self._task_facts(task)
        if self.enable.node_ports:
            ports = node_ports_pre_filter(facts.pod)
            if ports is None:
                self._mark_skip(task, NODE_PORTS)
            else:
                self._ports_state = ports
        if self.enable.pod_affinity:
            affinity = _pre_filter(
                INTER_POD_AFFINITY, inter_pod_affinity_pre_filter, facts.pod, self._snapshot
            )
            if affinity is None:
                self._mark_skip(task, INTER_POD_AFFINITY)
            else:
                self._affinity_state = affinity
        if self.enable.pod_topology_spread:
            spread = _pre_filter(
                POD_TOPOLOGY_SPREAD, pod_topology_spread_pre_filter, task.pod, self._snapshot
            )
            if spread is None:
                self._mark_skip(task, POD_TOPOLOGY_SPREAD)
            else:
                self._spread_state = spread

    # -- Predicate --------------------------------------------------------------------------------
    def node_local_key(self, task: TaskInfo) -> Hashable | None:
        """The task's node-filter fields when its verdict on a node depends on nothing else
        than them and the node's pods: every pod-dependent filter skipped for the task, no
        proportional check, no template cache (whose verdicts change once cached), and no
        log line of ours kept (V(4) and up)."""
        if self.enable.cache or self.enable.proportional or self._ssn.log.enabled(4):
            return None
        if len(self._skip.get(task.key, _NO_SKIPS)) < self._skippable:
            return None
        return self._task_facts(task).stable_key

    def verdicts(self, task: TaskInfo, cols: NodeColumns) -> Verdicts | None:
        """:meth:`predicate` on every node at once, for a task whose key is node-local:
        a missing node map entry, then the pod count and the stable filters."""
        import numpy as np

        from vspec.framework.columns import Verdicts

        facts = self._task_facts(task)
        stable, stable_statuses = self._stable_codes(facts, cols)
        pods = cols.column(("predicates", "pods"), self._pod_count, np.int64)
        crowded = cols.max_task_num() <= pods
        if not self._collect:  # v1.10.0: the pod count alone fails no node
            crowded &= stable > 0
        n = len(stable_statuses)
        pod_status = Status(Code.Unschedulable, NODE_POD_NUMBER_EXCEEDED, self.name)
        missing = Status(Code.Error, "node info not found", self.name)
        statuses = [[st] for st in stable_statuses]
        statuses.append([pod_status])
        statuses.extend([pod_status, st] for st in stable_statuses)
        statuses.append([missing])
        codes = stable + crowded.astype(np.int32) * (n + 1)
        known = cols.column(("predicates", "known"), self._known, np.bool_)
        codes[~known] = len(statuses)
        return Verdicts(codes, statuses)

    def _pod_count(self, node: NodeInfo) -> float:
        k8s_node = self._ssn.node_map.get(node.name)
        return 0 if k8s_node is None else len(k8s_node.pods)

    def _known(self, node: NodeInfo) -> bool:
        return node.name in self._ssn.node_map

    def _stable_codes(self, facts: TaskFacts, cols: NodeColumns) -> tuple[Column, list[Status]]:
        """Per node, 0 or 1 + the index of the stable filters' failing status (nodes do
        not change within a session, so once per pod spec)."""
        known = self._stable_columns.get(facts.stable_key)
        if known is not None:
            return known
        # Read from the Node objects alone: kept for later sessions while they stand.
        memo, e = self._ssn.cache.k8s, self.enable
        key = ("predicates", facts.stable_key, e.node_affinity, e.taint_toleration, cols.size)
        known = memo.node_derived(key, lambda: self._stable_table(facts, cols))
        if not self._stable_rows:
            self._stable_rows = memo.node_derived(
                ("predicates rows", cols.size),
                lambda: {name: row for row, name in enumerate(cols.names)},
            )
        self._stable_columns[facts.stable_key] = known
        return known

    def _stable_table(self, facts: TaskFacts, cols: NodeColumns) -> tuple[Column, list[Status]]:
        import numpy as np

        codes = np.zeros(cols.size, dtype=np.int32)
        table: dict[Status, int] = {}
        node_map = self._ssn.node_map
        for row, name in enumerate(cols.names):
            k8s_node = node_map.get(name)
            status = None if k8s_node is None else self._stable_filters(facts, k8s_node)
            if status is not None:
                codes[row] = table.setdefault(status, len(table) + 1)
        return codes, list(table)

    def _stable_filters(self, facts: TaskFacts, k8s_node: K8sNodeInfo) -> Status | None:
        """NodeUnschedulable, NodeAffinity, TaintToleration: all fail unresolvably. Read
        from the columnar variant's table when it has one for the pod spec: allocate
        asks the per-node predicate of the rows that changed since a key's last use."""
        name = k8s_node.name
        last = self._stable_last.get(name)
        if last is not None and last[0] is facts.stable_key:
            return last[1]
        known = self._stable_columns.get(facts.stable_key)
        row = self._stable_rows.get(name)
        if known is not None and row is not None:
            code = int(known[0][row])
            return known[1][code - 1] if code else None
        node = k8s_node.node
        status = node_unschedulable(facts.tolerations, node) if node.unschedulable else None
        if status is None and self.enable.node_affinity and facts.node_affinity is not None:
            status = node_affinity(facts.node_affinity, node)
        if status is None and self.enable.taint_toleration and node.taints:
            status = taint_toleration(facts.tolerations, node)
        self._stable_last[name] = (facts.stable_key, status)
        return status

    def _cached_stable_filters(self, facts: TaskFacts, k8s_node: K8sNodeInfo) -> Status | None:
        """``PredicateWithCache``: per node and template uid; a cached failure has its own
        reason."""
        uid = facts.template_uid
        cached = self._cache.get(k8s_node.name, {}).get(uid) if uid else None
        if cached is None:
            status = self._stable_filters(facts, k8s_node)
            if uid:
                self._cache.setdefault(k8s_node.name, {})[uid] = status is None
            else:
                self._ssn.log.v(3, f"Don't find pod {facts.pod.pod.meta.name} template uid")
            return status
        self._ssn.log.v(
            4,
            f"Predicate node {k8s_node.name} and pod {facts.pod.pod.meta.name} result "
            f"{'true' if cached else 'false'}",
        )
        if cached:
            return None
        return Status(Code.Error, "plugin equivalence cache predicates failed", CACHE_PREDICATE)

    def _runs_filter(
        self,
        task: TaskInfo,
        node: NodeInfo,
        plugin: str,
        state: object,
        statuses: list[Status],
        skips: frozenset[str] | set[str],
    ) -> bool:
        """Whether ``plugin``'s Filter runs: not when skipped for the task; a state its
        PreFilter never wrote is a Filter error, which aborts."""
        if plugin in skips:
            log = self._ssn.log
            if log.enabled(5):
                log.v(
                    5,
                    f"pod({task.namespace}/{task.name}) affinity require information is nil, "
                    f"plugin {plugin} is skip for node {node.name}",
                )
            return False
        if state is None:
            statuses.append(Status(Code.Error, _MISSING_STATE[plugin]))
            raise fit_error(task, node.name, statuses)
        return True

    def predicate(self, task: TaskInfo, node: NodeInfo) -> None:
        log = self._ssn.log
        k8s_node = self._ssn.node_map.get(node.name)
        if k8s_node is None:
            log.v(
                4,
                f"NodeInfo predicates Task <{task.namespace}/{task.name}> on Node <{node.name}> "
                "failed, node info not found",
            )
            raise fit_error(task, node.name, [Status(Code.Error, "node info not found", self.name)])
        statuses: list[Status] = []
        pods = len(k8s_node.pods)
        if node.allocatable.max_task_num <= pods:
            log.v(
                4,
                f"NodePodNumber predicates Task <{task.namespace}/{task.name}> on Node "
                f"<{node.name}> failed, allocatable <{node.allocatable.max_task_num}>, "
                f"existed <{pods}>",
            )
            statuses.append(Status(Code.Unschedulable, NODE_POD_NUMBER_EXCEEDED, self.name))
        facts = self._facts.get(task.key)
        if facts is None or facts.pod.pod is not task.pod:
            facts = self._task_facts(task)
        if self.enable.cache:
            status = self._cached_stable_filters(facts, k8s_node)
        else:
            status = self._stable_filters(facts, k8s_node)
        if status is not None:
            statuses.append(status)
            raise fit_error(task, node.name, statuses)
        skips = self._skip.get(task.key, _NO_SKIPS)
        # Fast path: every pod-dependent filter is skipped for this task (the common case).
        if len(skips) < self._skippable or self.enable.proportional or log.enabled(5):
            self._dynamic_filters(task, node, k8s_node, statuses, skips)
        if statuses and self._collect:
            raise fit_error(task, node.name, statuses)

    def _dynamic_filters(
        self,
        task: TaskInfo,
        node: NodeInfo,
        k8s_node: K8sNodeInfo,
        statuses: list[Status],
        skips: frozenset[str] | set[str],
    ) -> None:
        """Filters that depend on the pods on the node, then the proportional check.

        Appends to ``statuses``; raises the FitError at once when a status aborts.
        """
        if self.enable.node_ports and self._runs_filter(
            task, node, NODE_PORTS, self._ports_state, statuses, skips
        ):
            assert self._ports_state is not None
            status = node_ports(self._ports_state, k8s_node)
            if status is not None:
                statuses.append(status)  # Unschedulable: checking continues (v1.11.0)
                if not self._collect:
                    raise fit_error(task, node.name, statuses)
        if self.enable.pod_affinity and self._runs_filter(
            task, node, INTER_POD_AFFINITY, self._affinity_state, statuses, skips
        ):
            assert self._affinity_state is not None
            status = inter_pod_affinity(self._affinity_state, k8s_node.node)
            if status is not None:
                # Quirk (volcano#3845): any pod affinity failure is made unresolvable, so
                # preemption never tries to cure it; v1.10.0 kept the filter's own code
                # (gate pod_affinity_unresolvable, upstream e41535577).
                if self._affinity_unresolvable:
                    status = Status(Code.UnschedulableAndUnresolvable, status.reason)
                statuses.append(status)
                raise fit_error(task, node.name, statuses)
        # NodeVolumeLimits and VolumeZone pass: vspec models no volumes.
        if self.enable.pod_topology_spread and self._runs_filter(
            task, node, POD_TOPOLOGY_SPREAD, self._spread_state, statuses, skips
        ):
            assert self._spread_state is not None
            status = pod_topology_spread(self._spread_state, task.pod, k8s_node.node)
            if status is not None:
                statuses.append(status)
                if should_abort(status) or not self._collect:
                    raise fit_error(task, node.name, statuses)
        if self.enable.proportional:
            status = check_proportional(task, node, self.enable.proportional_resources)
            if status is not None:
                statuses.append(status)
                raise fit_error(task, node.name, statuses)
            self._ssn.log.v(
                4,
                f"checkNodeResourceIsProportional predicates Task <{task.namespace}/{task.name}> "
                f"on Node <{node.name}>: fit true",
            )
