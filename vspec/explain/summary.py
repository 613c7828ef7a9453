"""The one sentence that heads a task's explanation: the reason, as far as the records
tell, in the words a Volcano user knows (gang, queue, enqueue, predicates)."""

from __future__ import annotations

from collections import Counter

from vspec.explain.records import Attempt, Check, Gang, JobExplanation, TaskExplanation, Vote

_PLACED = frozenset({"Allocated", "Binding", "Bound", "Running"})
TIES_NAMED = 4  # more tied nodes are counted, not named


def summarize(te: TaskExplanation) -> str:
    if te.status in _PLACED:
        return _placed(te)
    if te.status == "Pipelined":
        return _pipelined(te)
    if te.status != "Pending":
        return f"{te.status} (not scheduled in this cycle)"
    if not te.attempts:
        return _not_tried(te)
    return _failed(te, _decisive(te.attempts))


def summarize_job(je: JobExplanation) -> str:
    """Why a job is where it is: the enqueue decision, then why its pods do not exist."""
    pending = je.phase in ("", "Pending")
    rejects = _answers(je.enqueue, "reject")
    if pending and rejects:
        text = f"enqueue kept it Pending: {_names(rejects)} rejected it"
        short = next((r for r in je.rooms if r.plugin in rejects and r.short), None)
        if short is not None:
            text += f" ({short.plugin}: minResources does not fit in {', '.join(short.short)})"
    elif pending and je.enqueue:
        text = "it is Pending: enqueue did not admit it"
    elif pending:
        text = "it is Pending: no plugin was asked to enqueue it (no enqueue action ran?)"
    else:
        text = f"phase {je.phase}"
        if je.enqueue and not rejects:
            text += f": enqueue admitted it ({_names([v.plugin for v in je.enqueue])} permit)"
    if je.held_pods and not je.pods:
        text += (
            f"; its {len(je.held_pods)} pod(s) do not exist yet: Volcano's job controller "
            "creates a Job's pods once its PodGroup leaves Pending"
        )
        text += (
            f", so they exist from cycle {je.cycle + 1} on" if not pending else ", which it has not"
        )
    elif not je.pods:
        text += "; it has no pods"
    return text


def _placed(te: TaskExplanation) -> str:
    chosen = next((a for a in reversed(te.attempts) if a.chosen == te.node), None)
    if chosen is None:
        return f"{te.status} on {te.node} (placed before this cycle)"
    how = f"{chosen.action} placed it on {te.node}"
    if chosen.tied:
        others = [n for n in chosen.tied if n != te.node]
        tied = _names(others) if len(others) <= TIES_NAMED else f"{len(others)} other nodes"
        how += f" (tied with {tied}; Volcano picks one at random, vspec by seed)"
    if te.status == "Allocated" and te.gang is not None:
        how += f", not bound yet: {_gang_counts(te.gang)}"
    return how


def _pipelined(te: TaskExplanation) -> str:
    text = f"pipelined onto {te.node}: it waits there for resources being released"
    for attempt in reversed(te.attempts):
        search = next((v for v in attempt.victims if v.node == te.node and not v.error), None)
        if search is not None:
            evicted = ", ".join(search.evicted) or "none"
            return (
                f"{text} ({attempt.action} evicted there: {evicted}; "
                f"of the permitted {', '.join(search.victims)})"
            )
    return text


def _not_tried(te: TaskExplanation) -> str:
    gang = te.gang
    if gang is not None and gang.phase in ("Pending", ""):
        rejects = _answers(gang.votes.get("job_enqueueable", []), "reject")
        if rejects:
            return f"its job was not enqueued: {_names(rejects)} rejected it"
        return "its job is Pending: enqueue did not admit it (or no enqueue vote ran)"
    if gang is not None:
        failed = [v for v in gang.votes.get("job_valid", []) if v.vote.startswith("fail")]
        if failed:
            return f"its job is not valid: {failed[0].plugin} says {failed[0].vote[6:]}"
    for queue in te.queues:
        overused = _answers(queue.overused, "yes")
        if overused:
            return f"its queue {queue.queue} is overused ({_names(overused)}), so it was skipped"
    return "no action tried to place it in this cycle"


def _decisive(attempts: list[Attempt]) -> Attempt:
    """The attempt that tells most: the last one that examined nodes, else the last."""
    return next((a for a in reversed(attempts) if a.nodes or a.chosen), attempts[-1])


def _failed(te: TaskExplanation, attempt: Attempt) -> str:
    refused = _answers(attempt.queue_votes, "no")
    if refused:
        return (
            f"{attempt.action}: queue {te.queue} may not take it "
            f"({_names(refused)} said no to the queue's share)"
        )
    if attempt.chosen is not None:
        undone = f"{attempt.action} placed it on {attempt.chosen}, then undid it"
        if te.gang is not None and not te.gang.is_ready:
            return f"{undone}: the job's gang is not ready ({_gang_counts(te.gang)})"
        return undone
    if attempt.victims:
        errors = [s.error or "victims did not make room" for s in attempt.victims]
        return f"{attempt.action} found no node to make room on: {_histogram(errors)}"
    if attempt.nodes and not attempt.feasible:
        reasons = [_first_failure(row.checks) for row in attempt.nodes if not row.fits]
        return f"no node fits: {_histogram(reasons)}"
    if attempt.feasible:
        return f"{attempt.action}: {len(attempt.feasible)} nodes fit but none was taken"
    return f"{attempt.action} did not predicate it (an earlier task of its role failed)"


def _first_failure(checks: list[Check]) -> str:
    for check in checks:
        if not check.passed:
            return ", ".join(check.reasons) or check.code or "failed"
    return "failed"


def _gang_counts(gang: Gang) -> str:
    return f"minAvailable {gang.min_available}, ready {gang.ready}, pipelined {gang.pipelined}"


def _answers(votes: list[Vote], word: str) -> list[str]:
    return [v.plugin for v in votes if v.vote == word]


def _histogram(reasons: list[str]) -> str:
    counts = Counter(reasons)
    return ", ".join(f"{n} {reason}" for reason, n in counts.most_common())


def _names(names: list[str]) -> str:
    return ", ".join(names) if names else "none"
