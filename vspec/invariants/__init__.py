"""The invariant catalogue: properties every outcome of the engine must have.

Specs are checked against every invariant whose configuration applies
(``Invariant.applies_to``), plus those ``expect.invariants`` requests, minus those it
disables; ``vspec fuzz`` checks them on generated clusters and configurations. The
definitions are in :mod:`vspec.invariants.checks` and docs/invariants.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from vspec.invariants import checks as _checks  # noqa: F401 - registers the invariants
from vspec.invariants.base import (
    Invariant,
    InvariantInputs,
    catalogue,
    get,
    run_checks,
    selected,
    unknown_names,
)
from vspec.model.conf import SchedulerConf
from vspec.model.engine import Engine
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult

__all__ = [
    "Invariant",
    "InvariantInputs",
    "catalogue",
    "check_invariants",
    "get",
    "run_checks",
    "selected",
    "unknown_names",
]


def check_invariants(
    conf: SchedulerConf,
    cluster_before: Cluster,
    result: SimulationResult,
    *,
    engine: Engine,
    requested: Iterable[str] = (),
    disabled: Iterable[str] = (),
    seed: int = 0,
    now: datetime | None = None,
    cycles: int = 1,
    verbosity: int = 3,
) -> list[str]:
    """The violations of ``result`` as ``invariant <name>: <message>`` lines.

    ``engine``, ``seed``, ``now``, ``cycles`` and ``verbosity`` must be those of the run:
    the ``deterministic`` invariant re-runs it, ``logprint-correct`` needs the verbosity.
    An unknown name in ``requested`` or ``disabled`` is itself reported.
    """
    inputs = InvariantInputs(conf, cluster_before, seed, now, cycles, verbosity, engine=engine)
    found = run_checks(inputs, result, requested=requested, disabled=disabled)
    return [
        f"invariants: {m}" if name == "unknown" else f"invariant {name}: {m}"
        for name, messages in found.items()
        for m in messages
    ]
