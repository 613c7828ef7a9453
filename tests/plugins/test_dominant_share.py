"""``dominant_share`` writes out ``resource_names``, ``get`` and ``share`` (drf and
proportion call it on every allocate and deallocate event): over drawn resources it
gives the very floats, and the very name, of the loop over those calls."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vspec.api.resource import Resource
from vspec.plugins._job_accounting import dominant_share, share

# Around MIN_RESOURCE (0.1), zero, negative, huge and fractional: the edges of the
# name filter and of the division.
QUANTITIES = st.one_of(
    st.sampled_from([0.0, -0.0, 0.05, 0.1, 0.09999999999999999, 1.0, 3.0, -2.0, 1e300]),
    st.floats(min_value=-1e6, max_value=1e12, allow_nan=False),
    st.floats(allow_nan=True, allow_infinity=True),
)
NAMES = st.sampled_from(["pods", "nvidia.com/gpu", "example.com/foo", "hugepages-2Mi"])


@st.composite
def resources(draw: st.DrawFn) -> Resource:
    scalars = draw(st.dictionaries(NAMES, QUANTITIES, max_size=4))
    return Resource(draw(QUANTITIES), draw(QUANTITIES), scalars)


def _calls(allocated: Resource, total: Resource) -> tuple[str, float]:
    """What drf's calculateShare and proportion's updateShare loop over."""
    result, dominant = 0.0, ""
    for name in total.resource_names():
        value = share(allocated.get(name), total.get(name))
        if value > result:
            result, dominant = value, name
    return dominant, result


def _same(left: float, right: float) -> bool:
    return repr(left) == repr(right)  # the same float: sign of zero and nan included


@settings(max_examples=600, deadline=None)
@given(allocated=resources(), total=resources())
def test_dominant_share_is_the_calls_loop(allocated: Resource, total: Resource) -> None:
    name, value = dominant_share(allocated, total)
    want_name, want_value = _calls(allocated, total)
    assert name == want_name
    assert _same(value, want_value)
    # proportion's form: max(result, share(...)) over the same names
    result = 0.0
    for dim in total.resource_names():
        result = max(result, share(allocated.get(dim), total.get(dim)))
    assert _same(value, result)


@settings(max_examples=200, deadline=None)
@given(allocated=resources(), total=resources())
def test_dominant_share_leaves_its_arguments(allocated: Resource, total: Resource) -> None:
    before = (allocated.signature(), total.signature())
    dominant_share(allocated, total)
    assert repr((allocated.signature(), total.signature())) == repr(before)
