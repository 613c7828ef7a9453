"""``vspec diff``: its command line. The handler imports the comparison and the
fuzzer when the command runs, so that building ``vspec``'s parser imports neither."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vspec.cli.campaign import campaign_options
from vspec.fuzz import BUILTIN_SPACES, CACHE_DIR, DIFF_DATABASE

DEFAULT_OUT = Path("diff-findings")


def add_cli(subparsers: Any) -> None:
    diff = subparsers.add_parser(
        "diff",
        help="run specs on vspec's engine and on the real Volcano and report every disagreement",
        description="Run spec files and generated specs on both engines at the same Volcano "
        "version; each disagreement is shrunk and written as a spec file with both outcomes.",
    )
    diff.add_argument("paths", nargs="*", metavar="PATH", help="spec files or directories")
    diff.add_argument(
        "--space",
        action="append",
        default=[],
        metavar="FILE|NAME",
        help=f"also generated specs of this fuzz space ({', '.join(BUILTIN_SPACES)}, or all); "
        "may be repeated",
    )
    diff.add_argument("--seconds", type=float, metavar="N", help="time per space (default 60)")
    diff.add_argument("--examples", type=int, metavar="N", help="examples per space")
    diff.add_argument("--seed", type=int, metavar="N", help="seed (default: random, printed)")
    diff.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help="where disagreements go"
    )
    diff.add_argument(
        "--shrink-seconds",
        type=float,
        default=30.0,
        metavar="N",
        help="time to shrink each disagreement (default 30)",
    )
    diff.add_argument(
        "--runs",
        type=int,
        default=8,
        metavar="N",
        help="runs of Volcano on a disagreement, to tell its own nondeterminism (default 8)",
    )
    diff.add_argument(
        "--volcano-version",
        metavar="VERSION",
        help="the Volcano release both engines are compared at (default v1.11.0)",
    )
    diff.add_argument(
        "--volcano-source",
        type=Path,
        metavar="DIR",
        help="build the real engine from this Volcano source tree instead",
    )
    campaign_options(
        diff,
        what="spec files and examples",
        database_help="where a campaign's processes record which one shrinks and writes each "
        "space's set of aspects, so that none is reported twice: a directory or a Redis "
        "server (default, with --workers or --shard: "
        f"{CACHE_DIR}/{DIFF_DATABASE.as_posix()} in the project's cache directory)",
    )
    diff.add_argument(
        "--collect",
        action="store_true",
        help="run nothing: write a sharded campaign's disagreements (its --space, --seed and "
        "--database) to --out and print its summary, merged from every shard's",
    )
    diff.set_defaults(handler=_diff)


def _diff(args: argparse.Namespace) -> int:
    from vspec.fuzz.diff import diff_command

    return diff_command(args)
