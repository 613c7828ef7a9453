"""Compare what a simulation did with what a spec's ``expect`` and ``probes`` say.

Every mismatch is reported at once, each as one line in the spec's own terms (keys and
object names as the user wrote them), so one failing run tells the whole story.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from vspec.errors import Unsupported
from vspec.model.quantity import shown_amount, within_tolerance
from vspec.model.result import SimulationResult
from vspec.model.spec import (
    QUEUE_COUNTS,
    QUEUE_RESOURCES,
    Expect,
    LogsExpect,
    PodExpect,
    PodGroupExpect,
    QueueExpect,
    Spec,
)

if TYPE_CHECKING:
    from vspec.model.probes import Probe


def check(spec: Spec, result: SimulationResult) -> list[str]:
    """All mismatches between ``result`` and the spec's expectations and probes."""
    return [*check_expect(spec.expect, result), *_probe_failures(spec.probes, result)]


def check_expect(expect: Expect, result: SimulationResult) -> list[str]:
    """The mismatches of one ``expect`` block, in the order the contract lists its keys."""
    out: list[str] = []
    binds = result.bind_map()
    if expect.binds is not None:
        out += _binds(expect.binds, binds, exact=True)
    if expect.binds_include is not None:
        out += _binds(expect.binds_include, binds, exact=False)
    if expect.bind_count is not None and expect.bind_count != len(result.binds):
        out.append(f"bindCount: expected {expect.bind_count}, got {len(result.binds)}")
    evicted = [e.task for e in result.evictions]
    if expect.evictions is not None and Counter(expect.evictions) != Counter(evicted):
        out.append(f"evictions: expected {_listing(expect.evictions)}, got {_listing(evicted)}")
    if expect.evict_count is not None and expect.evict_count != len(evicted):
        out.append(f"evictCount: expected {expect.evict_count}, got {len(evicted)}")
    for job, nodes in (expect.pipelined or {}).items():
        out += _pipelined(job, nodes, result.pipelined.get(job, []))
    for job, pg in expect.pod_groups.items():
        out += _pod_group(job, pg, result)
    for pod, pe in expect.pods.items():
        out += _pod(pod, pe, result)
    for queue, qe in expect.queues.items():
        out += _queue(queue, qe, result)
    if expect.logs is not None:
        out += _logs(expect.logs, [line.text for line in result.logs])
    return out


def named_tasks(expect: Expect) -> list[str]:
    """The tasks (``namespace/name``) an expectation is about, in the order written."""
    names = [*(expect.binds or {}), *(expect.binds_include or {}), *expect.pods]
    return list(dict.fromkeys(names))


def named_jobs(expect: Expect) -> list[str]:
    return list(dict.fromkeys([*(expect.pipelined or {}), *expect.pod_groups]))


EXPLAIN_HINTS = 3  # at most this many "vspec explain" pointers under a failure


def explain_hints(spec: Spec, messages: list[str]) -> list[str]:
    """Where to read why: a ``vspec explain`` command for each task (else job) that an
    expectation names and a mismatch mentions."""
    file = spec.location.file
    unexpected = [m.split()[2] for m in messages if m.startswith("unexpected bind ")]
    tasks = dict.fromkeys([*named_tasks(spec.expect), *unexpected])
    commands = [
        f"vspec explain {file} --{kind} {name}"
        for kind, names in (("task", tasks), ("job", named_jobs(spec.expect)))
        for name in names
        if any(f" {name} " in f" {m} ".replace(":", " ") for m in messages)
    ]
    hints = [f"run `{command}` for why" for command in commands[:EXPLAIN_HINTS]]
    if len(commands) > EXPLAIN_HINTS:
        hints.append(f"(and {len(commands) - EXPLAIN_HINTS} more: `vspec explain {file}`)")
    return hints


def failure_hints(spec: Spec, messages: list[str], result: SimulationResult) -> list[str]:
    """What to read or change next: missing pods of Volcano Jobs first, then the
    ``vspec explain`` pointers that no earlier hint already gives."""
    hints = cycle_hints(spec, result)
    for hint in explain_hints(spec, messages):
        command = hint.split("`")[1]
        if not any(command in earlier for earlier in hints):
            hints.append(hint)
    return hints


def cycle_hints(spec: Spec, result: SimulationResult) -> list[str]:
    """Why a Volcano Job's pods may be missing from a failure: the job controller creates
    them only once the session moved their PodGroup out of Pending, so they exist from the
    next cycle on, or not at all while it stays Pending."""
    if result.cluster is None:
        return []
    hints: list[str] = []
    late: dict[str, int] = {}
    for pod in result.cluster.pods:
        created = result.created.get(pod.meta.key)
        if created is not None and created >= spec.cycles:
            late.setdefault(f"{pod.meta.namespace}/{pod.group_name}", created)
    for job, cycle in late.items():
        hints.append(
            f"the pods of {job} did not exist yet: Volcano's job controller creates them once "
            f"their PodGroup leaves Pending (here in cycle {cycle - 1}, counting from 0); "
            f"give `cycles: {cycle + 1}` to see them scheduled"
        )
    held = dict.fromkeys(f"{p.meta.namespace}/{p.group_name}" for p in result.cluster.held_pods)
    file = spec.location.file
    hints += [
        f"{job} has no pods: its PodGroup never left Pending, and Volcano's job controller "
        f"creates a Job's pods only after that; run `vspec explain {file} --job {job}` for the "
        "enqueue decision"
        for job in held
    ]
    return hints


def _binds(expected: dict[str, str], actual: dict[str, str], *, exact: bool) -> list[str]:
    out: list[str] = []
    for task, node in expected.items():
        got = actual.get(task)
        if got is None:
            out.append(f"missing bind {task} -> {node}")
        elif got != node:
            out.append(f"bind {task}: expected {node}, got {got}")
    if exact:
        out += [f"unexpected bind {t} -> {n}" for t, n in actual.items() if t not in expected]
    return out


def _pipelined(job: str, nodes: list[str], actual: list[tuple[str, str]]) -> list[str]:
    """``[]`` means the job pipelined nothing; else each of its pipelined tasks is on a
    listed node, and there is at least one (Go's ExpectPipeLined)."""
    if not nodes:
        if actual:
            got = ", ".join(f"{t} -> {n}" for t, n in actual)
            return [f"pipelined {job}: expected none, got {got}"]
        return []
    if not actual:
        return [f"pipelined {job}: expected tasks on {_listing(nodes)}, got none"]
    allowed = set(nodes)
    return [
        f"pipelined {job}: task {task} on {node}, expected one of {_listing(nodes)}"
        for task, node in actual
        if node not in allowed
    ]


def _pod_group(job: str, expected: PodGroupExpect, result: SimulationResult) -> list[str]:
    out: list[str] = []
    got = result.pod_groups.get(job)
    if got is None:
        if expected.phase is not None:
            # No status is written for a job kept out of the session (e.g. its queue is
            # missing): its phase is the one it already had.
            phase = _declared_phase(job, result)
            if phase != expected.phase:
                shown = "no such pod group" if phase is None else phase
                out.append(f"podGroup {job} phase: expected {expected.phase}, got {shown}")
        if expected.session_phase is not None or expected.unschedulable is not None:
            out.append(f"podGroup {job}: its job was not in the session")
        return out
    if expected.phase is not None and expected.phase != got.phase:
        out.append(f"podGroup {job} phase: expected {expected.phase}, got {got.phase}")
    if expected.session_phase is not None and expected.session_phase != got.session_phase:
        out.append(
            f"podGroup {job} sessionPhase: expected {expected.session_phase}, "
            f"got {got.session_phase}"
        )
    if expected.unschedulable is not None:
        messages = [
            c.message for c in got.conditions if c.type == "Unschedulable" and c.status == "True"
        ]
        if not messages:
            out.append(
                f"podGroup {job} unschedulable: expected a condition containing "
                f"{expected.unschedulable!r}, got no Unschedulable condition"
            )
        elif not any(expected.unschedulable in m for m in messages):
            out.append(
                f"podGroup {job} unschedulable: expected a condition containing "
                f"{expected.unschedulable!r}, got {messages[-1]!r}"
            )
    return out


def _declared_phase(job: str, result: SimulationResult) -> str | None:
    if result.cluster is None:
        return None
    for pg in result.cluster.pod_groups:
        if pg.meta.key == job:
            return pg.phase
    return None


def _pod(pod: str, expected: PodExpect, result: SimulationResult) -> list[str]:
    out: list[str] = []
    task = result.tasks.get(pod)
    if expected.node_given:
        node = task.node if task is not None else _declared_node(pod, result)
        if node != expected.node:
            want = expected.node or "not bound"
            got = node or "not bound"
            out.append(f"pod {pod} node: expected {want}, got {got}")
    if expected.status is not None:
        if task is None:
            out.append(f"pod {pod} status: expected {expected.status}, got no task in the session")
        elif task.status != expected.status:
            out.append(f"pod {pod} status: expected {expected.status}, got {task.status}")
    return out


def _declared_node(pod: str, result: SimulationResult) -> str | None:
    """Where a pod outside every job is: on the node it was declared on, if any."""
    if result.cluster is None:
        return None
    for p in result.cluster.pods:
        if p.meta.key == pod:
            return p.node_name or None
    return None


def _queue(queue: str, expected: QueueExpect, result: SimulationResult) -> list[str]:
    out = _queue_counts(queue, expected, result)
    if not expected.resources and expected.share is None:
        return out
    if result.queues is None:
        raise Unsupported(
            "the engine reports no queue shares: expect.queues' resources and share are "
            "read from vspec's engine only (its pod group counts from any engine)"
        )
    got = result.queues.get(queue)
    if got is None:
        return [
            *out,
            f"queue {queue}: no plugin of the last session kept shares of it (proportion "
            "and capacity keep them for the queues that have a job in the session)",
        ]
    for key, wanted in expected.resources.items():
        held: dict[str, float] = getattr(got, QUEUE_RESOURCES[key])
        for name, quantity in wanted.items():
            value = held.get(name)
            if value is None and key in ("capability", "realCapability"):
                out.append(
                    f"queue {queue} {key} {name}: expected {shown_amount(name, quantity)}, "
                    f"got unlimited ({got.plugin})"
                )
            elif not within_tolerance(quantity, value or 0.0, expected.tolerance):
                out.append(
                    f"queue {queue} {key} {name}: expected {shown_amount(name, quantity)}, "
                    f"got {shown_amount(name, value or 0.0)} ({got.plugin})"
                )
    share = expected.share
    if share is not None and not within_tolerance(share, got.share, expected.tolerance):
        out.append(f"queue {queue} share: expected {share:g}, got {got.share:g} ({got.plugin})")
    return out


def _queue_counts(queue: str, expected: QueueExpect, result: SimulationResult) -> list[str]:
    """Its pod groups by phase after the last session, as Volcano's queue controller
    counts them into the Queue's status."""
    if not expected.counts:
        return []
    groups = result.cluster.pod_groups if result.cluster is not None else []
    phases = Counter(pg.phase for pg in groups if pg.queue == queue)
    return [
        f"queue {queue} {key}: expected {count} pod group(s), got {phases[QUEUE_COUNTS[key]]}"
        for key, count in expected.counts.items()
        if phases[QUEUE_COUNTS[key]] != count
    ]


def _logs(expected: LogsExpect, lines: list[str]) -> list[str]:
    out = [
        f"logs.contains: no captured line contains {text!r}"
        for text in expected.contains
        if not any(text in line for line in lines)
    ]
    for pattern in expected.matches:
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            out.append(f"logs.matches: {pattern!r} is not a regular expression: {exc}")
            continue
        if not any(regex.search(line) for line in lines):
            out.append(f"logs.matches: no captured line matches {pattern!r}")
    for text in expected.absent:
        hit = next((line for line in lines if text in line), None)
        if hit is not None:
            out.append(f"logs.absent: {text!r} found in line {hit!r}")
    return out


def _probe_failures(probes: list[Probe], result: SimulationResult) -> list[str]:
    if result.probe_undecided and not result.probe_failures:
        raise Unsupported("the engine cannot decide " + "; ".join(result.probe_undecided))
    out: list[str] = []
    for failure in result.probe_failures:
        subject = _probe_subject(probes[failure.probe]) if failure.probe < len(probes) else ""
        out.append(f"probes[{failure.probe}]{subject} {failure.key}: {failure.message}")
    return out


def _probe_subject(probe: Probe) -> str:
    """`` (task c1/p1)``: which object a probe is about, so the index need not be counted."""
    from vspec.model.probes import JobProbe, TaskProbe, VictimProbe, VictimTasksProbe

    if isinstance(probe, TaskProbe):
        return f" (task {probe.task})"
    if isinstance(probe, JobProbe):
        return f" (job {probe.job})"
    if isinstance(probe, VictimProbe):
        return f" ({probe.kind} {probe.task})"
    if isinstance(probe, VictimTasksProbe):
        return " (victimTasks)"
    return f" (order {probe.order})"


def _listing(items: Iterable[str]) -> str:
    """A multiset shown sorted, so equal multisets print equal."""
    return "[" + ", ".join(sorted(items)) + "]"
