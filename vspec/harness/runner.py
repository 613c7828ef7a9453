"""Running specs: one spec gives one :class:`SpecOutcome`; many paths give one :class:`RunReport`.

Everything runs in one process, spec after spec. A spec that cannot be loaded, or whose
run crashes the engine, becomes that spec's error outcome and the others still run: one
bad file must not hide what the rest of a suite says.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from vspec.errors import (
    Location,
    SpecError,
    SpecTimeout,
    Unsupported,
    UserInterrupt,
    VspecError,
    each_error,
    timed_out,
)
from vspec.harness.expect import check, failure_hints
from vspec.harness.keyword import compile_keyword
from vspec.harness.plugin_dirs import spec_scope
from vspec.harness.settings import InvariantSettings, project_settings, read_once
from vspec.invariants import Carry, evaluate_invariants
from vspec.model.engine import Engine
from vspec.model.result import SimulationResult
from vspec.model.spec import Spec

LOG_TAIL = 20  # captured log lines kept with a failure
REFIRE = 0.1  # seconds between the alarms after a spec's time ran out


class Verdict(StrEnum):
    """How one spec ended (named apart from ``api.types.Status``, Volcano's plugin status)."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"


@dataclass
class SpecOutcome:
    """How one spec ended: what the terminal, the reports and the exit status say of it."""

    name: str
    location: Location
    status: Verdict
    messages: list[str] = field(default_factory=list)
    duration: float = 0.0
    seed: int = 0
    tags: list[str] = field(default_factory=list)
    reason: str = ""  # why it was skipped or expected to fail
    invalid: bool = False  # the spec itself is wrong (exit 2), not the engine's outcome
    log_tail: list[str] = field(default_factory=list)  # kept only when the spec fails
    log_total: int = 0
    traceback: str = ""  # an unexpected exception's traceback, for ``-v``
    hints: list[str] = field(default_factory=list)  # `vspec explain` commands for a failure
    warnings: list[str] = field(default_factory=list)  # the invariants' warnings, not failing it
    cpu_seconds: float = 0.0  # the spec's run and checks, in this process's CPU time
    # Each invariant's CPU seconds (summed over a timeline's sessions), for ``-v``.
    invariant_seconds: dict[str, float] = field(default_factory=dict)
    aside: list[str] = field(default_factory=list)  # invariants not checked for the user's code

    @property
    def failing(self) -> bool:
        return self.status in (Verdict.FAILED, Verdict.ERROR)


@dataclass
class RunReport:
    """Everything one run of many specs found: the outcomes, and the problems that
    belong to no spec."""

    outcomes: list[SpecOutcome] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # missing paths, files with no spec
    warnings: list[str] = field(default_factory=list)  # located, each once (Spec.warnings)
    root: Path = field(default_factory=Path.cwd)  # common root of the paths that were run
    duration: float = 0.0
    interrupted: bool = False  # stopped by Ctrl-C or SIGTERM; the outcomes so far are kept

    def counts(self) -> Counter[Verdict]:
        return Counter(o.status for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        """The contract's exit status: 2 for bad input, 1 for a failure, else 0."""
        if self.problems or any(o.invalid for o in self.outcomes):
            return 2
        return 1 if any(o.failing for o in self.outcomes) else 0


def execute(
    spec: Spec,
    *,
    engine: Engine,
    seed: int | None = None,
    timeout: float | None = None,
    klog_header: bool = False,
) -> SpecOutcome:
    """Run ``spec`` on ``engine`` and check its expectations: passed, failed or error
    (skip and xfail are :func:`run_spec`'s). ``klog_header`` keeps the log tail as the
    scheduler prints it (``I1201 08:24:27.000000       1 file.go:NN] ...``).

    Whatever the engine or a plugin raises, ``SystemExit`` and a plugin's own
    ``KeyboardInterrupt`` included, is this spec's error; only the user's interrupt
    goes through. ``timeout`` (seconds) is enforced with SIGALRM, so only in the main
    thread on POSIX; a spec over its time is reported as timed out and nothing else.
    """
    used_seed = spec.seed if seed is None else seed
    outcome = SpecOutcome(spec.name, spec.location, Verdict.PASSED, seed=used_seed, tags=spec.tags)
    start, cpu = time.perf_counter(), time.process_time()
    deadline = _Deadline(timeout)
    try:
        with deadline, spec_scope(spec):
            result, messages = _run_and_check(spec, engine, used_seed, outcome)
    except SpecTimeout:
        pass  # reported below, from the deadline itself
    except KeyboardInterrupt as exc:
        if _is_users(exc):
            raise
        _crashed(outcome, exc, invalid=False)
        outcome.traceback = _traceback_text()
    except Unsupported as exc:
        outcome.status, outcome.reason = Verdict.SKIPPED, exc.message
    except VspecError as exc:
        _crashed(outcome, exc, invalid=isinstance(exc, SpecError))
    except BaseException as exc:  # an engine bug, a plugin's sys.exit: this spec's error
        _crashed(outcome, exc, invalid=False)
        outcome.traceback = _traceback_text()
    else:
        if messages:
            outcome.status = Verdict.FAILED
            outcome.messages = messages
            outcome.hints = failure_hints(spec, messages, result)
            outcome.log_tail = _log_tail(spec, result, klog_header=klog_header)
            outcome.log_total = len(result.logs)
    if deadline.expired:
        # Whatever the expiry unwound into (a plugin's handler, a panic), time ran out.
        outcome.status, outcome.invalid, outcome.traceback = Verdict.ERROR, False, ""
        outcome.messages = [timed_out(deadline.seconds)]
        outcome.log_tail, outcome.log_total = [], 0
    outcome.duration = time.perf_counter() - start
    outcome.cpu_seconds = time.process_time() - cpu
    return outcome


def engine_release(engine: Engine) -> str | None:
    """The Volcano release ``engine`` runs: the one vspec's engine models, or the one the
    real engine links (a source tree's is the ``--volcano-version`` given with it);
    ``None`` for an engine that says neither."""
    version = getattr(engine, "volcano_version", None)
    if version is None:
        version = getattr(getattr(engine, "target", None), "version", None)
    return version if isinstance(version, str) else None


def _check_release(spec: Spec, engine: Engine) -> None:
    """A spec that names the releases it describes is skipped on another, with why."""
    if spec.volcano is None:
        return
    release = engine_release(engine)
    if release is not None and not spec.volcano.admits(release):
        raise Unsupported(
            f"the spec describes Volcano {spec.volcano.text}; this run's engine is {release}"
        )


def _log_tail(spec: Spec, result: SimulationResult, *, klog_header: bool) -> list[str]:
    tail = result.logs[-LOG_TAIL:]
    if not klog_header:
        return [line.text for line in tail]
    from vspec.framework.log import klog_header as header
    from vspec.framework.scheduler import SCHEDULE_PERIOD

    return [header(line, spec.now + line.cycle * SCHEDULE_PERIOD) for line in tail]


def _run_and_check(
    spec: Spec, engine: Engine, seed: int, outcome: SpecOutcome
) -> tuple[SimulationResult, list[str]]:
    """The result and the spec's failures; the invariants' warnings go to ``outcome``.
    The project's ``[tool.vspec.invariants]`` apply, under the spec's own requests and
    disables. A project that names its engine (``[tool.vspec] engine``) runs on no other.
    A spec with a timeline runs it (:mod:`vspec.harness.timeline_check`)."""
    _check_release(spec, engine)
    settings = project_settings(spec.location.file)
    wanted = settings.table.get("engine")
    if wanted is not None and wanted != engine.name:
        raise SpecError(
            f"the project's specs are for engine {wanted!r}; this run uses {engine.name!r}",
            settings.location("engine"),
        )
    carry = Carry()
    try:
        return _run_and_judge(spec, engine, seed, outcome, carry, settings.invariants)
    finally:
        outcome.invariant_seconds = carry.meter.seconds
        outcome.aside = list(carry.aside)


def _run_and_judge(
    spec: Spec,
    engine: Engine,
    seed: int,
    outcome: SpecOutcome,
    carry: Carry,
    project: InvariantSettings,
) -> tuple[SimulationResult, list[str]]:
    if spec.timeline is not None:
        from vspec.harness.timeline_check import run_timeline_spec

        return run_timeline_spec(spec, seed, engine, carry)
    result = simulate_spec(spec, engine, seed)
    verdict = evaluate_invariants(
        spec.scheduler,
        spec.cluster,
        result,
        engine=engine,
        requested=[*project.enable, *spec.expect.invariants],
        disabled=[
            *(n for n in project.disable if n not in spec.expect.invariants),
            *spec.expect.disabled_invariants,
        ],
        warn_only=project.warn_only,
        seed=seed,
        now=spec.now,
        cycles=spec.cycles,
        verbosity=spec.verbosity,
        carry=carry,
    )
    outcome.warnings = verdict.warnings
    return result, [*check(spec, result), *verdict.violations]


def simulate_spec(spec: Spec, engine: Engine, seed: int) -> SimulationResult:
    """``spec``'s cluster under its configuration, as the spec asks it to be run."""
    return engine.simulate(
        spec.scheduler,
        spec.cluster,
        seed=seed,
        now=spec.now,
        cycles=spec.cycles,
        verbosity=spec.verbosity,
        probes=spec.probes,
    )


def run_spec(
    spec: Spec,
    *,
    engine: Engine,
    seed: int | None = None,
    timeout: float | None = None,
    klog_header: bool = False,
) -> SpecOutcome:
    """Run ``spec`` honouring ``skip`` and ``xfail`` (an invalid spec is never excused)."""
    if spec.skip is not None:
        return SpecOutcome(
            spec.name,
            spec.location,
            Verdict.SKIPPED,
            seed=spec.seed if seed is None else seed,
            tags=spec.tags,
            reason=spec.skip,
        )
    outcome = execute(spec, engine=engine, seed=seed, timeout=timeout, klog_header=klog_header)
    if spec.xfail is not None and not outcome.invalid:
        outcome.status = Verdict.XPASSED if outcome.status is Verdict.PASSED else Verdict.XFAILED
        outcome.reason = spec.xfail
    return outcome


@dataclass(frozen=True)
class Shard:
    """``--shard K/N``: the K-th of N machines runs every N-th spec file, so that N
    runs of one command cover every file exactly once (CI matrices)."""

    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``K/N`` with 1 <= K <= N; a ValueError saying so otherwise."""
        k, sep, n = text.partition("/")
        if sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n):
            return cls(int(k), int(n))
        raise ValueError(f"{text!r} is not K/N with 1 <= K <= N (e.g. 2/4)")

    def takes(self, position: int) -> bool:
        """Whether the file at ``position`` of the run's files is this shard's."""
        return position % self.count == self.index - 1

    def split(self, parts: int) -> list[Shard]:
        """This shard's share cut in ``parts`` (its processes): the shards of ``count *
        parts`` that together take what this one takes, each once."""
        return [Shard(self.index + self.count * part, self.count * parts) for part in range(parts)]


def run_paths(
    paths: Sequence[str | os.PathLike[str]],
    *,
    engine: Engine,
    keyword: str | None = None,
    seed: int | None = None,
    timeout: float | None = None,
    on_outcome: Callable[[SpecOutcome], None] | None = None,
    before_spec: Callable[[Spec], None] | None = None,
    klog_header: bool = False,
    shard: Shard | None = None,
) -> RunReport:
    """Discover, load and run every spec under ``paths``, in one process.

    ``before_spec`` is told of each spec about to run (the HTML report records it).
    The report's warnings hold each distinct warning once, located at the first spec
    that raised it (a finding about a plugin is the same for every spec using it).
    A ``KeyboardInterrupt`` ends the run early with the outcomes so far (the spec that was
    running counts as an error), so a report can still be written.
    Raises :class:`vspec.harness.keyword.KeywordError` for a malformed ``keyword``.
    """
    select = compile_keyword(keyword or "")
    start = time.perf_counter()
    report = RunReport(root=common_root(paths))

    def emit(outcome: SpecOutcome) -> None:
        report.outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    current: Spec | None = None
    seen: set[str] = set()  # the outcomes' warnings already in the report
    loaded = selected = 0
    try:
        with interrupts(), read_once():
            for position, (path, named) in enumerate(spec_files(paths, report.problems)):
                if shard is not None and not shard.takes(position):
                    continue
                specs, errors = load_specs(
                    path,
                    named=named,
                    problems=report.problems,
                    seed=seed,
                    check_names=engine.name != "volcano",
                )
                for error in errors:
                    emit(error)
                for spec in specs:
                    loaded += 1
                    report.warnings.extend(w for w in spec.warnings if w not in report.warnings)
                    if not keyword or select(spec_keywords(spec, report.root)):
                        selected += 1
                        current = spec
                        if before_spec is not None:
                            before_spec(spec)
                        outcome = run_spec(
                            spec, engine=engine, seed=seed, timeout=timeout, klog_header=klog_header
                        )
                        current = None
                        _add_warnings(report, outcome, seen)
                        emit(outcome)
    except KeyboardInterrupt:
        report.interrupted = True
        if current is not None:
            used = current.seed if seed is None else seed
            emit(
                SpecOutcome(
                    current.name, current.location, Verdict.ERROR, ["interrupted"], seed=used
                )
            )
    if keyword and not selected and not report.interrupted:
        report.problems.append(f"-k {keyword!r} matches none of the {loaded} specs")
    report.duration = time.perf_counter() - start
    return report


def _add_warnings(report: RunReport, outcome: SpecOutcome, seen: set[str]) -> None:
    loc = outcome.location
    for text in outcome.warnings:
        if text not in seen:
            seen.add(text)
            report.warnings.append(f"{loc.file}:{loc.line}: {text}" if loc.line else text)


def spec_files(
    paths: Sequence[str | os.PathLike[str]], problems: list[str]
) -> list[tuple[Path, bool]]:
    """The files to load, each once, with whether the user named it (then it must hold a
    spec); a path that does not exist, or a FIFO, device or symlink loop that is skipped,
    is recorded in ``problems`` and the others go on."""
    from vspec.harness.loader import discover

    files: list[tuple[Path, bool]] = []
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        skipped: list[SpecError] = []
        try:
            found = discover([path], skipped, seen)
        except SpecError as exc:
            problems.append(str(exc))
            continue
        problems.extend(str(e) for e in skipped)
        named = not path.is_dir()
        files.extend((file, named) for file in found)
    return files


def load_specs(
    path: Path,
    *,
    named: bool,
    problems: list[str],
    seed: int | None = None,
    check_names: bool = True,
) -> tuple[list[Spec], list[SpecOutcome]]:
    """The specs of one file, and an error outcome for each invalid one; ``seed``
    overrides each spec's seed for its generated cluster, as for its run.
    ``check_names``: the conf's actions and plugins must be registered in vspec (not
    for the real engine, whose Volcano build registers its own)."""
    from vspec.harness.loader import load_file

    try:
        loaded = load_file(path, check_names=check_names, seed=seed)
    except VspecError as exc:
        return [], [invalid_outcome(exc, path)]
    except KeyboardInterrupt as exc:
        if _is_users(exc):
            raise
        return [], [_load_crash(exc, path)]
    except BaseException as exc:  # a loader bug, a plugin module's sys.exit: not the others
        return [], [_load_crash(exc, path)]
    if not loaded.is_spec_file:
        if named:
            problems.append(f"{path}: holds no spec (no YAML document with a top-level 'name')")
        return [], []
    return loaded.specs, [
        invalid_outcome(err, path, name)
        for err, name in zip(loaded.errors, loaded.error_names, strict=True)
    ]


def _load_crash(exc: BaseException, path: Path) -> SpecOutcome:
    outcome = invalid_outcome(VspecError(f"cannot load: {type(exc).__name__}: {exc}"), path)
    outcome.traceback = _traceback_text()
    return outcome


def invalid_outcome(error: VspecError, path: Path, name: str | None = None) -> SpecOutcome:
    """An invalid spec's outcome, named by the ``name`` it gives itself, else by its line."""
    location = error.location or Location(str(path))
    if name is None:
        name = f"invalid spec (line {location.line})" if location.line else "invalid spec"
    messages = [str(e) if e.location else f"{path}: {e}" for e in each_error(error)]
    return SpecOutcome(name, location, Verdict.ERROR, messages, invalid=True)


def spec_keywords(spec: Spec, root: Path) -> list[str]:
    """What ``-k`` matches against: name, tags and the file's path below the root."""
    return [spec.name, *spec.tags, *relative_path(spec.location.file, root).parts]


def common_root(paths: Sequence[str | os.PathLike[str]]) -> Path:
    """The deepest directory holding every path (a file counts by its directory)."""
    dirs = [str(p if p.is_dir() else p.parent) for p in (Path(raw).resolve() for raw in paths)]
    return Path(os.path.commonpath(dirs)) if dirs else Path.cwd()


def relative_path(file: str, root: Path) -> Path:
    path = Path(file).resolve()
    try:
        return path.relative_to(root)
    except ValueError:
        return Path(path.name)


def _crashed(outcome: SpecOutcome, exc: BaseException, *, invalid: bool) -> None:
    outcome.status = Verdict.ERROR
    outcome.invalid = invalid
    if isinstance(exc, VspecError):
        text = str(exc) if exc.location is not None else f"{outcome.location}: {exc}"
    else:
        text = f"{outcome.location}: {type(exc).__name__}: {exc}{_where(exc)}"
    outcome.messages = [text]


def _traceback_text() -> str:
    """The exception being handled, as Python prints it (for ``-v``)."""
    import traceback

    return traceback.format_exc()


def _where(exc: BaseException) -> str:
    """`` (at vspec/plugins/drf.py:120)``: where the engine was when it raised."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


class _Deadline:
    """SIGALRM after ``seconds``, then again every :data:`REFIRE` seconds until the spec
    ends: plugin code that swallows one :class:`SpecTimeout` (``except BaseException``)
    meets the next. ``expired`` says whether time ran out, whatever was raised after."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds or 0.0
        self.expired = False
        self.armed = False
        self.previous: Any = None

    def __enter__(self) -> _Deadline:
        usable = (
            hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        )
        if self.seconds and usable:
            self.previous = signal.signal(signal.SIGALRM, self._expire)
            self.armed = True
            signal.setitimer(signal.ITIMER_REAL, self.seconds, REFIRE)
        return self

    def _expire(self, _signum: int, _frame: object) -> None:
        if self.armed:
            self.expired = True
            raise SpecTimeout(self.seconds)

    def __exit__(self, *_exc: object) -> None:
        if self.armed:
            self.armed = False  # first: an alarm still in flight now does nothing
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


@contextmanager
def interrupts() -> Iterator[None]:
    """Ctrl-C and SIGTERM (a supervisor's ``timeout``) raise :class:`UserInterrupt`
    inside: the run stops and reports the specs done so far. In the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _interrupt(_signum: int, _frame: object) -> None:
    raise UserInterrupt


def _is_users(exc: KeyboardInterrupt) -> bool:
    """The user's interrupt, not plugin code raising KeyboardInterrupt: under
    :func:`interrupts` only :class:`UserInterrupt` is; elsewhere (pytest) any is."""
    return isinstance(exc, UserInterrupt) or signal.getsignal(signal.SIGINT) is not _interrupt
