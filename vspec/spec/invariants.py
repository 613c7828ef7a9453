"""The catalogue of named invariants (spec-format "Invariants").

An invariant is a property every outcome of the engine must have (no node overcommitted,
gangs all-or-nothing...). Each has a name that specs use in ``expect.invariants`` and
that ``vspec invariants`` lists. The catalogue names the invariants the contract
promises; an entry whose ``check`` is still ``None`` is listed but checks nothing yet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vspec.result import SimulationResult
from vspec.spec.model import Spec

InvariantCheck = Callable[[Spec, SimulationResult], list[str]]


@dataclass(frozen=True)
class Invariant:
    name: str
    doc: str
    check: InvariantCheck | None = None


_CATALOGUE: dict[str, Invariant] = {
    inv.name: inv
    for inv in (
        Invariant("gang-atomicity", "a gang job has no binds, or at least minMember of them"),
        Invariant("no-overcommit", "no node holds more than its allocatable"),
        Invariant("predicates-respected", "every bind passes the session's predicates"),
        Invariant("queue-capability", "no queue is allocated beyond its capability"),
        Invariant("logprint-correct", "logprint lines name real jobs and carry no unfilled verb"),
        Invariant("deterministic", "the same spec and seed give the same outcome"),
    )
}


def invariants() -> list[Invariant]:
    """The catalogue, in the contract's order (what ``vspec invariants`` prints)."""
    return list(_CATALOGUE.values())


def check_invariants(spec: Spec, result: SimulationResult) -> list[str]:
    """The violated invariants of ``result``, in spec terms (``invariant <name>: ...``)."""
    expect = spec.expect
    messages = [
        f"invariants: unknown invariant {name!r} (known: {', '.join(_CATALOGUE)})"
        for name in (*expect.invariants, *expect.disabled_invariants)
        if name not in _CATALOGUE
    ]
    disabled = set(expect.disabled_invariants)
    for inv in _CATALOGUE.values():
        if inv.check is None or inv.name in disabled:
            continue
        messages.extend(f"invariant {inv.name}: {m}" for m in inv.check(spec, result))
    return messages
