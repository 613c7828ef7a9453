"""The invariant catalogue: properties every outcome of the engine must have.

Specs are checked against every invariant whose configuration applies
(``Invariant.applies_to``), plus those ``expect.invariants`` requests, minus those it
disables; ``vspec fuzz`` checks them on generated clusters and configurations. The
definitions are in :mod:`vspec.invariants.checks` and docs/invariants.md.

May import the framework's registry and what is below the framework; it is handed the
engine to run (``deterministic`` runs a spec twice), never imports one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

from vspec.invariants import checks as _checks  # noqa: F401 - registers the invariants
from vspec.invariants import drf_victims as _drf_victims  # noqa: F401 - registers the invariants
from vspec.invariants import evictions as _evictions  # noqa: F401 - registers the invariants
from vspec.invariants import liveness as _liveness  # noqa: F401 - registers the invariants
from vspec.invariants import placement as _placement  # noqa: F401 - registers the invariants
from vspec.invariants import reclaiming as _reclaiming  # noqa: F401 - registers the invariants
from vspec.invariants import rules_beyond_core as _rules_beyond_core  # noqa: F401 - registers
from vspec.invariants.base import (
    SELECTING,
    SHARED,
    Carry,
    CostMeter,
    Invariant,
    InvariantInputs,
    catalogue,
    get,
    run_checks,
    run_findings,
    selected,
    unknown_names,
)
from vspec.invariants.yours import (
    judged_conf,
    stood_aside_message,
    unjudged,
    without_yours,
    your_names,
)
from vspec.model.conf import SchedulerConf
from vspec.model.engine import Engine
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult

__all__ = [
    "SELECTING",
    "SHARED",
    "Carry",
    "CostMeter",
    "Invariant",
    "InvariantInputs",
    "InvariantReport",
    "catalogue",
    "check_invariants",
    "evaluate_invariants",
    "get",
    "judged_inputs",
    "run_checks",
    "run_findings",
    "selected",
    "unknown_names",
]


@dataclass(frozen=True)
class InvariantReport:
    """What the invariants say about one run: ``violations`` fail the spec, ``warnings``
    (findings about the code under test, and the violations of warn-only invariants)
    are reported without failing it."""

    violations: list[str]
    warnings: list[str]
    # Which invariants stood aside for the user's code (vspec.invariants.yours), and why.
    aside: list[str] = field(default_factory=list)


def evaluate_invariants(
    conf: SchedulerConf,
    cluster_before: Cluster,
    result: SimulationResult,
    *,
    engine: Engine,
    requested: Iterable[str] = (),
    disabled: Iterable[str] = (),
    warn_only: Iterable[str] = (),
    seed: int = 0,
    now: datetime | None = None,
    cycles: int = 1,
    verbosity: int = 3,
    carry: Carry | None = None,
) -> InvariantReport:
    """The violations and warnings of ``result``, as ``invariant <name>: <message>`` lines.

    ``engine``, ``seed``, ``now``, ``cycles`` and ``verbosity`` must be those of the run:
    the ``deterministic`` invariant re-runs it, ``logprint-correct`` needs the verbosity.
    An unknown name in ``requested``, ``disabled`` or ``warn_only`` is itself a violation.
    ``carry`` sums each invariant's CPU seconds and keeps memos over many calls (a
    timeline's sessions).
    """
    inputs = judged_inputs(
        conf, cluster_before, seed, now, cycles, verbosity, engine=engine, carry=carry
    )
    yours = _unjudged(conf, carry) if inputs.run_conf is not None else []
    asked = _Asked(list(requested), list(disabled), set(warn_only))
    try:
        if carry is None:
            return _evaluate(inputs, result, asked, yours)
        # What no invariant's own measure holds.
        report = carry.meter.charged(SELECTING, _evaluate, inputs, result, asked, yours)
        carry.aside.update(dict.fromkeys(report.aside))
        return report
    finally:
        inputs.forget()


def judged_inputs(
    conf: SchedulerConf,
    cluster_before: Cluster,
    seed: int,
    now: datetime | None,
    cycles: int,
    verbosity: int,
    *,
    engine: Engine,
    thorough: bool = False,
    carry: Carry | None = None,
) -> InvariantInputs:
    """The inputs of a run as the invariants judge them: under the conf with the user's
    actions and plugins renamed (:mod:`vspec.invariants.yours`; ``run_conf`` is then the
    run's own). Call it in the spec's plugin scope, where the run looked them up."""
    yours = _unjudged(conf, carry)
    return InvariantInputs(
        judged_conf(conf, yours) if yours else conf,
        cluster_before,
        seed,
        now,
        cycles,
        verbosity,
        engine=engine,
        thorough=thorough,
        run_conf=conf if yours else None,
        carry=carry,
    )


def _unjudged(conf: SchedulerConf, carry: Carry | None) -> list[str]:
    """The user's actions and plugins of ``conf`` the invariants do not judge, looked up
    once per conf object when the caller carries memos (a timeline's sessions share one
    conf and one plugin scope; looking every name up in the registries costs about 70 us
    a session): shared, so none may change it."""
    if carry is None:
        return unjudged(your_names(conf))
    kept = carry.kept("unjudged", _ConfMemo)
    if kept.conf is not conf:
        kept.conf, kept.names = conf, unjudged(your_names(conf))
    return kept.names


class _ConfMemo:
    """The last conf asked of :func:`_unjudged` (held: its id is then not reused), and
    what it found."""

    def __init__(self) -> None:
        self.conf: SchedulerConf | None = None
        self.names: list[str] = []


@dataclass(frozen=True)
class _Asked:
    """What the spec and project asked of the invariants."""

    requested: list[str]
    disabled: list[str]
    soft: set[str]  # warn-only


def _stood_aside(
    inputs: InvariantInputs, asked: _Asked, yours: list[str], among: list[Invariant]
) -> list[str]:
    """The invariants that would be checked but for the user's code, in one line."""
    assert inputs.run_conf is not None
    without = replace(inputs, conf=without_yours(inputs.run_conf, yours), run_conf=None)
    checked = {inv.name for inv in among}
    would = selected(without, requested=asked.requested, disabled=asked.disabled)
    names = [inv.name for inv in would if inv.name not in checked]
    return [stood_aside_message(names, yours)] if names else []


def _evaluate(
    inputs: InvariantInputs, result: SimulationResult, asked: _Asked, yours: list[str]
) -> InvariantReport:
    requested, disabled, soft = asked.requested, asked.disabled, asked.soft
    among = selected(inputs, requested=requested, disabled=disabled)
    found = run_checks(inputs, result, requested=requested, disabled=disabled, among=among)
    for name in unknown_names(soft):
        found.setdefault("unknown", []).append(f"unknown invariant {name!r} in warn-only")
    violations = [
        f"invariants: {m}" if name == "unknown" else f"invariant {name}: {m}"
        for name, messages in found.items()
        if name not in soft
        for m in messages
    ]
    warnings = [
        f"invariant {name} (warn-only): {m}"
        for name, messages in found.items()
        if name in soft
        for m in messages
    ]
    findings = run_findings(inputs, result, among=among)
    warnings += [f"{name}: {m}" for name, messages in findings.items() for m in messages]
    aside = _stood_aside(inputs, asked, yours, among) if yours else []
    return InvariantReport(violations, warnings, aside)


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
    carry: Carry | None = None,
) -> list[str]:
    """The violations of ``result`` (see :func:`evaluate_invariants`)."""
    report = evaluate_invariants(
        conf,
        cluster_before,
        result,
        engine=engine,
        requested=requested,
        disabled=disabled,
        seed=seed,
        now=now,
        cycles=cycles,
        verbosity=verbosity,
        carry=carry,
    )
    return report.violations
