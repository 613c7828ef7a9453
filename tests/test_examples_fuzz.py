"""Issue 7: the example plugin and action fuzz cleanly in a config space that names them."""

from __future__ import annotations

from pathlib import Path

import pytest

from vspec.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.usefixtures("isolated_registry")
def test_examples_fuzz_space_finds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "fuzz",
            "--plugins-dir",
            str(ROOT / "examples" / "plugins"),
            "--space",
            str(ROOT / "examples" / "fuzz-space.yaml"),
            "--examples",
            "40",
            "--seed",
            "1",
            "--out",
            str(tmp_path / "findings"),
            "--database",
            str(tmp_path / "db"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "40 examples" in out and "0 finding(s)" in out
    assert not (tmp_path / "findings").exists() or not any((tmp_path / "findings").iterdir())
