"""Probes: a plugin author's unit-test view of one session (see spec-format "Probes").

These are plain model types; the spec loader builds them, each engine answers them,
and :func:`vspec.model.probe_answers.judge` checks the answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

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


def probe_document(probe: Probe) -> dict[str, Any]:
    """``probe`` as a spec file writes it (the loader's inverse): a shrunk spec that
    ``vspec diff`` writes keeps the probes it was compared on."""
    if isinstance(probe, TaskProbe):
        keys: dict[str, Any] = {
            "task": probe.task,
            "predicates": probe.predicates,
            "scores": probe.scores,
            "pluginScores": probe.plugin_scores,
            "bestNode": probe.best_node,
            "tolerance": probe.tolerance,
        }
    elif isinstance(probe, JobProbe):
        keys = {
            "job": probe.job,
            "enqueueable": probe.enqueueable,
            "ready": probe.ready,
            "pipelined": probe.pipelined,
            "starving": probe.starving,
            "valid": probe.valid,
        }
    elif isinstance(probe, VictimProbe):
        keys = {probe.kind: probe.task, "candidates": probe.candidates, "victims": probe.victims}
    elif isinstance(probe, VictimTasksProbe):
        keys = {"victimTasks": probe.tasks, "victims": probe.victims}
    else:
        keys = {"order": probe.order, "items": probe.items, "expect": probe.expect}
    return {key: value for key, value in keys.items() if value is not None}
