"""How Go's ``%v`` prints a pod's ``volcano.sh/topology-decision`` inside a task's
``numaInfo`` (``GetPodTopologyInfo`` in ``api/pod_info.go``).

Volcano decodes the annotation's JSON into ``map[int]v1.ResourceList`` and logs the map
with ``%v``. A ``resource.Quantity`` in a map is not addressable, so its pointer-receiver
``String()`` is not used: Go prints the struct itself, ``{{value scale} {dec} s Format}``,
whose fields are whatever ``ParseQuantity`` chose for the annotation's text. A
user pasting a pod that a real cluster annotated sees exactly those lines in logprint's
output, so vspec prints them the same way.
"""

from __future__ import annotations

import functools
import json
import re
from fractions import Fraction
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.scanner import py_make_scanner  # type: ignore[attr-defined]
from typing import Any

_DECIMAL_SUFFIXES = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_SUFFIXES |= {"P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_INT64 = 2**63
_GO_INT_KEY = re.compile(r"[+-]?[0-9]+", re.ASCII)
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
# A Quantity ParseQuantity keeps as an *inf.Dec prints that pointer's address, which is
# the Go runtime's choice; vspec prints this stand-in there.
DEC_POINTER = "0xc000000000"


class _NotAQuantity(ValueError):
    """``ParseQuantity`` refused the text: the whole decision is then dropped."""


def _split(text: str) -> tuple[bool, str, str, str]:
    """``parseQuantityString``: sign, numerator digits, denominator digits, suffix."""
    positive, pos, end = True, 0, len(text)
    if text[:1] in ("-", "+"):
        positive, pos = text[0] == "+", 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isascii() and text[pos].isdigit():
            pos += 1
        denom = text[start:pos]
    suffix = text[pos:]
    body = suffix.lstrip("".join(_SUFFIX_CHARS))
    if body[:1] in ("-", "+"):
        body = body[1:]
    if body and not (body.isascii() and body.isdigit()):
        raise _NotAQuantity(text)
    return positive, num, denom, suffix


def _interpret(suffix: str) -> tuple[int, str]:
    """``suffixHandler.interpret``: the suffix's exponent and the quantity's Format."""
    if suffix in _DECIMAL_SUFFIXES:
        return _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BINARY_SUFFIXES:
        return _BINARY_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT_KEY.fullmatch(suffix[1:]):
        exponent = int(suffix[1:])
        if -_INT64 <= exponent < _INT64:
            # Go keeps the exponent as an int32: a larger one wraps around.
            return (exponent + 2**31) % 2**32 - 2**31, "DecimalExponent"
    raise _NotAQuantity(suffix)


def quantity_struct(text: str) -> str:
    """``fmt.Sprintf("%v", q)`` of ``resource.MustParse(text)`` held by value.

    Follows ``ParseQuantity``'s fast path (an int64 mantissa and scale, the text kept
    as ``s`` only when it is already canonical); every other quantity goes to its
    ``inf.Dec`` path, printed as a pointer (:data:`DEC_POINTER`).
    """
    text = text.strip()
    if not text:
        raise _NotAQuantity(text)
    if text == "0":
        return "{{0 0} {<nil>} 0 DecimalSI}"
    positive, num, denom, suffix = _split(text)
    exponent, fmt = _interpret(suffix)
    mantissa, scale = 1, exponent
    if fmt == "BinarySI":
        scale = 0
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            precision = -1
    else:
        precision = 18 - (len(num) + len(denom))
    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            value = int(shifted) * mantissa
            if value < _INT64:
                canonical = (
                    exponent % 10 == 0 and int(shifted) & 7 != 0
                    if fmt == "BinarySI"
                    else scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                )
                signed = value if positive else -value
                return f"{{{{{signed} {scale}}} {{<nil>}} {text if canonical else ''} {fmt}}}"
    if fmt == "BinarySI" and 0 < Fraction(f"{num}.{denom or 0}") * 2**exponent < 1:
        fmt = "DecimalSI"  # ParseQuantity's own switch for a binary amount below one
    return f"{{{{0 0}} {{{DEC_POINTER}}}  {fmt}}}"


class _Object(list[tuple[str, Any]]):
    """A JSON object's members in their order, repeats kept (Go decodes a repeated
    ``numa`` into the same map)."""


class _Escaped(str):
    """A JSON string written with an escape: Go hands a Quantity the raw bytes, where
    the backslash makes it no quantity at all."""


def _scan_string(text: str, end: int, strict: bool = True) -> tuple[str, int]:
    decoded, after = scanstring(text, end, strict)
    return (_Escaped(decoded) if "\\" in text[end:after] else decoded), after


class _GoJSON(json.JSONDecoder):
    """JSON as Volcano's decision reaches a Quantity: numbers and strings as written,
    objects as their members in order (Python's C scanner cannot tell an escaped
    string, so this one uses the pure-Python scanner; decisions are short)."""

    def __init__(self) -> None:
        super().__init__(parse_int=str, parse_float=str, object_pairs_hook=_Object)
        self.parse_string = _scan_string
        self.scan_once = py_make_scanner(self)


_DECODER = _GoJSON()


def _quantity_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and not isinstance(value, _Escaped):
        return value  # a JSON string or a number's own text
    raise _NotAQuantity(repr(value))


def _resource_list(raw: Any) -> str:
    if raw is None:
        return "map[]"
    if not isinstance(raw, _Object):
        raise _NotAQuantity(repr(raw))
    members = dict(raw)  # a repeated resource: the last one
    parts = []
    for name in sorted(members, key=lambda s: s.encode()):
        text = _quantity_text(members[name])
        parts.append(f"{name}:{'{{0 0} {<nil>}  }' if text is None else quantity_struct(text)}")
    return f"map[{' '.join(parts)}]"


@functools.lru_cache(maxsize=1024)
def numa_resources(annotation: str) -> str:
    """The ``map[...]`` Volcano prints for a pod's topology decision: ``map[]`` when
    the annotation is not a decision Go's ``encoding/json`` decodes (Volcano drops the
    whole decision on any error)."""
    try:
        decision = _DECODER.decode(annotation)
        if not isinstance(decision, _Object):
            return "map[]"
        merged: dict[int, Any] = {}
        for key, value in decision:
            if key.casefold() != "numa":  # Go matches field names case-insensitively
                continue
            if value is None:  # null empties the map Go decoded so far
                merged.clear()
                continue
            if not isinstance(value, _Object):
                return "map[]"
            for numa, resources in value:
                if not _GO_INT_KEY.fullmatch(numa) or not -_INT64 <= int(numa) < _INT64:
                    return "map[]"
                merged[int(numa)] = resources
        rendered = [f"{numa}:{_resource_list(merged[numa])}" for numa in sorted(merged)]
    except (ValueError, _NotAQuantity):
        return "map[]"
    return f"map[{' '.join(rendered)}]"
