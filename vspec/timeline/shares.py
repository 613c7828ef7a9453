"""vspec's fair-share reference for a queue: what it deserves of the cluster right now.

Metrics need one reference for every configuration compared, so it is computed here
from the cluster, never read from a plugin: a queue that names ``deserved`` (the
capacity plugin's form) deserves that; the others share the rest by weight as the
proportion plugin divides it: the remaining capacity is split by weight among the
queues still short of their demand (requests of their pods not yet finished), each
capped by its demand and its capability, until nothing is left or every queue is met.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vspec.model.objects import Queue
from vspec.model.resources import ResourceVector

_EPSILON = 1e-9


def fair_shares(
    queues: Sequence[Queue],
    capacity: ResourceVector,
    demand: Mapping[str, ResourceVector],
    names: Sequence[str],
) -> dict[str, dict[str, float]]:
    """Queue name -> resource name -> deserved quantity (Volcano's units)."""
    wanted, deserved, remaining = starting_shares(queues, capacity, demand, names)
    active = [
        q for q in queues if not q.deserved and q.weight > 0 and _short(deserved, wanted, q, names)
    ]
    while active and any(v > _EPSILON for v in remaining.values()):
        total_weight = sum(q.weight for q in active)
        for q in active:
            mine, want = deserved[q.meta.name], wanted[q.meta.name]
            for n in names:
                mine[n] = min(want[n], mine[n] + remaining[n] * q.weight / total_weight)
        still = [q for q in active if _short(deserved, wanted, q, names)]
        if not still:
            break  # every queue met: what is left would go to none (most ticks end here)
        given = {n: sum(deserved[q.meta.name][n] for q in queues if not q.deserved) for n in names}
        fixed_total = {
            n: sum(deserved[q.meta.name][n] for q in queues if q.deserved) for n in names
        }
        left = {n: max(0.0, capacity.get(n) - fixed_total[n] - given[n]) for n in names}
        if all(abs(left[n] - remaining[n]) <= _EPSILON for n in names):
            break
        remaining, active = left, still
    return deserved


def starting_shares(
    queues: Sequence[Queue],
    capacity: ResourceVector,
    demand: Mapping[str, ResourceVector],
    names: Sequence[str],
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]], dict[str, float]]:
    """What each queue wants (its demand, capped by its capability), what it deserves
    before any division (its fixed ``deserved``, else nothing) and what is left to divide."""
    zero = ResourceVector()
    wanted: dict[str, dict[str, float]] = {}
    deserved: dict[str, dict[str, float]] = {}
    remaining = {n: capacity.get(n) for n in names}
    for queue in queues:
        request = demand.get(queue.meta.name, zero)
        cap = ResourceVector.from_list(queue.capability) if queue.capability else None
        wanted[queue.meta.name] = {
            n: min(request.get(n), cap.get(n))
            if cap is not None and cap.get(n) > 0
            else request.get(n)
            for n in names
        }
        if queue.deserved:
            fixed = ResourceVector.from_list(queue.deserved)
            deserved[queue.meta.name] = {n: fixed.get(n) for n in names}
            for n in names:
                remaining[n] = max(0.0, remaining[n] - fixed.get(n))
        else:
            deserved[queue.meta.name] = dict.fromkeys(names, 0.0)
    return wanted, deserved, remaining


def _short(
    deserved: Mapping[str, Mapping[str, float]],
    wanted: Mapping[str, Mapping[str, float]],
    queue: Queue,
    names: Sequence[str],
) -> bool:
    mine, want = deserved[queue.meta.name], wanted[queue.meta.name]
    return any(mine[n] + _EPSILON < want[n] for n in names)
