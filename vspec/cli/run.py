"""``vspec run``: run the specs in files and directories, with pytest-style progress, the
failures and a summary on stdout, and optionally a JUnit XML file, an HTML report and a
live progress line (:mod:`vspec.cli.live`). Imports the harness, the engine and the
report when the command runs, not when the parser is built.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from vspec.cli.campaign import shard
from vspec.cli.escaping import Escaping
from vspec.cli.plugin_dirs import load_plugins, plugins_dir_option
from vspec.cli.status import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE

if TYPE_CHECKING:
    from rich.live import Live

    from vspec.cli.live import LiveState
    from vspec.harness.runner import RunReport, SpecOutcome
    from vspec.model.engine import Engine
    from vspec.model.spec import Spec
    from vspec.report.page import HtmlReport

    Commands = argparse._SubParsersAction[argparse.ArgumentParser]

T = TypeVar("T")

_PROGRESS_CHAR = {
    "passed": ".",
    "failed": "F",
    "error": "E",
    "skipped": "s",
    "xfailed": "x",
    "xpassed": "X",
}


def add_cli(commands: Commands) -> None:
    run = commands.add_parser("run", help="run the specs in files and directories")
    run.add_argument("paths", nargs="+", metavar="PATH", help="spec files or directories")
    run.add_argument("-k", dest="keyword", metavar="EXPR", help="select specs by name and tags")
    run.add_argument("--junit-xml", type=Path, metavar="FILE", help="write a JUnit XML report")
    run.add_argument("--html", type=Path, metavar="FILE", help="write an HTML report with pictures")
    run.add_argument("--seed", type=int, metavar="N", help="override every spec's seed")
    run.add_argument(
        "--timeout", type=_seconds, metavar="SECONDS", help="fail a spec that runs longer"
    )
    run.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="one line per spec, then its CPU seconds and each invariant's",
    )
    run.add_argument(
        "--shard",
        type=shard,
        metavar="K/N",
        help="run only the K-th of N equal shares of the spec files (N CI jobs, one each)",
    )
    run.add_argument(
        "--klog-header",
        action="store_true",
        help="show captured log lines as the scheduler prints them (I1201 08:00:00.000000 ...)",
    )
    plugins_dir_option(run)
    _engine_options(run)
    run.set_defaults(handler=_run)


def _engine_options(parser: argparse.ArgumentParser) -> None:
    from vspec.model.engine import ENGINE_NAMES

    parser.add_argument(
        "--engine",
        choices=ENGINE_NAMES,
        help="python: vspec's model of Volcano (default, or [tool.vspec] engine); "
        "volcano: Volcano's own scheduler code, built with Go on first use (minutes)",
    )
    parser.add_argument(
        "--volcano-version",
        metavar="VERSION",
        help="the Volcano release: the one vspec's engine models (v1.10.0 or v1.11.0) "
        "and the one the volcano engine builds from the Go module proxy "
        "(default: [tool.vspec] volcano-version, else v1.11.0)",
    )
    parser.add_argument(
        "--volcano-source",
        type=Path,
        metavar="DIR",
        help="build the volcano engine from this Volcano source tree (your fork) instead",
    )


def _seconds(text: str) -> float:
    """A time limit: a positive, finite number of seconds (not -1, nan or inf)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _chosen_engine(
    args: argparse.Namespace, html: HtmlReport | None, state: LiveState | None
) -> Engine:
    """The command line's engine over the project's (the first path's pyproject). The
    real engine is built here, before any spec runs, so that a missing Go or a refused
    version is one error, not every spec's."""
    from vspec.engines import EngineChoice, get_engine
    from vspec.errors import SpecError
    from vspec.harness.settings import ProjectSettings, project_settings

    try:
        project = project_settings(args.paths[0])
    except SpecError:
        project = ProjectSettings()  # each spec reports its project's mistake, located
    choice = EngineChoice.of(project, args.engine, args.volcano_version, args.volcano_source)
    if choice.name == "python":
        # The HTML report's engine has its own recorder; the live line then shows no detail.
        if html is None:
            return get_engine(recorder=state, choice=choice)
        from vspec.model.versions import DEFAULT_VERSION, gates_for

        html.engine.volcano_version = choice.volcano_version or DEFAULT_VERSION
        gates_for(html.engine.volcano_version)  # an unmodelled release is refused here
        return html.engine
    if html is not None:
        from vspec.errors import VspecError

        raise VspecError("--html records vspec's own engine only; drop it with --engine volcano")
    from vspec.engines.volcano import VolcanoEngine

    engine = get_engine(choice=choice)
    if isinstance(engine, VolcanoEngine):
        engine.linked()
    return engine


def _run(args: argparse.Namespace) -> int:
    from vspec.errors import VspecError
    from vspec.harness.keyword import KeywordError, compile_keyword
    from vspec.harness.runner import run_paths

    if not load_plugins(args):
        return EXIT_USAGE
    try:
        compile_keyword(args.keyword or "")
        if args.junit_xml is not None:
            from vspec.harness.junit import check_writable

            check_writable(args.junit_xml)
    except (KeywordError, VspecError) as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    out = _Output()
    progress = _Progress(out, verbose=args.verbose)
    html = _html_report(args.html)
    live, state = _live(args.paths)
    on_outcome: list[Callable[[SpecOutcome], None]] = [progress]
    before: list[Callable[[Spec], None]] = []
    if html is not None:
        on_outcome.append(html.add)
        before.append(html.before)
    if state is not None:
        on_outcome.append(state.after)
        before.append(state.before)
    try:
        engine = _chosen_engine(args, html, state)
    except VspecError as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with live if live is not None else contextlib.nullcontext():
        # Interrupts (Ctrl-C, SIGTERM) end the run with the specs done so far.
        report = run_paths(
            args.paths,
            engine=engine,
            keyword=args.keyword,
            seed=args.seed,
            timeout=args.timeout,
            on_outcome=_each(on_outcome),
            before_spec=_each(before) if before else None,
            klog_header=args.klog_header,
            shard=args.shard,
        )
        progress.end()
    code = report.exit_code
    try:
        _print_report(report, out, verbose=args.verbose)
    finally:
        # Whatever happened to the terminal, the report files are written.
        if html is not None:
            from vspec.harness.report import summary

            try:
                html.write(summary(report.counts(), report.duration))
            except VspecError as exc:
                print(f"vspec: error: {exc}", file=sys.stderr)
                code = EXIT_USAGE
        if args.junit_xml is not None:
            from vspec.harness.junit import write_junit

            try:
                write_junit(report, args.junit_xml)
            except VspecError as exc:
                print(f"vspec: error: {exc}", file=sys.stderr)
                code = EXIT_USAGE
    if out.failure is not None:
        print(f"vspec: error: cannot write the output: {out.failure}", file=sys.stderr)
        code = max(code, EXIT_FAILED)
    if report.interrupted:
        print("vspec: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return code


def _html_report(path: Path | None) -> HtmlReport | None:
    if path is None:
        return None
    from vspec.report.page import HtmlReport

    return HtmlReport(path)


def _each(callbacks: Sequence[Callable[[T], None]]) -> Callable[[T], None]:
    def call(item: T) -> None:
        for callback in callbacks:
            callback(item)

    return call


def _live(paths: Sequence[str]) -> tuple[Live | None, LiveState | None]:
    """The live progress line (spec, cycle, action, tasks placed; a counter with an
    estimate), only when stdout is a terminal. rich draws it: it keeps a line at the
    bottom of a terminal while other output scrolls above it, which hand-written ANSI
    codes would have to reimplement."""
    if not sys.stdout.isatty():
        return None, None
    from vspec.cli.live import LiveState, live_display
    from vspec.harness.runner import spec_files

    state = LiveState(files=len(spec_files(paths, [])))
    raw = sys.stdout.stream if isinstance(sys.stdout, Escaping) else sys.stdout
    live = live_display(state, raw)
    return (live, state) if live is not None else (None, None)


def _print_report(report: RunReport, out: _Output, *, verbose: bool) -> None:
    from vspec.harness.report import failure_text, headline, summary

    failing = [o for o in report.outcomes if o.failing]
    if failing:
        out.write("\n=== failures ===\n")
    for outcome in failing:
        if outcome.invalid:
            out.write("\n".join(outcome.messages) + "\n")
            continue
        out.write(f"\n{headline(outcome)}\n")
        text = failure_text(outcome, tracebacks=verbose)
        out.write("\n".join(f"  {line}" if line else "" for line in text.splitlines()) + "\n")
    for problem in report.problems:
        print(f"vspec: error: {problem}", file=sys.stderr)
    for warning in report.warnings:
        print(f"vspec: warning: {warning}", file=sys.stderr)
    out.write(f"\n{summary(report.counts(), report.duration, warnings=len(report.warnings))}\n")
    out.flush()


class _Output:
    """stdout that cannot end a run: a full disk or a reader that left (``| head``) stops
    the output, remembered in ``failure``, and the specs and the report file go on.
    Written through whatever ``sys.stdout`` is at the time (the live line's redirection
    while it is shown), escaped first, since the live line's console writes raw."""

    def __init__(self) -> None:
        self.failure: str | None = None

    def write(self, text: str) -> None:
        from vspec.harness.terminal import printable

        if self.failure is None:
            try:
                sys.stdout.write(printable(text))
            except OSError as exc:
                self._failed(exc)

    def flush(self) -> None:
        if self.failure is None:
            try:
                sys.stdout.flush()
            except OSError as exc:
                self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        self.failure = exc.strerror or str(exc)
        # What is still buffered would fail again at exit, with a traceback.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class _Progress:
    """pytest-style progress: a line per file with a character per spec, or with ``-v``
    a line per spec."""

    def __init__(self, out: _Output, *, verbose: bool) -> None:
        self.out = out
        self.verbose = verbose
        self.file: str | None = None

    def __call__(self, outcome: SpecOutcome) -> None:
        if self.verbose:
            from vspec.harness.report import cost_line, headline

            self.out.write(f"{headline(outcome)} ({outcome.duration:.2f}s)\n")
            for line in [cost_line(outcome), *outcome.aside]:
                if line:
                    self.out.write(f"    {line}\n")
            return
        if outcome.location.file != self.file:
            if self.file is not None:
                self.out.write("\n")
            self.file = outcome.location.file
            self.out.write(f"{self.file} ")
        self.out.write(_PROGRESS_CHAR[outcome.status.value])
        self.out.flush()

    def end(self) -> None:
        if self.file is not None:
            self.out.write("\n")
