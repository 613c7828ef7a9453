"""Proportion's checks of what its kept queue sums may hold (``_part``, ``_whole``),
written as C loops: over drawn quantities they say what the generator forms said,
fractional, negative, zero of either sign, infinite and nan quantities included (the
fuzzed clusters hold none of those, so the carried-sums tests cannot tell)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import pod
from vspec.api.job_info import JobInfo
from vspec.api.resource import Resource
from vspec.api.task_info import TaskInfo
from vspec.api.types import TaskStatus, allocated_status
from vspec.plugins.proportion import _part, _whole

QUANTITIES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1000.0, 2.0**53, float("inf"), float("nan")]),
    st.floats(min_value=-1e4, max_value=1e4).map(round).map(float),
    st.floats(allow_nan=True, allow_infinity=True),
)
NAMES = st.sampled_from(["pods", "nvidia.com/gpu", "example.com/foo"])


@st.composite
def resources(draw: st.DrawFn) -> Resource:
    scalars = draw(st.dictionaries(NAMES, QUANTITIES, max_size=3))
    return Resource(draw(QUANTITIES), draw(QUANTITIES), scalars)


def _generator_part(res: Resource) -> bool:
    """Whether the generator form took ``res`` as a part."""
    values = (res.milli_cpu, res.memory, *res.scalars.values())
    return all(q >= 0 and q.is_integer() for q in values)


@settings(max_examples=500, deadline=None)
@given(res=resources())
def test_part_takes_what_the_generator_took(res: Resource) -> None:
    part = _part(res)
    assert (part is not None) == _generator_part(res)
    if part is not None:
        assert part.milli_cpu == int(res.milli_cpu) and part.memory == int(res.memory)
        assert part.scalars == tuple((name, int(q)) for name, q in res.scalars.items())


@settings(max_examples=300, deadline=None)
@given(
    tasks=st.lists(
        st.tuples(resources(), st.sampled_from(list(TaskStatus))), min_size=0, max_size=5
    )
)
def test_whole_is_the_generator_check(tasks: list[tuple[Resource, TaskStatus]]) -> None:
    job = JobInfo("ns/j")
    for i, (request, status) in enumerate(tasks):
        task = TaskInfo(pod("ns", f"p{i}", "j"), request)
        task.status = status
        job.add_task_info(task)
    want = all(
        t.resreq.milli_cpu.is_integer()
        and t.resreq.memory.is_integer()
        and all(q.is_integer() for q in t.resreq.scalars.values())
        for status, bucket in job.task_status_index.items()
        if allocated_status(status) or status is TaskStatus.Pending
        for t in bucket.values()
    )
    assert _whole(job) == want
