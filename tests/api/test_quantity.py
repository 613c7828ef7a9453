"""Quantities round up to milli-units and units by integer arithmetic: the same
ceiling as Go's (and as ``math.ceil`` of the exact Fraction)."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from vspec.model.quantity import milli_value, value

quantities = st.fractions(min_value=0, max_value=10**15, max_denominator=10**9)


@given(quantities)
def test_milli_value_and_value_are_the_exact_ceilings(q: Fraction) -> None:
    assert milli_value(q) == math.ceil(q * 1000)
    assert value(q) == math.ceil(q)


def test_examples() -> None:
    assert milli_value(Fraction(1, 3)) == 334
    assert milli_value(Fraction(1, 2)) == 500
    assert value(Fraction(2**30)) == 2**30
    assert value(Fraction(1, 10**9)) == 1
    assert milli_value(Fraction(0)) == value(Fraction(0)) == 0
