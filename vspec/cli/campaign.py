"""The options of a campaign that outgrows one process, which ``vspec run``, ``vspec fuzz``
and ``vspec diff`` share: ``--shard K/N`` (one of N machines), ``--workers N`` (processes
on this one) and ``--database DIR|redis://HOST:PORT`` (Hypothesis' example database the
processes and machines share). Each is checked as the command line is parsed, so that a
bad value is a usage error naming its flag, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vspec.harness.runner import Shard


def shard(text: str) -> Shard:
    """``--shard K/N``, with ``1 <= K <= N``."""
    from vspec.harness.runner import Shard

    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def workers(text: str) -> int:
    """``--workers N``: a positive number of processes."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of processes")
    return int(text)


def database(text: str) -> Path | str:
    """``--database``: a directory, or the URL of a Redis server (``redis://HOST:PORT``,
    optionally ``/DB``), kept as its text; a Redis URL needs the ``redis`` package."""
    if "://" not in text:
        return Path(text)
    from vspec.fuzz.campaign import redis_address

    try:
        redis_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if importlib.util.find_spec("redis") is None:
        raise argparse.ArgumentTypeError(
            f"{text}: a Redis database needs the redis package (pip install 'vspec[redis]')"
        )
    return text


def campaign_options(parser: argparse.ArgumentParser, *, what: str, database_help: str) -> None:
    """``--workers``, ``--shard`` and ``--database`` on ``parser``; ``what`` names what a
    campaign splits ("examples", "spec files and examples")."""
    parser.add_argument(
        "--workers",
        type=workers,
        default=1,
        metavar="N",
        help=f"run N processes on this machine, each its own share of the {what} (default 1)",
    )
    parser.add_argument(
        "--shard",
        type=shard,
        metavar="K/N",
        help=f"run the K-th of N machines' shares of the {what} (needs --seed, the same on "
        "each; with --database shared, what one finds the others replay and do not report)",
    )
    parser.add_argument(
        "--database",
        type=database,
        metavar="DIR|redis://HOST:PORT",
        help=database_help,
    )
