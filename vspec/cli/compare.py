"""``vspec compare``: its command line. The handler imports the comparison
(:mod:`vspec.report.compare`) when the command runs, so that building the parser
imports no timeline code; this module imports only the shared ``--plugins-dir`` option.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vspec.cli.plugin_dirs import plugins_dir_option, with_plugins


def add_cli(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    compare = commands.add_parser(
        "compare",
        help="run one workload under two scheduler confs and compare the metrics",
        description="Run the timeline of a workload file under two scheduler configurations "
        "(conf files or ConfigMaps) and print their metrics side by side.",
    )
    compare.add_argument("confs", nargs=2, metavar="CONF", type=Path, help="conf file or ConfigMap")
    compare.add_argument("--workload", required=True, type=Path, metavar="FILE")
    compare.add_argument("--seed", type=int, default=0, metavar="N", help="draws and tie-breaks")
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


def _compare(args: argparse.Namespace) -> int:
    from vspec.engines import get_engine
    from vspec.report.compare import run_compare

    return run_compare(args, get_engine())
