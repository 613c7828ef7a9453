"""Which Go plugins a spec brings to the real engine, from the plugins dirs in scope.

Volcano's ``--plugins-dir`` loads ``NAME.so`` files built with ``-buildmode=plugin``;
vspec compiles a plugin's Go source into its engine instead (no cgo, no matching
toolchain to get right), under the same name. A conf that names a Python plugin of a
plugins dir, or a name that both a Python and a Go plugin claim, is an error here: the
real engine runs Go code only.
"""

from __future__ import annotations

from vspec.errors import ConfError
from vspec.framework.registry import (
    GoPlugin,
    go_plugins_in_scope,
    python_plugins_in_scope,
    shared_objects_in_scope,
)
from vspec.model.conf import SchedulerConf


def go_plugins_for(conf: SchedulerConf) -> tuple[GoPlugin, ...]:
    """The Go plugins in scope (all of them: Volcano's loader registers every one), after
    checking the conf's names against the Python plugins and built ``.so`` files there."""
    plugins = go_plugins_in_scope()
    by_name = {p.name: p for p in plugins}
    python = python_plugins_in_scope()
    for name, plugin in by_name.items():
        if name in python:
            raise ConfError(
                f"plugin {name!r} is both Go ({plugin.origin}) and Python ({python[name]}) in "
                "this spec's plugins dirs: keep one"
            )
    names = set(conf.plugin_names())
    for so in shared_objects_in_scope():
        if so.stem in names and so.stem not in by_name:
            raise ConfError(
                f"{so}: a built Go plugin loads only into a scheduler built from the same "
                "module versions with the same Go toolchain and cgo, which vspec's engine is "
                f"not; put its Go source beside it instead ({so.stem}.go, or a {so.stem}/ "
                "directory of Go files), which vspec compiles in under the same name"
            )
    for name in sorted(names & set(python)):
        if name not in by_name:
            raise ConfError(
                f"plugin {name!r} is a Python plugin ({python[name]}): the volcano engine runs "
                "Volcano's Go code, so write it in Go (a .go file in the plugins dir) or run "
                "it with --engine python"
            )
    return tuple(plugins)
