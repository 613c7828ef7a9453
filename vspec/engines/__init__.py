"""The engines a front-end can hand to the harness, by name.

Front-ends (the CLI, the pytest plugin, ``vspec fuzz``) pick an engine here and pass it
down; nothing below them imports an engine. ``python`` is vspec's re-implementation of
Volcano v1.11.0, and of v1.10.0 where they differ (:mod:`vspec.framework.engine`);
``volcano`` is Volcano's own scheduler code, linked by a Go program
(:mod:`vspec.engines.volcano`). An engine's code is imported on first use, so that
starting the CLI or pytest costs nothing until a spec runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vspec.errors import VspecError
from vspec.model.engine import ENGINE_NAMES, Engine

if TYPE_CHECKING:
    from vspec.framework.recorder import Recorder
    from vspec.harness.settings import ProjectSettings

DEFAULT_ENGINE = "python"
__all__ = ["DEFAULT_ENGINE", "ENGINE_NAMES", "EngineChoice", "get_engine"]


@dataclass(frozen=True)
class EngineChoice:
    """Which engine a run uses and which Volcano release: the one vspec's engine models
    (``volcano_version``), or for the real one, the one it links: a released
    ``volcano_version`` from the Go module proxy, or a ``volcano_source`` tree."""

    name: str = DEFAULT_ENGINE
    volcano_version: str | None = None
    volcano_source: Path | None = None

    @classmethod
    def of(
        cls,
        settings: ProjectSettings,
        name: str | None = None,
        volcano_version: str | None = None,
        volcano_source: Path | None = None,
    ) -> EngineChoice:
        """The command line's choice over the project's ``[tool.vspec]``."""
        return cls(
            name or settings.engine,
            volcano_version or settings.volcano_version,
            volcano_source or settings.volcano_source,
        )


def get_engine(
    name: str = DEFAULT_ENGINE,
    *,
    recorder: Recorder | None = None,
    choice: EngineChoice | None = None,
) -> Engine:
    """The engine called ``name`` (or ``choice``'s), telling ``recorder`` what it decides
    (the live progress line; vspec's engine only); a name no engine has is a
    :class:`VspecError`."""
    if choice is not None:
        name = choice.name
    if name == "python":
        from vspec.framework.engine import PythonEngine
        from vspec.model.versions import DEFAULT_VERSION as MODELLED

        modelled = (choice.volcano_version if choice is not None else None) or MODELLED
        if recorder is None:
            return PythonEngine(volcano_version=modelled)
        return PythonEngine(recorder=recorder, volcano_version=modelled)
    if name == "volcano":
        from vspec.engines.volcano import VolcanoEngine
        from vspec.engines.volcano.build import DEFAULT_VERSION, Target

        version = choice.volcano_version if choice is not None else None
        source = choice.volcano_source if choice is not None else None
        return VolcanoEngine(Target(version or DEFAULT_VERSION, source))
    raise VspecError(f"unknown engine {name!r} (known: {', '.join(ENGINE_NAMES)})")
