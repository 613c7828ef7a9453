"""The action and plugin registries (``framework/plugins.go``, ``actions/factory.go``).

Each action and plugin module registers itself with :func:`register_action` or
:func:`register_plugin`; the framework never names one. Built-ins are found by
importing the modules of :mod:`vspec.actions` and :mod:`vspec.plugins`; packaged
extensions through the ``vspec.actions`` / ``vspec.plugins`` entry-point groups; a
``--plugins-dir`` by importing each Python file in it. A lookup by name imports only
the built-in module named after it (``task-topology`` is ``task_topology.py``,
``numa-aware`` ``numaaware.py``) when no packaged extension is installed, since a spec
names a few of the 30 and importing the others was a tenth of a one-spec run's
start-up; a name no such module registers, a listing, or an installed extension (which
may replace a built-in, so must come after all of them) imports every one.

What a plugins dir registers is kept with that directory, and seen only where it is in
scope: the directories loaded for the whole process (``--plugins-dir``, an API caller's
:func:`load_plugins_dir`), plus those of the :func:`scope` a spec runs in (its project's
and its own). So a spec's plugins never leak into the specs after it. A user plugin or
action with the name of a built-in (or of another directory's) is a conflict that
:func:`conflict` reports, naming both, unless the scope says it replaces the built-in.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal, TypeVar, cast

from vspec.errors import SpecError, VspecError
from vspec.framework.interface import Action, ArgumentSpec, Plugin
from vspec.framework.packaged import EntryPoint, entry_points
from vspec.registries import Registry

PLUGINS: Registry[type[Plugin]] = Registry("plugin")  # built-ins and entry points
ACTIONS: Registry[type[Action]] = Registry("action")
_DIR_PLUGINS: dict[Path, Registry[type[Plugin]]] = {}  # what each plugins dir registered
_DIR_ACTIONS: dict[Path, Registry[type[Action]]] = {}
_process_dirs: list[Path] = []  # in scope everywhere
_loading: list[Path] = []  # the plugins dir being imported, if any
_loaded_dirs: set[Path] = set()
_loaded_packages: set[str] = set()
Kind = Literal["action", "plugin"]
_PACKAGES: dict[Kind, str] = {"action": "vspec.actions", "plugin": "vspec.plugins"}
_BUILTIN_PACKAGES = tuple(f"{package}." for package in _PACKAGES.values())


@dataclass(frozen=True)
class Scope:
    """The plugins dirs a spec sees besides the process-wide ones, and the built-in
    names it lets them replace."""

    dirs: tuple[Path, ...] = ()
    replaces: frozenset[str] = frozenset()


_NO_SCOPE = Scope()
_scope: ContextVar[Scope] = ContextVar("vspec_registry_scope", default=_NO_SCOPE)

P = TypeVar("P", bound=type[Plugin])
A = TypeVar("A", bound=type[Action])


@dataclass(frozen=True)
class Registered:
    """What ``vspec plugins`` shows of one action or plugin."""

    name: str
    kind: str  # "action" | "plugin"
    doc: str
    arguments: tuple[ArgumentSpec, ...]
    module: str


def register_plugin(cls: P) -> P:
    """Class decorator: make a plugin available under ``cls.name`` (inside a plugins
    dir being imported: for the specs that have that dir in scope; a built-in module
    that a user's module imports stays a built-in)."""
    if _loading and not is_builtin(cls):
        _DIR_PLUGINS.setdefault(_loading[-1], Registry("plugin")).register(cls.name, cls)
    else:
        PLUGINS.register(cls.name, cls)
    return cls


def register_action(cls: A) -> A:
    """Class decorator: make an action available under ``cls.name`` (see
    :func:`register_plugin`)."""
    if _loading and not is_builtin(cls):
        _DIR_ACTIONS.setdefault(_loading[-1], Registry("action")).register(cls.name, cls)
    else:
        ACTIONS.register(cls.name, cls)
    return cls


def is_builtin(cls: type) -> bool:
    """One of vspec's own actions or plugins (not a plugins dir's or an entry point's)."""
    return cls.__module__.startswith(_BUILTIN_PACKAGES)


@contextmanager
def scope(dirs: Iterable[Path] = (), replaces: Iterable[str] = ()) -> Iterator[None]:
    """Lookups inside see the plugins dirs ``dirs`` too (already loaded), and their
    plugins and actions named in ``replaces`` replace the built-ins of those names."""
    token = _scope.set(Scope(tuple(d.resolve() for d in dirs), frozenset(replaces)))
    try:
        yield
    finally:
        _scope.reset(token)


def _in_scope() -> list[Path]:
    dirs = _scope.get().dirs
    if not dirs and not _process_dirs:
        return []  # the usual case, and every session looks its plugins up
    return list(dict.fromkeys([*_process_dirs, *dirs]))


@dataclass(frozen=True)
class GoPlugin:
    """A Go plugin in a plugins dir: ``NAME.go``, or a directory ``NAME/`` of Go files,
    named as Volcano's ``LoadCustomPlugins`` names a ``NAME.so`` (the file name without
    its extension). Only the real engine runs one; vspec's engine refuses a conf that
    names one."""

    name: str
    files: tuple[Path, ...]
    origin: Path  # the file or the directory


def go_plugins_in_scope() -> list[GoPlugin]:
    """The Go plugins of the plugins dirs in scope (``--plugins-dir``, the project's
    and the spec's ``pluginsDir``), in the order of the dirs."""
    found: list[GoPlugin] = []
    for directory in _in_scope():
        for path in sorted(directory.iterdir()):
            if path.suffix == ".go" and path.is_file():
                found.append(GoPlugin(path.stem, (path,), path))
            elif path.is_dir() and (files := tuple(sorted(path.glob("*.go")))):
                found.append(GoPlugin(path.name, files, path))
    return found


def shared_objects_in_scope() -> list[Path]:
    """Built Go plugins (``*.so``) in the plugins dirs in scope, as ``--plugins-dir``
    gives them to Volcano's loader."""
    return [so for directory in _in_scope() for so in sorted(directory.glob("*.so"))]


def _providers(kind: Kind, name: str) -> list[tuple[Path, type[Plugin] | type[Action]]]:
    tables: dict[Path, Registry[type[Plugin]]] | dict[Path, Registry[type[Action]]]
    tables = _DIR_PLUGINS if kind == "plugin" else _DIR_ACTIONS
    found: list[tuple[Path, type[Plugin] | type[Action]]] = []
    for directory in _in_scope():
        table = tables.get(directory)
        cls = None if table is None else table.get(name)
        if cls is not None and all(cls is not other for _, other in found):
            found.append((directory, cls))
    return found


def python_plugins_in_scope() -> dict[str, Path]:
    """The plugins the plugins dirs in scope define in Python: name -> its module file."""
    import inspect

    found: dict[str, Path] = {}
    for directory in _in_scope():
        for name, cls in (_DIR_PLUGINS.get(directory) or {}).items():
            found.setdefault(name, Path(inspect.getfile(cls)))
    return found


def conflict(kind: Kind, name: str) -> str:
    """Why ``name`` cannot be looked up in this scope ("" when it can): two plugins
    dirs register it, or one does and it is a built-in the scope does not replace."""
    _load_builtin(kind, name)
    found = _providers(kind, name)
    if not found:
        return ""
    if len(found) > 1:
        where = " and ".join(f"{d} ({cls.__module__})" for d, cls in found)
        return f"{kind} {name!r} is registered by two plugins dirs: {where}"
    builtin = (PLUGINS if kind == "plugin" else ACTIONS).get(name)
    if builtin is not None and name not in _scope.get().replaces:
        directory, cls = found[0]
        return (
            f"{kind} {name!r} is built in ({builtin.__module__}) and also registered by "
            f"plugins dir {directory} ({cls.__module__}); to use yours, name it in the "
            "spec's replaceBuiltins"
        )
    return ""


def _plugins() -> dict[str, type[Plugin]]:
    """Every plugin this scope sees; a user's class over a built-in."""
    load_builtins()
    view = dict(PLUGINS.items())
    for directory in _in_scope():
        view.update(_DIR_PLUGINS[directory].items() if directory in _DIR_PLUGINS else ())
    return view


def _actions() -> dict[str, type[Action]]:
    load_builtins()
    view = dict(ACTIONS.items())
    for directory in _in_scope():
        view.update(_DIR_ACTIONS[directory].items() if directory in _DIR_ACTIONS else ())
    return view


def _import_package(package: str) -> None:
    """Import each action or plugin module; ``_``-prefixed modules are the helpers they
    share, not extensions."""
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package}.{info.name}")


def load_builtins() -> None:
    """Import the built-in actions and plugins and the packaged extensions (idempotent)."""
    # Importing one plugin module directly registers it; that must not look "loaded".
    if "builtins" in _loaded_packages:
        return
    _loaded_packages.add("builtins")
    _import_package("vspec.actions")
    _import_package("vspec.plugins")
    for eps in _packaged().values():
        for ep in eps:
            try:
                ep.load()
            except Exception as exc:  # a broken extension must not hide the others
                raise VspecError(f"entry point {ep.name!r} ({ep.value}) failed: {exc}") from exc


def _load_builtin(kind: Kind, name: str) -> None:
    """Make the built-in ``name`` registered if there is one: its own module, or every
    module and extension when it has none, or when an extension is installed."""
    if "builtins" in _loaded_packages:
        return
    if any(_packaged().values()):
        load_builtins()
        return
    registry: Registry[type[Plugin]] | Registry[type[Action]] = (
        PLUGINS if kind == "plugin" else ACTIONS
    )
    if name in registry:
        return
    for module in _builtin_modules(_PACKAGES[kind]) & {
        name.replace("-", "_"),
        name.replace("-", ""),
    }:
        importlib.import_module(f"{_PACKAGES[kind]}.{module}")
    if name not in registry:
        load_builtins()


@cache
def _builtin_modules(package: str) -> frozenset[str]:
    return frozenset(
        info.name
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__)
        if not info.name.startswith("_")
    )


@cache
def _packaged() -> dict[str, list[EntryPoint]]:
    """The installed extensions' entry points, read once per process."""
    return entry_points(tuple(_PACKAGES.values()))


def load_plugins_dir(directory: Path, *, everywhere: bool = True) -> None:
    """``--plugins-dir``: import every ``*.py`` in ``directory``; each registers itself
    with the directory. ``everywhere`` puts it in every scope (a spec's own dirs are in
    the scope of that spec only)."""
    directory = directory.resolve()
    if everywhere and directory not in _process_dirs:
        _process_dirs.append(directory)
    if directory in _loaded_dirs:
        return
    if not directory.is_dir():
        raise SpecError(f"plugins directory {directory} does not exist")
    _loading.append(directory)
    try:
        _import_dir(directory)
    finally:
        _loading.pop()
    _loaded_dirs.add(directory)


def _import_dir(directory: Path) -> None:
    for path in sorted(directory.glob("*.py")):
        name = _module_name(path)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise SpecError(f"cannot import plugin module {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except KeyboardInterrupt:
            del sys.modules[name]
            raise
        except BaseException as exc:  # sys.exit() at import too: a plugin cannot end the run
            del sys.modules[name]  # a fixed module must import afresh next time
            _DIR_PLUGINS.pop(directory, None)
            _DIR_ACTIONS.pop(directory, None)
            raise SpecError(f"plugin module {path} failed to import: {exc}") from exc


def _module_name(path: Path) -> str:
    """``vspec_user_plugins.<stem>``; a same-named file of another directory gets a
    numbered name instead of replacing the first one."""
    base = f"vspec_user_plugins.{path.stem}"
    name, n = base, 1
    while name in sys.modules and getattr(sys.modules[name], "__file__", None) != str(path):
        n += 1
        name = f"{base}_{n}"
    return name


T = TypeVar("T")


class Resolutions:
    """What lookups of a configuration's names found and checked, kept while the
    registries and the scope stay as they were: a directory of specs, or a fuzz run,
    names the same few confs, each checked by the loader and by every scheduler (some
    thirty lookups), when one check per distinct conf is enough."""

    def __init__(self) -> None:
        self._state: Hashable = None
        self._found: dict[Hashable, object] = {}

    def get(self, key: Hashable, check: Callable[[], T]) -> T:
        """``check()``'s answer for ``key`` in this state; asked again whenever the state
        moved, as a check may import the built-in modules it names, which register."""
        state = _state()
        while True:
            if state != self._state:
                self._state, self._found = state, {}
            kept = self._found.get(key, self)  # self: nothing kept
            if kept is not self:
                return cast(T, kept)
            found = check()
            after = _state()
            if after == state:
                self._found[key] = found
                return found
            state = after


RESOLUTIONS = Resolutions()  # the registries' own: dropped whenever one of them changes


def _state() -> Hashable:
    """What a lookup's answer depends on: every registry's stamp in the scope."""
    scope = _scope.get()
    if not scope.dirs and not _process_dirs:
        return PLUGINS.stamp, ACTIONS.stamp  # no plugins dir: what it replaces is moot
    dirs = tuple(_in_scope())
    return (
        PLUGINS.stamp,
        ACTIONS.stamp,
        scope.replaces,
        dirs,
        tuple(None if d not in _DIR_PLUGINS else _DIR_PLUGINS[d].stamp for d in dirs),
        tuple(None if d not in _DIR_ACTIONS else _DIR_ACTIONS[d].stamp for d in dirs),
    )


def _lookup(
    kind: Kind, tables: dict[Path, Registry[T]], builtins: Registry[T], name: str
) -> T | None:
    """What the scope's view (:func:`_plugins`, :func:`_actions`) maps ``name`` to,
    without building the view: every session looks up each of its plugins."""
    for directory in reversed(_in_scope()):
        table = tables.get(directory)
        found = None if table is None else table.get(name)
        if found is not None:
            return found
    _load_builtin(kind, name)
    return builtins.get(name)


def get_plugin(name: str) -> type[Plugin] | None:
    return _lookup("plugin", _DIR_PLUGINS, PLUGINS, name)


def get_action(name: str) -> type[Action] | None:
    return _lookup("action", _DIR_ACTIONS, ACTIONS, name)


def action_names() -> set[str]:
    return set(_actions())


def plugin_names() -> set[str]:
    return set(_plugins())


def _describe(
    kind: Kind, registry: dict[str, type[Plugin]] | dict[str, type[Action]]
) -> list[Registered]:
    entries = []
    for name in sorted(registry):
        cls: Callable[..., object] = registry[name]
        doc = (cls.__doc__ or "").strip().splitlines()
        entries.append(
            Registered(
                name,
                kind,
                doc[0] if doc else "",
                getattr(cls, "arguments_spec", ()),
                cls.__module__,
            )
        )
    return entries


def registered_plugins() -> list[Registered]:
    return _describe("plugin", _plugins())


def registered_actions() -> list[Registered]:
    return _describe("action", _actions())


@contextmanager
def isolated() -> Iterator[None]:
    """Actions, plugins and plugins dirs registered inside are gone afterwards (and the
    modules of those dirs forgotten), so one test's plugins never reach another's confs."""
    load_builtins()
    dirs, modules = set(_loaded_dirs), set(sys.modules)
    dir_plugins, dir_actions = dict(_DIR_PLUGINS), dict(_DIR_ACTIONS)
    process_dirs = list(_process_dirs)
    try:
        with PLUGINS.isolated(), ACTIONS.isolated():
            yield
    finally:
        _loaded_dirs.clear()
        _loaded_dirs.update(dirs)
        _DIR_PLUGINS.clear()
        _DIR_PLUGINS.update(dir_plugins)
        _DIR_ACTIONS.clear()
        _DIR_ACTIONS.update(dir_actions)
        _process_dirs[:] = process_dirs
        for name in set(sys.modules) - modules:
            if name.startswith("vspec_user_plugins."):
                del sys.modules[name]
