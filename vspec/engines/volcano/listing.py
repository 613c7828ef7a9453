"""``vspec engines``: what each engine is, and which builds of the real one are cached."""

from __future__ import annotations

import json

from vspec.engines.volcano.build import DEFAULT_VERSION, EngineBuildError, cache_root, find_go


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
