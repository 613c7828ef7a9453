"""Invariants on how much reclaim takes and from which queues, and on what proportion
lets a queue hold (``actions/reclaim``, ``plugins/proportion``), restated from the
outside.

``reclaim-until-covered`` reads which reclaimer each eviction was for from the line
Volcano's reclaim logs at Error level (so at every verbosity) before each eviction:
``Try to reclaim Task <victim> for Tasks <reclaimer>``. The result records evictions,
not whom they served; that line is Volcano's own account of it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.invariants.base import Invariant, InvariantInputs, register
from vspec.invariants.history import (
    CycleView,
    Jobs,
    Requests,
    cluster_total,
    conf_answer,
    cycles,
    enabled,
    exceeds,
    gone_after,
    placed_by_us,
    pod_slots,
    requests,
    session_jobs,
    sole_decider,
)
from vspec.invariants.outside import TOLERANCE, pod_status
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster, Pod
from vspec.model.result import SimulationResult

_TRY = re.compile(r"^Try to reclaim Task <([^>]*)> for Tasks <([^>]*)>$")


@dataclass(frozen=True)
class _Attempt:
    """Consecutive reclaim evictions for one reclaimer on one node."""

    cycle: int
    reclaimer: str
    node: str
    victims: list[str]


def _attempts(inputs: InvariantInputs, result: SimulationResult) -> Iterable[_Attempt]:
    """Reclaim tries one task on one node at most once per session, so consecutive
    lines naming the same reclaimer and the same victims' node are one attempt."""
    views = {v.cycle: v for v in cycles(inputs, result)}
    current: _Attempt | None = None
    for line in result.logs:
        if not line.startswith("Try to reclaim Task <"):
            continue
        match = _TRY.match(line.text)
        view = views.get(line.cycle)
        if match is None or view is None or match[1] not in view.pods:
            continue
        victim, reclaimer = match[1], match[2]
        node = view.pods[victim].node_name
        key = (line.cycle, reclaimer, node)
        if current is None or (current.cycle, current.reclaimer, current.node) != key:
            if current is not None:
                yield current
            current = _Attempt(line.cycle, reclaimer, node, [])
        current.victims.append(victim)
    if current is not None:
        yield current


def _covers(got: Resource, need: Resource) -> bool:
    """``got`` is at least ``need`` in cpu, memory and every other resource ``need``
    asks for, pod slots included (Volcano's ``LessEqual`` with ``Zero``)."""
    names = {"cpu", "memory"} | set(need.scalars)
    return not exceeds(need, got, names)


def _resreq(request: Requests, pod: Pod) -> Resource:
    """A task's request as reclaim sums it (``Resreq``): the pod's request with its pod
    slots as Volcano counts them, one plus any its containers ask for (a victim's slots
    count as reclaimed, and a reclaimer asking for slots needs them all)."""
    resreq = request(pod).clone()
    resreq.scalars["pods"] = pod_slots(pod)
    return resreq


def _until_covered_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    views = {v.cycle: v for v in cycles(inputs, result)}
    evicted = {(e.cycle, e.task) for e in result.evictions if e.reason == "reclaim"}
    request = requests(inputs)
    messages = []
    for attempt in _attempts(inputs, result):
        view = views[attempt.cycle]
        reclaimer = view.pods.get(attempt.reclaimer)
        # One victim always goes before the first check, whatever the request.
        if reclaimer is None or len(attempt.victims) < 2:
            continue
        need = _resreq(request, reclaimer)
        before_last = Resource()
        for victim in attempt.victims[:-1]:
            if (attempt.cycle, victim) in evicted:
                before_last.add(_resreq(request, view.pods[victim]))
        if _covers(before_last, need):
            messages.append(
                f"cycle {attempt.cycle}: reclaim for {attempt.reclaimer} on {attempt.node} "
                f"evicted {', '.join(attempt.victims)}, but the victims before the last "
                "already covered its request"
            )
    return messages


register(
    Invariant(
        "reclaim-until-covered",
        "reclaim evicts on a node only until what it evicted covers the reclaimer",
        "For every run of consecutive `Try to reclaim Task <victim> for Tasks <reclaimer>` "
        "lines of one cycle naming the same reclaimer and victims on the same node (one "
        "attempt: reclaim tries a task on a node once) with more than one victim, the "
        "evicted victims before the last one do not yet cover the reclaimer's request in "
        "cpu, memory, pod slots (a task's one plus any its containers ask for, as each "
        "task's Resreq counts them) and its other resources: Volcano stops evicting "
        "as soon as the evicted requests alone cover it (reclaim.go, the loop over the "
        "victims queue).",
        "Configurations with the `reclaim` action.",
        lambda inputs: "reclaim" in inputs.conf.actions,
        _until_covered_check,
    )
)


# -- proportion: reclaim takes only from queues above their deserved share -------------------


def _shares_judged(cluster: Cluster) -> bool:
    """The lower bound below holds where no queue has a capability or guarantee and no
    pod has init containers or overhead (their requests are counted differently)."""
    if any(q.capability or q.guarantee for q in cluster.queues):
        return False
    return not any(p.init_containers or p.overhead for p in cluster.pods)


def _deserved_floor(
    inputs: InvariantInputs, view: CycleView, jobs: Jobs
) -> dict[str, tuple[float, float]]:
    """A lower bound on each queue's deserved (cpu, memory) in proportion: its weighted
    share of the cluster, or its whole request where that is less.

    Proportion's first round gives every queue with jobs ``total * weight / (sum of
    their weights)``, capped by its request; later rounds only add to it and cap it by
    the same request again, so no queue ends below that first amount. Counting the
    weights of every queue a pod group names (a superset) only lowers the bound."""
    cluster = inputs.cluster
    request = requests(inputs)
    total = cluster_total(inputs)
    weights = {q.meta.name: q.weight for q in cluster.queues}
    named = {jobs.queue(uid) for uid in jobs.pod_groups}
    weight_sum = sum(weights.get(q, 0) for q in named)
    # Only cpu and memory are bounded: summed alone, not as whole requests.
    requested: dict[str, list[float]] = {q: [0.0, 0.0] for q in named}
    statuses, job_ids = view.statuses, view.job_ids
    for key, pod in view.pods.items():
        uid, status = job_ids[key], statuses[key]
        if uid in jobs.pod_groups and status in (
            TaskStatus.Pending,
            TaskStatus.Running,
            TaskStatus.Bound,
        ):
            if status is TaskStatus.Pending and not placed_by_us(pod, inputs.conf):
                continue  # not a task of the session
            r, into = request(pod), requested[jobs.queue(uid)]
            into[0] += r.milli_cpu
            into[1] += r.memory
    out = {}
    for name in named:
        share = weights.get(name, 0) / weight_sum if weight_sum else 0.0
        cpu, memory = requested[name]
        out[name] = (min(cpu, total.milli_cpu * share), min(memory, total.memory * share))
    return out


_DIMS = ("cpu", "memory", "pods")


def _amounts(pod: Pod, request: Requests) -> dict[str, float]:
    """A task's Resreq in the dimensions judged: milli-cpu, bytes, pod slots (one, plus
    any the pod writes itself)."""
    r = request(pod)
    written = sum(c.requests.get("pods", 0) for c in pod.containers)
    return {"cpu": r.milli_cpu, "memory": r.memory, "pods": 1.0 + float(written)}


def _queue_requests(
    inputs: InvariantInputs, pods: dict[str, Pod], jobs: Jobs
) -> dict[str, dict[str, float]]:
    """Each queue's request in proportion: the Resreq of its jobs' Pending, Bound and
    Running tasks (the queues that pod groups name, with or without pods)."""
    out = {jobs.queue(uid): dict.fromkeys(_DIMS, 0.0) for uid in jobs.pod_groups}
    request = requests(inputs)
    for pod in pods.values():
        if pod.job_id not in jobs.pod_groups:
            continue
        status = pod_status(pod)
        if status not in (TaskStatus.Pending, TaskStatus.Running, TaskStatus.Bound):
            continue
        if status is TaskStatus.Pending and not placed_by_us(pod, inputs.conf):
            continue  # not a task of the session
        into = out[jobs.queue(pod.job_id)]
        for dim, v in _amounts(pod, request).items():
            into[dim] += v
    return out


def _water_fill(
    total: float, requests: dict[str, float], weights: dict[str, int]
) -> dict[str, float]:
    """The cluster's ``total`` of one resource dealt out by weight, no queue past its
    request, what a satisfied queue leaves going to the others by weight again."""
    out = dict.fromkeys(requests, 0.0)
    left, active = (
        total,
        sorted(requests, key=lambda q: requests[q] / weights[q] if weights[q] else math.inf),
    )
    while active:
        weight_sum = sum(weights[q] for q in active)
        if weight_sum <= 0:
            break
        q = active[0]
        if requests[q] <= left * weights[q] / weight_sum:
            out[q] = requests[q]  # satisfied: the smallest request per weight goes first
            left -= requests[q]
            active.pop(0)
            continue
        for q in active:
            out[q] = left * weights[q] / weight_sum
        break
    return out


def _within_deserved(
    held: dict[str, float],
    queue: str,
    requests: dict[str, dict[str, float]],
    total: dict[str, float],
    weights: dict[str, int],
) -> bool:
    """Whether ``held`` is within the queue's deserved share in every dimension.

    Proportion deals the cluster out in rounds: each queue not yet satisfied gets the
    remainder times its weight over theirs, capped by its request; it stops when every
    queue is satisfied, when the remainder is empty (below 0.1 in every dimension), or
    when no queue took more. So each queue ends with at least its first round's amount
    (the least of its request and its weighted share of the cluster), and, in every
    dimension, with its part of the cluster dealt by weight and capped by the requests
    (:func:`_water_fill`), less the remainder (under 0.1). Volcano compares with a
    tolerance of 0.1: holding no more than the first amount plus it, or than the second
    amount, is within the share."""
    weight_sum = sum(weights.get(q, 0) for q in requests)
    share = weights.get(queue, 0) / weight_sum if weight_sum else 0.0
    own = requests.get(queue, dict.fromkeys(_DIMS, 0.0))
    for dim in _DIMS:
        first = min(own[dim], total[dim] * share)
        wanted = {q: r[dim] for q, r in requests.items()}
        dealt = _water_fill(total[dim], wanted, {q: weights.get(q, 0) for q in requests})
        if not (held[dim] - first < TOLERANCE or held[dim] <= dealt.get(queue, 0.0)):
            return False
    return True


def _below_deserved_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    if not _shares_judged(inputs.cluster):
        return []
    jobs = session_jobs(inputs)
    request = requests(inputs)
    sum_of = cluster_total(inputs)
    total = {"cpu": sum_of.milli_cpu, "memory": sum_of.memory, "pods": sum_of.get("pods")}
    weights = {q.meta.name: q.weight for q in inputs.cluster.queues}
    messages = []
    for view in cycles(inputs, result):
        taken = [e.task for e in view.evictions if e.reason == "reclaim" and e.task in view.pods]
        if not taken:
            continue
        queue_requests = _queue_requests(inputs, view.pods, jobs)
        # The most a queue can hold when reclaim runs: what it held at the start of the
        # cycle and whatever the cycle bound for it (evictions only lower it).
        most: dict[str, dict[str, float]] = {}
        bound = {b.task for b in view.binds}
        for key, pod in view.pods.items():
            if pod.job_id not in jobs.pod_groups:
                continue
            if pod_status(pod) in (TaskStatus.Running, TaskStatus.Bound) or key in bound:
                if any(k != "pods" and v >= TOLERANCE for k, v in request(pod).scalars.items()):
                    most[jobs.queue(pod.job_id)] = {}  # other resources: not bounded here
                    continue
                into = most.setdefault(jobs.queue(pod.job_id), dict.fromkeys(_DIMS, 0.0))
                if into:
                    for dim, v in _amounts(pod, request).items():
                        into[dim] += v
        for key in taken:
            uid = view.pods[key].job_id
            if uid not in jobs.pod_groups:
                continue
            queue = jobs.queue(uid)
            held = most.get(queue, dict.fromkeys(_DIMS, 0.0))
            if held and _within_deserved(held, queue, queue_requests, total, weights):
                messages.append(
                    f"cycle {view.cycle}: {key} was reclaimed from queue {queue}, which holds "
                    f"at most cpu {held['cpu']:g}m, memory {held['memory']:g}, pods "
                    f"{held['pods']:g}, within its deserved share"
                )
    return messages


register(
    Invariant(
        "reclaim-above-deserved",
        "with proportion, reclaim takes only from queues above their deserved share",
        "For every eviction with reason `reclaim` in a cycle, the victim's queue held, at "
        "most (its Running and Bound pods at the start of the cycle plus those bound in "
        "it), more cpu, memory or pod slots than its deserved share, by one of two lower "
        "bounds in each dimension: its request (its Pending, Bound and Running pods) "
        "capped by its weighted share of the cluster (the nodes' allocatable, times its "
        "weight over the weights of all queues that pod groups name), within 0.1; or its "
        "part of the cluster dealt by weight and capped by every queue's request "
        "(water-filling). Proportion offers a queue's tasks as victims only while its "
        "allocation is not within its deserved.",
        "Configurations with the `reclaim` action where `proportion` has "
        "enableReclaimable on in the only tier where plugins with that flag decide, as "
        "its last (v1.11.0: an empty intersection lets the next plugin answer afresh); "
        "clusters whose queues set no capability or guarantee, and whose pods have no "
        "init containers or overhead, and victims' queues holding only cpu and memory.",
        lambda inputs: (
            "reclaim" in inputs.conf.actions and sole_decider(inputs.conf, "proportion", "reclaim")
        ),
        _below_deserved_check,
    )
)


# -- proportion: what a queue is promised stays within its deserved share --------------------


def _allocatable_bound(conf: SchedulerConf) -> bool:
    """Proportion's Allocatable gates every placement that holds resources: allocate's
    and preempt's through Allocatable, reclaim's through Preemptive (the same rule)."""
    if not enabled(conf, "proportion", "allocatable"):
        return False
    return "reclaim" not in conf.actions or enabled(conf, "proportion", "preemptive")


def _within_deserved_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    """Judged on the last cycle, whose pipelined tasks the result records."""
    if not any(result.pipelined.values()) or not _shares_judged(inputs.cluster):
        return []
    jobs = session_jobs(inputs)
    last = cycles(inputs, result)[-1]
    floor = _deserved_floor(inputs, last, jobs)
    request = requests(inputs)
    total = cluster_total(inputs)
    gone = gone_after(last)
    bound = {b.task for b in last.binds}
    held: dict[str, list[float]] = {}  # queue -> its cpu and memory, the dimensions judged
    statuses, job_ids = last.statuses, last.job_ids
    for key, pod in last.pods.items():
        uid = job_ids[key]
        if uid not in jobs.pod_groups:
            continue
        kept = statuses[key] in (TaskStatus.Running, TaskStatus.Bound) and key not in gone
        if kept or key in bound:
            _hold(held, jobs.queue(uid), request(pod))
    promised: dict[str, list[str]] = {}
    for key, _node in (pair for pairs in result.pipelined.values() for pair in pairs):
        promised_pod = last.pods.get(key)
        if promised_pod is None or job_ids[key] not in jobs.pod_groups:
            continue
        queue = jobs.queue(job_ids[key])
        promised.setdefault(queue, []).append(key)
        _hold(held, queue, request(promised_pod))
    messages = []
    for queue, keys in sorted(promised.items()):
        others = [f for q, f in floor.items() if q != queue]
        most = (
            total.milli_cpu - sum(f[0] for f in others),
            total.memory - sum(f[1] for f in others),
        )
        asked = Resource()
        for key in keys:
            asked.add(request(last.pods[key]))
        cpu, memory = held[queue]
        over = [
            name
            for name, got, limit, wanted in (
                ("cpu", cpu, most[0], asked.milli_cpu),
                ("memory", memory, most[1], asked.memory),
            )
            if wanted >= TOLERANCE and got - limit >= TOLERANCE
        ]
        if over:
            messages.append(
                f"cycle {last.cycle}: queue {queue} ends with pipelined {', '.join(keys)} "
                f"and holds cpu {cpu:g}m, memory {memory:g}, above the most "
                f"it can deserve in {', '.join(over)} (cpu {most[0]:g}m, memory {most[1]:g})"
            )
    return messages


def _hold(held: dict[str, list[float]], queue: str, request: Resource) -> None:
    into = held.setdefault(queue, [0.0, 0.0])
    into[0] += request.milli_cpu
    into[1] += request.memory


register(
    Invariant(
        "pipelined-within-deserved",
        "with proportion, pipelining never takes a queue past its deserved share",
        "In the last cycle, for every queue with Pipelined tasks at the end of the session: "
        "its pods that keep their place (Running or Bound at the start of the cycle and not "
        "evicted or terminating, or bound in it) plus its Pipelined tasks request no more "
        "cpu (memory), where a Pipelined task requests some, than the most the queue can "
        "deserve: the cluster's allocatable minus the lower bounds of the other queues' "
        "deserved (as in `reclaim-above-deserved`; proportion never hands out more than the "
        "cluster). Every placement that holds resources (allocate's, preempt's, "
        "reclaim's) first asks proportion whether the queue's allocation plus the task "
        "stays within its deserved, and pipelining counts as allocation.",
        "Configurations where `proportion` has enabledAllocatable on (and enablePreemptive "
        "when `reclaim` runs); clusters as for `reclaim-above-deserved`.",
        lambda inputs: conf_answer(inputs, _allocatable_bound),
        _within_deserved_check,
    )
)
