"""The one exception hierarchy of vspec.

Everything a user can cause (a bad spec, a bad conf, a plugin that raises) is a
:class:`VspecError`, so the CLI and the pytest plugin can print it without a traceback.
Errors found in a file carry a :class:`Location` so the message names file, line and key.

:class:`GoError` is the other branch: not a failure of the run but an ``error`` value
Volcano's Go code returns and acts on (a predicate that fails, a score that is dropped).
Only a ``GoError`` is turned into scheduling behaviour; any other exception raised in
plugin or action code is a bug, and the run names the code that raised it
(:func:`culprit`).

A leaf: imports nothing of vspec, since every layer raises these.
"""

from __future__ import annotations

from dataclasses import dataclass

# Where actions and plugins live: the built-in packages and the modules of a plugins dir.
EXTENSION_PACKAGES = ("vspec.actions.", "vspec.plugins.", "vspec_user_plugins.")


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

    def __init__(self, errors: list[SpecError], location: Location | None = None) -> None:
        """``location`` is the spec's own when the errors lie in files it uses."""
        first = errors[0]
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        super().__init__(first.message + more, location or first.location)
        self.errors = errors


def each_error(error: VspecError) -> list[VspecError]:
    """The errors one error stands for: an :class:`InvalidFile`'s, else itself."""
    return list(error.errors) if isinstance(error, InvalidFile) else [error]


class ConfError(SpecError):
    """The scheduler configuration is invalid, as Volcano would reject it."""


class GoError(Exception):
    """An ``error`` value a Go function returns, raised where the Go code returns it.

    Subclasses model Volcano's and Kubernetes' errors (``FitError``, ``PreFilterError``,
    ``ScoreError``, ``DeviceError`` ...); the session turns them into what Volcano does
    with the error. A user plugin raises ``FitError`` (or another ``GoError``) to reject
    a node; a ``KeyError`` in its code fails the spec instead of rejecting the node.
    """


@dataclass(frozen=True)
class Culprit:
    """The plugin or action code an exception came from.

    ``callback`` is the function of the module that vspec called (a registered session
    function, ``on_session_open``, ``execute``), ``file``/``line`` the innermost line of
    the module in the traceback: the line to look at.
    """

    module: str
    callback: str
    file: str
    line: int

    @property
    def name(self) -> str:
        """The module's own name (``vspec.plugins.drf`` -> ``drf``)."""
        return self.module.rsplit(".", 1)[-1]


def culprit(exc: BaseException) -> Culprit | None:
    """The action or plugin whose code raised ``exc``, from its traceback; None when no
    action or plugin module is in it (the engine's own code raised).

    The ``_``-prefixed helper modules of actions/ and plugins/ are passed over, so a
    helper's line is blamed on the plugin that called it.
    """
    import traceback  # errors only: kept out of every run's start-up

    frames = [
        (frame, line)
        for frame, line in traceback.walk_tb(exc.__traceback__)
        if _is_extension(str(frame.f_globals.get("__name__", "")))
    ]
    if not frames:
        return None
    last_frame, last_line = frames[-1]
    module = str(last_frame.f_globals["__name__"])
    entry = next(frame for frame, _ in frames if frame.f_globals["__name__"] == module)
    return Culprit(module, entry.f_code.co_qualname, last_frame.f_code.co_filename, last_line)


def _is_extension(module: str) -> bool:
    return module.startswith(EXTENSION_PACKAGES) and not module.rsplit(".", 1)[-1].startswith("_")


class PluginError(VspecError):
    """A plugin or action raised inside a session; names the plugin and, when the engine
    found it, the code that raised (:attr:`culprit`)."""

    def __init__(
        self,
        plugin: str,
        message: str,
        location: Location | None = None,
        culprit: Culprit | None = None,
    ) -> None:
        super().__init__(f"plugin {plugin!r}: {message}", location)
        self.plugin = plugin
        self.culprit = culprit


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


class Unsupported(VspecError):
    """The engine cannot run this spec as written (a real engine asked for what only
    vspec's engine answers): the spec is skipped with this reason, never passed."""
