"""vspec's front ends: the ``vspec`` command (:func:`command`, :func:`main`) and the pytest
plugin (:mod:`vspec.cli.pytest_plugin`).

This module is the command's one main: it builds the parser from one module per command
(``init``, ``run``, ``explain``, ``validate``, ``schema``, ``plugins``, ``engines``, ``fuzz``
and ``invariants``, ``compare``, ``diff``), runs the chosen handler and ends the process.
Exit status follows the spec contract (:mod:`vspec.cli.status`); bad input is reported
as ``file:line: key: message``, never as a traceback. A command's module is imported only
when it is chosen (or for help), and each defers its own imports to its handler, so
``vspec --help`` starts at once. The front ends are the top layer: they may import
anything in vspec, and nothing in vspec imports them.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from vspec.cli.escaping import Escaping
from vspec.cli.status import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE
from vspec.util.collector import tuned_collector


def command() -> NoReturn:
    """The ``vspec`` command (its console script, ``python -m vspec``)."""
    end(main)


def end(run: Callable[[], int]) -> NoReturn:
    """``run`` the command, then end the process with its status. What is alive then is
    frozen out of the cyclic collector first: the interpreter's exit would have it pass
    over, and free, every object the run kept, memory the process's end frees anyway
    (8% of the CPU of a one-spec ``vspec run`` and of a 1,100-pod one, 1.2 of W2's 4.3
    CPU-s, 7 of W3's 26). Frozen before the collector's usual thresholds come back, or
    they would set off one more pass over the run's objects (5% of a one-spec run's CPU).

    numpy's OpenBLAS starts a thread per core when numpy is imported, and those threads
    spin while it sets them up: half of the 0.15 CPU-s the import cost here, for
    element-wise arithmetic that never calls BLAS. The process is vspec's own, so one
    thread is its default; a user's setting is kept.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with tuned_collector():
        code = run()
        gc.freeze()
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Escaping(sys.stdout), Escaping(sys.stderr)
    try:
        with tuned_collector():
            code: int = args.handler(args)
    except KeyboardInterrupt:
        print("vspec: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader left early (`vspec schema | head`): silence the final flush.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    finally:
        sys.stdout, sys.stderr = streams
    return code


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line. With ``command`` one of :data:`_COMMANDS`, only that command's
    module is imported and its arguments declared: it is the only one the line can be
    parsed as, and declaring the others (and importing the modules that declare them) was
    1% of a one-spec ``vspec run``. Anything else (help, a bad command) gets them all."""
    from vspec import __version__

    parser = argparse.ArgumentParser(
        prog="vspec", description="Declarative policy tests for the Volcano batch scheduler."
    )
    parser.add_argument("--version", action="version", version=f"vspec {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = [_COMMANDS[command]] if command in _COMMANDS else dict.fromkeys(_COMMANDS.values())
    for module in chosen:
        importlib.import_module(f"vspec.cli.{module}").add_cli(commands)
    return parser


# Each command's module (an ``add_cli(commands)`` that declares it and sets its handler),
# in the order help lists them.
_COMMANDS = {
    "init": "init",
    "run": "run",
    "explain": "explain",
    "validate": "validate",
    "schema": "schema",
    "plugins": "plugins",
    "engines": "engines",
    "fuzz": "fuzz",
    "invariants": "fuzz",
    "compare": "compare",
    "diff": "diff",
}
