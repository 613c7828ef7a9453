"""``vspec compare``: its command line. The handler imports the comparison
(:mod:`vspec.report.compare`) and the progress display (:mod:`vspec.cli.compare_progress`)
when the command runs, so that building the parser imports no timeline code; this module
imports only the shared ``--plugins-dir`` and ``--workers`` options' types.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from pathlib import Path

from vspec.cli.campaign import workers
from vspec.cli.plugin_dirs import plugins_dir_option, with_plugins


def add_cli(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    compare = commands.add_parser(
        "compare",
        help="run one workload under two or more scheduler confs and compare the metrics",
        description="Run the timeline of a workload file under two or more scheduler "
        "configurations (conf files or ConfigMaps) and print their metrics side by side.",
    )
    compare.add_argument(
        "confs", nargs="+", metavar="CONF", type=Path, help="conf file or ConfigMap (two or more)"
    )
    compare.add_argument("--workload", required=True, type=Path, metavar="FILE")
    compare.add_argument("--seed", type=int, default=0, metavar="N", help="draws and tie-breaks")
    compare.add_argument(
        "--until",
        type=_duration,
        metavar="DURATION",
        help="stop each timeline this long after its start (a slice of a long workload)",
    )
    compare.add_argument(
        "--workers",
        type=workers,
        default=1,
        metavar="N",
        help="run the confs in N processes on this machine (default 1)",
    )
    compare.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="no progress bar (on a terminal) or progress lines (otherwise) on stderr",
    )
    compare.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="EXPR",
        help="another row, an expression of expect.metrics without the comparison",
    )
    compare.add_argument("--plots", type=Path, metavar="DIR", help="write SVG plots here")
    compare.add_argument("--csv", type=Path, metavar="DIR", help="write CSV records here")
    compare.add_argument(
        "--parquet",
        type=Path,
        metavar="DIR",
        help="write Parquet records here (needs pyarrow: pip install 'vspec[parquet]')",
    )
    plugins_dir_option(compare)
    compare.set_defaults(handler=with_plugins(_compare))


def _duration(text: str) -> timedelta:
    """``--until``: a Go duration (``6h``, ``90m``, ``1h30m``)."""
    from vspec.golang import parse_duration

    try:
        value = parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value <= timedelta(0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive duration")
    return value


def _compare(args: argparse.Namespace) -> int:
    import sys

    from vspec.cli.compare_progress import CompareProgress
    from vspec.engines import get_engine
    from vspec.report.compare import run_compare

    def view(confs: dict[str, Path]) -> CompareProgress:
        return CompareProgress(confs, sys.stderr, workers=args.workers, shown=args.progress)

    return run_compare(args, get_engine(), view)
