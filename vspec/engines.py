"""The engines a front-end can hand to the harness, by name.

Front-ends (the CLI, the pytest plugin, ``vspec fuzz``) pick an engine here and pass it
down; nothing below them imports an engine. The engine's code is imported on first use,
so that starting the CLI or pytest costs nothing until a spec runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vspec.errors import VspecError
from vspec.model.engine import ENGINE_NAMES, Engine

if TYPE_CHECKING:
    from vspec.framework.recorder import Recorder

DEFAULT_ENGINE = "python"
__all__ = ["DEFAULT_ENGINE", "ENGINE_NAMES", "get_engine"]


def get_engine(name: str = DEFAULT_ENGINE, *, recorder: Recorder | None = None) -> Engine:
    """The engine called ``name``, telling ``recorder`` what it decides (the live
    progress line); a name no engine has is a :class:`VspecError`."""
    if name == "python":
        from vspec.framework.engine import PythonEngine

        return PythonEngine() if recorder is None else PythonEngine(recorder=recorder)
    raise VspecError(f"unknown engine {name!r} (known: {', '.join(ENGINE_NAMES)})")
