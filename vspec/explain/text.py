"""``vspec explain``'s terminal form: a few lines per task and a compact node table.

Nodes that failed the same way are one row (``n3, n4 +97``), and only the best scored
nodes are listed, so a 1,000-node cluster still reads on one screen; the JSON form has
every node.
"""

from __future__ import annotations

from vspec.explain.records import (
    Attempt,
    Check,
    Explanation,
    Gang,
    JobExplanation,
    NodeVerdict,
    QueueState,
    TaskExplanation,
    VictimSearch,
    Vote,
)
from vspec.model.quantity import shown_amount, shown_number

FEASIBLE_ROWS = 10  # scored nodes listed before "... N more fit"
NAMES_PER_ROW = 3  # node names shown in a row of alike nodes
TIED_NAMES = 6  # tied nodes named in an attempt's head line
CELL = 64  # a reason is cut to this width


def render(explanation: Explanation) -> str:
    where = f"{explanation.file}:{explanation.line}" if explanation.line else explanation.file
    lines = [f"== {where} {explanation.spec} [seed {explanation.seed}] =="]
    if explanation.error is not None:
        lines.append(f"the run stopped: {explanation.error}")
        lines.append("(the tasks below are explained as the session stood then)")
    if not explanation.tasks and not explanation.jobs:
        lines.append("no task matches (none was pending, or the name is not in the spec)")
    for je in explanation.jobs:
        lines.append("")
        lines.extend(job_lines(je))
    for te in explanation.tasks:
        lines.append("")
        lines.extend(task_lines(te))
    return "\n".join(lines)


def job_lines(je: JobExplanation) -> list[str]:
    pods = f"{je.pods} pod(s)" if je.pods else "no pods"
    lines = [
        f"{je.job}  cycle {je.cycle}  pod group {je.phase or '(no phase)'}, {pods}"
        f"  (queue {je.queue})",
        f"  why: {je.summary}",
    ]
    if je.min_resources is None:
        wants = "minResources not set (every enqueue plugin permits such a job)"
    else:
        wants = f"minResources {_amounts(je.min_resources)}"
    lines.append(f"  minMember {je.min_member}, {wants}")
    if je.enqueue:
        lines.append(f"  enqueue: {_votes(je.enqueue)}")
    for room in je.rooms:
        verdict = f"does not fit in {', '.join(room.short)}" if room.short else "fits"
        lines.append(f"    {room.plugin}: {room.where}")
        lines.append(
            f"      room {_amounts(room.room)}; held {_amounts(room.held)}; "
            f"held + minResources {verdict}"
        )
    if je.held_pods and not je.pods:
        lines.append(f"  pods not created yet: {', '.join(je.held_pods)}")
    return lines


def _amounts(amounts: dict[str, float]) -> str:
    return (
        ", ".join(f"{name} {shown_amount(name, value)}" for name, value in amounts.items()) or "0"
    )


def task_lines(te: TaskExplanation) -> list[str]:
    where = f" on {te.node}" if te.node else ""
    lines = [
        f"{te.task}  cycle {te.cycle}  {te.status}{where}  (job {te.job}, queue {te.queue})",
        f"  why: {te.summary}",
    ]
    if te.gang is not None:
        lines.extend(_gang_lines(te.gang))
    for queue in te.queues:
        lines.extend(_queue_lines(queue))
    for attempt in te.attempts:
        lines.extend(_attempt_lines(attempt))
    return lines


def _votes(votes: list[Vote]) -> str:
    return (
        ", ".join(f"{v.question + ': ' if v.question else ''}{v.plugin} {v.vote}" for v in votes)
        or "none asked"
    )


def _gang_lines(gang: Gang) -> list[str]:
    states = [
        "valid" if gang.valid else "not valid",
        "ready" if gang.is_ready else "not ready",
        "pipelined" if gang.is_pipelined else "not pipelined",
    ]
    lines = [
        f"  gang: phase {gang.phase or '-'}, minAvailable {gang.min_available}, ready "
        f"{gang.ready}, pipelined {gang.pipelined}, pending {gang.pending}: {', '.join(states)}"
    ]
    if any(r.min_available for r in gang.roles):
        rows = [["role", "min", "ready", "pipelined", "pending"]]
        rows += [
            [r.role or "-", str(r.min_available), str(r.ready), str(r.pipelined), str(r.pending)]
            for r in gang.roles
        ]
        lines.extend(table(rows, indent=4))
    for question, votes in gang.votes.items():
        lines.append(f"    {question}: {_votes(votes)}")
    return lines


def _queue_lines(queue: QueueState) -> list[str]:
    lines = [
        f"  queue {queue.queue} ({queue.plugin}): share {queue.share:.2f}, "
        f"overused: {_votes(queue.overused)}"
    ]
    rows = [["resource", "deserved", "allocated", "capability", "guarantee", "request", ""]]
    for r in queue.resources:
        rows.append(
            [
                r.resource,
                shown_amount(r.resource, r.deserved),
                shown_amount(r.resource, r.allocated),
                shown_amount(r.resource, r.real_capability),
                shown_amount(r.resource, r.guarantee),
                shown_amount(r.resource, r.request),
                "at deserved" if r.at_deserved else "",
            ]
        )
    if len(rows) > 1:
        lines.extend(table(rows, indent=4))
    return lines


def _attempt_lines(attempt: Attempt) -> list[str]:
    head = f"  {attempt.action}, cycle {attempt.cycle}:"
    if attempt.queue_votes:
        head += f" queue {_votes(attempt.queue_votes)};"
    examined = len(attempt.nodes)
    if examined:
        head += f" {examined} node(s) examined, {len(attempt.feasible) or _fits(attempt)} fit"
        if attempt.not_examined:
            head += f" ({attempt.not_examined} left unexamined: enough fit)"
        head += ";"
    if attempt.chosen is not None:
        head += f" chose {attempt.chosen}"
        if attempt.tied:
            head += f" (tied: {_names(attempt.tied, TIED_NAMES)})"
    lines = [head.rstrip(";")]
    if attempt.nodes:
        lines.extend(table(_node_rows(attempt), indent=4))
    for search in attempt.victims:
        lines.append(_victim_line(search))
    return lines


def _fits(attempt: Attempt) -> int:
    return sum(1 for row in attempt.nodes if row.fits)


def _node_rows(attempt: Attempt) -> list[list[str]]:
    checks = _columns([c.plugin for row in attempt.nodes for c in row.checks])
    scores = _columns([p for row in attempt.nodes for p in row.scores])
    header = ["node", "fits", *checks, *scores]
    if any(row.total is not None for row in attempt.nodes):
        header.append("total")
    scored = [row for row in attempt.nodes if row.total is not None or row.scores]
    scored.sort(key=lambda row: -(row.total or 0.0))
    shown = scored[:FEASIBLE_ROWS]
    chosen = next((row for row in scored if row.node == attempt.chosen), None)
    if chosen is not None and chosen not in shown:
        shown.append(chosen)
    rows = [header]
    for row in shown:
        rows.append(_row_cells(row, checks, scores, len(header), attempt))
    if len(scored) > len(shown):
        rows.append([f"... {len(scored) - len(shown)} more scored nodes"])
    groups: dict[tuple[str, ...], list[str]] = {}
    for row in attempt.nodes:
        if row.total is None and not row.scores:
            cells = tuple(_row_cells(row, checks, scores, len(header), attempt)[1:])
            groups.setdefault(cells, []).append(row.node)
    for cells, names in groups.items():
        rows.append([_names(names), *cells])
    return rows


def _row_cells(
    row: NodeVerdict, checks: list[str], scores: list[str], width: int, attempt: Attempt
) -> list[str]:
    by_plugin = {c.plugin: c for c in row.checks}
    cells = [row.node, "yes" if row.fits else "no"]
    cells += [_check_cell(by_plugin.get(p)) for p in checks]
    cells += [shown_number(row.scores[p]) if p in row.scores else "-" for p in scores]
    if len(cells) < width:
        cells.append("-" if row.total is None else shown_number(row.total))
    if row.node == attempt.chosen:
        cells.append("<- chosen")
    return cells


def _check_cell(check: Check | None) -> str:
    if check is None:
        return "-"
    if check.passed:
        return "ok"
    text = "; ".join(check.reasons) or check.code or "failed"
    if check.cached:
        text = f"cached: {text}"
    return text if len(text) <= CELL else text[: CELL - 3] + "..."


def _victim_line(search: VictimSearch) -> str:
    votes = "; ".join(
        f"tier {v.tier} {v.plugin} {v.vote} [{', '.join(v.victims)}]" for v in search.votes
    )
    text = (
        f"    victims on {search.node}: candidates [{', '.join(search.candidates)}]; "
        f"{votes or 'no plugin voted'}; permitted [{', '.join(search.victims)}]"
    )
    if search.evicted:
        text += f"; evicted [{', '.join(search.evicted)}]"
    if search.error:
        text += f"; {search.error}"
    return text


def _columns(names: list[str]) -> list[str]:
    """In order of appearance, the action's own check first."""
    unique = list(dict.fromkeys(names))
    return sorted(unique, key=lambda name: not name.startswith("("))


def _names(names: list[str], limit: int = NAMES_PER_ROW) -> str:
    shown = ", ".join(names[:limit])
    more = len(names) - limit
    return f"{shown} +{more}" if more > 0 else shown


def table(rows: list[list[str]], *, indent: int) -> list[str]:
    """Left-aligned columns; a short row (a note) is printed as it is."""
    width = max(len(r) for r in rows)
    full = [r for r in rows if len(r) >= width - 1]
    sizes = [max((len(r[i]) for r in full if i < len(r)), default=0) for i in range(width)]
    pad = " " * indent
    out = []
    for r in rows:
        if len(r) == 1:
            out.append(pad + r[0])
            continue
        cells = [cell.ljust(sizes[i]) for i, cell in enumerate(r)]
        out.append((pad + "  ".join(cells)).rstrip())
    return out
