"""The engines a front-end can hand to the harness, by name.

Front-ends (the CLI, the pytest plugin, ``vspec fuzz``) pick an engine here and pass it
down; nothing below them imports an engine. The engine's code is imported on first use,
so that starting the CLI or pytest costs nothing until a spec runs.
"""

from __future__ import annotations

from vspec.errors import VspecError
from vspec.model.engine import ENGINE_NAMES, Engine

DEFAULT_ENGINE = "python"
__all__ = ["DEFAULT_ENGINE", "ENGINE_NAMES", "get_engine"]


def get_engine(name: str = DEFAULT_ENGINE) -> Engine:
    """The engine called ``name``; a name no engine has is a :class:`VspecError`."""
    if name == "python":
        from vspec.framework.engine import PythonEngine

        return PythonEngine()
    raise VspecError(f"unknown engine {name!r} (known: {', '.join(ENGINE_NAMES)})")
