"""Allocate's count of the jobs with nothing pending it leaves out of a queue's heap at
V(3): at each pop of a job with pending work, the number of idle jobs Volcano's heap
(holding both, but only the idle jobs that pass JobValid) would pop first, and all that
are left once no such job remains. Checked against the heap itself, with jobs put back
under a new key as allocate does, through the count's scan, its passes and its heap."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vspec.actions.allocate import _IdleJobs
from vspec.util.priority_queue import PriorityQueue


@dataclass(eq=False)
class Job:
    name: str
    key: int
    valid: bool = True


def less(left: Any, right: Any) -> bool:
    return bool(left.key < right.key)


def volcano(idle: list[Job], busy: list[Job], new_keys: list[int | None]) -> list[Any]:
    """What Volcano's single heap pops: the idle jobs popped before each busy one, then
    the rest; a busy job popped takes the next of ``new_keys`` and goes back when it is
    not None."""
    heap: PriorityQueue[Job] = PriorityQueue(less, [*(j for j in idle if j.valid), *busy])
    names = {job.name for job in busy}
    seen, turns, keys = [], 0, iter(new_keys)
    while not heap.empty():
        job = heap.pop()
        if job.name not in names:
            turns += 1
            continue
        seen.append((turns, job.name))
        turns = 0
        key = next(keys, None)
        if key is not None:
            job.key = key
            heap.push(job)
    seen.append((turns, None))
    return seen


def counted(idle: list[Job], busy: list[Job], new_keys: list[int | None]) -> list[Any]:
    """The same through allocate's count: a heap of the busy jobs only."""
    heap: PriorityQueue[Job] = PriorityQueue(less, busy)
    left_out = _IdleJobs(less, lambda job: job.valid)
    left_out.jobs = list(idle)
    seen, keys = [], iter(new_keys)
    while True:
        job = None if heap.empty() else heap.pop()
        taken = left_out.taken_before(job)  # type: ignore[arg-type]
        seen.append((taken, None if job is None else job.name))
        if job is None:
            return seen
        key = next(keys, None)
        if key is not None:
            job.key = key
            heap.push(job)


def _jobs(keys: list[int], prefix: str, invalid: frozenset[int] = frozenset()) -> list[Job]:
    return [Job(f"{prefix}{i}", key, key not in invalid) for i, key in enumerate(keys)]


@st.composite
def cases(
    draw: st.DrawFn,
) -> tuple[list[int], list[int], list[int | None], frozenset[int]]:
    """Distinct keys (a total order) for idle jobs, busy jobs and the keys busy jobs
    take when put back; the idle jobs JobValid rejects, by key."""
    n_idle = draw(st.integers(0, 60))
    n_busy = draw(st.integers(0, 25))
    n_back = draw(st.integers(0, 20))
    keys = draw(st.permutations(range(n_idle + n_busy + n_back)))
    idle, busy, back = keys[:n_idle], keys[n_idle : n_idle + n_busy], keys[n_idle + n_busy :]
    # Put back or not after each pop (None: not); the keys each once.
    pattern = draw(st.lists(st.booleans(), min_size=n_back, max_size=n_back + 10))
    spare = iter(back)
    new_keys = [next(spare, None) if put_back else None for put_back in pattern]
    invalid = frozenset(draw(st.sets(st.sampled_from(idle)))) if idle else frozenset()
    return list(idle), list(busy), new_keys, invalid


@settings(max_examples=300, deadline=None)
@given(cases())
def test_the_count_is_what_the_single_heap_pops(
    case: tuple[list[int], list[int], list[int | None], frozenset[int]],
) -> None:
    idle, busy, new_keys, invalid = case
    expected = volcano(_jobs(idle, "i", invalid), _jobs(busy, "b"), new_keys)
    assert counted(_jobs(idle, "i", invalid), _jobs(busy, "b"), new_keys) == expected


def test_interleaved_jobs_are_counted_one_by_one_past_the_passes() -> None:
    """Idle and busy jobs alternate: every pop takes one idle job (none where JobValid
    rejects it), and the passes over the idle ones soon give way to their heap."""
    idle, busy, invalid = list(range(0, 80, 2)), list(range(1, 80, 2)), frozenset({0, 40, 78})
    seen = counted(_jobs(idle, "i", invalid), _jobs(busy, "b"), [])
    assert seen == [(int(2 * i not in invalid), f"b{i}") for i in range(40)] + [(0, None)]
    assert seen == volcano(_jobs(idle, "i", invalid), _jobs(busy, "b"), [])
