"""Probes asked of the Go program: each probe becomes the question of a "probe" request
(the keys it sets and what they name, no expected value), each answer a
:class:`ProbeAnswer` that :func:`vspec.model.probe_answers.judge` compares, as for
vspec's engine."""

from __future__ import annotations

from typing import Any

from vspec.model.probes import JobProbe, OrderProbe, Probe, TaskProbe, VictimProbe
from vspec.model.result import ProbeAnswer

_VOTES = ("enqueueable", "ready", "pipelined", "starving", "valid")


def query(probe: Probe) -> dict[str, Any]:
    """The program's question for ``probe`` (protocol: probes.go's ProbeQuery)."""
    if isinstance(probe, TaskProbe):
        asked: dict[str, Any] = {"task": probe.task}
        if probe.predicates is not None:
            asked["predicates"] = list(probe.predicates)
        if probe.scores is not None or probe.best_node is not None:
            asked["scores"] = list(probe.scores or {})
            asked["best"] = probe.best_node is not None
        if probe.plugin_scores is not None:
            asked["pluginScores"] = {p: list(nodes) for p, nodes in probe.plugin_scores.items()}
        return asked
    if isinstance(probe, JobProbe):
        votes = [key for key in _VOTES if getattr(probe, key) is not None]
        return {"job": probe.job, "votes": votes}
    if isinstance(probe, VictimProbe):
        return {probe.kind: probe.task, "candidates": probe.candidates}
    if isinstance(probe, OrderProbe):
        return {"order": probe.order, "items": probe.items}
    return {"victimTasks": probe.tasks}


def answer(raw: dict[str, Any]) -> ProbeAnswer:
    """The program's answer as vspec's engine would give it."""
    if raw.get("missing"):
        return ProbeAnswer(missing=raw["missing"])
    valid = raw.get("valid")
    plugin_scores = raw.get("pluginScores") or {}
    return ProbeAnswer(
        predicates=raw.get("predicates") or {},
        scores=_floats(raw.get("scores") or {}),
        plugin_scores={plugin: _floats(scores) for plugin, scores in plugin_scores.items()},
        best=raw.get("best"),
        votes=raw.get("votes") or {},
        valid=None if valid is None else (valid["pass"], valid["message"]),
        victims=raw.get("victims"),
        order=raw.get("order"),
    )


def _floats(scores: dict[str, float | int | None]) -> dict[str, float | None]:
    """Go's JSON writes a whole score without a fraction; Python reads it as an int."""
    return {node: None if score is None else float(score) for node, score in scores.items()}
