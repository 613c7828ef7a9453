"""vspec: a declarative policy testing harness for the Volcano batch scheduler.

``vspec.simulate`` is loaded on first use, so the CLI and the pytest plugin start
without importing the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vspec.framework.scheduler import simulate

__all__ = ["simulate"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "simulate":
        from vspec.framework.scheduler import simulate

        return simulate
    raise AttributeError(f"module 'vspec' has no attribute {name!r}")
