"""The entry points of the installed distributions (packaged actions and plugins), found
as ``importlib.metadata.entry_points`` finds them but without importing it.

Every ``vspec`` process looks them up, and importing ``importlib.metadata`` (with the
``email``, ``zipfile`` and ``csv`` modules it pulls in) took about 40 of the 250 CPU-ms
a one-spec ``vspec run`` costs; reading the few ``entry_points.txt`` files takes about
one. The search follows the standard library's (Python 3.11): each ``sys.path``
directory in order, its ``*.dist-info`` and ``*.egg-info`` directories grouped by
normalised project name in listing order, the first distribution of a name winning.
Anything else on the path (a zip file, an egg) or a meta path finder of another kind
that finds distributions is left to ``importlib.metadata`` itself.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from importlib import import_module
from importlib.machinery import PathFinder

_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
_INFO_SUFFIXES = (".dist-info", ".egg-info")


@dataclass(frozen=True)
class EntryPoint:
    """An installed distribution's entry point: what ``importlib.metadata.EntryPoint``
    holds that vspec uses."""

    name: str
    value: str  # "module:attr [extras]"

    def load(self) -> object:
        """The object named, as ``importlib.metadata.EntryPoint.load`` imports it."""
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"malformed entry point value {self.value!r}")
        module = import_module(match["module"])
        return reduce(getattr, filter(None, (match["attr"] or "").split(".")), module)


def entry_points(groups: Sequence[str]) -> dict[str, list[EntryPoint]]:
    """The entry points of each group, in the order ``importlib.metadata`` gives them."""
    found: dict[str, list[EntryPoint]] = {group: [] for group in groups}
    directories = _plain_path()
    if directories is None:
        return _from_importlib(groups)
    for text in _entry_point_files(directories):
        for group, name, value in _pairs(text):
            if group in found:
                found[group].append(EntryPoint(name, value))
    return found


def _plain_path() -> list[str] | None:
    """``sys.path`` as directories, or None when the standard search finds more there."""
    if any(
        hasattr(finder, "find_distributions") and finder is not PathFinder
        for finder in sys.meta_path
    ):
        return None
    directories = []
    for entry in sys.path:
        root = entry or "."
        if root.lower().endswith(".egg") or os.path.isfile(root):
            return None
        if os.path.isdir(root):
            directories.append(root)
    return directories


def _entry_point_files(directories: list[str]) -> list[str]:
    """The ``entry_points.txt`` of each distribution the standard search keeps."""
    seen: set[str] = set()
    texts = []
    for root in directories:
        try:
            children = os.listdir(root)
        except OSError:
            continue
        by_name: dict[str, list[str]] = {}
        for child in children:
            if child.lower().endswith(_INFO_SUFFIXES):
                stem = child.rpartition(".")[0].partition("-")[0]
                by_name.setdefault(_normalize(stem), []).append(child)
        for name, infos in by_name.items():
            if name in seen:
                continue
            seen.add(name)
            text = _read(os.path.join(root, infos[0], "entry_points.txt"))
            if text:
                texts.append(text)
    return texts


def _normalize(name: str) -> str:
    """PEP 503 normalisation with dashes as underscores (``Prepared.normalize``)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except OSError:
        return None


def _pairs(text: str) -> list[tuple[str, str, str]]:
    """(section, name, value) of each ``name = value`` line under a ``[section]``."""
    pairs = []
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section is not None:
            name, _, value = line.partition("=")
            pairs.append((section, name.strip(), value.strip()))
    return pairs


def _from_importlib(groups: Sequence[str]) -> dict[str, list[EntryPoint]]:
    from importlib.metadata import entry_points as standard

    return {group: [EntryPoint(e.name, e.value) for e in standard(group=group)] for group in groups}
