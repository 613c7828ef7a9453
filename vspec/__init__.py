"""vspec: a declarative policy testing harness for the Volcano batch scheduler.

Offers ``vspec.simulate`` (one run of vspec's Python engine), loaded on first use so
that the CLI and the pytest plugin start without importing the engine. The packages,
from the bottom up (README, "Layout"; the import-linter layers in pyproject.toml): the
leaves (errors, golang, gofmt, registries), model, api, k8s, util, framework, actions
and plugins (the Volcano-shaped core), then invariants, timeline, harness, explain,
report, engines, fuzz, and the front ends cli and extension. A package imports only
those below it.
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
