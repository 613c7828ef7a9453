"""The rules of the plugins beyond the core, as an observer of the outcome checks them.

resourcequota's admission (``quota-respected``), pdb's victim filter where shuffle asks it
(``pdb-respected``), numa-aware's NUMA fit (``numa-fit``), tdm's revocable zones
(``revocable-zones``) and task-topology's role order (``task-topology-order``), each
restated from the plugin's source in Volcano v1.11.0 and never by calling it: a check
that called ``vspec.plugins.resourcequota.quota_exceeded`` would share its comparison.
Each check returns at its first witness, and before any pass when the plugin is off or
the cluster holds none of the objects it reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from fractions import Fraction
from itertools import combinations
from typing import Any

from vspec.api.types import TaskStatus
from vspec.invariants.base import Invariant, InvariantInputs, register
from vspec.invariants.history import (
    CycleView,
    cycles,
    nodes_by_name,
    plugin_entries,
    pods_by_job,
    requests,
    session_jobs,
)
from vspec.invariants.outside import PREEMPTABLE, TASK_SPEC
from vspec.invariants.yours import YOURS
from vspec.model.conf import SchedulerConf
from vspec.model.corev1 import parse_resource_list
from vspec.model.objects import DEFAULT_NOW, Cluster, KubeObject, Node, Pod, PodGroup
from vspec.model.result import SimulationResult


def _on(conf: SchedulerConf, plugin: str, flag: str) -> list[int]:
    """The tiers of ``plugin``'s entries with ``flag`` on."""
    return [tier for tier, option in plugin_entries(conf, plugin) if option.enabled(flag)]


def _first_tier(conf: SchedulerConf, registrants: Iterable[str], flag: str) -> int | None:
    """The first tier with a plugin that may answer at ``flag``'s extension point: a
    built-in of ``registrants`` with the flag on, or one of yours (it may register
    anything)."""
    names = frozenset(registrants)
    for i, tier in enumerate(conf.tiers):
        for option in tier.plugins:
            if (option.name in names or option.name.endswith(YOURS)) and option.enabled(flag):
                return i
    return None


# -- quota-respected -------------------------------------------------------------------------

# Plugins of v1.11.0 that register a JobEnqueueable function.
_ENQUEUE_VOTERS = ("capacity", "extender", "overcommit", "proportion", "resourcequota", "sla")
# What resourcequota's refusal says (its event on the pod group, resourcequota.go:76).
_QUOTA_REFUSAL = "resource quota insufficient"


@dataclass(frozen=True)
class _Quota:
    name: str
    hard: dict[str, Fraction]
    used: dict[str, Fraction]


def _quotas(cluster: Cluster) -> dict[str, list[_Quota]] | None:
    """Each namespace's ResourceQuotas by their status (what resourcequota reads: the quota
    controller's hard and used, never the spec); None when one does not parse (the run
    then failed on it) or holds a negative quantity (the sums below assume none)."""
    out: dict[str, list[_Quota]] = {}
    for obj in cluster.objects_of_kind("ResourceQuota"):
        status = obj.body.get("status") or {}
        try:
            hard = parse_resource_list(status.get("hard"))
            used = parse_resource_list(status.get("used"))
        except (ValueError, TypeError, AttributeError):
            return None
        if any(q < 0 for q in (*hard.values(), *used.values())):
            return None
        out.setdefault(obj.meta.namespace, []).append(_Quota(obj.meta.name, hard, used))
    return out


def _quota_applies(inputs: InvariantInputs) -> bool:
    conf = inputs.conf
    return (
        "enqueue" in conf.actions
        and len(_on(conf, "resourcequota", "job_enqueued")) == 1
        and bool(inputs.cluster.objects_of_kind("ResourceQuota"))
    )


def _pending(pg: PodGroup) -> bool:
    """``JobInfo.IsPending``: phase Pending or unset."""
    return pg.phase in ("Pending", "")


def _floors(pgs: Iterable[PodGroup]) -> dict[str, list[tuple[str, dict[str, Fraction]]]]:
    """The pod groups with minResources, by namespace (a job without them is enqueued
    without asking resourcequota), or none with a negative quantity."""
    out: dict[str, list[tuple[str, dict[str, Fraction]]]] = {}
    for pg in pgs:
        floor = pg.min_resources
        if floor is None or any(q < 0 for q in floor.values()):
            continue
        out.setdefault(pg.meta.namespace, []).append((pg.meta.key, dict(floor)))
    return out


def _total(floors: Iterable[Mapping[str, Fraction]], name: str) -> Fraction:
    return sum((f.get(name, Fraction(0)) for f in floors), Fraction(0))


def _refusal_unfounded(
    quotas: Sequence[_Quota],
    floor: Mapping[str, Fraction],
    others: Sequence[Mapping[str, Fraction]],
) -> bool:
    """Whether no quota could refuse ``floor`` even had every one of ``others`` been
    admitted before it: resourcequota refuses a job when, for a quota and a resource the
    quota's hard names and the job's minResources names, used plus what the session
    admitted in the namespace before it (their whole minResources, resourcequota.go:90)
    plus the job's request exceeds hard (quotav1.LessThanOrEqual)."""
    for quota in quotas:
        for name, limit in quota.hard.items():
            if name not in floor:
                continue
            usage = quota.used.get(name, Fraction(0)) + _total(others, name) + floor[name]
            if usage > limit:
                return False
    return True


def _over_quota(
    quotas: Sequence[_Quota], admitted: Sequence[tuple[str, Mapping[str, Fraction]]]
) -> str | None:
    """The first quota and resource that the admitted jobs of one namespace take past
    hard, in words."""
    for quota in quotas:
        for name, limit in quota.hard.items():
            askers = [key for key, floor in admitted if name in floor]
            if not askers:
                continue
            usage = quota.used.get(name, Fraction(0)) + _total((f for _, f in admitted), name)
            if usage > limit:
                return (
                    f"quota {quota.name}: used {quota.used.get(name, Fraction(0))} {name} plus "
                    f"the minResources of {', '.join(k for k, _ in admitted)} is {usage}, "
                    f"above hard {limit}"
                )
    return None


def _quota_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    quotas = _quotas(inputs.cluster)
    if not quotas:
        return []
    refused: dict[int, set[str]] = {}
    for event in result.events:
        if event.reason == "Unschedulable" and event.message.startswith(_QUOTA_REFUSAL):
            refused.setdefault(event.cycle, set()).add(event.object)
    # enqueue listed twice asks again about a job resourcequota admitted and a later voter
    # refused: what it admitted then counts against it (and against the others refused).
    again = inputs.conf.actions.count("enqueue") > 1
    groups = inputs.cluster.pod_groups
    message = _unfounded_refusal(quotas, groups, refused, again) or _admitted_past_quota(
        inputs, result, quotas
    )
    return [message] if message else []


def _unfounded_refusal(
    quotas: Mapping[str, list[_Quota]],
    groups: Sequence[PodGroup],
    refused: dict[int, set[str]],
    again: bool,
) -> str | None:
    """A refusal resourcequota recorded that no admission order explains. The jobs it may
    have admitted before the refused one: the other jobs of its namespace with
    minResources (in the first cycle only those Pending at the start; later, any of them),
    minus those it refused in the cycle (unless enqueue runs ``again``: then all of them,
    the refused job too)."""
    for cycle, keys in sorted(refused.items()):
        candidates = _floors(pg for pg in groups if cycle > 0 or _pending(pg))
        for key in sorted(keys):
            namespace = key.split("/", 1)[0]
            jobs = candidates.get(namespace, [])
            floor = next((f for k, f in jobs if k == key), None)
            if floor is None:
                continue
            others = [f for k, f in jobs if again or (k != key and k not in keys)]
            if _refusal_unfounded(quotas.get(namespace, []), floor, others):
                return (
                    f"cycle {cycle}: resourcequota refused job {key} though its namespace's "
                    "quotas have room for its minResources even with every other job of "
                    "the namespace admitted before it"
                )
    return None


def _admitted_past_quota(
    inputs: InvariantInputs, result: SimulationResult, quotas: Mapping[str, list[_Quota]]
) -> str | None:
    """In a one-cycle run where resourcequota is asked about every job enqueue admits (no
    tier before its own has a voter: a tier whose voter permits ends JobEnqueueable before
    the next), the jobs admitted from Pending keep each quota within hard, in every
    resource one of them asks for. The plugin adds each admitted job's minResources to
    what it checks the next against, so the last admitted job asking for a resource was
    checked against all of them."""
    conf = inputs.conf
    tier = _on(conf, "resourcequota", "job_enqueued")[0]
    if inputs.cycles != 1 or _first_tier(conf, _ENQUEUE_VOTERS, "job_enqueued") != tier:
        return None
    admitted: dict[str, list[tuple[str, Mapping[str, Fraction]]]] = {}
    for namespace, jobs in _floors(pg for pg in inputs.cluster.pod_groups if _pending(pg)).items():
        for key, floor in jobs:
            after = result.pod_groups.get(key)
            if after is not None and after.session_phase not in ("Pending", ""):
                admitted.setdefault(namespace, []).append((key, floor))
    for namespace, taken in sorted(admitted.items()):
        over = _over_quota(quotas.get(namespace, []), taken)
        if over:
            return f"cycle 0: enqueue admitted jobs of namespace {namespace} past its {over}"
    return None


register(
    Invariant(
        "quota-respected",
        "resourcequota admits a job exactly while its namespace's quotas have room for it",
        "Two sides of resourcequota's JobEnqueueable (resourcequota.go). A refusal it "
        "records (the pod group event `resource quota insufficient`) is founded: for some "
        "ResourceQuota of the job's namespace and some resource both its status.hard and "
        "the job's minResources name, status.used plus the minResources of the other jobs "
        "of the namespace it may have admitted earlier in the session (in the first cycle, "
        "those Pending at its start; later, any; never those it refused in the cycle) "
        "plus the job's own exceeds hard. And in a one-cycle run where it is asked about "
        "every job enqueue admits (no tier before its own holds an enqueue voter), the "
        "jobs that left Pending keep every quota within hard: used plus their summed "
        "minResources is at most hard in every resource one of them names.",
        "Configurations with `enqueue` and exactly one `resourcequota` entry with "
        "enableJobEnqueued on, on clusters with a ResourceQuota.",
        _quota_applies,
        _quota_check,
    )
)


# -- pdb-respected -------------------------------------------------------------------------------

# Plugins of v1.11.0 that register a VictimTasks function.
_VICTIM_PLUGINS = ("pdb", "rescheduling", "tdm")
_LABEL = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_SET_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass(frozen=True)
class _Budget:
    name: str
    namespace: str
    # (key, operator, values); empty: matches nothing (a nil or empty selector)
    terms: tuple[tuple[str, str, frozenset[str]], ...]
    allowed: int
    disrupted: frozenset[str]

    def matches(self, pod: Pod) -> bool:
        """Whether the budget counts ``pod``: same namespace, a selector that is not
        empty and matches the pod's labels, the pod not among its disrupted pods."""
        if pod.meta.namespace != self.namespace or not self.terms:
            return False
        if pod.meta.name in self.disrupted:
            return False
        labels = pod.meta.labels
        return all(_term_holds(term, labels) for term in self.terms)


def _term_holds(term: tuple[str, str, frozenset[str]], labels: Mapping[str, str]) -> bool:
    key, operator, values = term
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    return key not in labels


def _selector_terms(selector: Any) -> tuple[tuple[str, str, frozenset[str]], ...] | None:
    """A label selector's requirements (metav1.LabelSelectorAsSelector), or None when it
    is not one this check reads with certainty (an invalid key, value or operator, which
    makes Volcano skip the budget, is among those: the namespace is then not judged)."""
    if selector is None:
        return ()
    if not isinstance(selector, Mapping):
        return None
    terms: list[tuple[str, str, frozenset[str]]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        if not (isinstance(key, str) and isinstance(value, str)):
            return None
        if not (_LABEL.match(key) and _VALUE.match(value)):
            return None
        terms.append((key, "In", frozenset({value})))
    for expression in selector.get("matchExpressions") or ():
        if not isinstance(expression, Mapping):
            return None
        key, operator = expression.get("key"), expression.get("operator")
        values = expression.get("values") or []
        if not (isinstance(key, str) and _LABEL.match(key) and operator in _SET_OPERATORS):
            return None
        if not isinstance(values, list) or not all(
            isinstance(v, str) and _VALUE.match(v) for v in values
        ):
            return None
        if (operator in ("In", "NotIn")) != bool(values):
            return None
        terms.append((key, str(operator), frozenset(values)))
    return tuple(terms)


def _budgets(objects: Sequence[KubeObject]) -> tuple[list[_Budget], set[str]]:
    """The budgets, and the namespaces holding one this check cannot read (not judged)."""
    budgets: list[_Budget] = []
    unread: set[str] = set()
    for obj in objects:
        spec, status = obj.body.get("spec") or {}, obj.body.get("status") or {}
        terms = _selector_terms(spec.get("selector"))
        allowed = status.get("disruptionsAllowed", 0)
        disrupted = status.get("disruptedPods") or {}
        if terms is None or type(allowed) is not int or not isinstance(disrupted, Mapping):
            unread.add(obj.meta.namespace)
            continue
        budgets.append(
            _Budget(obj.meta.name, obj.meta.namespace, terms, allowed, frozenset(disrupted))
        )
    return budgets, unread


def _pdb_applies(inputs: InvariantInputs) -> bool:
    return (
        "shuffle" in inputs.conf.actions
        and bool(_on(inputs.conf, "pdb", "victim"))
        and bool(inputs.cluster.objects_of_kind("PodDisruptionBudget"))
    )


def _shuffle_candidates(inputs: InvariantInputs, view: CycleView) -> list[Pod]:
    """The pods shuffle hands VictimTasks: the Running tasks of the session's jobs (at the
    cycle's start; an earlier action's eviction only takes one away)."""
    jobs = session_jobs(inputs).pod_groups
    statuses = view.statuses
    return [
        pod
        for uid, pods in pods_by_job(inputs, view).items()
        if uid in jobs
        for pod in pods
        if statuses[pod.meta.key] is TaskStatus.Running
    ]


def _pdb_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    budgets, unread = _budgets(inputs.cluster.objects_of_kind("PodDisruptionBudget"))
    conf = inputs.conf
    pdb_tiers = _on(conf, "pdb", "victim")
    first = _first_tier(conf, _VICTIM_PLUGINS, "victim")
    # pdb alone among the VictimTasks plugins, shuffle listed once: the evictions are its
    # answer to one call, whose budgets it spends once.
    sole = conf.actions.count("shuffle") == 1 and all(
        not option.enabled("victim")
        for tier in conf.tiers
        for option in tier.plugins
        if option.name in _VICTIM_PLUGINS[1:] or option.name.endswith(YOURS)
    )
    for view in cycles(inputs, result):
        candidates = _shuffle_candidates(inputs, view)
        evicted = {e.task for e in view.evictions if e.reason == "shuffle"}
        message = _pdb_spared(view, candidates, budgets, unread, evicted, min(pdb_tiers) == first)
        if message is None and sole:
            message = _pdb_overspent(view, budgets, evicted)
        if message:
            return [message]
    return []


def _pdb_spared(
    view: CycleView,
    candidates: Sequence[Pod],
    budgets: Sequence[_Budget],
    unread: set[str],
    evicted: set[str],
    first: bool,
) -> str | None:
    """A Running pod pdb's filter must return, left alone. pdb spends each matching
    budget's disruptionsAllowed one per candidate, in order, and drops a candidate that
    takes one below zero (pdb.go:98-112); so a labelled candidate each of whose budgets
    allows at least as many disruptions as it has candidates is returned, whatever the
    order. Its answer is in the victims when pdb's tier is the first with a VictimTasks
    plugin; otherwise a cycle whose shuffle evicted nothing had every tier answer empty,
    pdb's too."""
    if not first and evicted:
        return None
    counts = {b: sum(1 for pod in candidates if b.matches(pod)) for b in budgets}
    # An earlier action's victim was no candidate any more when shuffle ran.
    gone = {e.task for e in view.evictions}
    for pod in candidates:
        key = pod.meta.key
        if key in gone or not pod.meta.labels or pod.meta.namespace in unread:
            continue
        if any(b.matches(pod) and counts[b] > b.allowed for b in budgets):
            continue
        return (
            f"cycle {view.cycle}: shuffle left Running pod {key} though pdb offers it as "
            "a victim: every budget over it allows as many disruptions as it has Running "
            "pods"
        )
    return None


def _pdb_overspent(view: CycleView, budgets: Sequence[_Budget], evicted: set[str]) -> str | None:
    """A budget shuffle took more pods of than it allows (pdb the only VictimTasks
    plugin: every shuffle victim is pdb's, and no labelless pod is one)."""
    for key in sorted(evicted):
        pod = view.pods.get(key)
        if pod is not None and not pod.meta.labels:
            return f"cycle {view.cycle}: shuffle evicted {key}, which has no labels (pdb skips it)"
    for budget in budgets:
        taken = sorted(k for k in evicted if k in view.pods and budget.matches(view.pods[k]))
        if len(taken) > max(budget.allowed, 0):
            return (
                f"cycle {view.cycle}: shuffle evicted {', '.join(taken)} though "
                f"PodDisruptionBudget {budget.namespace}/{budget.name} allows "
                f"{budget.allowed} disruption(s)"
            )
    return None


register(
    Invariant(
        "pdb-respected",
        "shuffle evicts what pdb's victim filter returns, within each budget",
        "For every cycle, over the Running pods of the session's jobs at its start (what "
        "shuffle hands VictimTasks): pdb spends each PodDisruptionBudget's "
        "status.disruptionsAllowed one per matching pod (same namespace, a non-empty "
        "selector that matches its labels, not among status.disruptedPods) and drops a pod "
        "that takes one below zero; a pod without labels is never returned. So a labelled "
        "pod whose every matching budget allows at least as many disruptions as it has "
        "such pods is returned, and shuffle evicts it when pdb's tier is the first with a "
        "VictimTasks plugin (pdb, tdm, rescheduling, or yours); when it is not, a cycle "
        "where shuffle evicted nothing has none. When pdb is the only VictimTasks plugin "
        "on and shuffle is listed once, shuffle's victims all have labels and number at "
        "most max(disruptionsAllowed, 0) per budget.",
        "Configurations with `shuffle` and a `pdb` entry with enabledVictim on, on "
        "clusters with a PodDisruptionBudget. Preempt's and reclaim's use of the filter is "
        "not judged: each Preemptable call spends the budgets afresh, so an observer cannot "
        "count what one call spent without Volcano's per-call log.",
        _pdb_applies,
        _pdb_check,
    )
)


# -- numa-fit ------------------------------------------------------------------------------------

NUMA_POLICY = "volcano.sh/numa-topology-policy"
_QOS_RESOURCES = ("cpu", "memory")


def _guaranteed(pod: Pod) -> bool:
    """Kubernetes' ComputePodQOS is Guaranteed: every container (init ones too) limits
    cpu and memory above zero, and the summed positive requests of the two equal the
    summed positive limits, resource by resource."""
    asked: dict[str, Fraction] = {}
    capped: dict[str, Fraction] = {}
    for container in (*pod.containers, *pod.init_containers):
        limited = 0
        for name in _QOS_RESOURCES:
            request = container.requests.get(name, Fraction(0))
            if request > 0:
                asked[name] = asked.get(name, Fraction(0)) + request
            limit = container.limits.get(name, Fraction(0))
            if limit > 0:
                capped[name] = capped.get(name, Fraction(0)) + limit
                limited += 1
        if limited < len(_QOS_RESOURCES):
            return False
    return bool(asked or capped) and asked == capped


def _cpuset(text: Any) -> frozenset[int] | None:
    """A Linux cpuset list (``0-3,8``), or None when it is not one."""
    if not isinstance(text, str):
        return None
    cpus: set[int] = set()
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        if not first.isdigit() or not (last or first).isdigit() or int(last or first) < int(first):
            return None
        cpus.update(range(int(first), int(last or first) + 1))
    return frozenset(cpus)


@dataclass(frozen=True)
class _Topology:
    """What numa-aware reads of a node's Numatopology."""

    cpu_policy: str
    topology_policy: str
    # spec.numares.cpu.allocatable; None without a cpu entry (the CPU manager then
    # gives no hint: no preference)
    allocatable: frozenset[int] | None
    numa_of: dict[int, int]  # spec.cpuDetail: cpu -> its NUMA node


def _topology(obj: KubeObject) -> _Topology | None:
    spec = obj.body.get("spec") or {}
    numares = spec.get("numares") or {}
    try:
        policy = {str(k): str(v) for k, v in (spec.get("policies") or {}).items()}
        numa_of = {
            int(c): int((info or {}).get("numa", 0))
            for c, info in (spec.get("cpuDetail") or {}).items()
        }
        cpu = numares.get("cpu")
        allocatable = None if cpu is None else _cpuset(str((cpu or {}).get("allocatable", "")))
    except (TypeError, ValueError, AttributeError):
        return None
    if cpu is not None and allocatable is None:
        return None
    return _Topology(
        policy.get("CPUManagerPolicy", ""),
        policy.get("TopologyManagerPolicy", ""),
        allocatable,
        numa_of,
    )


def _topologies(cluster: Cluster) -> dict[str, _Topology | None]:
    """Each node's topology by node name (None: one this check does not read, or two
    objects of one name: not judged)."""
    out: dict[str, _Topology | None] = {}
    for obj in cluster.objects_of_kind("Numatopology"):
        name = obj.meta.name
        out[name] = None if name in out else _topology(obj)
    return out


def _numa_applies(inputs: InvariantInputs) -> bool:
    return bool(_on(inputs.conf, "numa-aware", "predicate")) and bool(
        inputs.cluster.objects_of_kind("Numatopology")
    )


def _has_preferred_hint(
    topo: _Topology, allocatable: frozenset[int], policy: str, request: int
) -> bool:
    """Whether the CPU manager's hints for ``request`` CPUs hold a preferred one the
    policy keeps, with every allocatable CPU free (an upper bound of what the session
    has free: reserved CPUs and earlier assignments only take some away). A hint is a
    set of NUMA nodes with enough free CPUs; it is preferred when no smaller set of NUMA
    nodes has as many CPUs at all (generateCPUTopologyHints); single-numa-node keeps
    the preferred hints of one NUMA node."""
    numas = sorted(set(topo.numa_of.values()))
    counts = {n: 0 for n in numas}
    free = {n: 0 for n in numas}
    for cpu, numa in topo.numa_of.items():
        counts[numa] += 1
        free[numa] += cpu in allocatable
    smallest = next(
        (
            size
            for size in range(1, len(numas) + 1)
            if any(sum(counts[n] for n in s) >= request for s in combinations(numas, size))
        ),
        len(numas),
    )
    if policy == "single-numa-node" and smallest != 1:
        return False
    return any(sum(free[n] for n in s) >= request for s in combinations(numas, smallest))


def _numa_refusal(pod: Pod, node: str, topo: _Topology | None) -> str | None:
    """Why numa-aware's predicate refuses ``pod`` on the node, if it surely does
    (filterNodeByPolicy, then the topology manager policy's Predicate per container)."""
    asked = pod.meta.annotations.get(NUMA_POLICY, "")
    if asked not in ("", "none"):
        if topo is None:
            return f"its policy {asked} needs NUMA information, and {node} has none"
        if topo.cpu_policy != "static":
            return f"{node}'s CPU manager policy is {topo.cpu_policy!r}, not static"
        if topo.topology_policy != asked:
            return f"its policy {asked} is not {node}'s {topo.topology_policy!r}"
        if not topo.allocatable:
            return f"{node} has no allocatable CPU set"
    elif topo is None or topo.cpu_policy != "static" or topo.topology_policy in ("", "none"):
        return None
    policy = topo.topology_policy
    if policy not in ("restricted", "single-numa-node") or not topo.numa_of:
        return None
    if topo.allocatable is None:
        return None
    for container in pod.containers:
        cpu = container.requests.get("cpu")
        if cpu is None or cpu.denominator != 1 or cpu < 1:
            continue  # no CPU hint: the CPU manager has no preference
        if not _has_preferred_hint(topo, topo.allocatable, policy, int(cpu)):
            return (
                f"its container {container.name or '(unnamed)'} asks for {cpu} whole CPUs, "
                f"for which {node}'s allocatable CPUs give no preferred {policy} NUMA hint"
            )
    return None


def _numa_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    topologies = _topologies(inputs.cluster)
    for view in cycles(inputs, result):
        for bind in view.binds:
            pod = view.pods.get(bind.task)
            if pod is None or not _guaranteed(pod):
                continue
            if bind.node in topologies and topologies[bind.node] is None:
                continue  # a topology this check does not read
            why = _numa_refusal(pod, bind.node, topologies.get(bind.node))
            if why:
                return [
                    f"cycle {view.cycle}: Guaranteed pod {bind.task} bound to {bind.node}: {why}"
                ]
    return []


register(
    Invariant(
        "numa-fit",
        "numa-aware's predicate holds for every bind of a Guaranteed pod",
        "For every bind of a Guaranteed pod (Kubernetes' QoS rule over its containers and "
        "init containers): when it asks for a NUMA policy (`volcano.sh/numa-topology-policy` "
        "other than none), its node has a Numatopology whose CPUManagerPolicy is static, "
        "whose TopologyManagerPolicy is that policy and whose allocatable CPU set is not "
        "empty; and under the node's restricted or single-numa-node policy (the pod's, or "
        "the node's for a pod without one on a static node), every container asking for "
        "whole CPUs has a preferred hint: some set of NUMA nodes, of the smallest size "
        "whose CPUs could hold the request at all (one, for single-numa-node), whose "
        "allocatable CPUs hold it. Allocatable is an upper bound of what is free (reserved "
        "CPUs, earlier containers and earlier sessions' assignments take some away), so "
        "a bind this refuses is refused by the plugin.",
        "Configurations with a `numa-aware` entry whose enablePredicate is on, on clusters "
        "with a Numatopology object. A Numatopology this check cannot read leaves its node "
        "unjudged.",
        _numa_applies,
        _numa_check,
    )
)


# -- revocable-zones -----------------------------------------------------------------------------

REVOCABLE_ZONE = "volcano.sh/revocable-zone"
_ZONE_ARGUMENT = "tdm.revocable-zone."
_WINDOW = re.compile(r"^(\d{1,2}):(\d\d)-(\d{1,2}):(\d\d)$")
# vspec's sessions are one schedule period (1 s) apart, from the spec's clock.
_PERIOD = timedelta(seconds=1)


def _zone_open(window: str, now: datetime) -> bool | None:
    """Whether ``now`` is inside today's window ``HH:MM-HH:MM`` (one that ends before it
    starts ends tomorrow; quirk kept from tdm's parseRevocableZone: the window always
    starts today), compared in whole seconds; None for a window this check does not
    read with certainty (tdm refuses some of those, takes others)."""
    found = _WINDOW.match(window.strip())
    if not found:
        return None
    h1, m1, h2, m2 = (int(g) for g in found.groups())
    if h1 > 23 or h2 > 23 or m1 > 59 or m2 > 59:
        return None
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    start, end = day + timedelta(hours=h1, minutes=m1), day + timedelta(hours=h2, minutes=m2)
    if (h1, m1) >= (h2, m2):
        end += timedelta(days=1)
    second = int(now.timestamp())
    return int(start.timestamp()) <= second <= int(end.timestamp())


def _windows(inputs: InvariantInputs) -> dict[str, Any]:
    """tdm's zones and their windows, from its one entry's arguments."""
    [(_, option)] = plugin_entries(inputs.conf, "tdm")
    return {
        key.replace(_ZONE_ARGUMENT, "", 1): value
        for key, value in option.arguments.items()
        if _ZONE_ARGUMENT in key
    }


def _zones_apply(inputs: InvariantInputs) -> bool:
    entries = plugin_entries(inputs.conf, "tdm")
    return (
        len(entries) == 1
        and entries[0][1].enabled("predicate")
        and any(REVOCABLE_ZONE in node.meta.labels for node in inputs.cluster.nodes)
    )


def _zone_refusal(pod: Pod, node: Node, windows: Mapping[str, Any], now: datetime) -> str | None:
    """Why tdm's predicate refuses ``pod`` on the revocable ``node`` at ``now``, if it
    surely does (tdm.go's predicateFn)."""
    zone = node.meta.labels.get(REVOCABLE_ZONE, "")
    if not zone:
        return None
    if zone not in windows:
        return f"its revocable zone {zone} has no window in tdm's arguments"
    window = windows[zone]
    open_now = _zone_open(window, now) if isinstance(window, str) else None
    if open_now is None:
        return None
    if not open_now:
        return f"its revocable zone {zone} is outside its window {window} at {now:%H:%M:%S}"
    if not _may_use_revocable(pod):
        return f"the pod is neither annotated {REVOCABLE_ZONE}: '*' nor preemptable"
    return None


def _may_use_revocable(pod: Pod) -> bool:
    """GetPodRevocableZone is "*": the pod's revocable-zone annotation is "*", or it has
    none and its `volcano.sh/preemptable` annotation is true by Go's ParseBool."""
    notes = pod.meta.annotations
    if REVOCABLE_ZONE in notes:
        return notes[REVOCABLE_ZONE] == "*"
    return notes.get(PREEMPTABLE) in ("1", "t", "T", "TRUE", "true", "True")


def _zones_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    windows = _windows(inputs)
    nodes = nodes_by_name(inputs)
    start = inputs.now or DEFAULT_NOW
    for view in cycles(inputs, result):
        now = start + view.cycle * _PERIOD
        for bind in view.binds:
            pod, node = view.pods.get(bind.task), nodes.get(bind.node)
            if pod is None or node is None:
                continue
            why = _zone_refusal(pod, node, windows, now)
            if why:
                return [
                    f"cycle {view.cycle}: {bind.task} bound to revocable node {bind.node}: {why}"
                ]
    return []


register(
    Invariant(
        "revocable-zones",
        "with tdm, only pods that may use revocable nodes are bound there, inside the window",
        "For every bind onto a node labelled `volcano.sh/revocable-zone: <zone>`: tdm's "
        "arguments give the zone a window (`tdm.revocable-zone.<zone>`), the session's "
        "clock (the spec's, one second later per cycle) is inside it (HH:MM-HH:MM, today; "
        "an end not after the start is tomorrow's, so an overnight window's early morning "
        "is outside it, a tdm quirk; whole seconds), and the pod may use revocable nodes "
        '(GetPodRevocableZone: annotated `volcano.sh/revocable-zone: "*"`, or without that '
        "annotation, annotated `volcano.sh/preemptable` true). A window this check does "
        "not read with certainty (not two clock times joined by a dash) leaves the zone "
        "unjudged.",
        "Configurations with one `tdm` entry, its enablePredicate on, on clusters with a "
        "revocable node. tdm's victims (preempt's and shuffle's) are not judged: preempt "
        "already passes tdm only preemptable Running pods, so what tdm adds there is which "
        "of them, and shuffle's victims are the preemptable pods of closed zones at most "
        "one eviction period apart, which the process-wide last-eviction time decides.",
        _zones_apply,
        _zones_check,
    )
)


# -- task-topology-order ------------------------------------------------------------------------

_TOPOLOGY_KEYS = (
    "volcano.sh/task-topology-affinity",
    "volcano.sh/task-topology-anti-affinity",
    "volcano.sh/task-topology-task-order",
)
# Plugins of v1.11.0 that register a TaskOrder function.
_TASK_ORDERS = ("priority", "task-topology")


def _topology_order_applies(inputs: InvariantInputs) -> bool:
    conf = inputs.conf
    if conf.actions.count("allocate") != 1 or not _on(conf, "task-topology", "task_order"):
        return False
    first = next(
        option.name
        for tier in conf.tiers
        for option in tier.plugins
        if (option.name in _TASK_ORDERS or option.name.endswith(YOURS))
        and option.enabled("task_order")
    )
    return first == "task-topology" and any(
        _TOPOLOGY_KEYS[0] in pg.meta.annotations for pg in inputs.cluster.pod_groups
    )


def _role_ranks(pg: PodGroup, pods: Sequence[Pod]) -> dict[str, tuple[int, int]] | None:
    """Each role's rank in task-topology's TaskOrder within the job's one bucket (the
    smaller first): the explicit task order (earlier first), then the affinity priority
    (inter-affinity before self-affinity). None where the plugin would build more than
    one bucket or no manager: an anti-affinity rule, a role named twice in a group or
    order, an empty name, or a name no pod of the job carries in its
    ``volcano.sh/task-spec`` annotation (the plugin's affinityCheck then refuses it)."""
    notes = pg.meta.annotations
    if _TOPOLOGY_KEYS[1] in notes:
        return None
    groups = [part.split(",") for part in notes[_TOPOLOGY_KEYS[0]].split(";")]
    order = notes[_TOPOLOGY_KEYS[2]].split(",") if _TOPOLOGY_KEYS[2] in notes else []
    roles = {pod.meta.annotations.get(TASK_SPEC, "") for pod in pods}
    for names in (*groups, order):
        if len(set(names)) != len(names) or not set(names) <= roles - {""}:
            return None
    priority: dict[str, int] = {}
    for names in groups:
        for name in names:
            # AFFINITY_PRIORITY: inter-affinity 3, self-affinity (a lone role) 2
            priority[name] = max(priority.get(name, 0), 3 if len(names) > 1 else 2)
    place = {name: len(order) - i for i, name in enumerate(order)}
    return {name: (-place.get(name, 0), -p) for name, p in priority.items()}


def _topology_order_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    jobs = session_jobs(inputs).pod_groups
    request = requests(inputs)
    for view in cycles(inputs, result):
        members = pods_by_job(inputs, view)
        ranked: dict[str, dict[str, tuple[int, int]] | None] = {}  # per job, found once
        last: dict[str, tuple[tuple[int, int, int], str]] = {}
        for bind in view.binds:
            pod = view.pods.get(bind.task)
            uid = view.job_ids.get(bind.task, "")
            pg = jobs.get(uid)
            if pod is None or pg is None or _TOPOLOGY_KEYS[0] not in pg.meta.annotations:
                continue
            if request.nothing(pod):
                continue  # backfill's
            if uid not in ranked:
                pods = members.get(uid, [])
                # a placed task starts a bucket of its own
                ranked[uid] = None if any(p.node_name for p in pods) else _role_ranks(pg, pods)
            ranks = ranked[uid]
            if ranks is None:
                continue
            role = pod.meta.annotations.get(TASK_SPEC, "")
            # tasks out of the bucket (a role no rule names) come after those in it
            rank = (0, *ranks[role]) if role in ranks else (1, 0, 0)
            before = last.get(uid)
            if before is not None and rank < before[0]:
                return [
                    f"cycle {view.cycle}: job {uid} bound {bind.task} (role {role or 'none'}) "
                    f"after {before[1]}, though task-topology orders its role first"
                ]
            last[uid] = (rank, bind.task)
    return []


register(
    Invariant(
        "task-topology-order",
        "allocate binds a job's roles in task-topology's order",
        "For every cycle and every job with a `volcano.sh/task-topology-affinity` "
        "annotation, no anti-affinity one, every role named once per group and order and "
        "carried by one of its pods (its `volcano.sh/task-spec` annotation), and no pod on "
        "a node at the cycle's start: its pending tasks form one bucket (no rule keeps "
        "two apart), and task-topology's TaskOrder puts the tasks of the roles its rules "
        "name before the others, and among those the earlier role of "
        "`volcano.sh/task-topology-task-order` first, then the role in an inter-affinity "
        "group before one only self-affine. Its binds of pods that request resources "
        "(allocate's) come in that order: allocate pops a job's tasks from one TaskOrder "
        "heap for the whole action and commits them in the order it allocated them.",
        "Configurations listing allocate once where task-topology's enableTaskOrder is on "
        "and it is the first TaskOrder plugin on (before priority, or yours), on clusters "
        "with a job carrying the affinity annotation.",
        _topology_order_applies,
        _topology_order_check,
    )
)
