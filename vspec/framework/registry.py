"""The action and plugin registries (``framework/plugins.go``, ``actions/factory.go``).

Each action and plugin module registers itself with :func:`register_action` or
:func:`register_plugin`; the framework never names one. Built-ins are found by
importing every module of :mod:`vspec.actions` and :mod:`vspec.plugins`; packaged
extensions through the ``vspec.actions`` / ``vspec.plugins`` entry-point groups; a
``--plugins-dir`` by importing each Python file in it.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TypeVar

from vspec.errors import SpecError, VspecError
from vspec.framework.interface import Action, ArgumentSpec, Plugin
from vspec.registries import Registry

PLUGINS: Registry[type[Plugin]] = Registry("plugin")
ACTIONS: Registry[type[Action]] = Registry("action")
_loaded_dirs: set[Path] = set()
_loaded_packages: set[str] = set()

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
    """Class decorator: make a plugin available under ``cls.name``."""
    PLUGINS.register(cls.name, cls)
    return cls


def register_action(cls: A) -> A:
    """Class decorator: make an action available under ``cls.name``."""
    ACTIONS.register(cls.name, cls)
    return cls


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
    for group in ("vspec.actions", "vspec.plugins"):
        for ep in entry_points(group=group):
            try:
                ep.load()
            except Exception as exc:  # a broken extension must not hide the others
                raise VspecError(f"entry point {ep.name!r} ({ep.value}) failed: {exc}") from exc


def load_plugins_dir(directory: Path) -> None:
    """``--plugins-dir``: import every ``*.py`` in ``directory``; each registers itself."""
    directory = directory.resolve()
    if directory in _loaded_dirs:
        return
    if not directory.is_dir():
        raise SpecError(f"plugins directory {directory} does not exist")
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
            raise SpecError(f"plugin module {path} failed to import: {exc}") from exc
    _loaded_dirs.add(directory)


def _module_name(path: Path) -> str:
    """``vspec_user_plugins.<stem>``; a same-named file of another directory gets a
    numbered name instead of replacing the first one."""
    base = f"vspec_user_plugins.{path.stem}"
    name, n = base, 1
    while name in sys.modules and getattr(sys.modules[name], "__file__", None) != str(path):
        n += 1
        name = f"{base}_{n}"
    return name


def get_plugin(name: str) -> type[Plugin] | None:
    load_builtins()
    return PLUGINS.get(name)


def get_action(name: str) -> type[Action] | None:
    load_builtins()
    return ACTIONS.get(name)


def action_names() -> set[str]:
    load_builtins()
    return set(ACTIONS.names())


def plugin_names() -> set[str]:
    load_builtins()
    return set(PLUGINS.names())


def _describe(registry: Registry[type[Plugin]] | Registry[type[Action]]) -> list[Registered]:
    entries = []
    for name in sorted(registry.names()):
        cls: Callable[..., object] = registry[name]
        doc = (cls.__doc__ or "").strip().splitlines()
        entries.append(
            Registered(
                name,
                registry.kind,
                doc[0] if doc else "",
                getattr(cls, "arguments_spec", ()),
                cls.__module__,
            )
        )
    return entries


def registered_plugins() -> list[Registered]:
    load_builtins()
    return _describe(PLUGINS)


def registered_actions() -> list[Registered]:
    load_builtins()
    return _describe(ACTIONS)


@contextmanager
def isolated() -> Iterator[None]:
    """Actions, plugins and plugins dirs registered inside are gone afterwards (and the
    modules of those dirs forgotten), so one test's plugins never reach another's confs."""
    load_builtins()
    dirs, modules = set(_loaded_dirs), set(sys.modules)
    try:
        with PLUGINS.isolated(), ACTIONS.isolated():
            yield
    finally:
        _loaded_dirs.clear()
        _loaded_dirs.update(dirs)
        for name in set(sys.modules) - modules:
            if name.startswith("vspec_user_plugins."):
                del sys.modules[name]
