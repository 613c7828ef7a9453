"""`vspec fuzz`'s output: a progress line only on a terminal, its files in the
project's cache directory (said in --help and at the start), and a summary that says
what was exercised and checked, also when nothing was found."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from vspec.cli import main
from vspec.engines import get_engine
from vspec.fuzz import CACHE_DIR
from vspec.fuzz.runner import Fuzzer, FuzzSpace
from vspec.fuzz.strategies import ClusterBounds, ConfSpace
from vspec.harness import attribution

GANG = {
    "actions": "enqueue, allocate",
    "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]}],
}


def test_no_progress_lines_in_a_log_and_one_redrawn_line_on_a_terminal() -> None:
    space = FuzzSpace(ConfSpace(fixed=GANG), ClusterBounds(max_nodes=2, max_jobs=2), max_cycles=1)
    for live in (False, True):
        out = io.StringIO()
        Fuzzer(space, get_engine(), Path("unused"), None, out, live=live).run(
            seconds=None, examples=25, seed_value=3
        )
        text = out.getvalue()
        if live:
            assert "\r\x1b[Kfuzz: " in text and "\n" not in text  # drawn over itself
            assert text.endswith("\r\x1b[K")  # and cleared at the end
        else:
            assert text == ""


def test_the_cache_is_the_projects_and_the_summary_says_what_was_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    (tmp_path / "pyproject.toml").write_text("")
    work = tmp_path / "sub" / "dir"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    argv = ["fuzz", "--space", "seed", "--examples", "15", "--seed", "1", "--out", "found"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    cache = tmp_path / CACHE_DIR
    assert f"example database {cache / 'hypothesis' / 'vspec-fuzz'}" in err
    assert "\nfuzz: " not in err  # no progress lines: stderr is not a terminal
    assert not (work / ".hypothesis").exists() and not (tmp_path / ".hypothesis").exists()
    lines = out.splitlines()
    assert lines[0].endswith("; 0 finding(s)")
    assert lines[1].startswith("  examples that bound a pod: ")
    assert "evicted one: " in lines[1]
    assert lines[2].startswith("  invariants checked (examples): ")
    assert "gang-atomicity 15" in lines[2]


def test_help_states_the_cache_directory(capsys: pytest.CaptureFixture[str]) -> None:
    assert CACHE_DIR == attribution.CACHE_DIR
    with pytest.raises(SystemExit):
        main(["fuzz", "--help"])
    assert f"{CACHE_DIR}/hypothesis/vspec-fuzz" in " ".join(capsys.readouterr().out.split())


def test_hypothesis_keeps_its_files_in_the_given_home_for_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hypothesis import configuration

    from vspec.fuzz.runner import hypothesis_home

    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    with hypothesis_home(tmp_path / "home"):
        assert configuration.storage_directory("constants").path == tmp_path / "home" / "constants"
    assert configuration.storage_directory("x").path != tmp_path / "home" / "x"
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "mine"))
    with hypothesis_home(tmp_path / "home"):  # the user's own setting is kept
        assert configuration.storage_directory("x").path.parent != tmp_path / "home"
