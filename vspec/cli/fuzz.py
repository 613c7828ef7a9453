"""``vspec fuzz`` and ``vspec invariants``: their command lines. The handlers import the
fuzzer (:mod:`vspec.fuzz.runner`) when the command runs, so that building the parser
imports neither it, Hypothesis nor the invariants; this module imports only the
fuzzer's defaults (:mod:`vspec.fuzz`) and the shared ``--plugins-dir`` option.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vspec.cli.campaign import campaign_options
from vspec.cli.plugin_dirs import plugins_dir_option, with_plugins
from vspec.fuzz import BUILTIN_SPACES, CACHE_DIR, DEFAULT_OUT, FUZZ_DATABASE


def add_cli(subparsers: Any) -> None:
    """Register ``vspec fuzz`` and ``vspec invariants`` on an argparse subparsers object."""
    fuzz = subparsers.add_parser(
        "fuzz", help="check the invariants on generated clusters and configurations"
    )
    fuzz.add_argument(
        "--space",
        default="default",
        metavar="FILE|NAME",
        help=f"config space file, or a built-in space ({', '.join(BUILTIN_SPACES)})",
    )
    fuzz.add_argument("--seconds", type=float, metavar="N", help="time budget (default 60)")
    fuzz.add_argument("--examples", type=int, metavar="N", help="number of examples to run")
    fuzz.add_argument("--seed", type=int, metavar="N", help="seed (default: random, printed)")
    fuzz.add_argument(
        "--first", action="store_true", help="stop at the first finding (after shrinking it)"
    )
    fuzz.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help="where findings are written"
    )
    campaign_options(
        fuzz,
        what="examples",
        database_help="Hypothesis' example database, kept between runs and shared by a "
        "campaign's processes: a directory or a Redis server (default: "
        f"{CACHE_DIR}/{FUZZ_DATABASE.as_posix()} in the project's cache directory, "
        f"{CACHE_DIR}/ in the nearest directory above with a pyproject.toml or .git, else "
        f"in the current one; Hypothesis' other files go to {CACHE_DIR}/hypothesis)",
    )
    fuzz.add_argument(
        "--collect",
        action="store_true",
        help="run nothing: write a sharded campaign's findings (its --space, --seed and "
        "--database) to --out and print its summary, merged from every shard's",
    )
    fuzz.add_argument(
        "--timelines",
        action="store_true",
        help="draw timelines (arrivals, run times, node events); invariants after every session",
    )
    fuzz.add_argument(
        "--diff",
        action="store_true",
        help="also run each example on the real Volcano: a decision it takes otherwise is a "
        "finding (vspec diff's comparison)",
    )
    fuzz.add_argument(
        "--volcano-version",
        metavar="VERSION",
        help="with --diff: the Volcano release both engines run (default v1.11.0)",
    )
    fuzz.add_argument(
        "--volcano-source",
        type=Path,
        metavar="DIR",
        help="with --diff: build the real engine from this Volcano source tree",
    )
    fuzz.add_argument(
        "--coverage",
        nargs="?",
        const="",
        metavar="FILE",
        help="measure the branch coverage of the actions and plugins (built-in and the "
        "plugins dirs') the run reached; with FILE, add this run's to what FILE holds and "
        "report them together (runs over several spaces); needs coverage.py (pip install "
        "'vspec[coverage]')",
    )
    plugins_dir_option(fuzz)
    # The plugins dirs first, so user plugins and actions join the fuzzed space.
    fuzz.set_defaults(handler=_measured)

    invariants = subparsers.add_parser("invariants", help="list the named invariants")
    invariants.add_argument(
        "-v", "--verbose", action="store_true", help="with definitions and scope"
    )
    invariants.set_defaults(handler=_invariants)


def _measured(args: argparse.Namespace) -> int:
    """With ``--coverage``, coverage starts before the plugins dirs are imported."""
    if args.coverage is None:
        return with_plugins(_fuzz)(args)
    from vspec.fuzz.reach import measured

    return measured(with_plugins(_fuzz), args)


def _fuzz(args: argparse.Namespace) -> int:
    from vspec.fuzz.runner import fuzz_command

    return fuzz_command(args)


def _invariants(args: argparse.Namespace) -> int:
    from vspec.fuzz.runner import invariants_command

    return invariants_command(args)
