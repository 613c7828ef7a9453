"""``vspec plugins``: list the registered actions and plugins with their arguments,
including those of the plugins dirs. Imports the framework's registry when it runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from vspec.cli.plugin_dirs import load_plugins, plugins_dir_option
from vspec.cli.status import EXIT_FAILED, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]


def add_cli(commands: Commands) -> None:
    plugins = commands.add_parser("plugins", help="list the actions and plugins with arguments")
    plugins_dir_option(plugins)
    plugins.set_defaults(handler=_plugins)


def _plugins(args: argparse.Namespace) -> int:
    from vspec.errors import VspecError

    if not load_plugins(args, project=True):
        return EXIT_USAGE

    from vspec.framework.registry import registered_actions, registered_plugins

    try:
        sections = (("Actions", registered_actions()), ("Plugins", registered_plugins()))
    except VspecError as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    width = max((len(e.name) for _, entries in sections for e in entries), default=0)
    for title, entries in sections:
        print(f"{title}:")
        for entry in entries:
            print(f"  {entry.name:<{width}}  {entry.doc}".rstrip())
            for arg in entry.arguments:
                default = arg.default or '""'
                line = f"      {arg.name} ({arg.type}, default {default})"
                print(line + (f": {arg.help}" if arg.help else ""))
    return EXIT_OK
