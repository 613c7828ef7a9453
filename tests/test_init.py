"""``vspec init``: a new project passes at once, by `vspec run`, pytest and tox's config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vspec.cli import main

REPO = Path(__file__).resolve().parents[1]
SEED_CONF = REPO / "fixtures" / "schedulers" / "seed-configmap.yaml"


def init(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main(["init", *(str(a) for a in argv)])
    out, err = capsys.readouterr()
    return code, out, err


def pytest_in(project: Path) -> subprocess.CompletedProcess[str]:
    """pytest as a user runs it in the project: its own rootdir, vspec's plugin found
    through the installed entry point."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_a_new_project_passes_under_vspec_and_pytest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "policies"
    code, out, err = init(capsys, project)
    assert (code, err) == (0, "")
    for name in ("pyproject.toml", "tox.ini", ".gitignore", "specs/first.yaml"):
        assert f"wrote {project / name}" in out
    spec = (project / "specs" / "first.yaml").read_text()
    assert spec.startswith("# Your first vspec spec")
    assert 'actions: "enqueue, allocate, backfill"' in spec  # Volcano's default conf
    assert "default/hello: {phase: Running}" in spec
    assert "[tool.vspec]" in (project / "pyproject.toml").read_text()
    assert ".hypothesis/" in (project / ".gitignore").read_text()
    assert main(["run", str(project / "specs")]) == 0
    assert "1 passed" in capsys.readouterr().out
    ran = pytest_in(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout


def test_tox_runs_vspec_and_pytest_on_vspec_from_where_it_was_installed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only tox's reading of the file: installing vspec into a new environment takes
    # minutes and the package index, which a unit test has neither of.
    assert init(capsys, tmp_path)[0] == 0
    shown = subprocess.run(
        [sys.executable, "-m", "tox", "config", "-e", "specs", "-k", "deps", "commands"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert "vspec run specs" in shown.stdout and "pytest" in shown.stdout
    # `vspec` on PyPI is another project: never the bare name
    assert "deps = vspec @ " in shown.stdout or "deps = vspec==" in shown.stdout


def test_the_users_configmap_is_copied_and_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = init(capsys, tmp_path, "--scheduler", SEED_CONF)
    assert (code, err) == (0, "")
    assert (tmp_path / SEED_CONF.name).read_text() == SEED_CONF.read_text()
    spec = (tmp_path / "specs" / "first.yaml").read_text()
    assert "scheduler: ../seed-configmap.yaml" in spec
    assert main(["run", "-v", str(tmp_path / "specs")]) == 0
    capsys.readouterr()
    # the seed's conf logs through logprint: the spec ran on it, not on the default
    assert main(["explain", str(tmp_path / "specs" / "first.yaml")]) == 0
    assert "binpack" in capsys.readouterr().out


def test_nothing_is_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tox.ini").write_text("[tox]\n")
    code, _, err = init(capsys, tmp_path)
    assert code == 2
    assert f"not overwriting {tmp_path / 'tox.ini'}" in err
    assert (tmp_path / "tox.ini").read_text() == "[tox]\n"
    assert not (tmp_path / "pyproject.toml").exists()


def test_a_missing_or_bad_configmap_is_an_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = init(capsys, tmp_path / "p", "--scheduler", tmp_path / "nope.yaml")
    assert code == 2
    assert "nope.yaml: no such file" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text('actions: "enqueue, alocate"\ntiers: []\n')
    code, _, err = init(capsys, tmp_path / "q", "--scheduler", bad)
    assert code == 2
    assert "bad.yaml:1" in err and "alocate" in err
    assert not (tmp_path / "q" / "pyproject.toml").exists()
