"""`vspec fuzz --coverage`: the branch coverage of the actions and plugins a campaign
reached, the user's plugins dirs included, and a clear error without coverage.py."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from vspec.cli import main
from vspec.fuzz.reach import ModuleReach, ranges, report_lines

ROOT = Path(__file__).resolve().parents[2]


def _argv(tmp_path: Path, *extra: str) -> list[str]:
    out, db = str(tmp_path / "findings"), str(tmp_path / "db")
    return [
        *["fuzz", "--coverage", "--examples", "12", "--seed", "1"],
        "--out",
        out,
        "--database",
        db,
        *extra,
    ]


@pytest.mark.usefixtures("isolated_registry")
def test_coverage_covers_builtins_and_the_users_plugins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A fresh copy: its module bodies run under coverage, as a user's would.
    plugins = tmp_path / "plugins"
    shutil.copytree(ROOT / "examples" / "plugins", plugins)
    space = str(ROOT / "examples" / "fuzz-space.yaml")
    assert main(_argv(tmp_path, "--plugins-dir", str(plugins), "--space", space)) == 0
    out = capsys.readouterr().out
    table = {line.split()[0]: line.split()[1:] for line in out.splitlines() if "/" in line}
    assert "vspec/actions/allocate" in table and "vspec/plugins/gang" in table
    user = table[(plugins / "dedicated_nodes").resolve().as_posix()]
    assert int(user[0].split("/")[1]) > 0  # its branches are counted
    assert float(user[2]) > 0.0
    total = next(line for line in out.splitlines() if line.strip().startswith("TOTAL"))
    assert 0.0 < float(total.split()[2]) < 100.0
    assert "  not reached in " in out  # the worst modules' lines


def test_coverage_without_coverage_py_says_how_to_get_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "coverage", None)  # import coverage fails
    assert main(_argv(tmp_path, "--space", "seed")) == 2
    err = capsys.readouterr().err
    assert "--coverage needs coverage.py: pip install 'vspec[coverage]'" in err
    assert "Traceback" not in err


def test_report_folds_line_runs_and_shows_the_worst_modules() -> None:
    assert ranges([7, 1, 2, 3, 9, 10]) == "1-3, 7, 9-10"
    full = ModuleReach("vspec/plugins/a", 10, 0, 4, 4, (), ())
    poor = ModuleReach("vspec/plugins/b", 10, 3, 4, 1, (5, 6, 7), ((6, 7), (3, -1)))
    lines = report_lines([full, poor])
    assert lines[-2] == "  not reached in vspec/plugins/b: lines 5-7"
    assert lines[-1] == "    and one way only: 3->exit"
    total = next(line for line in lines if line.strip().startswith("TOTAL"))
    assert total.split()[1:3] == ["5/8", "62.5"]
    assert not any("not reached in vspec/plugins/a" in line for line in lines)


def _covered(out: str, module: str) -> int:
    row = next(line for line in out.splitlines() if line.split()[:1] == [module])
    return int(row.split()[1].split("/")[0])


def test_runs_with_a_data_file_report_what_they_reached_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = str(tmp_path / "reach.data")
    seed_run = _argv(tmp_path, "--space", "seed")
    seed_run[seed_run.index("--coverage") + 1 : seed_run.index("--coverage") + 1] = [kept]
    assert main(seed_run) == 0
    first = capsys.readouterr().out
    assert _covered(first, "vspec/actions/preempt") == 0  # the seed conf has no preempt
    preempt_run = [a if a != "seed" else "preempt" for a in seed_run]
    assert main(preempt_run) == 0
    both = capsys.readouterr().out
    assert _covered(both, "vspec/actions/preempt") > 0
    assert _covered(both, "vspec/plugins/logprint") >= _covered(first, "vspec/plugins/logprint") > 0


def test_coverage_refuses_workers_whose_reach_it_cannot_see(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_argv(tmp_path, "--space", "seed", "--workers", "2")) == 2
    assert "--coverage measures one process" in capsys.readouterr().err
