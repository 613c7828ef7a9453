"""The campaign options of vspec fuzz, vspec diff and vspec run: a bad value is a usage
error naming its flag, with no traceback; two workers of one machine report a failure
both meet once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vspec.cli import main

from .test_redis import PLANTED, SPACE

BAD = [
    ("--workers", "0"),
    ("--workers", "two"),
    ("--shard", "3/2"),
    ("--shard", "0/2"),
    ("--database", "redis://:6379"),
    ("--database", "redis://localhost:port"),
    ("--database", "http://localhost:6379"),
]
# vspec run takes --shard only: pytest-xdist is the way to one machine's cores.
CASES = [(c, o, v) for c in (["fuzz"], ["diff", "specs"]) for o, v in BAD] + [
    (["run", "specs"], o, v) for o, v in BAD if o == "--shard"
]


@pytest.mark.parametrize(("command", "option", "value"), CASES)
def test_a_bad_value_is_a_usage_error_naming_its_flag(
    command: list[str], option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        main([*command, option, value])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: " in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["fuzz", "diff"])
def test_a_shard_needs_the_campaigns_seed(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--space", "seed", "--shard", "1/2"]) == 2
    assert "--shard needs --seed" in capsys.readouterr().err


def test_a_redis_url_without_the_redis_package_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "redis" else real(name, *a)
    )
    with pytest.raises(SystemExit):
        main(["fuzz", "--database", "redis://127.0.0.1:6379"])
    err = capsys.readouterr().err
    assert "argument --database: redis://127.0.0.1:6379: a Redis database needs the redis " in err
    assert "pip install 'vspec[redis]'" in err


def test_a_redis_server_that_does_not_answer_is_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("redis", reason="the redis package (pip install 'vspec[redis]')")
    monkeypatch.chdir(tmp_path)
    argv = ["fuzz", "--examples", "1", "--database", "redis://127.0.0.1:1", "--seed", "1"]
    for extra in ([], ["--workers", "2"]):
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err
        assert "--database redis://127.0.0.1:1: the Redis server does not answer" in err
        assert "Traceback" not in err


def test_two_workers_report_a_failure_they_both_meet_once(tmp_path: Path) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "planted.py").write_text(PLANTED)
    (tmp_path / "space.yaml").write_text(SPACE)
    argv = [sys.executable, "-m", "vspec", "fuzz", "--plugins-dir", "plugins", "--space"]
    argv += ["space.yaml", "--seed", "3", "--examples", "400", "--workers", "2"]
    argv += ["--database", "db", "--out", "found"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith("; 1 finding(s)")
    assert [line for line in lines if "crash-planted" in line] == [
        line for line in lines if line.startswith("  crash-planted: found/crash-planted-")
    ]
    assert len(list((tmp_path / "found").iterdir())) == 1
    # Each worker's lines are its own, prefixed with its name.
    said = [line for line in done.stderr.splitlines() if "crash-planted:" in line]
    assert said and all(line.startswith(("[worker 1/2] ", "[worker 2/2] ")) for line in said)
    finished = [line for line in done.stderr.splitlines() if "] done: " in line]
    assert sorted(line.split("]")[0] for line in finished) == ["[worker 1/2", "[worker 2/2"]
    # Both met it (a common failure): the one that claimed it second says so.
    assert len([line for line in said if "fails here too; found by worker" in line]) == 1
