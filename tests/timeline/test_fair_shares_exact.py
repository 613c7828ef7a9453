""":func:`fair_shares` stops as soon as no queue is short, before working out what is
left: over drawn queues (weights, capabilities, fixed shares, a name given twice),
capacities and demands of awkward floats, its answer is bit for bit what the former
loop (``_former``), which worked out what is left first, gives."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import queue
from vspec.model.objects import Queue
from vspec.model.resources import ResourceVector
from vspec.timeline.shares import _EPSILON, fair_shares, starting_shares

NAMES = ["cpu", "memory", "nvidia.com/gpu"]
_AMOUNTS = st.sampled_from(["0", "1", "3", "7", "100m", "333m", "2Gi", "1001"])
_LIST = st.dictionaries(st.sampled_from(NAMES), _AMOUNTS, max_size=3)
_QUANTITY = st.one_of(
    st.sampled_from([0.0, 1e-10, 0.1, 1.0 / 3, 1000.0, 2.0**40]),
    st.floats(0, 1e12, allow_nan=False, allow_infinity=False),
)


def _vector(quantities: list[float]) -> ResourceVector:
    return ResourceVector(quantities[0], quantities[1], {"nvidia.com/gpu": quantities[2]})


@st.composite
def _queue(draw: st.DrawFn) -> Queue:
    return queue(
        draw(st.sampled_from("abcd")),
        weight=draw(st.integers(0, 5)),
        capability=draw(st.one_of(st.none(), _LIST)),
        deserved=draw(st.one_of(st.none(), st.none(), _LIST)),
    )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_queue(), max_size=5),
    st.lists(_QUANTITY, min_size=3, max_size=3),
    st.dictionaries(st.sampled_from("abcde"), st.lists(_QUANTITY, min_size=3, max_size=3)),
    st.integers(1, 3),
)
def test_shares_are_bit_for_bit_those_of_the_former_loop(
    queues: list[Queue], capacity: list[float], demand: dict[str, list[float]], names: int
) -> None:
    asked = {name: _vector(quantities) for name, quantities in demand.items()}
    args: tuple[Any, ...] = (queues, _vector(capacity), asked, NAMES[:names])
    assert repr(fair_shares(*args)) == repr(_former(*args))


def _former(
    queues: Sequence[Queue],
    capacity: ResourceVector,
    demand: Mapping[str, ResourceVector],
    names: Sequence[str],
) -> dict[str, dict[str, float]]:
    """fair_shares as it was: what is left worked out after every round."""
    wanted, deserved, remaining = starting_shares(queues, capacity, demand, names)

    def short(q: Queue) -> bool:
        mine, want = deserved[q.meta.name], wanted[q.meta.name]
        return any(mine[n] + _EPSILON < want[n] for n in names)

    active = [q for q in queues if not q.deserved and q.weight > 0 and short(q)]
    while active and any(v > _EPSILON for v in remaining.values()):
        total_weight = sum(q.weight for q in active)
        for q in active:
            mine, want = deserved[q.meta.name], wanted[q.meta.name]
            for n in names:
                mine[n] = min(want[n], mine[n] + remaining[n] * q.weight / total_weight)
        given = {n: sum(deserved[q.meta.name][n] for q in queues if not q.deserved) for n in names}
        fixed_total = {
            n: sum(deserved[q.meta.name][n] for q in queues if q.deserved) for n in names
        }
        left = {n: max(0.0, capacity.get(n) - fixed_total[n] - given[n]) for n in names}
        if all(abs(left[n] - remaining[n]) <= _EPSILON for n in names):
            break
        remaining = left
        active = [q for q in active if short(q)]
    return deserved
