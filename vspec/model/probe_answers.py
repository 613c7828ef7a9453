"""What an engine answered to a spec's probes, and the one comparison of those answers
with the probes' expectations (spec format, "Probes").

Each engine computes answers its own way (vspec's engine on its session, the real
Volcano on Go's); both are judged here, so a probe means the same on both and fails
with the same message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from vspec.model.probes import JobProbe, OrderProbe, Probe, TaskProbe, VictimProbe, VictimTasksProbe
from vspec.model.quantity import within_tolerance
from vspec.model.result import ProbeAnswer, ProbeFailure


@dataclass
class Judgement:
    failures: list[ProbeFailure] = field(default_factory=list)
    # Why a probe key could not be decided from the answers: "probes[2] bestNode: ...".
    undecided: list[str] = field(default_factory=list)


# An engine that leaves out the answer to a key the probe sets: a failure, never a pass.
_UNANSWERED = "the engine gave no answer"


class _Out:
    def __init__(self, index: int, judgement: Judgement) -> None:
        self.index = index
        self.judgement = judgement

    def fail(self, key: str, message: str) -> None:
        self.judgement.failures.append(ProbeFailure(self.index, key, message))

    def undecided(self, key: str, reason: str) -> None:
        self.judgement.undecided.append(f"probes[{self.index}] {key}: {reason}")


def judge(probes: Sequence[Probe], answers: Sequence[ProbeAnswer]) -> Judgement:
    """The probes' failures, and the keys the answers cannot decide."""
    judgement = Judgement()
    for index, (probe, answer) in enumerate(zip(probes, answers, strict=True)):
        out = _Out(index, judgement)
        if answer.missing is not None:
            out.fail("probe", answer.missing)
        elif isinstance(probe, TaskProbe):
            _task(probe, answer, out)
        elif isinstance(probe, JobProbe):
            _job(probe, answer, out)
        elif isinstance(probe, VictimProbe | VictimTasksProbe):
            got = sorted(answer.victims) if answer.victims is not None else None
            if got is None:
                out.fail("victims", _UNANSWERED)
            elif got != sorted(probe.victims):
                out.fail("victims", f"expected {sorted(probe.victims)}, got {got}")
        elif isinstance(probe, OrderProbe) and answer.order != probe.expect:
            out.fail("expect", f"expected order {probe.expect}, got {answer.order}")
    return judgement


def _close(expected: float, got: float | None, tolerance: float | None) -> bool:
    """The spec's one rule for floats (:func:`within_tolerance`); no answer is not close."""
    return got is not None and within_tolerance(expected, got, tolerance)


def _task(probe: TaskProbe, answer: ProbeAnswer, out: _Out) -> None:
    for name, expected in (probe.predicates or {}).items():
        if name not in answer.predicates:
            out.fail(f"predicates.{name}", _UNANSWERED)
            continue
        error = answer.predicates[name]
        if expected is True and error is not None:
            out.fail(f"predicates.{name}", f"expected to pass, failed: {error}")
        elif expected is False and error is None:
            out.fail(f"predicates.{name}", "expected to fail, passed")
        elif isinstance(expected, str) and (error is None or expected not in error):
            outcome = "passed" if error is None else f"failed: {error}"
            out.fail(f"predicates.{name}", f"expected a failure containing {expected!r}, {outcome}")
    for name, expected_score in (probe.scores or {}).items():
        score = answer.scores.get(name)
        if not _close(expected_score, score, probe.tolerance):
            out.fail(f"scores.{name}", f"expected {expected_score}, got {score}")
    if probe.best_node is not None:
        _best(probe.best_node, answer.best or [], out)
    for plugin, expected_scores in (probe.plugin_scores or {}).items():
        got = answer.plugin_scores.get(plugin, {})
        for name, expected_score in expected_scores.items():
            if not _close(expected_score, got.get(name), probe.tolerance):
                out.fail(
                    f"pluginScores.{plugin}.{name}",
                    f"expected {expected_score}, got {got.get(name)}",
                )


def _best(expected: str, best: list[str], out: _Out) -> None:
    if len(best) <= 1:
        got = best[0] if best else None
        if got != expected:
            out.fail("bestNode", f"expected {expected}, got {got}")
    elif expected not in best:
        out.fail("bestNode", f"expected {expected}, got one of {best} (tied for the best score)")
    else:
        # Volcano's SelectBestNode draws among the tied nodes at random: the expected
        # one is a possible choice, not the certain one.
        out.undecided("bestNode", f"{best} tie for the best score and Volcano draws at random")


def _job(probe: JobProbe, answer: ProbeAnswer, out: _Out) -> None:
    checks = [
        ("enqueueable", probe.enqueueable),
        ("ready", probe.ready),
        ("pipelined", probe.pipelined),
        ("starving", probe.starving),
    ]
    for key, expected in checks:
        if expected is not None:
            got = answer.votes.get(key)
            if got is None:
                out.fail(key, _UNANSWERED)
            elif got != expected:
                out.fail(key, f"expected {str(expected).lower()}, got {str(got).lower()}")
    if probe.valid is not None and answer.valid is None:
        out.fail("valid", _UNANSWERED)
    elif probe.valid is not None and answer.valid is not None:
        passed, message = answer.valid
        if probe.valid is True and not passed:
            out.fail("valid", f"expected valid, got invalid ({message})")
        elif probe.valid is False and passed:
            out.fail("valid", "expected invalid, got valid")
        elif isinstance(probe.valid, str) and (passed or probe.valid not in message):
            out.fail("valid", f"expected invalid with {probe.valid!r}, got {message or 'valid'}")
