"""Probes: a plugin author's unit-test view of one session (see spec-format "Probes").

These are plain model types; the spec loader builds them, each engine answers them,
and :func:`vspec.model.probe_answers.judge` checks the answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from vspec.errors import Location


@dataclass
class TaskProbe:
    task: str
    predicates: dict[str, bool | str] | None = None
    scores: dict[str, float] | None = None
    plugin_scores: dict[str, dict[str, float]] | None = None
    best_node: str | None = None
    tolerance: float | None = None  # absolute; None means relative 1e-6
    location: Location | None = field(default=None, compare=False)


@dataclass
class JobProbe:
    job: str
    enqueueable: bool | None = None
    ready: bool | None = None
    pipelined: bool | None = None
    starving: bool | None = None
    valid: bool | str | None = None
    location: Location | None = field(default=None, compare=False)


@dataclass
class VictimProbe:
    """``Preemptable`` (kind "preemptor") or ``Reclaimable`` (kind "reclaimer")."""

    kind: Literal["preemptor", "reclaimer"]
    task: str
    candidates: list[str]
    victims: list[str]
    location: Location | None = field(default=None, compare=False)


@dataclass
class VictimTasksProbe:
    tasks: list[str]
    victims: list[str]
    location: Location | None = field(default=None, compare=False)


@dataclass
class OrderProbe:
    order: Literal["jobs", "tasks", "queues", "namespaces"]
    items: list[str]
    expect: list[str]
    location: Location | None = field(default=None, compare=False)


Probe = TaskProbe | JobProbe | VictimProbe | VictimTasksProbe | OrderProbe
