"""``vspec schema [spec|cluster|scheduler]``: print the JSON Schema of a kind of file, for
editors and other tools. Imports the harness's schemas when the command runs.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from vspec.cli.status import EXIT_OK

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]


def add_cli(commands: Commands) -> None:
    schema = commands.add_parser(
        "schema", help="print the JSON Schema of spec, cluster or scheduler conf files"
    )
    schema.add_argument(
        "kind",
        nargs="?",
        default="spec",
        choices=("spec", "cluster", "scheduler"),
        help="which file: a spec (default), a cluster file, a scheduler conf file",
    )
    schema.set_defaults(handler=_schema)


def _schema(args: argparse.Namespace) -> int:
    import json

    from vspec.harness.schema import SCHEMAS

    print(json.dumps(SCHEMAS[args.kind](), indent=2))
    return EXIT_OK
