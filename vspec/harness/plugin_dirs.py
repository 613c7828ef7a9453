"""Where user plugins and actions come from, as Volcano's ``--plugins-dir``.

Three sources, all loaded before a conf is checked for the names it uses: the CLI's
``--plugins-dir`` (relative to the current directory), ``[tool.vspec] plugins-dir`` of
the ``pyproject.toml`` nearest above the spec file (:mod:`vspec.harness.settings`; relative
to that file), and a spec's own ``pluginsDir`` (relative to the spec file). Each
directory is imported once per process.

A module that fails to import is a user error: reported with the module's file and the
line it failed on, never as a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from vspec.errors import Location, SpecError
from vspec.harness.settings import ProjectSettings
from vspec.model.spec import Spec


def load_plugins_dirs(
    dirs: Iterable[Path],
    *,
    origin: str = "",
    location: Location | None = None,
    everywhere: bool = True,
) -> None:
    """Import every module of ``dirs`` (each registers its plugins and actions).

    ``origin`` says who asked (``--plugins-dir``, a spec) and ``location`` where, so the
    error of a module that fails to import can be acted on. With ``everywhere`` their
    plugins are seen by every spec (``--plugins-dir``); else only inside
    :func:`spec_scope` of a spec that names them.
    """
    from vspec.framework.registry import load_plugins_dir

    for directory in dirs:
        try:
            load_plugins_dir(directory, everywhere=everywhere)
        except SpecError as exc:
            why = _explain(exc, directory)
            raise SpecError(f"{origin}: {why}" if origin else why, location) from None


def load_project_plugins(settings: ProjectSettings, *, everywhere: bool = True) -> None:
    """The ``plugins-dir`` of a pyproject's ``[tool.vspec]``."""
    load_plugins_dirs(
        settings.plugins_dirs, location=settings.location("plugins-dir"), everywhere=everywhere
    )


def spec_scope(spec: Spec) -> AbstractContextManager[None]:
    """The registry as ``spec`` sees it: its project's and its own plugins dirs, and the
    built-ins it replaces (``replaceBuiltins``). Wrap every lookup for the spec in it."""
    from vspec.framework.registry import scope

    return scope(spec.plugins_dirs, spec.replace_builtins)


def _explain(exc: SpecError, directory: Path) -> str:
    """The registry's error, with the failing line of the module when it raised."""
    cause = exc.__cause__
    if cause is None:
        return exc.message
    if isinstance(cause, SyntaxError) and cause.filename:
        where = f"{cause.filename}:{cause.lineno}"
        return f"plugin module {where} failed to import: {type(cause).__name__}: {cause.msg}"
    import traceback

    frames = [
        f
        for f in traceback.extract_tb(cause.__traceback__)
        if Path(f.filename).resolve().parent == directory.resolve()
    ]
    if not frames:
        return f"{exc.message} ({type(cause).__name__})"
    last = frames[-1]
    return (
        f"plugin module {last.filename}:{last.lineno} failed to import: "
        f"{type(cause).__name__}: {cause}"
    )


def spec_plugins_dirs(raw: str | Sequence[str] | None, spec_file: str) -> tuple[Path, ...]:
    """A spec's ``pluginsDir`` (a directory or a list), relative to the spec file."""
    if raw is None:
        return ()
    dirs = [raw] if isinstance(raw, str) else list(raw)
    return tuple(Path(spec_file).parent / d for d in dirs)
