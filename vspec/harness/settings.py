"""Project settings: ``[tool.vspec]`` of the nearest ``pyproject.toml`` above a spec.

Found from the spec file, never from the working directory, so a spec behaves the same
whether it is run from its project's root, from a subdirectory or from elsewhere, by
``vspec run`` or by pytest. :func:`project_settings` is the one lookup: every reader of
``[tool.vspec]`` (plugins dirs, the cluster mode, invariant settings, the runner) asks it
with the path of the spec (or the directory) at hand.

A setting is declared once in :data:`SETTINGS` with its checker, so a misspelled key or a
value of the wrong type is a located error in the ``pyproject.toml``, not a silent
default.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from vspec.errors import Location, SpecError
from vspec.model.engine import ENGINE_NAMES
from vspec.model.spec import ClusterMode

PYPROJECT = "pyproject.toml"
CLUSTER_MODES: tuple[ClusterMode, ...] = ("deployed", "bare")


INVARIANT_KEYS = ("disable", "enable", "warn-only")


@dataclass(frozen=True)
class InvariantSettings:
    """``[tool.vspec.invariants]``: invariants a project turns off (``disable``), checks
    beyond their documented scope (``enable``) or reports without failing (``warn-only``).
    A spec's own ``expect.invariants`` and ``disable`` come on top."""

    disable: tuple[str, ...] = ()
    enable: tuple[str, ...] = ()
    warn_only: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProjectSettings:
    """``[tool.vspec]`` of one ``pyproject.toml`` (or the defaults when there is none)."""

    plugins_dirs: tuple[Path, ...] = ()  # relative entries resolved against the pyproject
    cluster_mode: ClusterMode = "deployed"
    engine: str = "python"  # the engine the specs are meant for (vspec.engines)
    volcano_version: str | None = None  # the real engine's Volcano release
    volcano_source: Path | None = None  # or a Volcano source tree, relative to the pyproject
    invariants: InvariantSettings = InvariantSettings()
    source: Path | None = None  # the pyproject.toml they were read from
    table: Mapping[str, Any] = field(default_factory=dict, compare=False)  # as written

    def location(self, key: str) -> Location | None:
        """Where ``key`` is set, for an error about its value."""
        if self.source is None:
            return None
        return Location(str(self.source), key=f"tool.vspec.{key}")


Check = Callable[[Any, Path], Any]


def _plugins_dirs(raw: Any, pyproject: Path) -> tuple[Path, ...]:
    dirs = [raw] if isinstance(raw, str) else raw
    if not isinstance(dirs, list) or not all(isinstance(d, str) and d for d in dirs):
        raise ValueError("plugins-dir must be a directory or a list of directories")
    return tuple(pyproject.parent / d for d in dirs)


def _cluster_mode(raw: Any, _pyproject: Path) -> ClusterMode:
    if raw not in CLUSTER_MODES:
        raise ValueError(f"cluster-mode must be one of {', '.join(CLUSTER_MODES)}, got {raw!r}")
    return cast(ClusterMode, raw)


def _invariants(raw: Any, _pyproject: Path) -> InvariantSettings:
    """Known keys, each a list of registered invariant names."""
    from vspec.invariants import catalogue

    if not isinstance(raw, dict):
        raise ValueError("invariants must be a table (disable, enable, warn-only)")
    known = [inv.name for inv in catalogue()]
    values: dict[str, tuple[str, ...]] = {}
    for key, names in raw.items():
        if key not in INVARIANT_KEYS:
            raise ValueError(f"unknown key {key!r} (known: {', '.join(INVARIANT_KEYS)})")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"{key} must be a list of invariant names")
        for name in names:
            if name not in known:
                import difflib

                hint = difflib.get_close_matches(name, known, n=1)
                more = f"did you mean {hint[0]!r}?" if hint else f"known: {', '.join(known)}"
                raise ValueError(f"{key}: unknown invariant {name!r} ({more})")
        values[key.replace("-", "_")] = tuple(names)
    return InvariantSettings(**values)


def _engine(raw: Any, _pyproject: Path) -> str:
    if raw not in ENGINE_NAMES:
        raise ValueError(f"engine must be one of {', '.join(ENGINE_NAMES)}, got {raw!r}")
    return str(raw)


def _volcano_version(raw: Any, _pyproject: Path) -> str:
    if not isinstance(raw, str) or not raw.startswith("v"):
        raise ValueError(f"volcano-version must be a release such as 'v1.11.0', got {raw!r}")
    return raw


def _volcano_source(raw: Any, pyproject: Path) -> Path:
    if not isinstance(raw, str) or not raw:
        raise ValueError("volcano-source must be the directory of a Volcano source tree")
    return pyproject.parent / raw


# key -> (ProjectSettings field, checker). Another setting is one more line here.
SETTINGS: dict[str, tuple[str, Check]] = {
    "plugins-dir": ("plugins_dirs", _plugins_dirs),
    "cluster-mode": ("cluster_mode", _cluster_mode),
    "engine": ("engine", _engine),
    "volcano-version": ("volcano_version", _volcano_version),
    "volcano-source": ("volcano_source", _volcano_source),
    "invariants": ("invariants", _invariants),
}


# The settings found per directory and per path asked during one run (:func:`read_once`),
# or None outside.
_found: ContextVar[dict[str, ProjectSettings] | None] = ContextVar(
    "vspec_project_settings", default=None
)


@contextmanager
def read_once() -> Iterator[None]:
    """Within the block, the settings of each directory are looked up once: a run's
    specs ask three or four times each (loading, plugins, the runner), and each lookup
    resolves the path and stats a ``pyproject.toml`` in every directory above it, about
    a tenth of a small spec's loading. A pyproject created or edited during the block
    is not seen before the next."""
    token = _found.set({})
    try:
        yield
    finally:
        _found.reset(token)


def project_settings(start: str | os.PathLike[str] | None = None) -> ProjectSettings:
    """The settings of the nearest ``pyproject.toml`` holding a ``[tool.vspec]`` table
    above ``start``: a spec file, or a directory (default: the current directory, for the
    commands that read no spec). None found is the defaults. Raises :class:`SpecError` at
    the pyproject for an unreadable file, an unknown key or a bad value."""
    found = _found.get()
    if found is None:
        return _look_up(None if start is None else Path(start))
    given = os.fspath(start) if start is not None else os.curdir
    settings = found.get(given)  # a spec file asks three or four times: no stat again
    if settings is None:
        # By directory: the specs of one directory share one lookup.
        where = os.path.abspath(given)
        key = where if os.path.isdir(where) else os.path.dirname(where)
        settings = found.get(key)
        if settings is None:
            settings = found[key] = _look_up(Path(key))
        found[given] = settings
    return settings


def _look_up(start: Path | None) -> ProjectSettings:
    here = (start or Path.cwd()).resolve()
    if not here.is_dir():
        here = here.parent
    for directory in (here, *here.parents):
        path = directory / PYPROJECT
        try:
            stat = path.stat()
        except OSError:
            continue
        settings = _read(path, stat.st_mtime_ns, stat.st_size)
        if settings is not None:
            return settings
    return ProjectSettings()


@lru_cache(maxsize=256)
def _read(path: Path, _mtime_ns: int, _size: int) -> ProjectSettings | None:
    """The settings of one pyproject (None: it has no ``[tool.vspec]``). Cached while the
    file is unchanged: every spec of a suite asks, and most share one pyproject. (tomllib
    is imported here: a spec outside any project reads none.)"""
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(f"cannot read: {exc}", Location(str(path))) from None
    table = data.get("tool", {}).get("vspec")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise SpecError("[tool.vspec] must be a table", Location(str(path), key="tool.vspec"))
    return _settings(table, path)


def _settings(table: dict[str, Any], path: Path) -> ProjectSettings:
    values: dict[str, Any] = {}
    for key, raw in table.items():
        if key not in SETTINGS:
            raise SpecError(_unknown(key), Location(str(path), key="tool.vspec"))
        name, check = SETTINGS[key]
        try:
            values[name] = check(raw, path)
        except ValueError as exc:
            raise SpecError(str(exc), Location(str(path), key=f"tool.vspec.{key}")) from None
    return ProjectSettings(**values, source=path, table=dict(table))


def _unknown(key: str) -> str:
    import difflib

    hint = difflib.get_close_matches(key, list(SETTINGS), n=1)
    more = f" (did you mean {hint[0]!r}?)" if hint else f" (known: {', '.join(SETTINGS)})"
    return f"unknown setting {key!r}{more}"
