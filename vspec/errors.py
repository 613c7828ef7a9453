"""The one exception hierarchy of vspec.

Everything a user can cause (a bad spec, a bad conf, a plugin that raises) is a
:class:`VspecError`, so the CLI and the pytest plugin can print it without a traceback.
Errors found in a file carry a :class:`Location` so the message names file, line and key.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """Where in a user's file a value came from (1-based line and column)."""

    file: str
    line: int = 0
    column: int = 0
    key: str = ""

    def __str__(self) -> str:
        where = self.file
        if self.line:
            where += f":{self.line}"
            if self.column:
                where += f":{self.column}"
        if self.key:
            where += f": {self.key}"
        return where


class VspecError(Exception):
    """Base of every error vspec reports to a user."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        return f"{self.location}: {self.message}"


class SpecError(VspecError):
    """The spec (or a file it includes) is invalid: exit code 2."""


class InvalidFile(SpecError):
    """Several errors of one file or document; ``errors`` holds each, located. One
    invalid spec is one such error, however many keys are wrong in it."""

    def __init__(self, errors: list[SpecError]) -> None:
        first = errors[0]
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        super().__init__(first.message + more, first.location)
        self.errors = errors


def each_error(error: VspecError) -> list[VspecError]:
    """The errors one error stands for: an :class:`InvalidFile`'s, else itself."""
    return list(error.errors) if isinstance(error, InvalidFile) else [error]


class ConfError(SpecError):
    """The scheduler configuration is invalid, as Volcano would reject it."""


class PluginError(VspecError):
    """A plugin or action raised inside a session; names the plugin."""

    def __init__(self, plugin: str, message: str, location: Location | None = None) -> None:
        super().__init__(f"plugin {plugin!r}: {message}", location)
        self.plugin = plugin


class EngineError(VspecError):
    """The engine reached a state Volcano would panic on (e.g. an asserting Sub)."""


class SpecTimeout(BaseException):
    """A spec ran past its time limit.

    Not an :class:`Exception` (as :class:`KeyboardInterrupt` is not), so an ``except
    Exception:`` in engine or plugin code cannot swallow it and turn a hang into a verdict.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(timed_out(seconds))
        self.seconds = seconds


def timed_out(seconds: float) -> str:
    """The one message of a spec stopped by its time limit."""
    return f"timed out after {seconds:g} s"


class UserInterrupt(KeyboardInterrupt):
    """The user's own Ctrl-C or a supervisor's SIGTERM, as ``vspec run`` raises it; a
    plain :class:`KeyboardInterrupt` raised by plugin code is that spec's error instead."""
