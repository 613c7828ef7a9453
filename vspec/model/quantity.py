"""Kubernetes resource quantities (``500m``, ``1Gi``, ``1e3``) as exact fractions.

Volcano reads quantities through ``resource.Quantity.MilliValue()`` and ``Value()``, which
round *up* to an integer; :func:`milli_value` and :func:`value` do the same so that e.g.
``0.5m`` CPU is 1 millicore, as on a real cluster.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from vspec.errors import GoError

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# apimachinery's grammar (resource/quantity.go): <signedNumber><suffix>, where a number is
# <digits>, <digits>.<digits>, <digits>. or .<digits> and a digit is 0-9 only (Python's \d
# would take Arabic-Indic or fullwidth digits); the suffix is a binary SI, a decimal SI
# or e<signed integer>.
_QUANTITY = re.compile(
    r"(?P<num>[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)",
    re.ASCII,
)
MAX_QUANTITY_CHARS = 64  # longer is a mistake, and its digits would cost time to convert
# A quantity beyond this is certainly a mistake (and would make float arithmetic meaningless).
MAX_QUANTITY = Fraction(10**24)


class QuantityError(GoError, ValueError):
    """Not a Kubernetes quantity."""


def parse_quantity(raw: object) -> Fraction:
    """Parse a quantity written as a YAML number or a Kubernetes quantity string."""
    if isinstance(raw, bool) or raw is None:
        raise QuantityError(f"{raw!r} is not a quantity")
    if isinstance(raw, int):
        number = Fraction(raw)
    elif isinstance(raw, float):
        if not math.isfinite(raw):
            raise QuantityError(f"{raw!r} is not a finite quantity")
        number = Fraction(str(raw))
    elif isinstance(raw, str):
        if len(raw) > MAX_QUANTITY_CHARS:
            raise QuantityError(f"{raw[:20]!r}... is longer than {MAX_QUANTITY_CHARS} characters")
        match = _QUANTITY.fullmatch(raw)
        if match is None:
            raise QuantityError(
                f"{raw!r} is not a Kubernetes quantity: digits 0-9, an optional sign and "
                "decimal point, then a suffix (Ki, Mi, ... Ei; n, u, m, k, M, ... E) or an "
                "exponent (e3)"
            )
        number = Fraction(match["num"])
        exp = match["exp"]
        if exp is not None:
            power = int(exp[1:])
            if abs(power) > 30:
                raise QuantityError(f"{raw!r} is out of range")
            number *= Fraction(10) ** power
        else:
            suffix = match["suffix"] or ""
            number *= _BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix]
    else:
        raise QuantityError(f"{raw!r} is not a quantity")
    if number < 0:
        raise QuantityError(f"{raw!r} is negative")
    if number > MAX_QUANTITY:
        raise QuantityError(f"{raw!r} is out of range")
    return number


def milli_value(q: Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up (integer arithmetic: the same
    ceiling as ``math.ceil(q * 1000)`` without building a Fraction, about 5x faster;
    every pod's requests go through here)."""
    return -(-q.numerator * 1000 // q.denominator)


def value(q: Fraction) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return -(-q.numerator // q.denominator)


def shown_amount(resource: str, amount: float | None) -> str:
    """An amount in the units a spec writes, as a user reads it: ``4``, ``1.5``, ``8Gi``;
    ``-`` for unlimited (None)."""
    if amount is None:
        return "-"
    if resource in ("memory", "ephemeral-storage") and amount >= 1024:
        for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount >= size:
                return f"{shown_number(amount / size)}{unit}"
    return shown_number(amount)


def shown_number(number: float) -> str:
    """Two decimals at most, and none for a whole number."""
    if number != int(number):
        return f"{number:.2f}".rstrip("0").rstrip(".")
    return str(int(number))


def within_tolerance(expected: float, got: float, tolerance: float | None) -> bool:
    """Within ``tolerance`` (absolute), else within a relative 1e-6: the rule of every
    float a spec expects (scores, queue shares)."""
    if tolerance is not None:
        return abs(expected - got) <= tolerance
    return math.isclose(expected, got, rel_tol=1e-6, abs_tol=1e-9)
