"""drf's preemption rule, restated from the outside (``plugins/drf``, its Preemptable).

drf lets a preemptor take a victim only when the preemptor's job, with the preemptor
added, would hold a dominant share no larger than the victim's job without the victim
and the candidates of that job weighed before it in the same answer (within 0.000001).
Which preemptor an eviction served is read from Volcano's own line ``Try to preempt
Task <victim> for Task <preemptor>`` (verbosity 3)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.invariants.base import Invariant, InvariantInputs, register
from vspec.invariants.history import (
    HOLDING,
    CycleView,
    Jobs,
    Requests,
    cluster_total,
    cycles,
    requests,
    session_jobs,
    sole_decider,
)
from vspec.invariants.outside import TOLERANCE
from vspec.model.objects import Pod
from vspec.model.result import SimulationResult

_TRY = re.compile(r"^Try to preempt Task <([^>]*)> for Task <([^>]*)>$")
_PIPELINE = re.compile(r"^After (pipelined|unpipelined) Task <([^>]*)> to Node <")
SHARE_DELTA = 0.000001
_ALLOCATED = frozenset({TaskStatus.Bound, TaskStatus.Running})


@dataclass
class _Attempt:
    """Consecutive ``Try to preempt`` lines of one cycle for one preemptor and victims on
    one node: the victims one Preemptable answer chose (preempt asks once per node)."""

    cycle: int
    preemptor: str
    node: str
    first: int  # the index of its first line among the cycle's such lines
    pipelined: frozenset[str]  # the tasks pipelined when it started
    victims: list[str] = field(default_factory=list)


def _attempts(result: SimulationResult, views: dict[int, CycleView]) -> list[_Attempt]:
    """Every attempt, with the tasks pipelined at its start by Volcano's own lines
    (``After pipelined Task <task> to Node``, ``After unpipelined Task <task>``)."""
    out: list[_Attempt] = []
    seen: dict[int, int] = {}  # cycle -> such lines so far
    pipelined: dict[int, set[str]] = {}
    for line in result.logs:
        if line.startswith("After pipelined Task <") or line.startswith("After unpipelined"):
            moved = _PIPELINE.match(line.text)
            if moved is not None:
                tasks = pipelined.setdefault(line.cycle, set())
                if moved[1] == "pipelined":
                    tasks.add(moved[2])
                else:
                    tasks.discard(moved[2])
            continue
        if not line.startswith("Try to preempt Task <"):
            continue
        match = _TRY.match(line.text)
        view = views.get(line.cycle)
        if match is None or view is None or match[1] not in view.pods:
            continue
        at = seen.get(line.cycle, 0)
        seen[line.cycle] = at + 1
        victim, preemptor = match[1], match[2]
        node = view.pods[victim].node_name
        last = out[-1] if out else None
        if last is None or (last.cycle, last.preemptor, last.node) != (line.cycle, preemptor, node):
            now = frozenset(pipelined.get(line.cycle, ()))
            last = _Attempt(line.cycle, preemptor, node, at, now)
            out.append(last)
        last.victims.append(victim)
    return out


def _gone_before(attempts: list[_Attempt], attempt: _Attempt, evicted: set[str]) -> set[str]:
    """The victims evicted before ``attempt`` in its cycle and never put back: logged
    only before it, and evicted at the end (a discarded statement puts its victims back;
    one evicted again later is logged again)."""
    last_line: dict[str, int] = {}
    for other in attempts:
        if other.cycle == attempt.cycle:
            for i, victim in enumerate(other.victims):
                last_line[victim] = max(last_line.get(victim, -1), other.first + i)
    return {v for v, at in last_line.items() if at < attempt.first and v in evicted}


def _logged_before(attempts: list[_Attempt], attempt: _Attempt) -> set[str]:
    """Every victim logged before ``attempt`` in its cycle (evicted then, maybe put back)."""
    return {
        v
        for other in attempts
        if other.cycle == attempt.cycle and other.first < attempt.first
        for v in other.victims
    }


def _share(held: Resource, total: Resource, names: Iterable[str]) -> float:
    """``calculateShare``: the largest of held / total over the total's resources (a
    resource the cluster lacks counts 1 once held)."""
    out = 0.0
    for name in names:
        limit, got = total.get(name), held.get(name)
        out = max(out, got / limit if limit else (1.0 if got else 0.0))
    return out


def _simple(pod: Pod) -> bool:
    return not pod.init_containers and not pod.overhead


def _slots(pod: Pod) -> int:
    """Pod slots in a task's Resreq: one, plus any the pod writes itself."""
    return 1 + int(sum(c.requests.get("pods", 0) for c in pod.containers))


def _drf_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    jobs = session_jobs(inputs)
    total = cluster_total(inputs)
    names = [n for n in ("cpu", "memory") if total.get(n) >= TOLERANCE]
    names += [n for n, v in total.scalars.items() if n != "pods" and v >= TOLERANCE]
    views = {v.cycle: v for v in cycles(inputs, result)}
    attempts = _attempts(result, views)
    request = requests(inputs)
    messages = []
    for view in views.values():
        # Another action's evictions (reclaim, shuffle) may have lowered the preemptor's
        # job before preempt ran: no lower bound then.
        if any(e.reason != "preempt" for e in view.evictions):
            continue
        evicted = {e.task for e in view.evictions}
        for attempt in attempts:
            if attempt.cycle == view.cycle:
                messages += _judge(view, jobs, total, names, attempt, attempts, evicted, request)
    return messages


def _judge(
    view: CycleView,
    jobs: Jobs,
    total: Resource,
    names: list[str],
    attempt: _Attempt,
    attempts: list[_Attempt],
    evicted: set[str],
    request: Requests,
) -> list[str]:
    who = attempt.preemptor
    preemptor = view.pods.get(who)
    if preemptor is None or preemptor.job_id not in jobs.pod_groups or not _simple(preemptor):
        return []
    # A lower bound of the preemptor's share: what its job held at the start of the cycle
    # (allocate may have added to it since) less what earlier attempts evicted of it,
    # plus its tasks pipelined then (drf counts a pipelined task as allocated) and the
    # preemptor.
    lost = _logged_before(attempts, attempt)
    ours = request(preemptor).clone()  # the shared request stays as it is
    for pod in view.pods.values():
        key = pod.meta.key
        if pod.job_id != preemptor.job_id or key == who:
            continue
        held = key not in lost and view.status(key) in _ALLOCATED
        if held or (key in attempt.pipelined and _simple(pod)):
            ours.add(request(pod))
    ours.scalars.pop("pods", None)
    least = _share(ours, total, names)
    gone = _gone_before(attempts, attempt, evicted)
    by_job: dict[str, list[str]] = {}
    for key in attempt.victims:
        victim = view.pods.get(key)
        if victim is not None and victim.job_id != preemptor.job_id and _simple(victim):
            by_job.setdefault(victim.job_id, []).append(key)
    messages = []
    for uid, victims in by_job.items():
        members = [p for p in view.pods.values() if p.job_id == uid]
        if any(view.status(p.meta.key) is TaskStatus.Pending for p in members):
            continue  # allocate may have added to the victim's job: no upper bound
        most = _most(view, members, set(victims) | gone, total, names, request)
        if least > most + SHARE_DELTA:
            keys = ", ".join(victims)
            messages.append(
                f"cycle {view.cycle}: {keys} was preempted for {who}, but drf's share of "
                f"{preemptor.job_id} with it (at least {least:.4f}) exceeds that of "
                f"{uid} without {'them' if len(victims) > 1 else 'the victim'} "
                f"(at most {most:.4f})"
            )
    return messages


def _most(
    view: CycleView,
    members: list[Pod],
    without: set[str],
    total: Resource,
    names: list[str],
    request: Requests,
) -> float:
    """An upper bound of drf's share of a job with no Pending pod, when the last of one
    answer's victims of it was weighed.

    drf weighs a node's candidates in turn, taking each candidate's request off a copy of
    its job's allocation (kept for the whole answer, candidates refused included), so
    the last victim of a job was weighed with all its other victims already taken off.
    The allocation started from what the job held at the start of the cycle (evictions
    only lower it) less the victims evicted for good before; pod slots counted too, in
    case they are one of the shared resources."""
    theirs, slots = Resource(), 0
    for p in members:
        key = p.meta.key
        if key not in without and view.status(key) in HOLDING - {TaskStatus.Releasing}:
            theirs.add(request(p))
            slots += _slots(p)
    theirs.scalars.pop("pods", None)
    most = _share(theirs, total, names)
    if total.get("pods") >= 1:
        most = max(most, slots / total.get("pods"))
    return most


register(
    Invariant(
        "drf-victims-fair",
        "with drf deciding, preempt never favours a job with the larger share",
        "In each cycle where no other action evicted, for every run of `Try to preempt "
        "Task <victim> for Task <preemptor>` lines naming one preemptor and victims on one "
        "node (one Preemptable answer): for each job other than the preemptor's with no "
        "Pending pod at the start of the cycle, its pods holding resources then, less its "
        "victims in the answer and those of earlier answers that stayed evicted, have a "
        "dominant share (over the cluster's allocatable, pod slots included) at least "
        "that of the preemptor's job with the preemptor (its Bound and Running pods at "
        "the start of the cycle less earlier answers' victims, plus its tasks pipelined "
        "by then, plus the preemptor), within 0.000001.",
        "Configurations with `preempt` where `drf` has enablePreemptable on as the last "
        "deciding plugin of the only deciding tier, at verbosity 3 or more (the lines are "
        "logged at level 3); pods without init containers or overhead.",
        lambda inputs: (
            "preempt" in inputs.conf.actions
            and inputs.verbosity >= 3
            and sole_decider(inputs.conf, "drf", "preempt")
        ),
        _drf_check,
    )
)
