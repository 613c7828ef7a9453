"""What an invariant is, the registry of them, and how a run is checked against them."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from vspec.model.conf import SchedulerConf
from vspec.model.engine import Engine
from vspec.model.objects import Cluster
from vspec.model.result import SimulationResult
from vspec.registries import Registry

T = TypeVar("T")


SHARED = "(shared)"  # the meter's name for what several invariants derive once
SELECTING = "(selecting)"  # and for choosing the invariants that apply, and the rest


class CostMeter:
    """CPU seconds per invariant, summed over the results it checks (a timeline's
    sessions): what ``vspec run -v`` prints. Each second is charged once, to the
    innermost measure running: what an invariant derives for others too (the replayed
    cycles, the first cycle's node columns) goes to :data:`SHARED`, not to the invariant
    that happened to ask first."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._inner: list[float] = []  # per open measure: the seconds of those inside it

    def charged(self, name: str, work: Callable[..., T], *args: object) -> T:
        """``work(*args)``, its CPU seconds charged to ``name``, less those of the
        measures inside it. One frame a measure, not a context's four (its maker, its
        ``__init__``, ``__enter__`` and ``__exit__``): a timeline measures about 26
        times a session."""
        inner = self._inner
        inner.append(0.0)
        start = time.process_time()
        try:
            return work(*args)
        finally:
            spent = time.process_time() - start
            seconds = self.seconds
            seconds[name] = seconds.get(name, 0.0) + spent - inner.pop()
            if inner:
                inner[-1] += spent

    @property
    def total(self) -> float:
        return sum(self.seconds.values())


class Carry:
    """What one spec's checking keeps from one result to the next (a timeline's
    sessions): the CPU meter, and memos keyed by model objects (a node's allocatable),
    which hold while the objects live, as model objects are not changed once built (a
    timeline hands its unchanged nodes from session to session and builds a changed one
    afresh)."""

    def __init__(self) -> None:
        self.meter = CostMeter()
        self.aside: dict[str, None] = {}  # what the invariants did not check, said once each
        self._kept: dict[str, Any] = {}

    def kept(self, name: str, make: Callable[[], T]) -> T:
        """The memo ``name``, made on first use; shared by every invariant that asks."""
        if name not in self._kept:
            self._kept[name] = make()
        # A declared name, not ``cast``: that is a call of typing's, some 80 a session.
        kept: T = self._kept[name]
        return kept


_THESE_INPUTS = object()  # InvariantInputs.derived's ``of`` when it is the inputs themselves


@dataclass(frozen=True)
class InvariantInputs:
    """Everything a simulation was run with: enough to judge its result or to re-run it."""

    conf: SchedulerConf
    cluster: Cluster  # the cluster before the first session
    seed: int = 0
    now: datetime | None = None
    cycles: int = 1
    verbosity: int = 3
    # The engine that produced the result; ``deterministic`` re-runs it.
    engine: Engine = field(kw_only=True)
    # Check what is costly at any size (the fuzzer's small cases, where a re-run is
    # cheap and a missed nondeterminism is the point); a spec run checks it when small.
    thorough: bool = field(default=False, kw_only=True)
    # The conf the run had, when ``conf`` is the one the invariants judge it under (the
    # user's code renamed: vspec.invariants.yours); a re-run takes this one.
    run_conf: SchedulerConf | None = field(default=None, kw_only=True)
    # What the checking of earlier results kept (a timeline's sessions), if anyone keeps it.
    carry: Carry | None = field(default=None, kw_only=True, compare=False)
    # What several invariants derive from these inputs and one result (the replayed
    # cycles, the session's jobs), by name: derived once per result, not once per
    # invariant (about 20 of them replay the cycles). Only the last result is kept.
    _derived: dict[str, tuple[object, Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def derived(self, name: str, of: object, derive: Callable[[], T]) -> T:
        """``derive()``, kept under ``name`` while ``of`` (the result, or these inputs
        for what the result does not change) is the object it was derived for. The
        value is shared by every invariant that asks: none may change it."""
        mark = _THESE_INPUTS if of is self else of  # not self: no cycle for the collector
        kept = self._derived.get(name)
        if kept is None or kept[0] is not mark:
            made = derive() if self.carry is None else self.carry.meter.charged(SHARED, derive)
            kept = self._derived[name] = (mark, made)
        value: T = kept[1]  # as in Carry.kept: not a cast, a call
        return value

    def forget(self) -> None:
        """Drop what was derived: a derived value may hold these inputs (the first cycle
        does), a cycle that would leave the spec's whole object graph to the cyclic
        collector instead of freeing it once the result is judged."""
        self._derived.clear()

    def rerun(self) -> SimulationResult:
        return self.engine.simulate(
            self.conf if self.run_conf is None else self.run_conf,
            self.cluster,
            seed=self.seed,
            now=self.now,
            cycles=self.cycles,
            verbosity=self.verbosity,
        )


@dataclass(frozen=True)
class Invariant:
    """A property every outcome must have under the configurations it applies to.

    ``definition`` is the precise statement (what ``check`` tests); ``applies`` says in
    words which configurations ``applies_to`` accepts and why the others are excluded.
    ``findings`` reports what is wrong with the user's code under test rather than with
    the outcome (a plugin's own bug, which no spec can fix): a run shows each distinct
    finding once, as a warning, and no spec fails for it.
    """

    name: str
    summary: str
    definition: str
    applies: str
    applies_to: Callable[[InvariantInputs], bool]
    check: Callable[[InvariantInputs, SimulationResult], list[str]]
    findings: Callable[[InvariantInputs, SimulationResult], list[str]] | None = None


INVARIANTS: Registry[Invariant] = Registry("invariant")


def register(invariant: Invariant) -> Invariant:
    return INVARIANTS.register(invariant.name, invariant)


def catalogue() -> list[Invariant]:
    """Every registered invariant, in registration order (what ``vspec invariants`` lists)."""
    return INVARIANTS.entries()


def get(name: str) -> Invariant | None:
    return INVARIANTS.get(name)


def unknown_names(names: Iterable[str]) -> list[str]:
    return INVARIANTS.unknown(names)


def selected(
    inputs: InvariantInputs, *, requested: Iterable[str] = (), disabled: Iterable[str] = ()
) -> list[Invariant]:
    """The invariants a run is checked against: those that apply, plus the requested
    ones (a spec may ask for one outside its documented scope), minus the disabled."""
    wanted, off = set(requested), set(disabled)
    return [
        inv
        for inv in INVARIANTS.entries()
        if inv.name not in off and (inv.name in wanted or inv.applies_to(inputs))
    ]


def run_checks(
    inputs: InvariantInputs,
    result: SimulationResult,
    *,
    requested: Iterable[str] = (),
    disabled: Iterable[str] = (),
    among: Sequence[Invariant] | None = None,
) -> dict[str, list[str]]:
    """Violations by invariant name (only the violated ones). ``among``: the
    invariants :func:`selected` gives for ``requested`` and ``disabled``, when the
    caller has them already (deciding what applies costs a lookup per plugin)."""
    requested, disabled = list(requested), list(disabled)
    found: dict[str, list[str]] = {}
    for name in unknown_names([*requested, *disabled]):
        known = ", ".join(INVARIANTS.names())
        found.setdefault("unknown", []).append(f"unknown invariant {name!r} (known: {known})")
    if among is None:
        among = selected(inputs, requested=requested, disabled=disabled)
    for inv in among:
        messages = _measured(inv.name, inv.check, inputs, result)
        if messages:
            found[inv.name] = messages
    return found


Judge = Callable[[InvariantInputs, SimulationResult], list[str]]


def _measured(
    name: str, judge: Judge, inputs: InvariantInputs, result: SimulationResult
) -> list[str]:
    """``judge(inputs, result)``, its CPU seconds charged to ``name`` on the inputs' meter."""
    if inputs.carry is None:
        return judge(inputs, result)
    return inputs.carry.meter.charged(name, judge, inputs, result)


def run_findings(
    inputs: InvariantInputs,
    result: SimulationResult,
    *,
    requested: Iterable[str] = (),
    disabled: Iterable[str] = (),
    among: Sequence[Invariant] | None = None,
) -> dict[str, list[str]]:
    """Findings by invariant name, of the invariants the run is checked against
    (``among``, as for :func:`run_checks`)."""
    found: dict[str, list[str]] = {}
    if among is None:
        among = selected(inputs, requested=requested, disabled=disabled)
    for inv in among:
        findings = inv.findings
        if findings is None:
            continue
        messages = _measured(inv.name, findings, inputs, result)
        if messages:
            found[inv.name] = messages
    return found
