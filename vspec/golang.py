"""Go's semantics where Python's differ: value formatting (``%v``), integer division and
rounding, ``strconv`` and ``time`` parsing, ``sort.Slice`` on short slices.

One leaf module, importing nothing of vspec, so that the model, api, util and plugins
layers all share one copy of each rule and none imports another layer for it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any


def _fraction(value: int, digits: int) -> str:
    """``value`` (in 10**-digits units) as ``int[.frac]`` without trailing zeros."""
    whole, frac = divmod(value, 10**digits)
    text = str(whole)
    if frac:
        text += "." + str(frac).rjust(digits, "0").rstrip("0")
    return text


def format_go_duration(duration: timedelta) -> str:
    """``Duration.String()``: ``0s``, ``1.5ms``, ``3m0s``, ``1h0m0s``, ``-2s``."""
    ns = (duration.days * 86_400 + duration.seconds) * 10**9 + duration.microseconds * 1000
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1000:
        return f"{sign}{ns}ns"
    if ns < 10**6:
        return f"{sign}{_fraction(ns, 3)}µs"
    if ns < 10**9:
        return f"{sign}{_fraction(ns, 6)}ms"
    hours, rest = divmod(ns, 3600 * 10**9)
    minutes, rest = divmod(rest, 60 * 10**9)
    text = _fraction(rest, 9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def format_go_time(moment: datetime) -> str:
    """``Time.String()``: ``2025-01-01 00:00:00 +0000 UTC`` (fraction only when non-zero)."""
    text = f"{moment.year:04d}-{moment:%m-%d %H:%M:%S}"
    if moment.microsecond:
        text += "." + f"{moment.microsecond:06d}".rstrip("0")
    offset = moment.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    zone = moment.tzname() or "UTC"
    return f"{text} {sign}{hours:02d}{mins:02d} {zone}"


_GO_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def _parse_go_duration(text: str) -> timedelta:
    """``time.ParseDuration`` (``90s``, ``1h30m``, ``-5m``); ValueError when Go errors."""
    sign = 1.0
    body = text
    if body and body[0] in "+-":
        sign = -1.0 if body[0] == "-" else 1.0
        body = body[1:]
    if body == "0":
        return timedelta(0)
    if not body:
        raise ValueError(f"invalid duration {text!r}")
    pos, seconds = 0, 0.0
    for match in _GO_DURATION.finditer(body):
        if match.start() != pos:
            raise ValueError(f"invalid duration {text!r}")
        seconds += float(match[1]) * _UNIT_SECONDS[match[2]]
        pos = match.end()
    if pos != len(body):
        raise ValueError(f"invalid duration {text!r}")
    return timedelta(seconds=sign * seconds)


def parse_duration(text: str) -> timedelta:
    """``time.ParseDuration``; ValueError for what Go refuses, the empty string included."""
    if not text:
        raise ValueError('time: invalid duration ""')
    return _parse_go_duration(text)


def go_map(values: dict[str, float]) -> str:
    """Go's ``%v`` of a map: keys sorted, ``map[k:v ...]``."""
    return "map[" + " ".join(f"{k}:{go_float(v)}" for k, v in sorted(values.items())) + "]"


def go_float(value: float) -> str:
    """Go's ``%v`` of a float64 (shortest repr, no trailing ``.0``)."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exp = text.split("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").rjust(2, "0")
        return f"{mantissa}e{sign}{digits}"
    return text


def go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_round(x: float) -> int:
    """``math.Round``: half away from zero."""
    r = math.floor(abs(x))
    if abs(x) - r >= 0.5:
        r += 1
    return int(r if x >= 0 else -r)


def go_atoi(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0


def go_value(value: Any) -> str:
    """Go's ``%v`` of a decoded YAML value (maps with sorted keys)."""
    if isinstance(value, Mapping):
        body = " ".join(f"{k}:{go_value(v)}" for k, v in sorted(value.items(), key=str))
        return f"map[{body}]"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def go_divide(numerator: float, denominator: float) -> float:
    """Float division as Go does it: by zero gives +-Inf, or NaN for 0/0."""
    if denominator:
        return numerator / denominator
    return math.copysign(math.inf, numerator) if numerator else math.nan


def go_insertion_sort(items: list[int], less: Callable[[int, int], bool]) -> list[int]:
    """Go's ``sort.Slice`` for short slices (insertion sort). The kubelet's comparators
    here are not strict orders, so the algorithm decides the result; above 12 items Go
    switches to pdqsort and vspec's order may differ."""
    out = list(items)
    for i in range(1, len(out)):
        j = i
        while j > 0 and less(out[j], out[j - 1]):
            out[j], out[j - 1] = out[j - 1], out[j]
            j -= 1
    return out


_BARE_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)$")


def go_duration_error(text: str) -> str:
    """The message of Go's ``time.ParseDuration`` error for ``text``."""
    if _BARE_NUMBER.match(text) and text.lstrip("+-") != "0":
        return f'time: missing unit in duration "{text}"'
    return f'time: invalid duration "{text}"'


_GO_FLOAT = re.compile(
    r"^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)$", re.IGNORECASE
)


def parse_go_float(text: str) -> float:
    """``strconv.ParseFloat``, whose error Volcano ignores: unparsable text is 0."""
    return float(text) if _GO_FLOAT.match(text) else 0.0
