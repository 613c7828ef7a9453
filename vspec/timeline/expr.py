"""``expect.metrics``: one bound per line, in a small expression form (docs/timeline.md).

    p95(wait, tag=big) <= 5m
    longest(fairness(q1) < 80%) <= 10m
    mean(util(cpu)) >= 0.6
    makespan < 2h

A bound is a comparison (``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``, chains allowed) of
expressions built from numbers, durations (``90s``, ``1h30m``, in seconds), percentages
(``80%`` is 0.8), ``+ - * /``, and the names and functions below. The text is parsed
with Python's own parser once durations and percentages are rewritten, and only these
node kinds are accepted, so nothing in it is ever executed.

Over jobs (filters ``tag=``, ``queue=``, ``job=`` a glob over ``ns/name``, ``state=``
started, unstarted, completed or unfinished; quote a value that is not a plain word):
``mean | min | max | p<N>(wait | completion, ...)`` and ``count(...)``. Over the run:
``jobs``, ``unstarted``, ``unfinished``, ``makespan``, ``evictions``, ``sessions``. Over
time (a series, one value per tick): ``util(resource)``, ``share(queue)``,
``deserved(queue)``, ``fairness(queue)``, ``pending``, ``running``; a series is reduced
by ``mean | min | max(series)`` (time-weighted) or, compared with a value, by
``longest(condition)`` and ``total(condition)`` (seconds the condition held).
"""

from __future__ import annotations

import ast
import difflib
import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

from vspec.golang import format_go_duration, parse_duration
from vspec.timeline import metrics as m
from vspec.timeline.records import TimelineResult


class MetricError(Exception):
    """A bound that cannot be read, or cannot be evaluated on a run."""


SCALARS = ("jobs", "unstarted", "unfinished", "makespan", "evictions", "sessions")
TICK_SERIES = ("pending", "running")
SERIES_FUNCTIONS = ("util", "share", "deserved", "fairness")
REDUCERS = ("mean", "min", "max")
CONDITION_FUNCTIONS = ("longest", "total")
FILTERS = ("tag", "queue", "job", "state")
_PERCENTILE = re.compile(r"^p(\d{1,2}(?:\.\d+)?|100)$")
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")
_DURATION = re.compile(r"(?<![\w.])((?:\d+(?:\.\d+)?(?:ns|us|µs|ms|h|m|s))+)(?![\w.])")
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)%")
_COMPARE: dict[type[ast.cmpop], Callable[[float, float], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_ARITHMETIC: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: lambda a, b: a / b if b else math.inf,
}
_DURATION_CALL = "__duration__"
_PERCENT_CALL = "__percent__"
_LITERAL_CALLS = (_DURATION_CALL, _PERCENT_CALL)
_SHOWN_LITERAL = re.compile(rf"({_DURATION_CALL}|{_PERCENT_CALL})\(([^)]*)\)")


@dataclass(frozen=True)
class Value:
    """A number (durations in seconds) or a series (one value per tick)."""

    number: float = 0.0
    series: tuple[float, ...] | None = None
    holds: tuple[bool, ...] | None = None  # a condition over time
    duration: bool = False

    def text(self) -> str:
        if self.series is not None or self.holds is not None:
            return "a series over time"
        return format_value(self.number, duration=self.duration)


def format_value(number: float, *, duration: bool) -> str:
    if math.isinf(number):
        return "never" if duration else "inf"
    if duration:
        return format_go_duration(timedelta(seconds=round(number, 3)))
    return f"{number:.4g}"


@cache
def parse_bound(text: str) -> ast.Compare:
    """The bound's syntax tree, checked; raises :class:`MetricError` saying what is wrong."""
    try:
        tree = ast.parse(_rewrite(text), mode="eval").body
    except SyntaxError as exc:
        raise MetricError(f"cannot read {text!r}: {exc.msg}") from None
    if not isinstance(tree, ast.Compare):
        raise MetricError(f"{text!r} is not a bound: compare it, e.g. p95(wait) <= 5m")
    for part in [tree.left, *tree.comparators]:
        _check(part, scalar=True)
    for op in tree.ops:
        if type(op) not in _COMPARE:
            raise MetricError(f"{text!r}: compare with <, <=, >, >=, == or !=")
    return tree


def _rewrite(text: str) -> str:
    """Durations become calls, percentages fractions; quoted strings are left alone."""
    out, last = [], 0
    for match in _STRING.finditer(text):
        out.append(_rewrite_plain(text[last : match.start()]))
        out.append(match.group())
        last = match.end()
    out.append(_rewrite_plain(text[last:]))
    return "".join(out)


def _rewrite_plain(text: str) -> str:
    def duration(match: re.Match[str]) -> str:
        return f"{_DURATION_CALL}({parse_duration(match[1]).total_seconds()!r})"

    text = _DURATION.sub(duration, text)
    return _PERCENT.sub(lambda match: f"{_PERCENT_CALL}({match[1]})", text)


def _known(name: str, known: Sequence[str]) -> MetricError:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return MetricError(f"unknown name {name!r}{hint}")


def _check(node: ast.expr, *, scalar: bool) -> None:
    """Only the node kinds of the form; ``scalar`` says whether a series would be reduced."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        _check(node.operand, scalar=scalar)
        return
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        _check(node.left, scalar=scalar)
        _check(node.right, scalar=scalar)
        return
    if isinstance(node, ast.Name):
        if node.id in SCALARS or (not scalar and node.id in TICK_SERIES):
            return
        if node.id in TICK_SERIES:
            raise MetricError(f"{node.id!r} is a series over time: reduce it with mean/min/max")
        raise _known(node.id, [*SCALARS, *TICK_SERIES])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        _check_call(node, node.func.id, scalar=scalar)
        return
    raise MetricError(f"{ast.unparse(node)!r} is not part of the metrics form")


def _check_call(node: ast.Call, name: str, *, scalar: bool) -> None:
    args, keywords = node.args, node.keywords
    if name in _LITERAL_CALLS:
        return
    if name in CONDITION_FUNCTIONS:
        if len(args) != 1 or keywords or not isinstance(args[0], ast.Compare):
            raise MetricError(f"{name}() takes one condition, e.g. {name}(fairness(q1) < 0.8)")
        condition = args[0]
        for part in [condition.left, *condition.comparators]:
            _check(part, scalar=False)
        return
    if name in SERIES_FUNCTIONS:
        if scalar:
            raise MetricError(f"{name}() is a series over time: reduce it with mean/min/max")
        if len(args) != 1 or keywords or _word(args[0]) is None:
            raise MetricError(f"{name}() takes one name, e.g. {name}(cpu)")
        return
    if name in REDUCERS and args and _word(args[0]) not in m.JOB_SERIES:
        if len(args) != 1 or keywords:
            raise MetricError(f"{name}() of a series takes just the series")
        _check(args[0], scalar=False)
        return
    if name in REDUCERS or _PERCENTILE.match(name) or name == "count":
        _check_job_call(node, name)
        return
    known = [*REDUCERS, *CONDITION_FUNCTIONS, *SERIES_FUNCTIONS, "count", "p95"]
    raise _known(name, known)


def _check_job_call(node: ast.Call, name: str) -> None:
    positional = 0 if name == "count" else 1
    if len(node.args) != positional:
        shape = f"{name}(tag=...)" if name == "count" else f"{name}(wait, tag=...)"
        raise MetricError(f"{name}() over jobs is written {shape}")
    if positional and _word(node.args[0]) not in m.JOB_SERIES:
        raise MetricError(f"{name}() takes wait or completion first")
    for keyword in node.keywords:
        if keyword.arg not in FILTERS:
            raise _known(str(keyword.arg), FILTERS)
        value = _word(keyword.value)
        if value is None:
            raise MetricError(f"{keyword.arg}= takes a name; quote one that is not a word")
        if keyword.arg == "state" and value not in m.JOB_STATES:
            raise _known(value, m.JOB_STATES)


def _word(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


# -- evaluation -------------------------------------------------------------------------------


def check_bound(text: str, result: TimelineResult) -> str | None:
    """None when the bound holds on ``result``, else what the values were."""
    tree = parse_bound(text)
    evaluator = _Evaluator(result)
    try:
        values = [evaluator.scalar(part) for part in [tree.left, *tree.comparators]]
    except MetricError as exc:
        return str(exc)
    for i, op in enumerate(tree.ops):
        if not _COMPARE[type(op)](values[i].number, values[i + 1].number):
            parts = [tree.left, *tree.comparators]
            shown = [
                f"{_shown(p)} is {v.text()}"
                for p, v in zip(parts, values, strict=True)
                if not _is_literal(p)
            ]
            return "; ".join(shown) or "does not hold"
    return None


def evaluate(text: str, result: TimelineResult) -> float:
    """The value of an expression (no comparison) on ``result``: ``vspec compare``'s cells."""
    tree = parse_bound(f"{text} == 0")
    return _Evaluator(result).scalar(tree.left).number


def _shown(node: ast.expr) -> str:
    """The expression as its author wrote durations and percentages."""

    def literal(match: re.Match[str]) -> str:
        if match[1] == _PERCENT_CALL:
            return f"{match[2]}%"
        return format_go_duration(timedelta(seconds=float(match[2])))

    return _SHOWN_LITERAL.sub(literal, ast.unparse(node))


def _is_literal(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and (node.func.id == _DURATION_CALL)
    )


class _Evaluator:
    def __init__(self, result: TimelineResult) -> None:
        self.result = result
        self.weights = m.durations(result)

    def scalar(self, node: ast.expr) -> Value:
        value = self.value(node)
        if value.series is not None or value.holds is not None:
            raise MetricError(f"{ast.unparse(node)!r} is a series: reduce it with mean/min/max")
        return value

    def value(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Constant):
            assert isinstance(node.value, int | float)
            return Value(float(node.value))
        if isinstance(node, ast.UnaryOp):
            inner = self.value(node.operand)
            sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
            return _combine(Value(sign), inner, operator.mul)
        if isinstance(node, ast.BinOp):
            return _combine(
                self.value(node.left), self.value(node.right), _ARITHMETIC[type(node.op)]
            )
        if isinstance(node, ast.Name):
            return self.name(node.id)
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        return self.call(node, node.func.id)

    def name(self, name: str) -> Value:
        r = self.result
        if name == "pending":
            return Value(series=tuple(float(t.pending) for t in r.ticks))
        if name == "running":
            return Value(series=tuple(float(t.running) for t in r.ticks))
        if name == "makespan":
            return Value(m.makespan(r), duration=True)
        counts = {
            "jobs": len(r.jobs),
            "unstarted": sum(j.started is None for j in r.jobs.values()),
            "unfinished": sum(j.completed is None for j in r.jobs.values()),
            "evictions": sum(p.evictions for p in r.pods.values()),
            "sessions": r.sessions,
        }
        return Value(float(counts[name]))

    def call(self, node: ast.Call, name: str) -> Value:
        args = node.args
        if name in _LITERAL_CALLS:
            value = args[0]
            assert isinstance(value, ast.Constant) and isinstance(value.value, int | float)
            if name == _PERCENT_CALL:
                return Value(value.value / 100)
            return Value(float(value.value), duration=True)
        if name in CONDITION_FUNCTIONS:
            holds = self.condition(args[0])
            reduce = m.longest if name == "longest" else m.total
            return Value(reduce(holds, self.weights), duration=True)
        if name in SERIES_FUNCTIONS:
            return Value(series=tuple(self.series(name, str(_word(args[0])))))
        if name in REDUCERS and _word(args[0]) not in m.JOB_SERIES:
            series = self.value(args[0])
            if series.series is None:
                return series
            if not series.series:
                raise MetricError("the run recorded no ticks")
            if name == "mean":
                return Value(m.time_mean(series.series, self.weights))
            return Value((min if name == "min" else max)(series.series))
        return self.jobs(node, name)

    def series(self, name: str, arg: str) -> list[float]:
        r = self.result
        if name == "util":
            if arg not in m.resources(r):
                raise _unknown("resource", arg, m.resources(r))
            return m.utilisation(r, arg)
        if arg not in m.queues(r):
            raise _unknown("queue", arg, m.queues(r))
        function = {"share": m.share, "deserved": m.deserved, "fairness": m.fairness}[name]
        return function(r, arg)

    def condition(self, node: ast.expr) -> tuple[bool, ...]:
        assert isinstance(node, ast.Compare)
        parts = [self.value(p) for p in [node.left, *node.comparators]]
        length = len(self.result.ticks)
        holds = [True] * length
        for i, op in enumerate(node.ops):
            left, right = _spread(parts[i], length), _spread(parts[i + 1], length)
            compare = _COMPARE[type(op)]
            holds = [h and compare(a, b) for h, a, b in zip(holds, left, right, strict=True)]
        return tuple(holds)

    def jobs(self, node: ast.Call, name: str) -> Value:
        filters = {str(k.arg): str(_word(k.value)) for k in node.keywords}
        where = m.JobFilter(**filters)
        if name == "count":
            return Value(float(len(m.jobs(self.result, where))))
        series = str(_word(node.args[0]))
        values = m.job_values(self.result, series, where)
        if not values:
            raise MetricError(f"no job matches {where.describe() or 'at all'}")
        if name == "mean":
            number = m.mean(values)
        elif name in ("min", "max"):
            number = (min if name == "min" else max)(values)
        else:
            number = m.percentile(values, float(name[1:]))
        return Value(number, duration=True)


def _unknown(kind: str, name: str, known: Sequence[str]) -> MetricError:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"
    return MetricError(f"no {kind} {name!r} in this run{hint}")


def _spread(value: Value, length: int) -> Sequence[float]:
    return value.series if value.series is not None else [value.number] * length


def _combine(left: Value, right: Value, op: Callable[[float, float], float]) -> Value:
    if left.series is None and right.series is None:
        return Value(op(left.number, right.number), duration=left.duration or right.duration)
    length = len(left.series if left.series is not None else right.series or ())
    a, b = _spread(left, length), _spread(right, length)
    return Value(series=tuple(op(x, y) for x, y in zip(a, b, strict=True)))
