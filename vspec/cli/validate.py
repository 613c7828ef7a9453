"""``vspec validate PATH...``: load specs without running them, and report every invalid
one as ``file:line: key: message``. Imports the harness's loader when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from vspec.cli.plugin_dirs import load_plugins, plugins_dir_option
from vspec.cli.status import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]


def add_cli(commands: Commands) -> None:
    validate = commands.add_parser("validate", help="check specs without running them")
    validate.add_argument("paths", nargs="+", metavar="PATH")
    plugins_dir_option(validate)
    validate.set_defaults(handler=_validate)


def _validate(args: argparse.Namespace) -> int:
    from vspec.harness.runner import load_specs, spec_files

    if not load_plugins(args):
        return EXIT_USAGE
    problems: list[str] = []
    warnings: list[str] = []
    n_specs = n_files = 0
    invalid = False
    for path, named in spec_files(args.paths, problems):
        specs, errors = load_specs(path, named=named, problems=problems)
        for error in errors:
            invalid = True
            print("\n".join(error.messages))
        for spec in specs:
            warnings.extend(w for w in spec.warnings if w not in warnings)
        n_specs += len(specs)
        n_files += bool(specs or errors)
    for problem in problems:
        print(f"vspec: error: {problem}", file=sys.stderr)
    for warning in warnings:
        print(f"vspec: warning: {warning}", file=sys.stderr)
    if invalid or problems:
        return EXIT_USAGE
    print(f"{n_specs} specs in {n_files} files are valid")
    return EXIT_OK
