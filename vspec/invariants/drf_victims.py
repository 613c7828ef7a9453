"""drf's preemption rule, restated from the outside (``plugins/drf``, its Preemptable).

drf lets a preemptor take a victim only when the preemptor's job, with the preemptor
added, would hold a dominant share no larger than the victim's job without the victim
(within 0.000001). Which preemptor an eviction served is read from Volcano's own line
``Try to preempt Task <victim> for Task <preemptor>`` (verbosity 3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from vspec.api.resource import Resource
from vspec.api.types import TaskStatus
from vspec.invariants.base import Invariant, InvariantInputs, register
from vspec.invariants.history import (
    HOLDING,
    CycleView,
    Jobs,
    allocatable,
    cycles,
    request,
    sole_decider,
)
from vspec.invariants.outside import TOLERANCE
from vspec.model.objects import Pod
from vspec.model.result import SimulationResult

_TRY = re.compile(r"^Try to preempt Task <([^>]*)> for Task <([^>]*)>$")
SHARE_DELTA = 0.000001
_ALLOCATED = frozenset({TaskStatus.Bound, TaskStatus.Running})


def _first_attempt(result: SimulationResult, cycle: int) -> tuple[str, list[str]] | None:
    """The preemptor and the victims of the cycle's first eviction run: consecutive lines
    for one preemptor on one node come from a single Preemptable answer."""
    found: tuple[str, list[str]] | None = None
    for line in result.logs:
        if line.cycle != cycle or not line.startswith("Try to preempt Task <"):
            continue
        match = _TRY.match(line.text)
        if match is None:
            continue
        if found is None:
            found = (match[2], [match[1]])
        elif found[0] == match[2]:
            found[1].append(match[1])
        else:
            break
    return found


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


def _drf_check(inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    jobs = Jobs.of(inputs.cluster)
    total = Resource()
    for node in inputs.cluster.nodes:
        total.add(allocatable(node))
    names = [n for n in ("cpu", "memory") if total.get(n) >= TOLERANCE]
    names += [n for n, v in total.scalars.items() if n != "pods" and v >= TOLERANCE]
    messages = []
    for view in cycles(inputs.cluster, result, inputs.cycles):
        attempt = _first_attempt(result, view.cycle)
        # Another action's evictions (reclaim, shuffle) may have lowered the preemptor's
        # job before preempt ran: no lower bound then.
        if attempt is None or any(e.reason != "preempt" for e in view.evictions):
            continue
        messages += _judge(view, jobs, total, names, *attempt)
    return messages


def _judge(
    view: CycleView, jobs: Jobs, total: Resource, names: list[str], who: str, victims: list[str]
) -> list[str]:
    preemptor = view.pods.get(who)
    if preemptor is None or preemptor.job_id not in jobs.pod_groups or not _simple(preemptor):
        return []
    # A lower bound of the preemptor's share: what its job held at the start of the cycle
    # (allocate may have added to it since), plus the preemptor.
    ours = request(preemptor)
    for pod in view.pods.values():
        if pod.job_id == preemptor.job_id and view.status(pod.meta.key) in _ALLOCATED:
            ours.add(request(pod))
    ours.scalars.pop("pods", None)
    least = _share(ours, total, names)
    messages = []
    for key in victims:
        victim = view.pods.get(key)
        if victim is None or victim.job_id == preemptor.job_id or not _simple(victim):
            continue
        members = [p for p in view.pods.values() if p.job_id == victim.job_id]
        if any(view.status(p.meta.key) is TaskStatus.Pending for p in members):
            continue  # allocate may have added to the victim's job: no upper bound
        # An upper bound of the victim's job's share without the victim: its allocation
        # at the start of the cycle (evictions only lower it) minus the victim; pod slots
        # counted too, in case they are one of the shared resources.
        theirs, slots = Resource(), 0
        for p in members:
            if p.meta.key != key and view.status(p.meta.key) in HOLDING - {TaskStatus.Releasing}:
                theirs.add(request(p))
                slots += 1
        theirs.scalars.pop("pods", None)
        most = _share(theirs, total, names)
        if total.get("pods") >= 1:
            most = max(most, slots / total.get("pods"))
        if least > most + SHARE_DELTA:
            messages.append(
                f"cycle {view.cycle}: {key} was preempted for {who}, but drf's share of "
                f"{preemptor.job_id} with it (at least {least:.4f}) exceeds that of "
                f"{victim.job_id} without the victim (at most {most:.4f})"
            )
    return messages


register(
    Invariant(
        "drf-victims-fair",
        "with drf deciding, preempt never favours a job with the larger share",
        "In each cycle, for the first run of `Try to preempt Task <victim> for Task "
        "<preemptor>` lines naming one preemptor (victims one Preemptable answer chose): "
        "every victim of another job with no Pending pod at the start of the cycle (in a "
        "cycle where no other action evicted) has a "
        "job whose dominant share without it (its pods holding resources at the start of "
        "the cycle, over the cluster's allocatable, pod slots included) is at least the "
        "dominant share of the preemptor's job with the preemptor (its Bound and Running "
        "pods at the start of the cycle plus the preemptor), within 0.000001.",
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
