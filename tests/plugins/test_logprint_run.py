"""The seed's logprint through ``vspec run``: its finding is one warning per run, the
project's ``[tool.vspec.invariants]`` settings apply, and ``--klog-header`` prints the
captured lines as the scheduler does."""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vspec.cli import main
from vspec.framework import registry
from vspec.framework.log import klog_header
from vspec.model.result import LogLine, Severity

REPO = Path(__file__).resolve().parents[2]
SEED_CONF = REPO / "fixtures" / "schedulers" / "seed-configmap.yaml"


def _spec(name: str, *, bind_count: int = 1, verbosity: int = 3) -> str:
    return textwrap.dedent(
        f"""\
        name: {name}
        scheduler: {SEED_CONF}
        now: "2026-12-01T08:24:27Z"
        verbosity: {verbosity}
        cluster:
          nodes: [{{name: n1, allocatable: {{cpu: 4, memory: 8Gi}}}}]
          jobs:
          - name: job1
            minAvailable: 1
            tasks: [{{name: w, replicas: 1, requests: {{cpu: 1}}}}]
        expect:
          bindCount: {bind_count}
        """
    )


@pytest.fixture
def own_registry() -> Iterator[None]:
    with registry.isolated():
        yield


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory of its own, so that this repository's pyproject does not apply."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    for i in range(3):
        (tmp_path / "specs" / f"s{i}.yaml").write_text(_spec(f"spec {i}"))
    return tmp_path


def test_the_seed_finding_is_one_warning_per_run(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = project / "out.xml"
    assert main(["run", "specs", "--junit-xml", str(junit)]) == 0
    out, err = capsys.readouterr()
    # Once, at the first spec that shows it.
    assert err.count("the logprint plugin logs") == 1
    assert "vspec: warning: specs/s0.yaml:1: logprint-correct: the logprint plugin" in err
    assert "3 passed, 1 warning in" in out
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    warnings = [p.get("value", "") for p in suite.iterfind("properties/property")]
    assert len(warnings) == 1 and "%!s(MISSING)" in warnings[0]
    assert suite.get("failures") == "0"


def test_project_can_disable_an_invariant(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.vspec.invariants]\ndisable = ["logprint-correct"]\n'
    )
    assert main(["run", "specs"]) == 0
    out, err = capsys.readouterr()
    assert "warning" not in out + err


def test_warn_only_reports_a_violation_without_failing(
    project: Path, capsys: pytest.CaptureFixture[str], own_registry: None
) -> None:
    # A user plugin replaces the built-in logprint, inside this test's own registry.
    # It logs a ready line without the details: logprint-correct is broken.
    plugins = project / "plugins"
    plugins.mkdir()
    (plugins / "liar.py").write_text(
        textwrap.dedent(
            """\
            from vspec.extension import Plugin, register_plugin

            @register_plugin
            class Liar(Plugin):
                name = "logprint"

                def on_session_open(self, ssn):
                    line = "Job default/job1 is ready"
                    ssn.add_print_fn(self.name, lambda jobs: ssn.log.v(1, line))
            """
        )
    )
    settings = '[tool.vspec]\nplugins-dir = "plugins"\n'
    (project / "pyproject.toml").write_text(settings)
    # A plugin named like a built-in replaces it only where the spec says so.
    s0 = project / "specs" / "s0.yaml"
    s0.write_text(s0.read_text() + "replaceBuiltins: [logprint]\n")
    assert main(["run", "specs/s0.yaml"]) == 1
    assert "invariant logprint-correct: cycle 0: ready line of default/job1" in (
        capsys.readouterr().out
    )
    (project / "pyproject.toml").write_text(
        settings + '[tool.vspec.invariants]\nwarn-only = ["logprint-correct"]\n'
    )
    assert main(["run", "specs/s0.yaml"]) == 0
    err = capsys.readouterr().err
    assert "warning: specs/s0.yaml:1: invariant logprint-correct (warn-only): cycle 0: ready" in err


@pytest.mark.parametrize(
    ("table", "error"),
    [
        ('disable = ["logprint-corect"]', "disable: unknown invariant 'logprint-corect' (did you"),
        ("warn-only = 'deterministic'", "warn-only must be a list of invariant names"),
        ('silence = ["deterministic"]', "unknown key 'silence' (known: disable, enable"),
    ],
)
def test_bad_invariant_settings_are_located_errors(
    project: Path, capsys: pytest.CaptureFixture[str], table: str, error: str
) -> None:
    (project / "pyproject.toml").write_text(f"[tool.vspec.invariants]\n{table}\n")
    assert main(["run", "specs"]) == 2
    out = capsys.readouterr().out
    assert f"{project / 'pyproject.toml'}: tool.vspec.invariants: " in out and error in out


def test_klog_header_renders_the_tail_as_the_scheduler_prints_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "specs" / "s0.yaml").write_text(_spec("fails", bind_count=5, verbosity=1))
    assert main(["run", "specs/s0.yaml", "--klog-header"]) == 1
    out = capsys.readouterr().out
    # The spec's clock, process 1, the seed's logprint.go line.
    assert "\n    I1201 08:24:27.000000       1 logprint.go:53] Job default/job1 is pending" in out
    assert main(["run", "specs/s0.yaml"]) == 1
    assert "\n    Job default/job1 is pending, try" in capsys.readouterr().out
    # A line whose Go source vspec does not know: klog's own placeholder.
    (project / "specs" / "s0.yaml").write_text(_spec("fails", bind_count=5))
    assert main(["run", "specs/s0.yaml", "--klog-header"]) == 1
    assert "I1201 08:24:27.000000       1 ???:1] Close Session" in capsys.readouterr().out


def test_klog_header_format() -> None:
    line = LogLine(3, Severity.WARNING, "text", 0, "allocate.go:56")
    moment = datetime(2026, 12, 1, 8, 24, 27, 123456, tzinfo=UTC)
    assert klog_header(line, moment) == "W1201 08:24:27.123456       1 allocate.go:56] text"
