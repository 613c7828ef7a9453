"""What a user reads about a spec that did not pass: its mismatches, then the last log lines.

The same text serves ``vspec run``, the pytest plugin and the JUnit report, so a failure
reads the same wherever it is met.
"""

from __future__ import annotations

from collections import Counter

from vspec.harness.runner import SpecOutcome, Verdict

# Summary order, as pytest prints it.
_SUMMARY_ORDER = (
    Verdict.FAILED,
    Verdict.PASSED,
    Verdict.SKIPPED,
    Verdict.XFAILED,
    Verdict.XPASSED,
    Verdict.ERROR,
)


def failure_text(outcome: SpecOutcome, *, tracebacks: bool = False) -> str:
    """The mismatches, one a line, then the captured log lines that preceded the end."""
    lines = [*outcome.messages, *outcome.hints]
    if outcome.log_tail:
        shown = len(outcome.log_tail)
        lines.append("")
        lines.append(f"last {shown} of {outcome.log_total} captured log lines:")
        lines.extend(f"  {line}" for line in outcome.log_tail)
    if tracebacks and outcome.traceback:
        lines.append("")
        lines.append(outcome.traceback.rstrip("\n"))
    return "\n".join(lines)


def headline(outcome: SpecOutcome) -> str:
    """``FAILED specs/gang.yaml:3 gang waits for its last member [seed 0]``."""
    loc = outcome.location
    where = f"{loc.file}:{loc.line}" if loc.line else loc.file
    text = f"{outcome.status.name} {where} {outcome.name}"
    if not outcome.invalid:  # an invalid spec never ran, so no seed was used
        text += f" [seed {outcome.seed}]"
    if outcome.reason:
        text += f" ({outcome.reason})"
    return text


def cost_line(outcome: SpecOutcome) -> str:
    """``CPU 8.41s: invariants 2.10s (allocate-order 0.91, (shared) 0.40, ...)``: what
    the spec's checks cost next to its whole run, costliest first ("" when no invariant
    was checked). ``(shared)`` is what several invariants derive once (the replayed
    cycles, the node columns), ``(selecting)`` choosing those that apply and the rest."""
    spent = outcome.invariant_seconds
    if not spent:
        return ""
    total = sum(spent.values())
    parts = ", ".join(
        f"{name} {seconds:.2f}"
        for name, seconds in sorted(spent.items(), key=lambda item: -item[1])
        if seconds >= 0.005
    )
    return f"CPU {outcome.cpu_seconds:.2f}s: invariants {total:.2f}s ({parts or 'each < 0.005'})"


def summary(counts: Counter[Verdict], duration: float, *, warnings: int = 0) -> str:
    """``1 failed, 3 passed, 1 skipped, 1 warning in 0.42s``; ``no specs ran`` when there
    were none."""
    parts = [f"{counts[s]} {_word(s, counts[s])}" for s in _SUMMARY_ORDER if counts.get(s, 0) > 0]
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings > 1 else ''}")
    return f"{', '.join(parts) or 'no specs ran'} in {duration:.2f}s"


def _word(status: Verdict, n: int) -> str:
    if status is Verdict.ERROR:
        return "error" if n == 1 else "errors"
    return status.value
