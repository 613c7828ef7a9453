"""Go's ``fmt.Sprintf``, for the log lines whose exact text users compare with a real
scheduler's (the seed's logprint plugin first of all).

Only what Volcano's and its plugins' format strings use: the verbs ``%v %+v %s %d %q %t
%f %e %g %x %X %c`` with flags, width and precision, ``%%``, and Go's error forms:
``%!s(MISSING)`` for a verb without an argument, ``%!(EXTRA type=value, ...)`` for
arguments without a verb, ``%!d(string=abc)`` for a verb of the wrong kind and
``%!(NOVERB)`` for a trailing ``%`` (``fmt/print.go``: ``missingString``, ``extraString``,
``badVerb``; ``fmt/doc.go`` "Format errors").

Go values are written as Python values: ``str``, ``bool``, ``int`` (Go ``int``), ``float``
(``float64``), ``None`` (a nil interface), ``dict`` (a map; printed in sorted key order
as ``internal/fmtsort`` does), ``list``/``tuple`` (a slice), and, for the shapes Python
has no word for, :class:`Typed` (a named type or a sized int), :class:`Struct`,
:class:`Pointer` and :class:`Stringer` (a value whose ``String()`` fmt calls).

A leaf, beside :mod:`vspec.golang`: imports nothing of vspec.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

# Go prints a pointer's heap address; it differs on every run, so vspec prints this one.
POINTER_ADDRESS = "0xc000000000"
_STRINGER_VERBS = frozenset("vsxXq")


@dataclass(frozen=True)
class Typed:
    """``value`` with the Go type ``type`` (``int32``, ``scheduling.PodGroupPhase``); the
    type shows only where fmt names it (a bad verb, EXTRA)."""

    type: str
    value: Any


@dataclass(frozen=True)
class Struct:
    """A Go struct: ``%v`` prints its fields' values in order, ``%+v`` with their names."""

    type: str
    fields: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Pointer:
    """A pointer of Go type ``type`` (``*api.PodGroup``); ``target`` None is nil."""

    type: str
    target: Any = None


@dataclass(frozen=True)
class Stringer:
    """A value with a ``String()`` method: ``text`` is what it returns."""

    type: str
    text: str


def go_time(moment: datetime) -> str:
    """``time.Time.String()`` of a time in UTC (the scheduler's container zone):
    ``2006-01-02 15:04:05.999999999 +0000 UTC``, fraction without trailing zeros."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    text = moment.strftime("%Y-%m-%d %H:%M:%S").rjust(19, "0")
    if moment.microsecond:
        text += "." + f"{moment.microsecond:06d}".rstrip("0")
    return text + " +0000 UTC"


@functools.lru_cache(maxsize=1024)  # a cluster's few times, printed with every ready job
def time_value(moment: datetime | None) -> Stringer:
    """A ``metav1.Time`` (its embedded ``time.Time`` gives it ``String()``); None is the
    zero time, as an unset field is in Go."""
    zero = datetime(1, 1, 1, tzinfo=UTC)
    return Stringer("v1.Time", go_time(zero if moment is None else moment))


@dataclass
class _Spec:
    """One verb of a format string, with its flags, width and precision."""

    verb: str
    plus: bool = False
    minus: bool = False
    sharp: bool = False
    space: bool = False
    zero: bool = False
    width: int | None = None
    precision: int | None = None

    @property
    def sign_plus(self) -> bool:
        """``+`` asks for a sign, except in ``%+v`` where it asks for field names."""
        return self.plus and self.verb != "v"


def sprintf(format: str, *args: Any) -> str:
    """``fmt.Sprintf(format, args...)``."""
    out: list[str] = []
    i, n, arg = 0, len(format), 0
    while i < n:
        j = format.find("%", i)
        if j < 0:
            out.append(format[i:])
            break
        out.append(format[i:j])
        spec, i = _parse(format, j + 1)
        if spec is None:
            out.append("%!(NOVERB)")
            break
        if spec.verb == "%":
            out.append("%")
        elif arg >= len(args):
            out.append(f"%!{spec.verb}(MISSING)")
        else:
            out.append(_arg(args[arg], spec))
            arg += 1
    if arg < len(args):
        extra = ", ".join(_extra(a) for a in args[arg:])
        out.append(f"%!(EXTRA {extra})")
    return "".join(out)


@functools.lru_cache(maxsize=1024)  # the callers' few format strings, parsed once
def _parse(format: str, i: int) -> tuple[_Spec | None, int]:
    """The directive after a ``%`` at ``i``: flags, width, precision, verb (the
    directive is shared: never changed)."""
    flags: dict[str, bool] = {}
    names = {"+": "plus", "-": "minus", "#": "sharp", " ": "space", "0": "zero"}
    n = len(format)
    while i < n and format[i] in names:
        flags[names[format[i]]] = True
        i += 1
    width, i = _number(format, i)
    precision = None
    if i < n and format[i] == ".":
        precision, i = _number(format, i + 1)
        precision = precision or 0
    if i >= n:
        return None, i
    return _Spec(format[i], width=width, precision=precision, **flags), i + 1


def _number(format: str, i: int) -> tuple[int | None, int]:
    start = i
    while i < len(format) and format[i].isdigit():
        i += 1
    return (int(format[start:i]) if i > start else None), i


def _extra(value: Any) -> str:
    if value is None:
        return "<nil>"
    return f"{type_name(value)}={_value(value, _Spec('v'), 0)}"


def _arg(value: Any, spec: _Spec) -> str:
    """``printArg``: a top-level argument (a nil interface is its own case here)."""
    if value is None:
        return "<nil>" if spec.verb == "v" else _pad(f"%!{spec.verb}(<nil>)", spec)
    if spec.verb == "v" and not (spec.space or spec.sharp) and spec.width is spec.precision is None:
        return _plain(value, spec.plus, 0)  # zeros and "-" need a width
    return _value(value, spec, 0)


def type_name(value: Any) -> str:
    """``reflect.TypeOf(v).String()`` of a value written as above."""
    if isinstance(value, Typed | Struct | Pointer | Stringer):
        return value.type
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list | tuple):
        return "[]interface {}"
    raise TypeError(f"no Go type for {type(value).__name__}")


def _bad(value: Any, spec: _Spec) -> str:
    """``badVerb``: ``%!verb(type=value)``, the value printed with ``%v``."""
    shown = _value(value, _Spec("v", plus=spec.plus), 0)
    return f"%!{spec.verb}({type_name(value)}={shown})"


def _value(value: Any, spec: _Spec, depth: int) -> str:
    """``printValue``: ``depth`` > 0 inside a struct, map, slice or pointer."""
    if value is None:  # a nil interface inside a container
        return _pad("<nil>", spec)
    if isinstance(value, Stringer):
        if spec.verb in _STRINGER_VERBS:
            return _string(value.text, spec)
        return _bad(value, spec)
    if isinstance(value, Typed):
        inner = _value(value.value, spec, depth)
        # The underlying value refused the verb when it printed as its own bad verb; a
        # string that merely reads like fmt's error text (``%!v(int=1)``) is not one.
        refused = inner.startswith(f"%!{spec.verb}(") and inner == _bad(value.value, spec)
        return _bad(value, spec) if refused else inner
    if isinstance(value, bool):
        return _pad("true" if value else "false", spec) if spec.verb in "vt" else _bad(value, spec)
    if isinstance(value, int):
        return _integer(value, spec)
    if isinstance(value, float):
        return _float(value, spec)
    if isinstance(value, str):
        return _string(value, spec) if spec.verb in "vsqxX" else _bad(value, spec)
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: _sort_key(kv[0]))
        body = " ".join(
            f"{_value(k, spec, depth + 1)}:{_value(v, spec, depth + 1)}" for k, v in items
        )
        return f"map[{body}]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(_value(v, spec, depth + 1) for v in value) + "]"
    if isinstance(value, Struct):
        return "{" + " ".join(_field(name, v, spec, depth) for name, v in value.fields) + "}"
    if isinstance(value, Pointer):
        return _pointer(value, spec, depth)
    raise TypeError(f"no Go value for {type(value).__name__}")


def _plain(value: Any, plus: bool, depth: int) -> str:
    """:func:`_value` of a bare ``%v`` (``plus``: ``%+v``), without building a directive
    per value: most of the arguments Volcano's lines print are bare ``%v`` of plain
    values. Types it does not know exactly go the general way."""
    kind = type(value)
    if kind is str:
        return value  # type: ignore[no-any-return]
    if kind is Struct:
        if plus:
            parts = [f"{name}:{_plain(v, plus, depth + 1)}" for name, v in value.fields]
        else:
            parts = [_plain(v, plus, depth + 1) for _, v in value.fields]
        return "{" + " ".join(parts) + "}"
    if kind is Typed:
        return _plain(value.value, plus, depth)  # %v is a verb every kind takes
    if kind is Stringer:
        return value.text  # type: ignore[no-any-return]
    if kind is Pointer:
        target = value.target
        if depth == 0 and isinstance(target, Struct | dict | list | tuple):
            return "&" + _plain(target, plus, depth + 1)
        return "<nil>" if target is None else POINTER_ADDRESS
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if value is None:
        return "<nil>"
    if kind is list or kind is tuple:
        return "[" + " ".join(_plain(v, plus, depth + 1) for v in value) + "]"
    if kind is dict:
        items = sorted(value.items(), key=lambda kv: _sort_key(kv[0]))
        body = " ".join(
            f"{_plain(k, plus, depth + 1)}:{_plain(v, plus, depth + 1)}" for k, v in items
        )
        return f"map[{body}]"
    return _value(value, _Spec("v", plus), depth)


def _field(name: str, value: Any, spec: _Spec, depth: int) -> str:
    shown = _value(value, spec, depth + 1)
    return f"{name}:{shown}" if spec.plus and spec.verb == "v" else shown


def _pointer(value: Pointer, spec: _Spec, depth: int) -> str:
    # At the top level a pointer to a struct, map or slice prints as &value; anywhere
    # else fmt prints the address (``printValue``, case reflect.Pointer).
    target = value.target
    if depth == 0 and isinstance(target, Struct | dict | list | tuple):
        return "&" + _value(target, spec, depth + 1)
    if spec.verb != "v":
        return _bad(value, spec)
    return _pad("<nil>" if target is None else POINTER_ADDRESS, spec)


def _sort_key(key: Any) -> tuple[int, Any]:
    """``internal/fmtsort``: numbers by value, strings by bytes, false before true."""
    if key is None:
        return (0, 0)
    if isinstance(key, Typed):
        return _sort_key(key.value)
    if isinstance(key, bool | int | float):
        return (1, key)
    if isinstance(key, str):
        return (2, key.encode())
    return (3, repr(key))


def _integer(value: int, spec: _Spec) -> str:
    verb = spec.verb
    if verb in "vd":
        digits = str(abs(value))
    elif verb in "xX":
        digits = format(abs(value), "x" if verb == "x" else "X")
        if spec.sharp:
            digits = ("0x" if verb == "x" else "0X") + digits
    elif verb == "c":
        return _pad(chr(value), spec)
    elif verb == "q":
        return _pad(_quote_rune(value), spec)
    else:
        return _bad(value, spec)
    if spec.precision is not None:
        digits = digits.rjust(spec.precision, "0")
    sign = "-" if value < 0 else "+" if spec.sign_plus else " " if spec.space else ""
    return _pad_number(sign, digits, spec)


def _float(value: float, spec: _Spec) -> str:
    verb = spec.verb
    if verb not in "vfFeEgG":
        return _bad(value, spec)
    if math.isnan(value):
        return _pad("NaN", spec)
    if math.isinf(value):
        return _pad("+Inf" if value > 0 else "-Inf", spec)
    if verb in "fF":
        digits = f"{abs(value):.{6 if spec.precision is None else spec.precision}f}"
    elif verb in "eE":
        digits = _exponent(f"{abs(value):.{6 if spec.precision is None else spec.precision}e}")
    elif spec.precision is None:
        digits = _shortest(abs(value))
    else:
        digits = _exponent(f"{abs(value):.{spec.precision or 1}g}")
    if verb in "EG":
        digits = digits.upper()
    negative = value < 0 or (value == 0 and math.copysign(1, value) < 0)
    sign = "-" if negative else "+" if spec.sign_plus else " " if spec.space else ""
    return _pad_number(sign, digits, spec)


def _shortest(value: float) -> str:
    """``strconv.FormatFloat(v, 'g', -1, 64)``: the shortest digits that read back,
    in exponent form when the exponent is below -4 or at least 6 (the precision strconv
    uses for that choice when it prints the shortest digits)."""
    if value == 0:
        return "0"
    _sign, digits, exp = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exp)  # digits before the decimal point
    e = point - 1
    if e < -4 or e >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{mantissa}e{'-' if e < 0 else '+'}{abs(e):02d}"
    if point <= 0:
        return "0." + "0" * -point + text
    if point >= len(text):
        return text + "0" * (point - len(text))
    return f"{text[:point]}.{text[point:]}"


def _exponent(text: str) -> str:
    """Python's exponent (``e+6``, ``e+06`` or ``e+100``) in Go's form: at least two digits."""
    if "e" not in text:
        return text
    mantissa, exp = text.split("e")
    return f"{mantissa}e{exp[0]}{int(exp[1:]):02d}"


def _pad_number(sign: str, digits: str, spec: _Spec) -> str:
    if spec.zero and not spec.minus and spec.width is not None:
        return sign + digits.rjust(spec.width - len(sign), "0")
    return _pad(sign + digits, spec)


def _string(text: str, spec: _Spec) -> str:
    if spec.precision is not None:
        text = text[: spec.precision]
    if spec.verb == "q":
        text = _quote(text)
    elif spec.verb in "xX":
        text = text.encode().hex()
        text = text.upper() if spec.verb == "X" else text
    return _pad(text, spec)


def _pad(text: str, spec: _Spec) -> str:
    if spec.width is None or len(text) >= spec.width:
        return text
    return text.ljust(spec.width) if spec.minus else text.rjust(spec.width)


_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
}


def _escape(char: str, quote: str) -> str:
    if char == quote:
        return "\\" + char
    if char in _ESCAPES:
        return _ESCAPES[char]
    if char.isprintable():
        return char
    code = ord(char)
    if code < 0x80:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _quote(text: str) -> str:
    """``strconv.Quote``: a double-quoted Go string literal."""
    return '"' + "".join(_escape(c, '"') for c in text) + '"'


def _quote_rune(code: int) -> str:
    return "'" + _escape(chr(code), "'") + "'"
