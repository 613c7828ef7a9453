"""pytest plugin: every spec in a YAML spec file is a test item.

Registered through the ``pytest11`` entry point, so ``pytest``, ``tox`` and pytest's own
options (``-k``, ``-m``, ``-n`` from pytest-xdist, ``--junit-xml``) work on specs. Items are
named by the spec's ``name`` and come in file order, so every xdist worker collects the
same list. A spec's tags become markers; ``skip`` and ``xfail`` become pytest's marks.
A failure shows the spec's mismatches and last log lines, not a Python traceback; an
invalid spec is an item that fails alone with its located message.

A spec's project settings (``[tool.vspec]`` of the nearest pyproject.toml above it:
plugins dirs, cluster mode) are read by the loader, as for ``vspec run``, and vspec's
Hypothesis profiles (``dev``, ``fuzz``) are registered when one is asked for, so
``--hypothesis-profile=fuzz`` works from anywhere.

Imports pytest at start and, once a spec file is collected, the harness, the report,
the engines and the fuzzer's Hypothesis profiles.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from vspec.engines import EngineChoice
    from vspec.errors import Location
    from vspec.harness.runner import SpecOutcome
    from vspec.model.engine import Engine
    from vspec.model.spec import Spec

# vspec is imported only once a YAML file is collected: an installed plugin must not slow
# down pytest runs that hold no spec.
_SUFFIXES = frozenset({".yaml", ".yml"})  # as vspec.harness.loader.discover
_REGISTERED_TAGS = pytest.StashKey[set[str]]()
_ENGINE = pytest.StashKey["Engine"]()
_PROFILES = frozenset({"dev", "fuzz"})  # vspec.fuzz.strategies.register_profiles' own
_SECTION = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("vspec").addoption(
        "--vspec-html",
        metavar="FILE",
        default=None,
        help="write an HTML report of the specs, with pictures of each run",
    )
    parser.getgroup("vspec").addoption(
        "--klog-header",
        action="store_true",
        default=False,
        help="show captured log lines as the scheduler prints them",
    )
    parser.getgroup("vspec").addoption(
        "--vspec-engine",
        choices=("python", "volcano"),
        default=None,
        help="run the specs on vspec's engine (python, default) or on Volcano's own code "
        "(volcano: built with Go on first use); default: [tool.vspec] engine",
    )
    parser.getgroup("vspec").addoption(
        "--volcano-version",
        metavar="VERSION",
        default=None,
        help="the Volcano release vspec's engine models (v1.10.0 or v1.11.0) and the "
        "volcano engine builds (default v1.11.0)",
    )
    parser.getgroup("vspec").addoption(
        "--volcano-source",
        metavar="DIR",
        default=None,
        help="build the volcano engine from this Volcano source tree instead",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before Hypothesis' plugin loads ``--hypothesis-profile``, and before any spec file
    is collected."""
    _register_profiles(config)
    html = config.getoption("--vspec-html", None)
    if html is not None and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_HtmlCollector(Path(html)), "vspec-html")


def _register_profiles(config: pytest.Config) -> None:
    """Only when one of vspec's profiles is asked for: registering loads one, and a pytest
    run of another project must keep its own Hypothesis settings."""
    try:
        chosen = config.getoption("--hypothesis-profile")
    except ValueError:  # Hypothesis' plugin is not active
        chosen = None
    if (chosen or os.environ.get("HYPOTHESIS_PROFILE")) in _PROFILES:
        from vspec.fuzz.strategies import register_profiles

        register_profiles()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> SpecFile | None:
    if file_path.suffix not in _SUFFIXES:
        return None
    spec_file: SpecFile = SpecFile.from_parent(parent, path=file_path)
    return spec_file


class SpecProblem(Exception):
    """Carries a spec's outcome to ``repr_failure``, which prints it in spec terms."""

    def __init__(self, outcome: SpecOutcome) -> None:
        super().__init__(outcome.messages[0] if outcome.messages else outcome.status.value)
        self.outcome = outcome


class SpecFailed(SpecProblem):
    """A spec ran and its outcome differs from ``expect`` (or the engine crashed)."""


class SpecInvalid(SpecProblem):
    """The spec itself is wrong; ``xfail`` (which expects :class:`SpecFailed`) never
    excuses it."""


class SpecFile(pytest.File):
    """A YAML file; it yields items only when it holds specs (other YAML is passed over)."""

    def collect(self) -> Iterator[pytest.Item]:
        from vspec.errors import VspecError
        from vspec.harness.loader import load_file
        from vspec.harness.runner import invalid_outcome
        from vspec.harness.terminal import printable

        try:
            loaded = load_file(self.path, check_names=_choice(self.config).name == "python")
        except VspecError as exc:
            yield InvalidSpecItem.from_parent(
                self, name="invalid spec", outcome=invalid_outcome(exc, self.path)
            )
            return
        if not loaded.is_spec_file:
            if self.session.isinitpath(self.path):
                raise self.CollectError(
                    f"{self.path}: holds no spec (no YAML document with a top-level 'name')"
                )
            return
        _register_tags(self.config, {tag for spec in loaded.specs for tag in spec.tags})
        items: list[tuple[int, pytest.Item]] = []
        for spec in loaded.specs:
            # Escaped: pytest prints item names raw, and a name may hold an ESC.
            item = SpecItem.from_parent(self, name=printable(spec.name), spec=spec)
            items.append((spec.location.line, item))
        for error, written in zip(loaded.errors, loaded.error_names, strict=True):
            outcome = invalid_outcome(error, self.path, written and printable(written))
            invalid = InvalidSpecItem.from_parent(self, name=outcome.name, outcome=outcome)
            items.append((outcome.location.line, invalid))
        items.sort(key=lambda pair: pair[0])
        yield from (item for _, item in items)


class SpecItem(pytest.Item):
    def __init__(self, *, spec: Spec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        for tag in spec.tags:
            if not tag.startswith("_"):  # pytest reserves underscored mark names
                self.add_marker(tag)
        if spec.skip is not None:
            self.add_marker(pytest.mark.skip(reason=spec.skip))
        if spec.xfail is not None:
            self.add_marker(pytest.mark.xfail(reason=spec.xfail, raises=SpecFailed))
        for warning in spec.warnings:  # e.g. a manifest of a kind Volcano ignores
            self.warn(pytest.PytestWarning(f"vspec: {warning}"))
        self.user_properties.append(("spec", spec.location.file))
        self.user_properties.append(("seed", spec.seed))

    def runtest(self) -> None:
        from vspec.harness.runner import Verdict, execute

        klog_header = self.config.getoption("klog_header")
        if self.config.getoption("--vspec-html") is None:
            outcome = execute(self.spec, engine=_engine(self.config), klog_header=klog_header)
        else:
            outcome = self._execute_recorded(klog_header=klog_header)
        # pytest's warnings summary lists each distinct text once, with the specs that
        # raised it; the JUnit report carries them as properties of the test case.
        for warning in outcome.warnings:
            self.warn(pytest.PytestWarning(f"vspec: {warning}"))
            self.user_properties.append(("vspec-warning", warning))
        if outcome.invalid:
            raise SpecInvalid(outcome)
        if outcome.failing:
            raise SpecFailed(outcome)
        if outcome.status is Verdict.SKIPPED:  # the engine cannot answer what it asks
            pytest.skip(outcome.reason)

    def _execute_recorded(self, *, klog_header: bool) -> SpecOutcome:
        """The run, recorded for the HTML report; its section rides on the test report
        (so that xdist workers send it to the controller, which writes the page)."""
        from vspec.harness.runner import execute
        from vspec.report.capture import RecordingEngine
        from vspec.report.page import spec_section

        engine = RecordingEngine()
        engine.arm(self.spec)
        outcome = execute(self.spec, engine=engine, klog_header=klog_header)
        self.stash[_SECTION] = spec_section(outcome, engine.take())
        return outcome

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, SpecProblem):
            from vspec.harness.report import failure_text

            return failure_text(excinfo.value.outcome, tracebacks=self.config.option.verbose > 0)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, _line0(self.spec.location), f"spec: {self.name}"


class InvalidSpecItem(pytest.Item):
    """Stands for a spec that could not be loaded, so it fails alone where it is."""

    def __init__(self, *, outcome: SpecOutcome, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outcome = outcome

    def runtest(self) -> None:
        raise SpecInvalid(self.outcome)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, SpecInvalid):
            from vspec.harness.report import failure_text

            return failure_text(excinfo.value.outcome)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, _line0(self.outcome.location), f"invalid spec: {self.name}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    section = item.stash.get(_SECTION, None)
    if section is not None and call.when == "call":
        report.vspec_html = section  # type: ignore[attr-defined]
    return report


class _HtmlCollector:
    """Gathers the report sections in the process that writes the page (xdist's
    controller, or the only process)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sections: list[str] = []
        self.failing: list[bool] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        section = getattr(report, "vspec_html", None)
        if isinstance(section, str):
            self.sections.append(section)
            self.failing.append(report.failed)

    def pytest_sessionfinish(self) -> None:
        from vspec.report.page import failing_first, write_page

        failed = sum(self.failing)
        summary = f"{failed} failed, {len(self.sections) - failed} passed (pytest)"
        write_page(self.path, failing_first(self.sections, self.failing), summary)


def _engine(config: pytest.Config) -> Engine:
    """The one engine of this pytest run, made when the first spec runs: the command
    line's choice over the rootdir's ``[tool.vspec]``."""
    engine = config.stash.get(_ENGINE, None)
    if engine is None:
        from vspec.engines import get_engine

        engine = config.stash[_ENGINE] = get_engine(choice=_choice(config))
    return engine


def _choice(config: pytest.Config) -> EngineChoice:
    """The command line's engine over the rootdir's ``[tool.vspec]`` (a mistake there is
    each spec's own error, located, not the run's)."""
    from vspec.engines import EngineChoice
    from vspec.errors import SpecError
    from vspec.harness.settings import ProjectSettings, project_settings

    source = config.getoption("volcano_source")
    try:
        project = project_settings(config.rootpath)
    except SpecError:
        project = ProjectSettings()
    return EngineChoice.of(
        project,
        config.getoption("vspec_engine"),
        config.getoption("volcano_version"),
        Path(source) if source else None,
    )


def _line0(location: Location) -> int | None:
    """pytest counts lines from 0; ``None`` when the line is unknown."""
    return location.line - 1 if location.line else None


def _register_tags(config: pytest.Config, tags: set[str]) -> None:
    """Tags become markers; registering them keeps ``--strict-markers`` runs clean."""
    known = config.stash.setdefault(_REGISTERED_TAGS, set())
    for tag in sorted(tags - known):
        config.addinivalue_line("markers", f"{tag}: vspec spec tag")
        known.add(tag)
