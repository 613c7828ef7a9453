"""``vspec engines``: what each engine is, and which builds of the real one are cached."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from vspec.engines.volcano.build import (
    DEFAULT_VERSION,
    EngineBuildError,
    cache_root,
    find_go,
    program_digest,
)


def describe() -> str:
    lines = [
        "python   vspec's model of Volcano v1.11.0 (default; needs nothing)",
        f"volcano  Volcano's own scheduler, built with Go (default release {DEFAULT_VERSION})",
    ]
    try:
        go, version = find_go()
        lines.append(f"         Go: {go} ({version})")
    except EngineBuildError as exc:
        lines.append(f"         Go: {exc.message}")
    builds = sorted((cache_root() / "volcano").glob("*/build.json"))
    if not builds:
        lines.append(f"         no build cached under {cache_root() / 'volcano'}")
    for info in builds:
        facts = json.loads(info.read_text())
        lines.append(
            f"         built: {facts['target']} with {facts['go']} "
            f"in {facts['seconds']} s -> {info.parent}"
        )
    return "\n".join(lines)


def stale_builds() -> list[Path]:
    """Builds this vspec will never use again: made from other program sources (by an
    earlier vspec), or left unfinished."""
    current = program_digest()
    stale = []
    for home in sorted((cache_root() / "volcano").glob("*")):
        info = home / "build.json"
        if not home.is_dir():
            continue
        if not info.is_file() or json.loads(info.read_text()).get("program") != current:
            stale.append(home)
    return stale


def prune() -> str:
    """Remove the stale builds; says what it removed."""
    removed = stale_builds()
    for home in removed:
        shutil.rmtree(home, ignore_errors=True)
    return f"removed {len(removed)} stale build(s) under {cache_root() / 'volcano'}"
