"""A klog-style logger whose lines a spec can assert.

Volcano logs through ``klog.V(n).Infof`` and ``klog.Errorf``; a session here logs through
its :class:`Klog`, which keeps every line at or below the spec's verbosity. Lines carry
no klog header (no timestamp, no file:line), as the spec format promises;
:func:`klog_header` renders one on request (``--klog-header``). Formatting is
the caller's job; hot paths ask :meth:`Klog.enabled` first so that disabled levels cost
one comparison, and the lines logged per (task, node) pair go through :meth:`Klog.lazy`
or :meth:`Klog.block` (a record that grows by a line while nothing is logged after it),
formatted only when something reads them (a log expectation, a failure's log tail,
explain, the report).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import compress, repeat
from operator import is_
from typing import Any, cast

from vspec.model.result import LogBlock, LogLine, LogRecords, Severity


@dataclass
class Klog:
    """The scheduler's ``klog``: a line of ``verbosity`` or below is kept, with the
    ``cycle`` of the session that logged it."""

    verbosity: int = 3
    lines: LogRecords = field(default_factory=LogRecords)
    cycle: int = 0
    # The lines of the last :meth:`each` by (text, source), made at (level, cycle).
    _each_at: tuple[int, int] = field(default=(-1, -1), repr=False, compare=False)
    _each_kept: dict[tuple[str, str], LogLine] = field(
        default_factory=dict, repr=False, compare=False
    )

    def enabled(self, level: int) -> bool:
        return level <= self.verbosity

    def v(self, level: int, text: str, source: str = "") -> None:
        """``klog.V(level).Infof``; one call is one line, a trailing newline dropped.
        ``source`` is the Go ``file.go:line`` that logs it, where known."""
        if level <= self.verbosity:
            line = LogLine(level, Severity.INFO, text.rstrip("\n"), self.cycle, source)
            self.lines.append(line)

    def each(self, level: int, lines: Iterable[tuple[str, str]]) -> None:
        """:meth:`v` of each ``(text, source)``, in order, in one call: logprint logs a
        line per job every session, nearly all as the session before. A line logged by
        the last call at the same level and cycle is that call's very line (a line
        never changes once made; a timeline's sessions all log as cycle 0), found in C
        loops; only the others are made."""
        if level > self.verbosity:
            return
        wanted = list(lines)
        at = (level, self.cycle)
        kept = self._each_kept if self._each_at == at else {}
        made: list[LogLine | None] = list(map(kept.get, wanted))
        for i in compress(range(len(made)), map(is_, made, repeat(None))):
            text, source = wanted[i]
            made[i] = LogLine(level, Severity.INFO, text.rstrip("\n"), at[1], source)
        done = cast(list[LogLine], made)
        self._each_at, self._each_kept = at, dict(zip(wanted, done, strict=True))
        self.lines.extend(done)

    def made(self, level: int, lines: Iterable[tuple[str, str]]) -> tuple[LogLine, ...]:
        """The lines :meth:`v` would log for each ``(text, source)`` at this cycle, for
        :meth:`extend` to log then or in a later call at the same level and cycle (a
        caller that logs the same lines session after session keeps them)."""
        cycle = self.cycle
        return tuple(
            LogLine(level, Severity.INFO, text.rstrip("\n"), cycle, source)
            for text, source in lines
        )

    def extend(self, level: int, lines: list[LogLine]) -> None:
        """Log ``lines``, made by :meth:`made` at ``level`` and this cycle."""
        if level <= self.verbosity:
            self.lines.extend(lines)

    def infof(self, level: int, template: str, *args: Any, source: str = "") -> None:
        """``klog.V(level).Infof``: the line ``template.format(*args)`` (Python's ``{}``
        for Go's verbs), formatted only if read; nothing is formatted at a level above
        the verbosity. ``args`` must not change afterwards: strings, numbers, a
        resource's :meth:`~vspec.api.resource.Resource.values`. The template's text
        before its first field is the line's head, which answers ``startswith``."""
        if level <= self.verbosity:
            cut = template.find("{")
            if cut < 0:
                line = LogLine(level, Severity.INFO, template.rstrip("\n"), self.cycle, source)
            else:
                head, rest = template[:cut], template[cut:]
                line = LogLine.deferred(
                    level, Severity.INFO, head, rest.format, args, self.cycle, source
                )
            self.lines.append(line)

    def lazy(
        self, level: int, head: str, render: Callable[..., str], *args: Any, source: str = ""
    ) -> None:
        """:meth:`v` of ``head + render(*args)``, formatted only if the line is read;
        ``args`` must not change afterwards (pass plain values, not live objects)."""
        if level <= self.verbosity:
            line = LogLine.deferred(level, Severity.INFO, head, render, args, self.cycle, source)
            self.lines.append(line)

    def block(
        self, level: int, head: str, render: Callable[[int], str], count: int, source: str = ""
    ) -> LogBlock | None:
        """``count`` lines ``head + render(i)`` at once, kept as one record and formatted
        only if read (:class:`~vspec.model.result.LogBlock`); the block, which may grow
        while it is the last record (:meth:`LogRecords.grow`), or None at this level."""
        if level > self.verbosity:
            return None
        block = LogBlock(level, Severity.INFO, head, render, count, self.cycle, source)
        self.lines.append_block(block)
        return block

    def warning(self, text: str) -> None:
        self.lines.append(LogLine(0, Severity.WARNING, text.rstrip("\n"), self.cycle))

    def error(self, text: str) -> None:
        self.lines.append(LogLine(0, Severity.ERROR, text.rstrip("\n"), self.cycle))

    def texts(self) -> list[str]:
        return [line.text for line in self.lines]


KLOG_PID = 1  # vc-scheduler is process 1 of its container
UNKNOWN_SOURCE = "???:1"  # what klog prints when it cannot find the caller


def klog_header(line: LogLine, moment: datetime) -> str:
    """``line`` as klog v2 writes it to stderr (``formatHeader``): severity, ``mmdd
    hh:mm:ss.uuuuuu``, the process id in 7 columns, ``file.go:line]``, the message.
    ``moment`` is the session's clock; a line whose Go source vspec does not know shows
    klog's own placeholder, ``???:1``."""
    t = moment.astimezone(UTC)
    source = line.source or UNKNOWN_SOURCE
    stamp = f"{t:%m%d %H:%M:%S}.{t.microsecond:06d}"
    return f"{line.severity.value}{stamp} {KLOG_PID:7d} {source}] {line.text}"
