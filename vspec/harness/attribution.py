"""Whose error it is: an error found in a file a spec uses names the spec.

An error located in an included cluster file, a scheduler conf or a ConfigMap is reported
with the spec that uses it (several specs may share the file, and only one may be run).
A file outside the spec's project (``include: /etc/passwd``) is named with its line, but
its content is not quoted: an error message would otherwise echo another file's keys and
values into a terminal or a CI log.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from vspec.errors import InvalidFile, Location, SpecError, VspecError, each_error
from vspec.harness.yamlload import Document

PROJECT_MARKERS = ("pyproject.toml", ".git")


def attributed(error: SpecError, spec: Document) -> SpecError:
    """``error`` of the spec ``spec``, each part located in another file attributed; the
    whole is located at the spec when a part lies elsewhere, so it is listed with it."""
    parts = [_attributed(e, spec) for e in each_error(error)]
    if all(p is q for p, q in zip(parts, each_error(error), strict=True)):
        return error
    return InvalidFile(parts, spec.locate())


def _attributed(error: VspecError, spec: Document) -> SpecError:
    where = error.location
    if where is None or _same_file(where.file, spec.file):
        return error if isinstance(error, SpecError) else SpecError(error.message, where)
    data = spec.data if isinstance(spec.data, dict) else {}
    name = data.get("name")
    user = f"spec {name!r}" if isinstance(name, str) else "the spec"
    used_by = f"{user} at {spec.file}:{spec.locate().line}"
    if not _inside(where.file, project_root(spec.file)):
        named = _naming(where.file, spec)
        return SpecError(
            f"invalid, in {where.file}:{where.line}, a file outside the project of {user}, "
            f"named here (its content is not shown)",
            named or spec.locate(),
        )
    return SpecError(f"{error.message} (used by {used_by})", where)


def _naming(file: str, spec: Document) -> Location | None:
    """Where the spec names ``file`` (or the include that leads to it): an entry of
    ``cluster.include``, or ``scheduler``; None when it names it nowhere it can tell."""
    data = spec.data if isinstance(spec.data, dict) else {}
    cluster = data.get("cluster")
    include = cluster.get("include") if isinstance(cluster, dict) else None
    entries = [include] if isinstance(include, str) else include
    places: list[tuple[tuple[str | int, ...], object]] = [(("scheduler",), data.get("scheduler"))]
    if isinstance(include, str):
        places.append((("cluster", "include"), include))
    elif isinstance(entries, list):
        places += [(("cluster", "include", i), entry) for i, entry in enumerate(entries)]
    base = Path(spec.file).parent
    for path, target in places:
        if isinstance(target, str) and _same_file(str(base / target), file):
            return spec.locate(path)
    # Reached through an include of an include: the spec's include list.
    return spec.locate(("cluster", "include")) if include is not None else None


CACHE_DIR = ".vspec"


def cache_dir(directory: Path) -> Path:
    """The cache of the project around ``directory`` (fuzzing's example database,
    Hypothesis' files): ``.vspec/`` in the project's root, the same from any of its
    subdirectories, never a new directory in whichever one a command ran in."""
    return _project_root(os.path.realpath(directory)) / CACHE_DIR


def project_root(spec_file: str) -> Path:
    """The nearest directory above the spec with a ``pyproject.toml`` or ``.git``; the
    spec's own directory when there is none."""
    return _project_root(os.path.realpath(Path(spec_file).parent))


@lru_cache(maxsize=256)
def _project_root(directory: str) -> Path:
    here = Path(directory)
    for candidate in (here, *here.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
    return here


def _same_file(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def _inside(file: str, root: Path) -> bool:
    return Path(os.path.realpath(file)).is_relative_to(root)
