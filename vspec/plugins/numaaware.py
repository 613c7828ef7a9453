"""numa-aware: place Guaranteed pods where the kubelet's topology manager will be able
to pin their CPUs within few NUMA nodes (``plugins/numaaware/**``).

A node's CPU topology and policies come from its ``Numatopology`` object (cluster
scoped, named like the node): ``spec.policies`` (``CPUManagerPolicy``,
``TopologyManagerPolicy``), ``spec.numares.cpu.allocatable`` (a cpuset such as
``0-7``), ``spec.cpuDetail`` (cpu id -> ``{numa, socket, core}``) and
``spec.resReserved``. A pod opts in with the annotation
``volcano.sh/numa-topology-policy`` (best-effort, restricted, single-numa-node), which
must equal the node's topology manager policy. The predicate simulates the kubelet's
CPU assignment; BatchNodeOrder prefers nodes where it spans fewer NUMA nodes.

The CPUs assigned to the tasks placed in a session are taken out of the node's
allocatable for later sessions: Volcano writes them into its cache's NUMA info at close
(``UpdateSchedulerNumaInfo``), where they stay until the Numatopology object changes,
which it never does in a spec. Nothing reaches the pod: the bind's
``volcano.sh/topology-decision`` patch only repeats a decision the pod already carried.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import NUMA_POLICY_KEY, TaskInfo
from vspec.api.types import Code, Status
from vspec.api.unschedule_info import FitError
from vspec.errors import GoError, SpecError
from vspec.framework.arguments import Arguments
from vspec.framework.interface import ArgumentSpec, Event, EventHandler, IntArgument, Plugin
from vspec.framework.log import Klog
from vspec.framework.registry import register_plugin
from vspec.golang import go_insertion_sort
from vspec.k8s.qos import GUARANTEED, pod_qos_class
from vspec.model.corev1 import Container
from vspec.model.quantity import milli_value, parse_quantity, value
from vspec.plugins._process_state import process_memory

if TYPE_CHECKING:
    from vspec.framework.session import Session

NUMA_TOPO_WEIGHT = "weight"
NUMA_TOPO_WEIGHT_ARG = IntArgument(NUMA_TOPO_WEIGHT, 1, "weight of the NUMA-span score")
CPU_MANAGER_POLICY = "CPUManagerPolicy"
TOPOLOGY_MANAGER_POLICY = "TopologyManagerPolicy"
MAX_NODE_SCORE = 100
# The scheduler cache's NUMA allocations, which outlive sessions: node -> ResNumaSets.
CACHE_ALLOCATED = "numa-aware.allocated"

CPUSet = frozenset[int]
ResNumaSets = dict[str, CPUSet]


class CPUSetError(GoError, ValueError):
    """Not a Linux cpuset list (``0-3,8``)."""


def parse_cpuset(text: str) -> CPUSet:
    """``cpuset.Parse``: comma-separated ids and inclusive ranges; "" is empty."""
    cpus: set[int] = set()
    for part in filter(None, text.split(",")):
        low, sep, high = part.partition("-")
        try:
            first, last = int(low), int(high) if sep else int(low)
        except ValueError:
            raise CPUSetError(f"invalid cpuset {text!r}") from None
        if last < first:
            raise CPUSetError(f"invalid cpuset range {part!r}")
        cpus.update(range(first, last + 1))
    return frozenset(cpus)


def format_cpuset(cpus: Iterable[int]) -> str:
    """``CPUSet.String()``: sorted ids with runs collapsed (``0-3,8``)."""
    ordered = sorted(cpus)
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


@dataclass(frozen=True)
class CPUInfo:
    numa: int
    socket: int
    core: int


class CPUDetails:
    """``topology.CPUDetails``: cpu id -> its NUMA node, socket and core."""

    def __init__(self, cpus: Mapping[int, CPUInfo]) -> None:
        self.cpus = dict(cpus)

    def keep_only(self, keep: CPUSet) -> CPUDetails:
        return CPUDetails({c: i for c, i in self.cpus.items() if c in keep})

    def all_cpus(self) -> CPUSet:
        return frozenset(self.cpus)

    def numa_nodes(self) -> list[int]:
        return sorted({i.numa for i in self.cpus.values()})

    def sockets(self) -> list[int]:
        return sorted({i.socket for i in self.cpus.values()})

    def cores(self) -> list[int]:
        return sorted({i.core for i in self.cpus.values()})

    def cpus_where(self, keep: Callable[[CPUInfo], bool]) -> CPUSet:
        return frozenset(c for c, i in self.cpus.items() if keep(i))

    def cpus_in_numa_nodes(self, ids: Iterable[int]) -> CPUSet:
        wanted = set(ids)
        return self.cpus_where(lambda i: i.numa in wanted)

    def cpus_in_sockets(self, *ids: int) -> CPUSet:
        return self.cpus_where(lambda i: i.socket in ids)

    def cpus_in_cores(self, *ids: int) -> CPUSet:
        return self.cpus_where(lambda i: i.core in ids)

    def cores_in_sockets(self, *ids: int) -> list[int]:
        return sorted({i.core for i in self.cpus.values() if i.socket in ids})


@dataclass
class NumaTopology:
    """A node's ``NumatopoInfo`` as read from its Numatopology object."""

    policies: dict[str, str]
    allocatable: ResNumaSets
    details: CPUDetails
    reserved_cpu: float | None  # spec.resReserved.cpu in cores

    @classmethod
    def parse(cls, spec: Mapping[str, Any]) -> NumaTopology:
        policies = {str(k): str(v) for k, v in (spec.get("policies") or {}).items()}
        allocatable = {
            str(name): parse_cpuset(str((info or {}).get("allocatable", "")))
            for name, info in (spec.get("numares") or {}).items()
        }
        details = CPUDetails(
            {
                int(cpu): CPUInfo(
                    int(info.get("numa", 0)), int(info.get("socket", 0)), int(info.get("core", 0))
                )
                for cpu, info in (spec.get("cpuDetail") or {}).items()
            }
        )
        reserved = (spec.get("resReserved") or {}).get("cpu")
        reserved_cpu = None if reserved is None else milli_value(parse_quantity(reserved)) / 1000
        return cls(policies, allocatable, details, reserved_cpu)


@dataclass(frozen=True)
class TopologyHint:
    """A NUMA affinity (a bit mask; None: any) and whether it is a preferred one."""

    affinity: int | None
    preferred: bool

    def __str__(self) -> str:
        return f"{{{format_mask(self.affinity)} {str(self.preferred).lower()}}}"


def mask_of(bits: Iterable[int]) -> int:
    mask = 0
    for bit in bits:
        mask |= 1 << bit
    return mask


def mask_bits(mask: int) -> list[int]:
    return [bit for bit in range(mask.bit_length()) if mask >> bit & 1]


def format_mask(mask: int | None) -> str:
    """``bitMask.String()``: binary, zero-padded to an even width."""
    if mask is None:
        return "<nil>"
    width = 2
    while mask >= 1 << width:
        width += 2
    return format(mask, f"0{width}b")


def narrower(left: int, right: int) -> bool:
    """``IsNarrowerThan``: fewer NUMA nodes, or as many with lower-numbered ones."""
    lc, rc = left.bit_count(), right.bit_count()
    return left < right if lc == rc else lc < rc


# -- the topology manager's policies ----------------------------------------------------
def filter_providers_hints(
    providers: list[dict[str, list[TopologyHint]] | None], log: Klog
) -> list[list[TopologyHint]]:
    result: list[list[TopologyHint]] = []
    for hints in providers:
        if not hints:
            log.v(
                0, "[numatopo] Hint Provider has no preference for NUMA affinity with any resource"
            )
            result.append([TopologyHint(None, True)])
            continue
        for resource, resource_hints in hints.items():
            if not resource_hints:
                log.v(
                    0,
                    "[numatopo] Hint Provider has no possible NUMA affinities for resource "
                    f"'{resource}'",
                )
                result.append([TopologyHint(None, False)])
                continue
            result.append(resource_hints)
    return result


def merge_filtered_hints(numa_nodes: list[int], filtered: list[list[TopologyHint]]) -> TopologyHint:
    """The best merge over every permutation of one hint per resource."""
    default = mask_of(numa_nodes)
    best = TopologyHint(default, False)
    for permutation in itertools.product(*filtered):
        merged = default
        preferred = True
        for hint in permutation:
            merged &= default if hint.affinity is None else hint.affinity
            preferred = preferred and hint.preferred
        if merged == 0:
            continue
        if preferred and not best.preferred:
            best = TopologyHint(merged, preferred)
            continue
        if not preferred and best.preferred:
            continue
        assert best.affinity is not None
        if narrower(merged, best.affinity):
            best = TopologyHint(merged, preferred)
    return best


def predicate_policy(
    policy: str,
    numa_nodes: list[int],
    providers: list[dict[str, list[TopologyHint]] | None],
    log: Klog,
) -> tuple[TopologyHint, bool]:
    """``Policy.Predicate``: the best hint and whether the kubelet would admit the pod."""
    if policy not in ("best-effort", "restricted", "single-numa-node"):
        return TopologyHint(None, False), True  # none, or unknown
    filtered = filter_providers_hints(providers, log)
    if policy == "single-numa-node":
        filtered = [
            [
                h
                for h in hints
                if h.preferred and (h.affinity is None or h.affinity.bit_count() == 1)
            ]
            for hints in filtered
        ]
    best = merge_filtered_hints(numa_nodes, filtered)
    admit = True if policy == "best-effort" else best.preferred
    log.v(4, f"bestHint: {best} admit {str(admit).lower()}")
    return best, admit


# -- the CPU manager provider ---------------------------------------------------------------
def guaranteed_cpus(container: Container) -> int:
    """Whole CPUs requested, or 0 for a fractional request."""
    q = container.requests.get("cpu")
    if q is None or value(q) * 1000 != milli_value(q):
        return 0
    return value(q)


class CPUAccumulator:
    """The kubelet's ``cpuAccumulator`` (``takeByTopology``): whole sockets, then whole
    cores, then single CPUs."""

    def __init__(self, topo: CPUDetails, available: CPUSet, needed: int) -> None:
        self.topo = topo
        self.details = topo.keep_only(available)
        self.needed = needed
        self.result: set[int] = set()
        cpus = len(topo.cpus)
        sockets = len(topo.sockets())
        cores = len({(i.socket, i.core) for i in topo.cpus.values()})
        self.cpus_per_socket = cpus // sockets if sockets else 0
        self.cpus_per_core = cpus // cores if cores else 0

    def take(self, cpus: CPUSet) -> None:
        self.result |= cpus
        self.details = self.details.keep_only(self.details.all_cpus() - self.result)
        self.needed -= len(cpus)

    def satisfied(self) -> bool:
        return self.needed < 1

    def free_sockets(self) -> list[int]:
        """Quirk kept from Volcano's copy of the kubelet code: socket ids are intersected
        with *cpu* ids."""
        return sorted(set(self.details.sockets()) & self.details.all_cpus())

    def free_cores(self) -> list[int]:
        """Quirk kept: core ids intersected with cpu ids; sockets in the order of a
        comparator that is not a strict order (Go starts from map order; vspec sorted)."""
        free = self.details.all_cpus()

        def cores_in(socket: int) -> list[int]:
            return sorted(set(self.details.cores_in_sockets(socket)) & free)

        sockets = go_insertion_sort(
            self.details.sockets(), lambda a, b: len(cores_in(a)) < len(cores_in(b)) or a < b
        )
        return [core for socket in sockets for core in cores_in(socket)]

    def free_cpus(self) -> list[int]:
        topo, details = self.topo, self.details

        def less(a: int, b: int) -> bool:
            a_socket = topo.cpus[min(topo.cpus_in_cores(a))].socket
            b_socket = topo.cpus[min(topo.cpus_in_cores(b))].socket
            return (
                len(topo.cpus_in_sockets(a_socket) & self.result)
                > len(topo.cpus_in_sockets(b_socket) & self.result)
                or len(details.cpus_in_sockets(a_socket)) < len(details.cpus_in_sockets(b_socket))
                or len(details.cpus_in_cores(a)) < len(details.cpus_in_cores(b))
                or a_socket < b_socket
                or a < b
            )

        cores = go_insertion_sort(details.cores(), less)
        return [cpu for core in cores for cpu in sorted(details.cpus_in_cores(core))]


def take_by_topology(topo: CPUDetails, available: CPUSet, count: int, log: Klog) -> CPUSet | None:
    """``takeByTopology``: ``count`` CPUs packed by socket and core; None if impossible."""
    acc = CPUAccumulator(topo, available, count)
    if acc.satisfied():
        return frozenset(acc.result)
    if acc.needed > len(acc.details.cpus):
        return None
    if acc.needed >= acc.cpus_per_socket:
        for socket in acc.free_sockets():
            log.v(4, f"[cpumanager] takeByTopology: claiming socket [{socket}]")
            acc.take(acc.details.cpus_in_sockets(socket))
            if acc.satisfied():
                return frozenset(acc.result)
            if acc.needed < acc.cpus_per_socket:
                break
    if acc.needed >= acc.cpus_per_core:
        for core in acc.free_cores():
            log.v(4, f"[cpumanager] takeByTopology: claiming core [{core}]")
            acc.take(acc.details.cpus_in_cores(core))
            if acc.satisfied():
                return frozenset(acc.result)
            if acc.needed < acc.cpus_per_core:
                break
    for cpu in acc.free_cpus():
        log.v(4, f"[cpumanager] takeByTopology: claiming CPU [{cpu}]")
        if acc.needed >= 1:
            acc.take(frozenset((cpu,)))
        if acc.satisfied():
            return frozenset(acc.result)
    return None


def _reserved(topo: NumaTopology, log: Klog, level: int) -> CPUSet:
    if topo.reserved_cpu is None:
        return frozenset()
    reserved = (
        take_by_topology(topo.details, topo.details.all_cpus(), math.ceil(topo.reserved_cpu), log)
        or frozenset()
    )
    log.v(level, f"[cpumanager] reserve cpuset :{format_cpuset(reserved)}")
    return reserved


def cpu_topology_hints(available: CPUSet, details: CPUDetails, request: int) -> list[TopologyHint]:
    """``generateCPUTopologyHints``: every NUMA subset with enough free CPUs; the
    smallest subsets that could hold the request at all are preferred."""
    numa_nodes = details.numa_nodes()
    min_size = len(numa_nodes)
    found: list[int] = []
    for size in range(1, len(numa_nodes) + 1):
        for subset in itertools.combinations(numa_nodes, size):
            if len(details.cpus_in_numa_nodes(subset)) >= request and size < min_size:
                min_size = size
            matching = sum(1 for c in available if details.cpus[c].numa in subset)
            if matching >= request:
                found.append(mask_of(subset))
    return [TopologyHint(mask, mask.bit_count() == min_size) for mask in found]


def container_hints(
    container: Container, topo: NumaTopology, sets: ResNumaSets, log: Klog
) -> dict[str, list[TopologyHint]] | None:
    if "cpu" not in container.requests:
        log.warning(f"container {container.name} has no cpu request")
        return None
    request = guaranteed_cpus(container)
    if request == 0:
        log.warning(f" the cpu request isn't  integer in container {container.name}")
        return None
    reserved = _reserved(topo, log, 4)
    available = sets.get("cpu")
    if available is None:
        log.warning("no cpu resource")
        return None
    available = available - reserved
    log.v(4, f"requested: {request}, availableCPUSet: {format_cpuset(available)}")
    return {"cpu": cpu_topology_hints(available, topo.details, request)}


def allocate_cpus(
    container: Container, hint: TopologyHint, topo: NumaTopology, sets: ResNumaSets, log: Klog
) -> CPUSet:
    """The CPUs the kubelet would pin: first within the hint's NUMA nodes, then anywhere."""
    reserved = _reserved(topo, log, 3)
    request = guaranteed_cpus(container)
    available = sets.get("cpu", frozenset()) - reserved
    result: CPUSet = frozenset()
    if hint.affinity is not None:
        aligned = available & topo.details.cpus_in_numa_nodes(mask_bits(hint.affinity))
        taken = take_by_topology(topo.details, aligned, min(request, len(aligned)), log)
        if taken is None:
            return frozenset()
        result = taken
    remaining = take_by_topology(topo.details, available - result, request - len(result), log)
    return frozenset() if remaining is None else result | remaining


def normalize_reversed(scores: list[int]) -> list[int]:
    """``NormalizeScore(100, reverse=true)``: fewest NUMA nodes scores highest."""
    top = max(scores, default=0)
    if top == 0:
        return [MAX_NODE_SCORE] * len(scores)
    return [MAX_NODE_SCORE - MAX_NODE_SCORE * s // top for s in scores]


def _cache_allocated(ssn: Session) -> dict[str, ResNumaSets]:
    memory = process_memory(ssn)
    allocated = memory.setdefault(CACHE_ALLOCATED, {})
    assert isinstance(allocated, dict)
    return allocated


def _format_node_sets(allocated: Mapping[str, ResNumaSets]) -> str:
    """Go's ``%v`` of ``map[string]ResNumaSets`` (keys sorted, cpusets as lists)."""
    nodes = (
        f"{node}:map[{' '.join(f'{n}:{format_cpuset(c)}' for n, c in sorted(sets.items()))}]"
        for node, sets in sorted(allocated.items())
    )
    return f"map[{' '.join(nodes)}]"


@register_plugin
class NumaAwarePlugin(Plugin):
    """Predicate and BatchNodeOrder from the nodes' Numatopology (CPU pinning)."""

    name: ClassVar[str] = "numa-aware"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (NUMA_TOPO_WEIGHT_ARG,)

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.weight = NUMA_TOPO_WEIGHT_ARG.read(arguments)
        self.topologies: dict[str, NumaTopology] = {}
        self.node_res_sets: dict[str, ResNumaSets] = {}
        # task uid -> node -> what the predicate assigned there
        self.assign_res: dict[str, dict[str, ResNumaSets]] = {}
        # task uid -> node it was allocated (or pipelined) to this session
        self.task_bind_node: dict[str, str] = {}

    def _load_topologies(self, ssn: Session) -> None:
        for obj in ssn.cluster.objects_of_kind("Numatopology"):
            if obj.meta.name not in ssn.nodes:
                continue
            try:
                topo = NumaTopology.parse(obj.body.get("spec") or {})
            except (CPUSetError, ValueError, TypeError, AttributeError) as exc:
                raise SpecError(f"Numatopology {obj.meta.name}: {exc}", obj.meta.location) from exc
            self.topologies[obj.meta.name] = topo
            sets = dict(topo.allocatable)
            for name, cpus in _cache_allocated(ssn).get(obj.meta.name, {}).items():
                if name in sets:
                    sets[name] = sets[name] - cpus
            self.node_res_sets[obj.meta.name] = sets

    def on_session_open(self, ssn: Session) -> None:
        self._load_topologies(ssn)
        ssn.add_event_handler(
            EventHandler(
                allocate_func=lambda event: self._account(event, allocate=True),
                deallocate_func=lambda event: self._account(event, allocate=False),
            )
        )
        ssn.add_predicate_fn(self.name, lambda task, node: self.predicate(ssn, task, node))
        ssn.add_batch_node_order_fn(
            self.name, lambda task, nodes: self.batch_node_order(ssn, task, nodes)
        )

    def _account(self, event: Event, *, allocate: bool) -> None:
        task = event.task
        assigned = self.assign_res.get(task.uid, {}).get(task.node_name)
        sets = self.node_res_sets.get(task.node_name)
        if assigned is None or sets is None:
            return
        if allocate:
            self.task_bind_node[task.uid] = task.node_name
        else:
            self.task_bind_node.pop(task.uid, None)
        for name, cpus in assigned.items():
            if name in sets:
                sets[name] = sets[name] - cpus if allocate else sets[name] | cpus

    def on_session_close(self, ssn: Session) -> None:
        """``UpdateSchedulerNumaInfo``: the CPUs of every task still placed (allocated,
        pipelined or bound; quirk kept: not only the bound ones) leave the cache's
        allocatable for good."""
        if not self.task_bind_node:
            return
        allocated: dict[str, ResNumaSets] = {}
        for uid, node_name in self.task_bind_node.items():
            assigned = self.assign_res.get(uid, {}).get(node_name)
            if assigned is None:
                continue
            sets = allocated.setdefault(node_name, {})
            for name, cpus in assigned.items():
                sets[name] = sets.get(name, frozenset()) | cpus
        ssn.log.v(4, f"[numaPlugin]allocatedResSet: {_format_node_sets(allocated)}")
        cache = _cache_allocated(ssn)
        for node_name, sets in allocated.items():
            if node_name not in self.topologies:
                continue  # no NUMA info in the cache for this node
            kept = cache.setdefault(node_name, {})
            for name, cpus in sets.items():
                kept[name] = kept.get(name, frozenset()) | cpus

    def filter_node(self, task: TaskInfo, node: NodeInfo) -> str | bool | None:
        """``filterNodeByPolicy``: an error message, False (skip the node's NUMA check),
        or True (check it)."""
        policy = task.pod.meta.annotations.get(NUMA_POLICY_KEY, "")
        topo = self.topologies.get(node.name)
        if policy not in ("", "none"):
            if topo is None:
                return "numa info is empty"
            if topo.policies.get(CPU_MANAGER_POLICY) != "static":
                return "cpu manager policy isn't static"
            node_policy = topo.policies.get(TOPOLOGY_MANAGER_POLICY, "")
            if policy != node_policy:
                return f"task topology polocy[{policy}] is different with node[{node_policy}]"
            sets = self.node_res_sets.get(node.name)
            if sets is None:
                return "no topo information"
            if not sets.get("cpu"):
                return "cpu allocatable map is empty"
            return True
        if topo is None or topo.policies.get(CPU_MANAGER_POLICY) != "static":
            return False
        return topo.policies.get(TOPOLOGY_MANAGER_POLICY, "") not in ("", "none")

    def predicate(self, ssn: Session, task: TaskInfo, node: NodeInfo) -> None:
        log = ssn.log
        if pod_qos_class(task.pod) != GUARANTEED:
            log.v(3, f"task {task.name} isn't Guaranteed pod")
            return
        verdict = self.filter_node(task, node)
        if isinstance(verdict, str):
            raise FitError.of(task, node.name, verdict)
        if verdict is False:
            return
        topo = self.topologies[node.name]
        sets = dict(self.node_res_sets[node.name])
        numa_nodes = topo.details.numa_nodes()
        policy = topo.policies.get(TOPOLOGY_MANAGER_POLICY, "")
        assigned: ResNumaSets = {}
        for container in task.pod.containers:
            hints = container_hints(container, topo, sets, log)
            best, admit = predicate_policy(policy, numa_nodes, [hints], log)
            if not admit:
                raise FitError.with_status(
                    task,
                    node.name,
                    Status(
                        Code.UnschedulableAndUnresolvable,
                        f"container {container.name} cannot be assigned by numa",
                        self.name,
                    ),
                )
            cpus = allocate_cpus(container, best, topo, sets, log)
            assigned["cpu"] = assigned.get("cpu", frozenset()) | cpus
            sets["cpu"] = sets.get("cpu", frozenset()) - cpus
        self.assign_res.setdefault(task.uid, {})[node.name] = assigned
        log.v(
            4,
            f" task {task.name}'s on node<{node.name}> resAssignMap: "
            f"map[cpu:{format_cpuset(assigned.get('cpu', frozenset()))}]",
        )

    def batch_node_order(
        self, ssn: Session, task: TaskInfo, nodes: list[NodeInfo]
    ) -> dict[str, float]:
        policy = task.pod.meta.annotations.get(NUMA_POLICY_KEY, "")
        assigned = self.assign_res.get(task.uid)
        if assigned is None or policy in ("", "none"):
            return {}
        spans = []
        for node in nodes:
            cpus = assigned.get(node.name, {}).get("cpu", frozenset())
            topo = self.topologies.get(node.name)
            numas = (
                {topo.details.cpus[c].numa for c in cpus if c in topo.details.cpus}
                if topo
                else set()
            )
            spans.append(len(numas))
        scores = {
            node.name: float(score * self.weight)
            for node, score in zip(nodes, normalize_reversed(spans), strict=True)
        }
        ssn.log.v(
            4,
            f"numa-aware plugin Score for task {task.namespace}/{task.name} is: "
            f"map[{' '.join(f'{k}:{v:g}' for k, v in sorted(scores.items()))}]",
        )
        return scores
