"""The package's layout holds: no import circle between its rooms (packages and top-level
modules) nor inside any package but framework/, and nothing loose at the top level but
the entry points, the public extension API and the Go-semantics leaves."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import vspec

ROOT = Path(__file__).resolve().parent.parent
ALLOWED_TOP_LEVEL = {"__init__", "__main__", "errors", "extension", "registries", "golang", "gofmt"}


def test_only_the_entry_points_the_api_and_the_leaves_are_loose_modules() -> None:
    package = Path(vspec.__file__).parent
    loose = {path.stem for path in package.glob("*.py")}
    assert loose <= ALLOWED_TOP_LEVEL, sorted(loose - ALLOWED_TOP_LEVEL)


def test_the_picture_draws_without_an_import_circle(tmp_path: Path) -> None:
    out = tmp_path / "architecture.svg"
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "architecture.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    for room in ("cli/", "fuzz/", "engines/", "harness/", "timeline/", "framework/", "model/"):
        assert f">{room}<" in text
    assert 'stroke="#d0342c"' not in text  # no arrow of a circle
