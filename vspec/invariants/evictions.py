"""Invariants on what preempt and reclaim may evict, and for whom.

Volcano decides victims tier by tier (``Session.Preemptable``/``Reclaimable``): the
plugins of one tier intersect their answers; a plugin answering "none" ends its tier
undecided and the next tier decides; an empty intersection lets the next plugin of the
tier answer afresh. A plugin's veto therefore binds only when its tier is the only one
where plugins of that kind are on and it is that tier's last (:func:`sole_decider`).
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Mapping
from itertools import compress, repeat
from operator import ne

from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.invariants.base import Invariant, InvariantInputs, register
from vspec.invariants.history import (
    FAMILIES,
    HOLDING,
    CycleView,
    NodeFilter,
    Requests,
    allocatable,
    cycles,
    dims,
    enabled,
    exceeds,
    node_filters,
    nodes_by_name,
    requests,
    session_jobs,
    sole_decider,
    task_facts,
)
from vspec.invariants.outside import PLACED, best_effort, preemptable, task_role
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Node, Pod, PodGroup
from vspec.model.result import PodGroupResult, SimulationResult

CRITICAL_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
SYSTEM_NAMESPACE = "kube-system"


def _victims(view: CycleView, reason: str) -> list[str]:
    return [e.task for e in view.evictions if e.reason == reason and e.task in view.pods]


def _room(view: CycleView, node: Node, request: Requests) -> Resource:
    """The most a preemptor can get on ``node``: its allocatable, or what its pods held
    at the start of the cycle where that is more (a cluster may start overcommitted;
    reclaim counts only what it evicts)."""
    held = Resource()
    for key, pod in view.pods.items():
        if pod.node_name == node.meta.name and view.status(key) in HOLDING:
            held.add(request(pod))
    limit = allocatable(node)
    for name in set(dims(held)):
        if held.get(name) > limit.get(name):
            if name == "cpu":
                limit.milli_cpu = held.milli_cpu
            elif name == "memory":
                limit.memory = held.memory
            else:
                limit.scalars[name] = held.scalars[name]
    return limit


def _node_fits(
    pod: Pod, node: Node, room: Resource, filters: list[NodeFilter], request: Requests
) -> bool:
    """The pod's requests fit ``room``, and the node passes the predicates' filters."""
    r = request(pod)
    if exceeds(r, room, set(dims(r))):
        return False
    return all(fails(pod, node) is None for fails in filters)


Candidate = Callable[[Pod, Pod], bool]  # (preemptor, victim) -> may it evict the victim?


def _eligibility(
    inputs: InvariantInputs, result: SimulationResult, reason: str, accept: Candidate
) -> list[str]:
    """Each ``reason`` eviction has a pending preemptor ``accept`` allows that could fit
    on the victim's node once it is emptied."""
    jobs = session_jobs(inputs)
    nodes = nodes_by_name(inputs)
    filters = node_filters(inputs.conf)
    request = requests(inputs)
    messages: list[str] = []
    for view in cycles(inputs, result):
        victims = _victims(view, reason)
        if not victims:
            continue
        pending = [
            p
            for k, p in view.pods.items()
            if view.status(k) is TaskStatus.Pending
            and p.job_id in jobs.pod_groups
            and p.preemption_policy != "Never"
        ]
        for key in victims:
            victim = view.pods[key]
            node = nodes.get(victim.node_name)
            room = _room(view, node, request) if node is not None else Resource()
            if not any(
                accept(p, victim) and (node is None or _node_fits(p, node, room, filters, request))
                for p in pending
            ):
                messages.append(
                    f"cycle {view.cycle}: {key} was evicted ({reason}) but no pending pod "
                    f"that may {reason} it could fit on {victim.node_name}"
                )
    return messages


def _preempt_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    jobs = session_jobs(inputs)
    messages: list[str] = []
    for view in cycles(inputs, result):
        bound = {b.task for b in view.binds}
        for key in _victims(view, "preempt"):
            victim = view.pods[key]
            status = view.status(key)
            if key not in bound and status not in (TaskStatus.Running, TaskStatus.Bound):
                messages.append(f"cycle {view.cycle}: preempted {key} was {status}")
            if not preemptable(victim):
                messages.append(f"cycle {view.cycle}: preempted {key} is marked not preemptable")
            if victim.job_id not in jobs.pod_groups:
                messages.append(f"cycle {view.cycle}: preempted {key} is of no session job")

    def accept(preemptor: Pod, victim: Pod) -> bool:
        if best_effort(preemptor) and not best_effort(victim):
            return False
        return jobs.queue(preemptor.job_id) == jobs.queue(victim.job_id)

    return messages + _eligibility(inputs, result, "preempt", accept)


register(
    Invariant(
        "preempt-victims-eligible",
        "preempt evicts only preemptable pods, of its own queue, for a pod that could fit",
        "For every eviction with reason `preempt` in a cycle: the victim was Running or "
        "Bound at the start of the cycle (or bound in it), is not marked "
        "volcano.sh/preemptable false, belongs to a session job, and some pod Pending at "
        "the start of the cycle (of a session job, preemptionPolicy not Never) may have "
        "evicted it: its job is in the victim's queue, it is not best-effort unless the "
        "victim is, and its requests fit the victim's node's allocatable, or what the node's "
        "pods held where that is more (and the node "
        "passes the unschedulable, affinity and taint filters predicates runs).",
        "Configurations with the `preempt` action.",
        lambda inputs: "preempt" in inputs.conf.actions,
        _preempt_check,
    )
)


def _reclaim_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    jobs = session_jobs(inputs)
    queues = {q.meta.name: q for q in inputs.cluster.queues}
    messages: list[str] = []
    for view in cycles(inputs, result):
        for key in _victims(view, "reclaim"):
            victim = view.pods[key]
            status = view.status(key)
            if status is not TaskStatus.Running:
                messages.append(f"cycle {view.cycle}: reclaimed {key} was {status}")
            if not preemptable(victim):
                messages.append(f"cycle {view.cycle}: reclaimed {key} is marked not preemptable")
            if victim.job_id not in jobs.pod_groups:
                messages.append(f"cycle {view.cycle}: reclaimed {key} is of no session job")
                continue
            queue = queues.get(jobs.queue(victim.job_id))
            if queue is not None and queue.reclaimable is False:
                messages.append(
                    f"cycle {view.cycle}: reclaimed {key} from queue {queue.meta.name}, "
                    "which is not reclaimable"
                )

    def accept(reclaimer: Pod, victim: Pod) -> bool:
        return jobs.queue(reclaimer.job_id) != jobs.queue(victim.job_id)

    return messages + _eligibility(inputs, result, "reclaim", accept)


register(
    Invariant(
        "reclaim-victims-eligible",
        "reclaim evicts only Running, preemptable pods of other, reclaimable queues",
        "For every eviction with reason `reclaim` in a cycle: the victim was Running at the "
        "start of the cycle, is not marked volcano.sh/preemptable false, belongs to a "
        "session job whose queue is not `reclaimable: false`, and some pod Pending at the "
        "start of the cycle (of a session job, preemptionPolicy not Never) of another queue "
        "could fit on the victim's node (its allocatable, or what its pods held where that is "
        "more; the unschedulable, affinity and "
        "taint filters predicates runs).",
        "Configurations with the `reclaim` action.",
        lambda inputs: "reclaim" in inputs.conf.actions,
        _reclaim_check,
    )
)


# -- conformance ---------------------------------------------------------------------------------


def _critical(pod: Pod) -> bool:
    return pod.meta.namespace == SYSTEM_NAMESPACE or pod.priority_class_name in CRITICAL_CLASSES


def _protected_reasons(conf: SchedulerConf) -> list[str]:
    return [
        reason
        for reason in FAMILIES
        if reason in conf.actions and sole_decider(conf, "conformance", reason)
    ]


def _critical_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    reasons = _protected_reasons(inputs.conf) or list(FAMILIES)
    return [
        f"cycle {view.cycle}: critical pod {key} was evicted ({reason})"
        for view in cycles(inputs, result)
        for reason in reasons
        for key in _victims(view, reason)
        if _critical(view.pods[key])
    ]


register(
    Invariant(
        "critical-pods-protected",
        "preempt and reclaim never evict kube-system or system-critical pods",
        "No eviction with reason `preempt` or `reclaim` takes a pod in the kube-system "
        "namespace or with priorityClassName system-cluster-critical or "
        "system-node-critical.",
        "For each of the two actions configured: `conformance` has enablePreemptable "
        "(enableReclaimable) on in the only tier where plugins with that flag decide, and "
        "is the last of them in that tier (an empty intersection of the earlier answers "
        "lets the next plugin answer afresh, a v1.11.0 quirk). Requested explicitly, both "
        "reasons are judged.",
        lambda inputs: bool(_protected_reasons(inputs.conf)),
        _critical_check,
    )
)


# -- gang --------------------------------------------------------------------------------------


def _gang_reasons(conf: SchedulerConf) -> list[str]:
    return [r for r in FAMILIES if r in conf.actions and sole_decider(conf, "gang", r)]


def _gang_min_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    """Judged on the last cycle, whose in-session task statuses the result records."""
    if not result.tasks:
        return []
    reasons = set(_gang_reasons(inputs.conf) or FAMILIES)
    jobs = session_jobs(inputs)
    last = cycles(inputs, result)[-1]
    hit = Counter(
        last.pods[e.task].job_id
        for e in last.evictions
        if e.reason in reasons and e.task in last.pods
    )
    # Evictions gang does not judge (shuffle, victim tasks) may take a job lower later.
    others = Counter(
        last.pods[e.task].job_id
        for e in last.evictions
        if e.reason not in reasons and e.task in last.pods
    )
    statuses = _session_statuses(inputs, result)
    messages = []
    for uid, n in sorted(hit.items()):
        pg = jobs.pod_groups.get(uid)
        if pg is None:
            continue
        placed = sum(
            1 for k, p in last.pods.items() if p.job_id == uid and statuses.get(k) in PLACED
        )
        if placed + others[uid] < pg.min_member:
            messages.append(
                f"cycle {last.cycle}: {n} pod(s) of job {uid} were evicted and it is left "
                f"with {placed} placed, below minMember {pg.min_member}"
            )
    return messages


_BY_NAME = dict(TaskStatus.__members__)  # a plain dict: the enum's lookup is a call per task
_STATUS = operator.attrgetter("status")


def _session_statuses(inputs: InvariantInputs, result: SimulationResult) -> dict[str, TaskStatus]:
    """The tasks' in-session statuses after the last action, found once for the checks
    that ask: shared, so none may change them."""
    tasks = result.tasks
    return inputs.derived(
        "session statuses",
        result,
        lambda: dict(
            zip(tasks, map(_BY_NAME.__getitem__, map(_STATUS, tasks.values())), strict=True)
        ),
    )


register(
    Invariant(
        "gang-victims-keep-min",
        "preempt and reclaim never take a victim's job below minMember",
        "In the last cycle, every job that lost a pod to `preempt` or `reclaim` still has "
        "at least minMember placed tasks (Allocated, Binding, Bound, Running or "
        "Succeeded, in the session after the last action), counting back the pods other "
        "evictions (shuffle, victim tasks) took from it.",
        "For each of the two actions configured: `gang` has enablePreemptable "
        "(enableReclaimable) on in the only tier where plugins with that flag decide, and "
        "is the last of them in that tier (v1.11.0: an empty intersection lets the next "
        "plugin answer afresh).",
        lambda inputs: bool(_gang_reasons(inputs.conf)),
        _gang_min_check,
    )
)


# -- pod group phases -----------------------------------------------------------------------------


_ALLOCATED = (TaskStatus.Allocated, TaskStatus.Binding, TaskStatus.Bound, TaskStatus.Running)


def _expected_phase(counted: Mapping[TaskStatus, int], min_member: int, session_phase: str) -> str:
    """The job updater's rule: enough allocated or finished tasks make it Running
    (Completed when all of those finished); else it stays Inqueue or goes Pending."""
    finished = counted.get(TaskStatus.Succeeded, 0) + counted.get(TaskStatus.Failed, 0)
    allocated = finished + sum(counted.get(s, 0) for s in _ALLOCATED)
    if allocated >= min_member:
        return "Completed" if finished == allocated else "Running"
    return "Inqueue" if session_phase == "Inqueue" else "Pending"


def _phase_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    if not result.tasks:
        return []
    jobs = session_jobs(inputs)
    last = cycles(inputs, result)[-1]
    # Each job's tasks of the session (every one has an in-session status), counted.
    counts = task_facts(inputs, result).counts
    bound = {last.job_ids[b.task] for b in last.binds if b.task in last.pods}
    memo = inputs.carry.kept("phase verdicts", PhaseVerdicts) if inputs.carry else None
    return phase_messages(jobs.pod_groups, counts, bound, result.pod_groups, memo)


Counts = Mapping[str, Mapping[TaskStatus, int]]
_NOTHING: dict[TaskStatus, int] = {}  # a job without tasks' counts (never changed)
_PHASE = operator.attrgetter("phase")
_SESSION_PHASE = operator.attrgetter("session_phase")
# What a job's verdict reads: its pod group, its counts, its session and close phases.
State = tuple[PodGroup | None, Mapping[TaskStatus, int], str, str]


def phase_messages(
    groups: Mapping[str, PodGroup],
    counts: Counts,
    bound: set[str],
    results: Mapping[str, PodGroupResult],
    memo: PhaseVerdicts | None = None,
) -> list[str]:
    """What is wrong with the jobs' phases. ``memo``: the last result's jobs when they
    were all right (a timeline's): then only the jobs whose pod group, counts or phases
    differ from theirs (compared in C) are judged; anything amiss is judged whole."""
    uids = list(results)
    states: list[State] = list(
        zip(
            map(groups.get, uids),
            map(counts.get, uids, repeat(_NOTHING)),
            map(_SESSION_PHASE, results.values()),
            map(_PHASE, results.values()),
            strict=True,
        )
    )
    if memo is not None and memo.still_clean(uids, states, bound, results):
        return []
    messages: list[str] = []
    by_conditions: set[str] = set()
    wanted: dict[tuple[object, ...], str] = {}  # the expected phase by what decides it
    for uid, state in zip(uids, states, strict=True):
        if state[0] is not None and uid in bound and state[2] in ("Pending", ""):
            messages.append(f"job {uid} had pods bound in the last cycle but is still Pending")
        fault = _phase_fault(uid, state, results[uid], wanted, by_conditions)
        if fault is not None:
            messages.append(fault)
    if memo is not None:
        memo.keep(None if messages else dict(zip(uids, states, strict=True)), by_conditions)
    return messages


def _phase_fault(
    uid: str,
    state: State,
    pg_result: PodGroupResult,
    wanted: dict[tuple[object, ...], str],
    by_conditions: set[str],
) -> str | None:
    """What is wrong with one job's phase (most jobs share a few shapes, each judged
    once); a job found right by its conditions alone goes in ``by_conditions``."""
    pg, counted, session_phase, phase = state
    if pg is None:
        return None
    shape = (*counted.items(), pg.min_member, session_phase)
    want = wanted.get(shape)
    if want is None:
        want = wanted[shape] = _expected_phase(counted, pg.min_member, session_phase)
    if phase == want:
        return None
    running = counted.get(TaskStatus.Running, 0) > 0
    unschedulable = any(
        c.type == "Unschedulable" and c.status == "True" for c in pg_result.conditions
    )
    if phase == "Unknown" and running and unschedulable:
        by_conditions.add(uid)
        return None
    return (
        f"job {uid}: pod group phase {phase} after the last cycle, but its "
        f"tasks ({Counter({str(s): n for s, n in sorted(counted.items())})}, minMember "
        f"{pg.min_member}) make it {want}"
    )


class PhaseVerdicts:
    """The last result's jobs, by uid, when phase-consistent found them all right: what
    each verdict read (:data:`State`), and the jobs found right by their conditions
    (which the state does not hold: they are judged again). The messages equal those of
    judging every job (tests/invariants/test_task_counts.py)."""

    def __init__(self) -> None:
        self._states: dict[str, State] | None = None
        self._by_conditions: set[str] = set()

    def keep(self, states: dict[str, State] | None, by_conditions: set[str]) -> None:
        self._states, self._by_conditions = states, by_conditions

    def still_clean(
        self,
        uids: list[str],
        states: list[State],
        bound: set[str],
        results: Mapping[str, PodGroupResult],
    ) -> bool:
        """Whether every job is still right, judging the jobs whose state differs (the
        tuples compared in C, their objects by identity first), those right by their
        conditions, and the bound ones; kept for the next result when they are."""
        last = self._states
        if last is None:
            return False
        now = dict(zip(uids, states, strict=True))
        changed = compress(uids, map(ne, map(last.get, uids), states))
        judged = {*changed, *(self._by_conditions & now.keys())}
        wanted: dict[tuple[object, ...], str] = {}
        by_conditions: set[str] = set()
        for uid in judged:
            if _phase_fault(uid, now[uid], results[uid], wanted, by_conditions) is not None:
                return False
        for uid in bound & now.keys():
            if now[uid][0] is not None and now[uid][2] in ("Pending", ""):
                return False
        self.keep(now, by_conditions)
        return True


register(
    Invariant(
        "phase-consistent",
        "a pod group's phase agrees with its tasks' placements",
        "After the last cycle, each job's pod group phase is what its tasks (their "
        "in-session statuses after the last action) make it: Running when its Allocated, "
        "Binding, Bound, Running, Succeeded and Failed tasks number at least minMember, "
        "Completed when all of those are Succeeded or Failed; otherwise Inqueue if the "
        "session held it Inqueue, else Pending. A job with Running tasks and an "
        "Unschedulable condition may be Unknown. A job with pods bound in the last cycle "
        "is not Pending in the session (allocate and backfill skip Pending jobs; allocate "
        "enqueues them itself when there is no enqueue action).",
        "Every configuration.",
        lambda _inputs: True,
        _phase_check,
    )
)


# -- preempt commits only for pipelined jobs ------------------------------------------------

_PIPELINED_VOTERS = ("tdm", "sla")  # other plugins with a JobPipelined vote


def _pipelined_applies(inputs: InvariantInputs) -> bool:
    conf = inputs.conf
    return (
        "preempt" in conf.actions
        and enabled(conf, "gang", "job_pipelined")
        and not any(enabled(conf, p, "job_pipelined") for p in _PIPELINED_VOTERS)
    )


def _pipelined_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    """Judged on the last cycle, whose in-session task statuses the result records."""
    if not result.tasks:
        return []
    jobs = session_jobs(inputs)
    last = cycles(inputs, result)[-1]
    statuses = _session_statuses(inputs, result)
    evicted = {e.task for e in last.evictions}
    # Tasks evicted later in the session counted as they were: a job keeps its turn's
    # outcome even if another job preempts it afterwards.
    kept = {k: TaskStatus.Running for k in evicted}
    members: dict[str, list[Pod]] = {}
    waiting: set[str] = set()  # jobs with a Pending pod at the start of the cycle
    for key, pod in last.pods.items():
        if pod.job_id in jobs.pod_groups and key in result.tasks:
            members.setdefault(pod.job_id, []).append(pod)
            if last.status(key) is TaskStatus.Pending and not pod.scheduling_gates:
                waiting.add(pod.job_id)
    messages = []
    for key in _victims(last, "preempt"):
        victim_job = last.pods[key].job_id
        if victim_job in waiting or victim_job not in jobs.pod_groups:
            continue  # the within-job pass, which always commits, may have taken it
        queue = jobs.queue(victim_job)
        if not any(
            jobs.queue(uid) == queue
            and uid != victim_job
            and _gang_pipelined(jobs.pod_groups[uid], members.get(uid, []), statuses, kept)
            for uid in waiting
        ):
            messages.append(
                f"cycle {last.cycle}: {key} was preempted, but no other job of queue "
                f"{queue} with Pending pods ends the cycle pipelined"
            )
    return messages


def _gang_pipelined(
    pg: PodGroup,
    pods: list[Pod],
    statuses: dict[str, TaskStatus],
    kept: dict[str, TaskStatus],
) -> bool:
    """Gang's JobPipelined: placed, pipelined and pending best-effort tasks reach
    minMember (and every role its minimum, when those add up to no more than it)."""
    counted = {
        p.meta.key
        for p in pods
        if (status := kept.get(p.meta.key, statuses.get(p.meta.key))) in PLACED
        or status is TaskStatus.Pipelined
        or (status is TaskStatus.Pending and best_effort(p))
    }
    if len(counted) < pg.min_member:
        return False
    if pg.min_member < sum(pg.min_task_member.values()):
        return True
    roles = Counter(task_role(p) for p in pods if p.meta.key in counted)
    return all(roles[role] >= n for role, n in pg.min_task_member.items())


register(
    Invariant(
        "preempt-for-pipelined",
        "preempt's evictions for another job stand only when that job is then pipelined",
        "In the last cycle, every pod evicted with reason `preempt` whose own job had no "
        "Pending pod at the start of the cycle (so that preempt's within-job pass, which "
        "commits whatever happens, cannot have taken it) leaves behind another job of its "
        "queue, with Pending pods at the start of the cycle, that gang's JobPipelined "
        "accepts at the end of the session: placed, Pipelined and Pending best-effort "
        "tasks (pods evicted in the cycle counted as still placed) reach minMember, and "
        "every role its minimum when minMember is at least their sum.",
        "Configurations with the `preempt` action where gang's enableJobPipelined is on "
        "and no other JobPipelined voter (tdm, sla) is.",
        _pipelined_applies,
        _pipelined_check,
    )
)
