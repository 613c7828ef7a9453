"""vspec's engine's answers to probes, from an opened session (spec format, "Probes").

Probes ask the session's dispatchers exactly what an action would ask, so a probe
failure reads like a failing Go unit test of a plugin function. The answers are judged
against the probes by :mod:`vspec.model.probe_answers`, as the real engine's are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.api.unschedule_info import FitError
from vspec.errors import GoError
from vspec.framework.session import Session
from vspec.framework.session_plugins import Kind
from vspec.model.probe_answers import judge
from vspec.model.probes import JobProbe, OrderProbe, Probe, TaskProbe, VictimProbe, VictimTasksProbe
from vspec.model.result import ProbeAnswer, SimulationResult
from vspec.util.scheduler_helper import prioritize_nodes, select_best_node

T = TypeVar("T")


def find_task(ssn: Session, key: str) -> TaskInfo:
    for job in ssn.jobs.values():
        for task in job.tasks.values():
            if task.key == key:
                return task
    for pod in ssn.cluster.pods:
        if pod.meta.key == key:
            return TaskInfo(pod)
    raise LookupError(f"no pod {key!r} in the cluster")


def find_job(ssn: Session, key: str) -> JobInfo:
    job = ssn.jobs.get(key)
    if job is not None:
        return job
    # Not in the session (e.g. its queue is missing): build it as the snapshot would.
    for pg in ssn.cluster.pod_groups:
        if f"{pg.meta.namespace}/{pg.meta.name}" == key:
            job = JobInfo(key, pg)
            for pod in ssn.cluster.pods:
                if pod.job_id == key:
                    job.add_task_info(TaskInfo(pod))
            return job
    raise LookupError(f"no pod group {key!r} in the cluster")


def _node(ssn: Session, name: str) -> NodeInfo:
    node = ssn.nodes.get(name)
    if node is None:
        raise LookupError(f"no node {name!r} in the session")
    return node


def _listed(ssn: Session, kind: Kind, plugin: str) -> list[Any]:
    """The plugin's ``kind`` function once per tier entry that lists and enables it: a
    plugin listed twice is called twice, so its share of the total counts twice."""
    return [fn for tier in ssn.chain(kind) for name, fn in tier if name == plugin]


def _pre_predicate_error(ssn: Session, task: TaskInfo) -> str | None:
    """Actions run PrePredicate before predicates (it fills the K8s cycle state)."""
    try:
        ssn.pre_predicate_fn(task)
    except GoError as exc:
        return str(exc)
    return None


def _task_answer(ssn: Session, probe: TaskProbe, out: ProbeAnswer) -> None:
    task = find_task(ssn, probe.task)
    pre_error = _pre_predicate_error(ssn, task) if probe.predicates else None
    for name in probe.predicates or {}:
        error: str | None = pre_error
        try:
            if pre_error is None:
                ssn.predicate_fn(task, _node(ssn, name))
        except FitError as fe:
            error = str(fe)
        except GoError as exc:
            error = str(exc)
        out.predicates[name] = error
    if probe.scores is not None or probe.best_node is not None:
        names = list(probe.scores or {})
        nodes = [_node(ssn, name) for name in names]
        batch = ssn.batch_node_order_fn(task, nodes)
        for name in probe.scores or {}:
            out.scores[name] = ssn.node_order_fn(task, ssn.nodes[name]) + batch.get(name, 0.0)
        if probe.best_node is not None:
            scores = prioritize_nodes(ssn, task, nodes)
            best = ssn.best_node_fn(task, scores) or select_best_node(ssn, task, scores)
            out.best = [best.name] if best is not None else []
    for plugin, expected_scores in (probe.plugin_scores or {}).items():
        # A plugin whose enableNodeOrder is off contributes nothing to the total.
        orders = _listed(ssn, "node_order", plugin)
        nodes = [_node(ssn, name) for name in expected_scores]
        batches = [fn(task, nodes) for fn in _listed(ssn, "batch_node_order", plugin)]
        got = out.plugin_scores[plugin] = {}
        for name in expected_scores:
            order_score = sum(fn(task, ssn.nodes[name]) for fn in orders)
            got[name] = order_score + sum(batch.get(name, 0.0) for batch in batches)


def _job_answer(ssn: Session, probe: JobProbe, out: ProbeAnswer) -> None:
    job = find_job(ssn, probe.job)
    votes: list[tuple[str, bool | None, Callable[[JobInfo], bool]]] = [
        ("enqueueable", probe.enqueueable, ssn.job_enqueueable),
        ("ready", probe.ready, ssn.job_ready),
        ("pipelined", probe.pipelined, ssn.job_pipelined),
        ("starving", probe.starving, ssn.job_starving),
    ]
    for key, expected, fn in votes:
        if expected is not None:
            out.votes[key] = fn(job)
    if probe.valid is not None:
        result = ssn.job_valid(job)
        passed = result is None or result.passed
        out.valid = (passed, "" if result is None else f"{result.reason}: {result.message}")


def _sorted(items: list[T], less: Callable[[T, T], bool]) -> list[T]:
    def cmp(a: T, b: T) -> int:
        if less(a, b):
            return -1
        if less(b, a):
            return 1
        return 0

    return sorted(items, key=functools.cmp_to_key(cmp))


def _order(ssn: Session, probe: OrderProbe) -> list[str]:
    if probe.order == "jobs":
        jobs = [find_job(ssn, key) for key in probe.items]
        return [j.uid for j in _sorted(jobs, ssn.job_order_fn)]
    if probe.order == "tasks":
        tasks = [find_task(ssn, key) for key in probe.items]
        return [t.key for t in _sorted(tasks, ssn.task_order_fn)]
    if probe.order == "queues":
        queues = [ssn.queues[name] for name in probe.items]
        return [q.name for q in _sorted(queues, ssn.queue_order_fn)]
    # Volcano v1.11 registers no namespace order: items keep their given order.
    return list(probe.items)


def answer(ssn: Session, probes: Sequence[Probe]) -> list[ProbeAnswer]:
    """Each probe's answers from the session (judged by :func:`vspec.model.probe_answers.judge`)."""
    answers: list[ProbeAnswer] = []
    for probe in probes:
        out = ProbeAnswer()
        try:
            _answer_one(ssn, probe, out)
        except LookupError as exc:
            out = ProbeAnswer(missing=str(exc.args[0]))
        answers.append(out)
    return answers


def evaluate(ssn: Session, probes: Sequence[Probe], result: SimulationResult) -> None:
    """The probes' answers on this session and their failures, into ``result``: vspec's
    engine answers every key (its undecided keys, a best node among ties, are for the
    real Volcano's draw to decide, not its own)."""
    result.probe_answers = answer(ssn, probes)
    result.probe_failures = judge(probes, result.probe_answers).failures


def _answer_one(ssn: Session, probe: Probe, out: ProbeAnswer) -> None:
    if isinstance(probe, TaskProbe):
        _task_answer(ssn, probe, out)
    elif isinstance(probe, JobProbe):
        _job_answer(ssn, probe, out)
    elif isinstance(probe, VictimProbe):
        task = find_task(ssn, probe.task)
        candidates = [find_task(ssn, key) for key in probe.candidates]
        fn = ssn.preemptable if probe.kind == "preemptor" else ssn.reclaimable
        out.victims = [t.key for t in fn(task, candidates)]
    elif isinstance(probe, VictimTasksProbe):
        tasks = [find_task(ssn, key) for key in probe.tasks]
        out.victims = [t.key for t in ssn.victim_tasks(tasks)]
    else:
        out.order = _order(ssn, probe)
