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
    engines.add_argument(
        "--prune",
        action="store_true",
        help="remove the builds of the real engine this vspec will never use again "
        "(made by another vspec's program, or unfinished; each is about 80 MB)",
    )
    engines.set_defaults(handler=_engines)


def _engines(args: argparse.Namespace) -> int:
    from vspec.engines.volcano.listing import describe, prune

    if args.prune:
        print(prune())
    print(describe())
    return EXIT_OK
