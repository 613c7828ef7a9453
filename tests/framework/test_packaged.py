"""Packaged entry points are found as importlib.metadata finds them."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from vspec.framework.packaged import EntryPoint, _from_importlib, entry_points

GROUPS = ("vspec.actions", "vspec.plugins", "console_scripts")


def dist(root: Path, directory: str, text: str | None) -> None:
    info = root / directory
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Name: {directory.partition('-')[0]}\nVersion: 1\n")
    if text is not None:
        (info / "entry_points.txt").write_text(text)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    dist(
        first,
        "vspec_ext-1.0.dist-info",
        "# a comment\nstray = before:any_section\n[vspec.plugins]\n"
        "mine = ext.plugins:Mine [extra]\n\n[vspec.actions]\n  act=ext.actions:Act\n",
    )
    # The same project under another spelling: the first one listed wins.
    dist(first, "Vspec.Ext-2.0.egg-info", "[vspec.plugins]\nshadowed = ext.old:Old\n")
    dist(first, "other-3.dist-info", "[console_scripts]\nother = other.cli:main\n")
    dist(first, "bare-1.dist-info", None)
    # A later path entry's copy of a project is shadowed; a new project is not.
    dist(second, "vspec_ext-0.9.dist-info", "[vspec.plugins]\nold = ext.old:Old\n")
    dist(second, "more-1.egg-info", "[vspec.plugins]\nmore = more:Plugin\n")
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second)])
    return first, second


def test_the_entry_points_importlib_metadata_finds(site: tuple[Path, Path]) -> None:
    found = entry_points(GROUPS)
    assert found == _from_importlib(GROUPS)
    # One of the two spellings of vspec_ext, whichever the directory lists first.
    first_of_ext, more = found["vspec.plugins"]
    assert more == EntryPoint("more", "more:Plugin")
    if first_of_ext == EntryPoint("mine", "ext.plugins:Mine [extra]"):
        assert found["vspec.actions"] == [EntryPoint("act", "ext.actions:Act")]
    else:
        assert first_of_ext == EntryPoint("shadowed", "ext.old:Old")
        assert found["vspec.actions"] == []
    assert found["console_scripts"] == [EntryPoint("other", "other.cli:main")]


def test_a_zip_on_the_path_is_left_to_importlib_metadata(
    site: tuple[Path, Path], tmp_path: Path
) -> None:
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped-1.dist-info/METADATA", "Name: zipped\nVersion: 1\n")
        zipped.writestr("zipped-1.dist-info/entry_points.txt", "[vspec.plugins]\nz = zipped:Z\n")
    sys.path.append(str(archive))
    found = entry_points(GROUPS)
    assert EntryPoint("z", "zipped:Z") in found["vspec.plugins"]
    assert found == _from_importlib(GROUPS)


def test_load_imports_the_named_object() -> None:
    assert EntryPoint("x", "vspec.framework.packaged:EntryPoint.load").load() is EntryPoint.load
    assert (
        EntryPoint("x", "vspec.framework.packaged").load()
        is sys.modules["vspec.framework.packaged"]
    )
    with pytest.raises(ValueError, match="malformed"):
        EntryPoint("x", "not a value!").load()
