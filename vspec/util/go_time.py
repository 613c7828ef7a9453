"""Go's ``time.Duration`` text form, for log lines that print durations with ``%s``/``%v``."""

from __future__ import annotations

import re
from datetime import datetime, timedelta


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
