"""The ``vspec`` command: run, validate and describe specs.

Exit status follows the spec contract: 0 when every spec passed (skips and xfails
included), 1 when any failed, 2 for bad input (an invalid spec, a path that does not
exist, a named file that holds no spec, a bad command line). Bad input is reported as
``file:line: key: message``, never as a traceback. Imports are deferred to the command
that needs them, so ``vspec --help`` starts at once.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO, TypeVar

from vspec.util.collector import tuned_collector

if TYPE_CHECKING:
    from rich.live import Live

    from vspec.cli.live import LiveState
    from vspec.harness.runner import RunReport, SpecOutcome
    from vspec.model.engine import Engine
    from vspec.model.spec import Spec
    from vspec.report.page import HtmlReport

    _Commands = argparse._SubParsersAction[argparse.ArgumentParser]

T = TypeVar("T")
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

_PROGRESS_CHAR = {
    "passed": ".",
    "failed": "F",
    "error": "E",
    "skipped": "s",
    "xfailed": "x",
    "xpassed": "X",
}


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
    sys.stdout, sys.stderr = _Escaping(sys.stdout), _Escaping(sys.stderr)
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


class _Escaping(io.TextIOBase):
    """A text stream that writes control characters as escapes (``\\x1b``): spec names,
    file names and messages come from users' files, and an ESC in one could rewrite the
    terminal (or a CI log) it is printed to."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        from vspec.harness.terminal import printable

        return self.stream.write(printable(text))

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def writable(self) -> bool:
        return True


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line. With ``command`` one of :data:`_COMMANDS`, only that command's
    arguments are declared: it is the only one the line can be parsed as, and declaring
    the others (and importing the modules that declare them) was 1% of a one-spec
    ``vspec run``. Anything else (help, a bad command) gets them all."""
    from vspec import __version__

    parser = argparse.ArgumentParser(
        prog="vspec", description="Declarative policy tests for the Volcano batch scheduler."
    )
    parser.add_argument("--version", action="version", version=f"vspec {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    if command in _COMMANDS:
        _COMMANDS[command](commands)
        return parser
    for add in _COMMANDS.values():
        add(commands)
    _add_fuzz(commands)
    _add_compare(commands)
    return parser


def _add_run(commands: _Commands) -> None:
    run = commands.add_parser("run", help="run the specs in files and directories")
    run.add_argument("paths", nargs="+", metavar="PATH", help="spec files or directories")
    run.add_argument("-k", dest="keyword", metavar="EXPR", help="select specs by name and tags")
    run.add_argument("--junit-xml", type=Path, metavar="FILE", help="write a JUnit XML report")
    run.add_argument("--html", type=Path, metavar="FILE", help="write an HTML report with pictures")
    run.add_argument("--seed", type=int, metavar="N", help="override every spec's seed")
    run.add_argument(
        "--timeout", type=_seconds, metavar="SECONDS", help="fail a spec that runs longer"
    )
    run.add_argument("-v", "--verbose", action="store_true", help="one line per spec")
    run.add_argument(
        "--klog-header",
        action="store_true",
        help="show captured log lines as the scheduler prints them (I1201 08:00:00.000000 ...)",
    )
    _plugins_dir_option(run)
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
        help="the Volcano release the volcano engine builds from the Go module proxy "
        "(default v1.11.0, the version vspec models)",
    )
    parser.add_argument(
        "--volcano-source",
        type=Path,
        metavar="DIR",
        help="build the volcano engine from this Volcano source tree (your fork) instead",
    )


def _add_explain(commands: _Commands) -> None:
    explain = commands.add_parser("explain", help="say why each task of a spec ended where it did")
    explain.add_argument("spec", type=Path, metavar="SPEC", help="a spec file")
    explain.add_argument("--task", metavar="NS/NAME", help="explain this task only")
    explain.add_argument("--job", metavar="NS/NAME", help="explain the tasks of this job")
    explain.add_argument("--cycle", type=int, metavar="N", help="only cycle N (0-based)")
    explain.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (default) or json"
    )
    explain.add_argument("-k", dest="keyword", metavar="EXPR", help="select specs of the file")
    explain.add_argument("--seed", type=int, metavar="N", help="override the spec's seed")
    _plugins_dir_option(explain)
    explain.set_defaults(handler=_explain)


def _add_validate(commands: _Commands) -> None:
    validate = commands.add_parser("validate", help="check specs without running them")
    validate.add_argument("paths", nargs="+", metavar="PATH")
    _plugins_dir_option(validate)
    validate.set_defaults(handler=_validate)


def _add_schema(commands: _Commands) -> None:
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


def _add_engines(commands: _Commands) -> None:
    engines = commands.add_parser("engines", help="list the engines and the real engine's builds")
    engines.set_defaults(handler=_engines)


def _add_plugins(commands: _Commands) -> None:
    plugins = commands.add_parser("plugins", help="list the actions and plugins with arguments")
    _plugins_dir_option(plugins)
    plugins.set_defaults(handler=_plugins)


# vspec's own commands, in the order help lists them (fuzz, invariants, compare follow).
_COMMANDS: dict[str, Callable[[_Commands], None]] = {
    "run": _add_run,
    "explain": _add_explain,
    "validate": _add_validate,
    "schema": _add_schema,
    "plugins": _add_plugins,
    "engines": _add_engines,
}


def _add_fuzz(commands: _Commands) -> None:
    from vspec.cli.fuzz import add_cli  # `vspec fuzz` and `vspec invariants`

    add_cli(commands)
    fuzz = commands.choices["fuzz"]
    _plugins_dir_option(fuzz)
    fuzz.set_defaults(handler=_with_plugins(fuzz.get_default("handler")))


def _add_compare(commands: _Commands) -> None:
    from vspec.cli.compare import add_cli as add_compare  # `vspec compare`

    add_compare(commands)
    compare = commands.choices["compare"]
    _plugins_dir_option(compare)
    compare.set_defaults(handler=_with_plugins(compare.get_default("handler")))


def _seconds(text: str) -> float:
    """A time limit: a positive, finite number of seconds (not -1, nan or inf)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _with_plugins(
    handler: Callable[[argparse.Namespace], int],
) -> Callable[[argparse.Namespace], int]:
    """Load the plugins dirs first, so user plugins and actions join the fuzzed space."""

    def run(args: argparse.Namespace) -> int:
        return handler(args) if _load_plugins(args, project=True) else EXIT_USAGE

    return run


def _plugins_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugins-dir",
        dest="plugins_dirs",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="import the plugins and actions of every *.py in DIR (repeatable); "
        "a spec's project's [tool.vspec] plugins-dir is imported too",
    )


def _load_plugins(args: argparse.Namespace, *, project: bool = False) -> bool:
    """Import the command line's plugins dirs, before any spec is read, and with
    ``project`` those of the current directory's pyproject (for the commands that read no
    spec; a spec's own project is read by the loader); False (after saying why) when one
    cannot be imported."""
    from vspec.errors import VspecError
    from vspec.harness.plugin_dirs import load_plugins_dirs, load_project_plugins
    from vspec.harness.settings import project_settings

    try:
        if project:
            load_project_plugins(project_settings())
        load_plugins_dirs(args.plugins_dirs, origin="--plugins-dir")
    except VspecError as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return False
    return True


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
        return html.engine if html is not None else get_engine(recorder=state)
    if html is not None:
        from vspec.errors import VspecError

        raise VspecError("--html records vspec's own engine only; drop it with --engine volcano")
    from vspec.engines.volcano import VolcanoEngine

    engine = get_engine(choice=choice)
    if isinstance(engine, VolcanoEngine):
        engine.linked()
    return engine


def _engines(_args: argparse.Namespace) -> int:
    from vspec.engines.volcano.listing import describe

    print(describe())
    return 0


def _run(args: argparse.Namespace) -> int:
    from vspec.errors import VspecError
    from vspec.harness.keyword import KeywordError, compile_keyword
    from vspec.harness.runner import run_paths

    if not _load_plugins(args):
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
    raw = sys.stdout.stream if isinstance(sys.stdout, _Escaping) else sys.stdout
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
            from vspec.harness.report import headline

            self.out.write(f"{headline(outcome)} ({outcome.duration:.2f}s)\n")
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


def _explain(args: argparse.Namespace) -> int:
    import dataclasses
    import json

    from vspec.errors import SpecError, VspecError
    from vspec.explain.run import Selection, explain_spec
    from vspec.explain.text import render
    from vspec.harness.keyword import KeywordError, compile_keyword
    from vspec.harness.runner import load_specs, spec_keywords

    if not _load_plugins(args):
        return EXIT_USAGE
    if args.spec.is_dir() or not args.spec.exists():
        print(f"vspec: error: {args.spec}: not a spec file", file=sys.stderr)
        return EXIT_USAGE
    try:
        select = compile_keyword(args.keyword or "")
    except KeywordError as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    problems: list[str] = []
    specs, errors = load_specs(args.spec, named=True, problems=problems, seed=args.seed)
    for error in errors:
        print("\n".join(error.messages), file=sys.stderr)
    for problem in problems:
        print(f"vspec: error: {problem}", file=sys.stderr)
    if errors or problems:
        return EXIT_USAGE
    selection = Selection(task=args.task, job=args.job, cycle=args.cycle)
    documents = []
    code = EXIT_OK
    for spec in specs:
        if not select(spec_keywords(spec, args.spec.resolve().parent)):
            continue
        try:
            explanation = explain_spec(spec, selection, seed=args.seed)
        except VspecError as exc:
            where = "" if exc.location is not None else f"{spec.location}: "
            print(f"vspec: error: {where}{exc}", file=sys.stderr)
            code = EXIT_USAGE if isinstance(exc, SpecError) else EXIT_FAILED
            continue
        if explanation.error is not None:
            print(f"vspec: error: {spec.location}: {explanation.error}", file=sys.stderr)
            code = EXIT_FAILED
        if args.format == "json":
            documents.append(dataclasses.asdict(explanation))
        else:
            print(render(explanation))
    if args.format == "json":
        print(json.dumps(documents, indent=2))
    return code


def _validate(args: argparse.Namespace) -> int:
    from vspec.harness.runner import load_specs, spec_files

    if not _load_plugins(args):
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


def _schema(args: argparse.Namespace) -> int:
    import json

    from vspec.harness.schema import SCHEMAS

    print(json.dumps(SCHEMAS[args.kind](), indent=2))
    return EXIT_OK


def _plugins(args: argparse.Namespace) -> int:
    from vspec.errors import VspecError

    if not _load_plugins(args, project=True):
        return EXIT_USAGE

    from vspec.framework.registry import registered_actions, registered_plugins

    try:
        sections = (("Actions", registered_actions()), ("Plugins", registered_plugins()))
    except VspecError as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    width = max((len(e.name) for _, entries in sections for e in entries), default=0)
    for title, entries in sections:
        print(f"{title}:")
        for entry in entries:
            print(f"  {entry.name:<{width}}  {entry.doc}".rstrip())
            for arg in entry.arguments:
                default = arg.default or '""'
                line = f"      {arg.name} ({arg.type}, default {default})"
                print(line + (f": {arg.help}" if arg.help else ""))
    return EXIT_OK
