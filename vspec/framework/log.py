"""A klog-style logger whose lines a spec can assert.

Volcano logs through ``klog.V(n).Infof`` and ``klog.Errorf``; a session here logs through
its :class:`Klog`, which keeps every line at or below the spec's verbosity. Lines carry
no klog header (no timestamp, no file:line), as the spec format promises. Formatting is
the caller's job; hot paths ask :meth:`Klog.enabled` first so that disabled levels cost
one comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vspec.model.result import LogLine, Severity


@dataclass
class Klog:
    verbosity: int = 3
    lines: list[LogLine] = field(default_factory=list)
    cycle: int = 0

    def enabled(self, level: int) -> bool:
        return level <= self.verbosity

    def v(self, level: int, text: str) -> None:
        """``klog.V(level).Infof``; one call is one line, a trailing newline dropped."""
        if level <= self.verbosity:
            self.lines.append(LogLine(level, Severity.INFO, text.rstrip("\n"), self.cycle))

    def warning(self, text: str) -> None:
        self.lines.append(LogLine(0, Severity.WARNING, text.rstrip("\n"), self.cycle))

    def error(self, text: str) -> None:
        self.lines.append(LogLine(0, Severity.ERROR, text.rstrip("\n"), self.cycle))

    def texts(self) -> list[str]:
        return [line.text for line in self.lines]
