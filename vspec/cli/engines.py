"""``vspec engines``: list the engines and the real engine's builds
(:mod:`vspec.engines.volcano.listing`, imported when the command runs).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from vspec.cli.status import EXIT_OK

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]


def add_cli(commands: Commands) -> None:
    engines = commands.add_parser("engines", help="list the engines and the real engine's builds")
    engines.set_defaults(handler=_engines)


def _engines(_args: argparse.Namespace) -> int:
    from vspec.engines.volcano.listing import describe

    print(describe())
    return EXIT_OK
