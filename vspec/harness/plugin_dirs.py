"""Where user plugins and actions come from, as Volcano's ``--plugins-dir``.

Three sources, all loaded before a conf is checked for the names it uses: the CLI's
``--plugins-dir`` (relative to the current directory), ``[tool.vspec] plugins-dir`` in
the ``pyproject.toml`` found by walking up from the current directory (relative to that
file; read by the CLI and the pytest plugin alike), and a spec's own ``pluginsDir``
(relative to the spec file). Each directory is imported once per process, so a plugin
registered by one spec is known to the specs after it, as in one vc-scheduler process.

A module that fails to import is a user error: reported with the module's file and the
line it failed on, never as a traceback.
"""

from __future__ import annotations

import difflib
import tomllib
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vspec.errors import Location, SpecError

PYPROJECT = "pyproject.toml"
SETTINGS_KEYS = ("plugins-dir",)


@dataclass(frozen=True)
class ProjectSettings:
    """``[tool.vspec]`` of the nearest ``pyproject.toml`` that has it."""

    plugins_dirs: tuple[Path, ...] = ()
    source: Path | None = None  # the pyproject.toml they were read from


def project_settings(start: Path | None = None) -> ProjectSettings:
    """The settings of the nearest ``pyproject.toml`` above ``start`` (default: the
    current directory) that holds a ``[tool.vspec]`` table; none found is no settings."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        path = directory / PYPROJECT
        if path.is_file():
            table = _vspec_table(path)
            if table is not None:
                return _settings(table, path)
    return ProjectSettings()


def _vspec_table(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(f"cannot read: {exc}", Location(str(path))) from None
    table = data.get("tool", {}).get("vspec")
    if table is not None and not isinstance(table, dict):
        raise SpecError("[tool.vspec] must be a table", Location(str(path), key="tool.vspec"))
    return table


def _settings(table: dict[str, Any], path: Path) -> ProjectSettings:
    for key in table:
        if key not in SETTINGS_KEYS:
            hint = difflib.get_close_matches(key, SETTINGS_KEYS, n=1)
            more = (
                f" (did you mean {hint[0]!r}?)" if hint else f" (known: {', '.join(SETTINGS_KEYS)})"
            )
            raise SpecError(f"unknown setting {key!r}{more}", Location(str(path), key="tool.vspec"))
    raw = table.get("plugins-dir", [])
    dirs = [raw] if isinstance(raw, str) else raw
    if not isinstance(dirs, list) or not all(isinstance(d, str) and d for d in dirs):
        raise SpecError(
            "plugins-dir must be a directory or a list of directories",
            Location(str(path), key="tool.vspec.plugins-dir"),
        )
    return ProjectSettings(tuple(path.parent / d for d in dirs), path)


def load_plugins_dirs(
    dirs: Iterable[Path], *, origin: str = "", location: Location | None = None
) -> None:
    """Import every module of ``dirs`` (each registers its plugins and actions).

    ``origin`` says who asked (``--plugins-dir``, a spec) and ``location`` where, so the
    error of a module that fails to import can be acted on.
    """
    from vspec.framework.registry import load_builtins, load_plugins_dir

    dirs = list(dirs)
    if dirs:
        # Built-ins first, so that a user plugin of a built-in's name replaces it.
        load_builtins()
    for directory in dirs:
        try:
            load_plugins_dir(directory)
        except SpecError as exc:
            why = _explain(exc, directory)
            raise SpecError(f"{origin}: {why}" if origin else why, location) from None


def load_project_plugins(settings: ProjectSettings) -> None:
    """The ``plugins-dir`` of a pyproject's ``[tool.vspec]``."""
    if settings.source is not None:
        where = Location(str(settings.source), key="tool.vspec.plugins-dir")
        load_plugins_dirs(settings.plugins_dirs, location=where)


def _explain(exc: SpecError, directory: Path) -> str:
    """The registry's error, with the failing line of the module when it raised."""
    cause = exc.__cause__
    if cause is None:
        return exc.message
    if isinstance(cause, SyntaxError) and cause.filename:
        where = f"{cause.filename}:{cause.lineno}"
        return f"plugin module {where} failed to import: {type(cause).__name__}: {cause.msg}"
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
