"""The ``--plugins-dir`` option the commands share, and the loading of the plugins dirs
it names (and a project's ``[tool.vspec] plugins-dir``) before a command reads a spec.
Imports the harness's plugin loader when a command runs, not when the parser is built.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from vspec.cli.status import EXIT_USAGE


def with_plugins(
    handler: Callable[[argparse.Namespace], int],
) -> Callable[[argparse.Namespace], int]:
    """``handler`` after the plugins dirs (the command line's and the project's), for the
    commands that read no spec first: user plugins and actions join the fuzzed space or
    the compared confs."""

    def run(args: argparse.Namespace) -> int:
        return handler(args) if load_plugins(args, project=True) else EXIT_USAGE

    return run


def plugins_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugins-dir",
        dest="plugins_dirs",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="import the plugins and actions of every *.py in DIR (repeatable); "
        "a spec's project's [tool.vspec] plugins-dir is imported too",
    )


def load_plugins(args: argparse.Namespace, *, project: bool = False) -> bool:
    """Import the command line's plugins dirs, before any spec is read, and with
    ``project`` those of the current directory's pyproject (for the commands that read no
    spec; a spec's own project is read by the loader); False (after saying why) when one
    cannot be imported."""
    from vspec.errors import VspecError
    from vspec.harness.plugin_dirs import load_plugins_dirs, load_project_plugins
    from vspec.harness.settings import project_settings

    try:
        if project:
            load_project_plugins(project_settings())
        load_plugins_dirs(args.plugins_dirs, origin="--plugins-dir")
    except VspecError as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return False
    return True
