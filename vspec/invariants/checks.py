"""The invariant catalogue (docs/invariants.md holds the same definitions, with examples).

Each check replays the run from the outside (:mod:`vspec.invariants.history`) and returns
one message per violation, naming the cycle, the objects and the numbers involved.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from vspec.api.resource import Resource
from vspec.api.task_info import TaskInfo
from vspec.api.types import TaskStatus
from vspec.invariants.base import Invariant, InvariantInputs, register
from vspec.invariants.history import (
    HOLDING,
    CycleView,
    Jobs,
    allocatable,
    bool_argument,
    cycles,
    dims,
    enabled,
    exceeds,
    fmt,
    gone_after,
    job_info,
    node_affinity_fails,
    plugin_entries,
    pods_by_job,
    request,
    taint_fails,
    unschedulable_fails,
)
from vspec.model.result import SimulationResult

Check = Callable[[InvariantInputs, SimulationResult], list[str]]


def _always(_inputs: InvariantInputs) -> bool:
    return True


# -- gang-atomicity -----------------------------------------------------------------------------


def _gang_applies(inputs: InvariantInputs) -> bool:
    return enabled(inputs.conf, "gang", "job_ready")


def _gang_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    messages: list[str] = []
    jobs = Jobs.of(inputs.cluster)
    for view in cycles(inputs.cluster, result, inputs.cycles):
        bound = Counter(view.pods[b.task].job_id for b in view.binds if b.task in view.pods)
        if not bound:
            continue
        members = pods_by_job(view.pods, inputs.conf)
        after = {b.task: TaskStatus.Running for b in view.binds}
        for uid, count in bound.items():
            pg = jobs.pod_groups.get(uid)
            if pg is None:
                continue
            job = job_info(uid, pg, members.get(uid, []), after)
            if job.is_ready() and job.check_task_ready():
                continue
            pending_be = job.pending_best_effort_task_num()
            messages.append(
                f"cycle {view.cycle}: job {uid} had {count} pod(s) bound but is not ready "
                f"afterwards: {job.ready_task_num()} ready + {pending_be} pending best-effort "
                f"< minMember {job.min_available}"
                + (
                    ""
                    if job.check_task_ready()
                    else f", or a role is below minTaskMember {pg.min_task_member}"
                )
            )
    return messages


register(
    Invariant(
        "gang-atomicity",
        "a gang is bound all-or-nothing: binds never leave a job below minMember",
        "For every cycle and every job of the session that had at least one pod bound in "
        "that cycle: after the cycle's binds (and before its evictions) the job is ready by "
        "gang's rule, i.e. Bound/Binding/Running/Allocated/Succeeded tasks plus Pending "
        "best-effort tasks >= minMember, and, when minMember >= the sum of minTaskMember, "
        "every role reaches its minTaskMember.",
        "Configurations where gang's JobReady is enabled (a `gang` entry with "
        "enableJobReady on). Without it JobReady is always true and Volcano commits every "
        "partial allocation.",
        _gang_applies,
        _gang_check,
    )
)


# -- no-overcommit ---------------------------------------------------------------------------


def _overcommit_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    messages: list[str] = []
    nodes = {n.meta.name: n for n in inputs.cluster.nodes}
    for view in cycles(inputs.cluster, result, inputs.cycles):
        by_node: dict[str, list[str]] = {}
        for b in view.binds:
            if b.task in view.pods and b.node in nodes:
                by_node.setdefault(b.node, []).append(b.task)
        for name, bound in by_node.items():
            used, names = Resource(), set[str]()
            for key, pod in view.pods.items():
                if pod.node_name == name and view.status(key) in HOLDING:
                    used.add(request(pod))
            for key in bound:
                r = request(view.pods[key])
                used.add(r)
                names |= set(dims(r))
            limit = allocatable(nodes[name])
            over = exceeds(used, limit, names)
            if over:
                messages.append(
                    f"cycle {view.cycle}: node {name} holds {fmt(used, set(over))} after "
                    f"binding {', '.join(bound)}, above allocatable {fmt(limit, set(over))}"
                )
    return messages


register(
    Invariant(
        "no-overcommit",
        "binds never take a node beyond its allocatable",
        "For every cycle and every node that received a bind in it: the requests of the "
        "pods on the node after the cycle's binds (pods already on it that are not "
        "Succeeded or Failed, Releasing ones included, plus the pods bound to it) do not "
        "exceed its allocatable (Volcano's tolerance of 0.1 unit) in any dimension the "
        "bound pods request, `pods` (one per pod) included. Dimensions the binds do not "
        "request are not judged, so a cluster that starts overcommitted is not blamed.",
        "Every configuration.",
        _always,
        _overcommit_check,
    )
)


# -- predicates-respected --------------------------------------------------------------------


def _predicate_entries(inputs: InvariantInputs) -> list[tuple[str, bool]]:
    """(filter, on) for the node filters the predicates plugin runs (first entry wins)."""
    entries = [o for _, o in plugin_entries(inputs.conf, "predicates") if o.enabled("predicate")]
    if not entries:
        return []
    option = entries[0]
    return [
        ("unschedulable", True),
        ("affinity", bool_argument(option, "predicate.NodeAffinityEnable", True)),
        ("taints", bool_argument(option, "predicate.TaintTolerationEnable", True)),
    ]


def _predicates_applies(inputs: InvariantInputs) -> bool:
    return bool(_predicate_entries(inputs))


_FILTERS = {
    "unschedulable": unschedulable_fails,
    "affinity": node_affinity_fails,
    "taints": taint_fails,
}


def _predicates_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    filters = [_FILTERS[name] for name, on in _predicate_entries(inputs) if on]
    if not filters:
        filters = list(_FILTERS.values())  # requested explicitly: judge every filter
    nodes = {n.meta.name: n for n in inputs.cluster.nodes}
    messages: list[str] = []
    for view in cycles(inputs.cluster, result, inputs.cycles):
        for b in view.binds:
            pod, node = view.pods.get(b.task), nodes.get(b.node)
            if pod is None or node is None:
                continue
            for fails in filters:
                reason = fails(pod, node)
                if reason is not None:
                    messages.append(f"cycle {view.cycle}: {b.task} bound to {b.node}: {reason}")
    return messages


register(
    Invariant(
        "predicates-respected",
        "every bind passes the node filters the predicates plugin runs",
        "For every bind (pod p to node n): n is not unschedulable unless p tolerates "
        "node.kubernetes.io/unschedulable:NoSchedule; p's nodeSelector and required node "
        "affinity match n (unless predicate.NodeAffinityEnable is false); every "
        "NoSchedule/NoExecute taint of n is tolerated by p (unless "
        "predicate.TaintTolerationEnable is false). The filters are re-implemented here, "
        "independently of the plugin. Pod (anti-)affinity, ports, topology spread and "
        "volumes are not judged; the pod count is judged by no-overcommit.",
        "Configurations with a `predicates` entry whose enablePredicate is on. Requested "
        "explicitly without one, it judges all three filters.",
        _predicates_applies,
        _predicates_check,
    )
)


# -- queue-capability ------------------------------------------------------------------------


def _capability_applies(inputs: InvariantInputs) -> bool:
    conf = inputs.conf
    return enabled(conf, "proportion", "allocatable") or enabled(conf, "capacity", "allocatable")


def _capability_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    messages: list[str] = []
    jobs = Jobs.of(inputs.cluster)
    queues = {q.meta.name: q for q in inputs.cluster.queues}
    for view in cycles(inputs.cluster, result, inputs.cycles):
        evicted = {e.task for e in view.evictions}
        bound = {b.task for b in view.binds if b.task in view.pods}
        touched: dict[str, set[str]] = {}
        for key in bound:
            uid = view.pods[key].job_id
            if uid in jobs.pod_groups:
                touched.setdefault(jobs.queue(uid), set()).update(dims(request(view.pods[key])))
        for name, requested in touched.items():
            queue = queues.get(name)
            if queue is None or not queue.capability:
                continue
            capability = Resource.from_list(queue.capability)
            guarantee = Resource.from_list(queue.guarantee)
            # Judged: dimensions the capability limits (a zero cpu/memory means unlimited
            # to proportion), the binds request, and the guarantee does not exceed.
            names = {
                n
                for n in set(dims(capability)) & requested
                if n != "pods" and guarantee.get(n) <= capability.get(n)
            }
            used = Resource()
            for key, pod in view.pods.items():
                uid = pod.job_id
                if key in evicted or uid not in jobs.pod_groups or jobs.queue(uid) != name:
                    continue
                if key in bound or view.status(key) in (
                    TaskStatus.Bound,
                    TaskStatus.Binding,
                    TaskStatus.Running,
                ):
                    used.add(request(pod))
            over = exceeds(used, capability, names)
            if over:
                messages.append(
                    f"cycle {view.cycle}: queue {name} is allocated {fmt(used, set(over))} "
                    f"after its binds, above capability {fmt(capability, set(over))}"
                )
    return messages


register(
    Invariant(
        "queue-capability",
        "binds never take a queue beyond its capability",
        "For every cycle and every queue with a capability that had pods bound in it: the "
        "requests of the queue's allocated pods after the cycle (Bound/Binding/Running at "
        "its start or bound in it, minus those evicted in it) do not exceed the capability "
        "in any dimension that the capability names with a non-zero value, the bound pods "
        "request, and the queue's guarantee does not exceed (`pods` is never judged).",
        "Configurations where `proportion` or `capacity` has enabledAllocatable on (the "
        "plugins whose Allocatable enforces the capability).",
        _capability_applies,
        _capability_check,
    )
)


# -- logprint-correct ------------------------------------------------------------------------

_LOGPRINT = re.compile(r"^Job (\S+/\S+) is (pending|ready)\b")
_UNFILLED = re.compile(r"%!|%[-+# 0]*\d*(?:\.\d+)?[vsdqfgtxXTp]\b")


def _logprint_applies(inputs: InvariantInputs) -> bool:
    return (
        "print" in inputs.conf.actions
        and bool(plugin_entries(inputs.conf, "logprint"))
        and inputs.verbosity >= 1
    )


def _expected_lines(
    inputs: InvariantInputs,
    view: CycleView,
    statuses: dict[str, TaskStatus],
    phases: dict[str, str],
) -> Counter[tuple[str, str]]:
    """The (job, kind) lines logprint owes when the session holds ``statuses``."""
    jobs = Jobs.of(inputs.cluster)
    gang_ready = enabled(inputs.conf, "gang", "job_ready")
    members = pods_by_job(view.pods, inputs.conf)
    want: Counter[tuple[str, str]] = Counter()
    for uid, pg in jobs.pod_groups.items():
        if phases.get(uid, pg.phase) in ("Pending", ""):
            want[(uid, "pending")] += 1
        job = job_info(uid, pg, members.get(uid, []), statuses)
        if not gang_ready or (job.is_ready() and job.check_task_ready()):
            want[(uid, "ready")] += 1
    return want


def _logprint_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    messages = [
        f"cycle {line.cycle}: unfilled format verb in {line.text!r}"
        for line in result.logs
        if _UNFILLED.search(line.text)
    ]
    session_jobs = set(Jobs.of(inputs.cluster).pod_groups)
    seen: dict[int, Counter[tuple[str, str]]] = {}
    for line in result.logs:
        match = _LOGPRINT.match(line.text)
        if match is None:
            continue
        if match[1] not in session_jobs:
            messages.append(f"cycle {line.cycle}: logprint names unknown job {match[1]}")
        seen.setdefault(line.cycle, Counter())[(match[1], match[2])] += 1
    actions = inputs.conf.actions
    if actions.count("print") != 1:
        return messages
    views = list(cycles(inputs.cluster, result, inputs.cycles))
    # Exact lines are owed where the state at print time is known from the outside: print
    # first in the first cycle (the input state), print last in the last cycle (the
    # in-session state the result records).
    checks: list[tuple[CycleView, dict[str, TaskStatus], dict[str, str]]] = []
    if actions[0] == "print":
        checks.append((views[0], {}, {}))
    if actions[-1] == "print" and result.tasks:
        statuses = {k: TaskStatus[t.status] for k, t in result.tasks.items()}
        phases = {uid: pg.session_phase for uid, pg in result.pod_groups.items()}
        checks.append((views[-1], statuses, phases))
    for view, statuses, phases in checks:
        want = _expected_lines(inputs, view, statuses, phases)
        got = seen.get(view.cycle, Counter())
        for (uid, kind), n in sorted((want - got).items()):
            messages.append(f"cycle {view.cycle}: missing {n} 'Job {uid} is {kind}' line(s)")
        for (uid, kind), n in sorted((got - want).items()):
            messages.append(f"cycle {view.cycle}: {n} unexpected 'Job {uid} is {kind}' line(s)")
    return messages


register(
    Invariant(
        "logprint-correct",
        "logprint lines name the right jobs and carry no unfilled format verb",
        "No captured line contains an unfilled Go verb (`%!`, or a bare verb such as `%v` "
        "or `%s`). Every 'Job <ns>/<name> is pending|ready' line names a job of the "
        "session. When `print` appears once in the actions, the lines are exact where the "
        "state at print time is known: print first in the first cycle, and print last in "
        "the last cycle: one 'is pending' line per job whose pod group phase is Pending "
        "or empty, one 'is ready' line per job the session's JobReady accepts (gang's rule "
        "when gang's JobReady is on, every job otherwise), and no other such line.",
        "Configurations with the `print` action and a `logprint` entry, run at verbosity "
        ">= 1 (logprint logs at V(1)).",
        _logprint_applies,
        _logprint_check,
    )
)


# -- deterministic ---------------------------------------------------------------------------


def _outcome(result: SimulationResult) -> dict[str, object]:
    return {
        "binds": result.binds,
        "evictions": result.evictions,
        "pipelined": result.pipelined,
        "pod groups": {
            k: (v.phase, v.session_phase, v.conditions) for k, v in result.pod_groups.items()
        },
        "tasks": {k: (v.node, v.status) for k, v in result.tasks.items()},
        "logs": [line.text for line in result.logs],
    }


def _deterministic_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    again = inputs.rerun()
    first, second = _outcome(result), _outcome(again)
    return [
        f"a second run with seed {inputs.seed} gives different {what}"
        for what in first
        if first[what] != second[what]
    ]


register(
    Invariant(
        "deterministic",
        "the same inputs and seed give the same outcome",
        "Running the same conf on the same cluster with the same seed, clock, cycles and "
        "verbosity again gives the same binds and evictions (with their cycles and "
        "order), pipelined tasks, pod group phases and conditions, task statuses and "
        "captured log lines.",
        "Every configuration (Volcano itself is not deterministic: vspec replaces its "
        "random and map-order choices by seeded and insertion-ordered ones).",
        _always,
        _deterministic_check,
    )
)


# -- no-priority-inversion -------------------------------------------------------------------

# Plugins that register a Preemptable function. Tiers decide in order and an empty
# answer passes the decision on, so only plugins sharing priority's tier are bound by it.
PREEMPTABLE_PLUGINS = frozenset({"priority", "gang", "conformance", "drf", "cdp", "pdb", "tdm"})


def _inversion_applies(inputs: InvariantInputs) -> bool:
    """Priority's veto holds only when no other tier can decide: a tier before priority's
    decides first, a tier after it decides when priority's tier leaves no victim."""
    conf = inputs.conf
    tiers = {i for i, o in plugin_entries(conf, "priority") if o.enabled("preemptable")}
    deciding = {
        i
        for i, tier in enumerate(conf.tiers)
        for option in tier.plugins
        if option.name in PREEMPTABLE_PLUGINS and option.enabled("preemptable")
    }
    return "preempt" in conf.actions and len(tiers) == 1 and deciding == tiers


def _task_priority(view: CycleView, key: str) -> int:
    return TaskInfo(view.pods[key]).priority


def _inversion_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    messages: list[str] = []
    jobs = Jobs.of(inputs.cluster)
    for view in cycles(inputs.cluster, result, inputs.cycles):
        victims = [e.task for e in view.evictions if e.reason == "preempt" and e.task in view.pods]
        if not victims:
            continue
        pending = [
            k
            for k, p in view.pods.items()
            if view.status(k) is TaskStatus.Pending and p.job_id in jobs.pod_groups
        ]
        for victim in victims:
            vjob = view.pods[victim].job_id
            vprio = jobs.priority.get(vjob, 0)
            vtask = _task_priority(view, victim)
            if not any(
                (view.pods[k].job_id != vjob and jobs.priority[view.pods[k].job_id] > vprio)
                or (view.pods[k].job_id == vjob and _task_priority(view, k) > vtask)
                for k in pending
            ):
                messages.append(
                    f"cycle {view.cycle}: {victim} (job {vjob}, priority {vprio}) was preempted "
                    "but no pending pod outranks it"
                )
    return messages


register(
    Invariant(
        "no-priority-inversion",
        "preempt only evicts a pod for a pod that outranks it",
        "For every eviction with reason `preempt` in a cycle, some pod that was Pending at "
        "the start of that cycle, of a job of the session, outranks the victim: it belongs "
        "to another job whose priority (its PriorityClass value, else the global default, "
        "else 0) is strictly higher than the victim's job's, or to the victim's own job "
        "with a strictly higher task priority.",
        "Configurations with the `preempt` action and `priority` with enablePreemptable "
        "on, where every other Preemptable plugin (gang, conformance, drf, cdp, pdb, tdm) "
        "with enablePreemptable on is in priority's tier: an earlier tier decides before "
        "priority, a later one decides when priority's tier leaves no victim (see "
        "specs/findings/).",
        _inversion_applies,
        _inversion_check,
    )
)


# -- pipelined-consistent --------------------------------------------------------------------

_NOT_ON_NODE = frozenset(
    {
        TaskStatus.Pipelined,
        TaskStatus.Releasing,
        TaskStatus.Succeeded,
        TaskStatus.Failed,
        TaskStatus.Pending,
    }
)


def _unjudged_pipelined(inputs: InvariantInputs) -> set[str]:
    """Backfill ignores pipelined tasks' pod slots unless predicates counts them
    (specs/findings/pipelined-consistent-backfill-takes-promised-pod-slots.yaml)."""
    conf = inputs.conf
    if "backfill" in conf.actions and not enabled(conf, "predicates", "predicate"):
        return {"pods"}
    return set()


def _pipelined_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    if not result.tasks:
        return []
    unjudged = _unjudged_pipelined(inputs)
    views = list(cycles(inputs.cluster, result, inputs.cycles))
    last = views[-1]
    nodes = {n.meta.name: n for n in inputs.cluster.nodes}
    messages: list[str] = []
    bound = {b.task for b in last.binds}
    promised: dict[str, list[str]] = {}
    # result.tasks gives no node to a Pipelined (or Allocated) task: it is not bound;
    # result.pipelined has where each pipelined task holds its place.
    for key, node in (pair for pairs in result.pipelined.values() for pair in pairs):
        if node not in nodes:
            messages.append(f"pipelined task {key} is on no declared node ({node or 'none'})")
        elif key in bound:
            messages.append(f"task {key} is pipelined to {node} and bound in the same cycle")
        elif key in last.pods:
            promised.setdefault(node, []).append(key)
    for name, keys in promised.items():
        limit = allocatable(nodes[name])
        before = Resource()  # what the node's pods held at the start of the cycle
        for key, pod in last.pods.items():
            if pod.node_name == name and last.status(key) in HOLDING - {TaskStatus.Releasing}:
                before.add(request(pod))
        used, names = Resource(), set[str]()
        for key, task in result.tasks.items():
            if (
                task.node == name
                and key in last.pods
                and TaskStatus[task.status] not in _NOT_ON_NODE
            ):
                used.add(request(last.pods[key]))
        for key in keys:
            r = request(last.pods[key])
            used.add(r)
            names |= set(dims(r))
        names -= unjudged | set(exceeds(before, limit, names))
        over = exceeds(used, limit, names)
        if over:
            messages.append(
                f"node {name}: pipelined {', '.join(keys)} need {fmt(used, set(over))} with "
                f"the tasks that keep their place, above allocatable {fmt(limit, set(over))}"
            )
    return messages


register(
    Invariant(
        "pipelined-consistent",
        "pipelined tasks are promised only resources that will be free",
        "In the last cycle, after its last action (the state `expect.pipelined` reads): "
        "every Pipelined task is on a declared node and was not bound in that cycle; for "
        "every node, the requests of its Pipelined tasks plus those of its tasks that keep "
        "their place (bound ones: Binding, Bound, Running; Allocated tasks of a kept "
        "statement are not reported with a node, so they are not counted) "
        "fit its allocatable in every dimension the pipelined tasks request (Volcano's "
        "FutureIdle never goes negative), except dimensions in which the node's pods "
        "(Releasing ones aside) already exceeded its allocatable at the start of the cycle.",
        "Every configuration; the `pods` dimension is not judged when `backfill` runs "
        "without the predicates plugin (backfill then binds best-effort pods into pod slots "
        "promised to pipelined tasks, see specs/findings/).",
        _always,
        _pipelined_check,
    )
)


# -- conservation ----------------------------------------------------------------------------


def _conservation_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    messages: list[str] = []
    nodes = {n.meta.name for n in inputs.cluster.nodes}
    views = list(cycles(inputs.cluster, result, inputs.cycles))
    stray = sorted({b.cycle for b in result.binds} | {e.cycle for e in result.evictions})
    if stray and stray[-1] >= inputs.cycles:
        messages.append(f"binds or evictions recorded for cycle {stray[-1]} of {inputs.cycles}")
    for view in views:
        for key, n in Counter(b.task for b in view.binds).items():
            if n > 1:
                messages.append(f"cycle {view.cycle}: {key} bound {n} times")
        for key, n in Counter(e.task for e in view.evictions).items():
            if n > 1:
                messages.append(f"cycle {view.cycle}: {key} evicted {n} times")
        for b in view.binds:
            if b.task not in view.pods:
                messages.append(f"cycle {view.cycle}: bind of {b.task}, which does not exist")
            elif view.status(b.task) is not TaskStatus.Pending:
                messages.append(
                    f"cycle {view.cycle}: bind of {b.task}, which was {view.status(b.task)}"
                )
            if b.node not in nodes:
                messages.append(f"cycle {view.cycle}: {b.task} bound to unknown node {b.node}")
        for e in view.evictions:
            if e.task not in view.pods:
                messages.append(f"cycle {view.cycle}: eviction of {e.task}, which does not exist")
            elif not view.pods[e.task].node_name:
                messages.append(f"cycle {view.cycle}: eviction of {e.task}, which is on no node")
    held = {p.meta.key for p in inputs.cluster.held_pods}
    for key, cycle in sorted(result.created.items()):
        if key not in held:
            messages.append(f"cycle {cycle}: {key} was created but was never a held pod")
    if result.cluster is not None and views:
        messages.extend(_final_cluster(views[-1], result))
    return messages


def _final_cluster(last: CycleView, result: SimulationResult) -> list[str]:
    """The cluster after the last cycle: its pods minus the evicted, moved only by binds."""
    assert result.cluster is not None
    survivors = set(last.pods) - gone_after(last)
    survivors |= {k for k, cycle in result.created.items() if cycle == last.cycle + 1}
    final = {p.meta.key: p for p in result.cluster.pods}
    messages = []
    if set(final) != survivors:
        lost, extra = sorted(survivors - set(final)), sorted(set(final) - survivors)
        messages.append(f"final cluster: pods lost {lost}, pods appeared {extra}")
    bound = {b.task for b in last.binds}
    for key, pod in final.items():
        before = last.pods.get(key)
        if (
            before is not None
            and key in survivors
            and key not in bound
            and (pod.node_name != before.node_name)
        ):
            messages.append(f"final cluster: {key} moved without a bind")
    return messages


register(
    Invariant(
        "conservation",
        "no pod appears, disappears, moves or is bound twice without a recorded reason",
        "Every bind of a cycle names a pod that exists and was Pending (not on a node) at "
        "the start of the cycle, and a declared node; every eviction names a pod that was "
        "on a node; no pod is bound or evicted twice in one cycle; no bind or eviction is "
        "recorded for a cycle that did not run; the cluster after the last cycle holds "
        "exactly the pods of the input (and the held pods a controller created, from the "
        "cycle it created them) minus the evicted and the terminating ones (those "
        "with a deletionTimestamp are gone one period later), each on the node it had "
        "unless a bind moved it.",
        "Every configuration.",
        _always,
        _conservation_check,
    )
)
