"""The clock works a pod's requests and tick load out once per containers list
(``_Shared``): over drawn sequences of pods sharing, replacing and dropping containers
lists, with and without init containers and overhead, every answer is what
:func:`pod_request` gives the pod afresh."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import pod
from vspec.model.corev1 import Container
from vspec.model.resources import ResourceVector, pod_request
from vspec.timeline.clock import _load_of, _Shared

_QUANTITIES = st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1), Fraction(3), Fraction(64)])
_NAMES = st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "pods", "ephemeral-storage"])
_REQUESTS = st.dictionaries(_NAMES, _QUANTITIES, max_size=3)


@st.composite
def _containers(draw: st.DrawFn, init: bool = False) -> list[Container]:
    policies = st.sampled_from([None, "Always"]) if init else st.just(None)
    return [
        Container(f"c{i}", requests=draw(_REQUESTS), restart_policy=draw(policies))
        for i in range(draw(st.integers(0 if init else 1, 2)))
    ]


# One step: which list to give the next pod, or to replace by a new one (dropping the
# old, so that its id may be another list's), and the pod's init containers, overhead
# and queue.
_STEPS = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.booleans(),
        _containers(init=True),
        st.one_of(st.just({}), _REQUESTS),
        st.sampled_from(["", "a", "b"]),
    ),
    min_size=1,
    max_size=30,
)


def _vector(v: ResourceVector) -> tuple[Any, ...]:
    return v.milli_cpu, v.memory, list(v.scalars.items()), v.max_task_num


@settings(max_examples=200, deadline=None)
@given(st.lists(_containers(), min_size=3, max_size=3), _STEPS, st.data())
def test_shared_requests_and_loads_are_those_worked_out_afresh(
    lists: list[list[Container]], steps: list[Any], data: st.DataObject
) -> None:
    shared = _Shared()
    lists = [list(containers) for containers in lists]  # held by this test alone
    for n, (which, replace, init, overhead, queue) in enumerate(steps):
        if replace:  # the old list freed first, so the new one likely takes its id
            new = data.draw(_containers())
            del lists[which]
            lists.insert(which, [*new])  # built by BUILD_LIST, from the lists' free list
        p = pod("ns", f"p{n}")
        p.containers, p.init_containers, p.overhead = lists[which], init, overhead
        fresh = pod_request(p, ResourceVector)
        request = shared.request(p)
        assert _vector(request) == _vector(fresh)
        assert shared.load(request, queue) == _load_of(fresh, queue)
        del p, request  # nothing but the memo keeps a replaced list


def test_copies_of_one_template_share_one_answer() -> None:
    """The loader's copies (``count``) share their template's containers list, and so
    one request and one load; a pod with init containers is worked out on its own."""
    containers = [Container("c", requests={"cpu": Fraction(2)})]
    shared = _Shared()
    a, b, c = (pod("ns", name) for name in "abc")
    a.containers = b.containers = c.containers = containers
    c.init_containers = [Container("i", requests={"cpu": Fraction(5)})]
    assert shared.request(a) is shared.request(b)
    assert shared.load(shared.request(a), "q") is shared.load(shared.request(b), "q")
    assert shared.request(c) is not shared.request(a)
    assert (shared.request(a).milli_cpu, shared.request(c).milli_cpu) == (2000.0, 5000.0)
