"""Evaluating probes on an opened session (spec format, "Probes").

Probes ask the session's dispatchers exactly what an action would ask, so a probe
failure reads like a failing Go unit test of a plugin function.
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
from vspec.model.probes import JobProbe, OrderProbe, Probe, TaskProbe, VictimProbe, VictimTasksProbe
from vspec.model.quantity import within_tolerance
from vspec.model.result import ProbeFailure
from vspec.util.scheduler_helper import prioritize_nodes, select_best_node

T = TypeVar("T")


class _Failures:
    def __init__(self, index: int) -> None:
        self.index = index
        self.items: list[ProbeFailure] = []

    def add(self, key: str, message: str) -> None:
        self.items.append(ProbeFailure(self.index, key, message))


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


def _task_probe(ssn: Session, probe: TaskProbe, out: _Failures) -> None:
    task = find_task(ssn, probe.task)
    pre_error = _pre_predicate_error(ssn, task) if probe.predicates else None
    for name, expected in (probe.predicates or {}).items():
        error: str | None = pre_error
        try:
            if pre_error is None:
                ssn.predicate_fn(task, _node(ssn, name))
        except FitError as fe:
            error = str(fe)
        except GoError as exc:
            error = str(exc)
        if expected is True and error is not None:
            out.add(f"predicates.{name}", f"expected to pass, failed: {error}")
        elif expected is False and error is None:
            out.add(f"predicates.{name}", "expected to fail, passed")
        elif isinstance(expected, str) and (error is None or expected not in error):
            outcome = "passed" if error is None else f"failed: {error}"
            out.add(f"predicates.{name}", f"expected a failure containing {expected!r}, {outcome}")
    if probe.scores is not None or probe.best_node is not None:
        names = list(probe.scores or {})
        nodes = [_node(ssn, name) for name in names]
        batch = ssn.batch_node_order_fn(task, nodes)
        for name, expected_score in (probe.scores or {}).items():
            score = ssn.node_order_fn(task, ssn.nodes[name]) + batch.get(name, 0.0)
            if not within_tolerance(expected_score, score, probe.tolerance):
                out.add(f"scores.{name}", f"expected {expected_score}, got {score}")
        if probe.best_node is not None:
            scores = prioritize_nodes(ssn, task, nodes)
            best = ssn.best_node_fn(task, scores) or select_best_node(ssn, scores)
            got_name = best.name if best is not None else None
            if got_name != probe.best_node:
                out.add("bestNode", f"expected {probe.best_node}, got {got_name}")
    for plugin, expected_scores in (probe.plugin_scores or {}).items():
        # A plugin whose enableNodeOrder is off contributes nothing to the total.
        orders = _listed(ssn, "node_order", plugin)
        nodes = [_node(ssn, name) for name in expected_scores]
        batches = [fn(task, nodes) for fn in _listed(ssn, "batch_node_order", plugin)]
        for name, expected_score in expected_scores.items():
            order_score = sum(fn(task, ssn.nodes[name]) for fn in orders)
            plugin_score = order_score + sum(batch.get(name, 0.0) for batch in batches)
            if not within_tolerance(expected_score, plugin_score, probe.tolerance):
                out.add(
                    f"pluginScores.{plugin}.{name}",
                    f"expected {expected_score}, got {plugin_score}",
                )


def _job_probe(ssn: Session, probe: JobProbe, out: _Failures) -> None:
    job = find_job(ssn, probe.job)
    checks: list[tuple[str, bool | None, Callable[[JobInfo], bool]]] = [
        ("enqueueable", probe.enqueueable, ssn.job_enqueueable),
        ("ready", probe.ready, ssn.job_ready),
        ("pipelined", probe.pipelined, ssn.job_pipelined),
        ("starving", probe.starving, ssn.job_starving),
    ]
    for key, expected, fn in checks:
        if expected is not None:
            got = fn(job)
            if got != expected:
                out.add(key, f"expected {str(expected).lower()}, got {str(got).lower()}")
    if probe.valid is not None:
        result = ssn.job_valid(job)
        passed = result is None or result.passed
        message = "" if result is None else f"{result.reason}: {result.message}"
        if probe.valid is True and not passed:
            out.add("valid", f"expected valid, got invalid ({message})")
        elif probe.valid is False and passed:
            out.add("valid", "expected invalid, got valid")
        elif isinstance(probe.valid, str) and (passed or probe.valid not in message):
            out.add("valid", f"expected invalid with {probe.valid!r}, got {message or 'valid'}")


def _victims(got: Sequence[TaskInfo], expected: list[str], key: str, out: _Failures) -> None:
    got_keys = sorted(t.key for t in got)
    if got_keys != sorted(expected):
        out.add(key, f"expected {sorted(expected)}, got {got_keys}")


def _sorted(items: list[T], less: Callable[[T, T], bool]) -> list[T]:
    def cmp(a: T, b: T) -> int:
        if less(a, b):
            return -1
        if less(b, a):
            return 1
        return 0

    return sorted(items, key=functools.cmp_to_key(cmp))


def _order_probe(ssn: Session, probe: OrderProbe, out: _Failures) -> None:
    got: list[str]
    if probe.order == "jobs":
        jobs = [find_job(ssn, key) for key in probe.items]
        got = [j.uid for j in _sorted(jobs, ssn.job_order_fn)]
    elif probe.order == "tasks":
        tasks = [find_task(ssn, key) for key in probe.items]
        got = [t.key for t in _sorted(tasks, ssn.task_order_fn)]
    elif probe.order == "queues":
        queues = [ssn.queues[name] for name in probe.items]
        got = [q.name for q in _sorted(queues, ssn.queue_order_fn)]
    else:
        # Volcano v1.11 registers no namespace order: items keep their given order.
        got = list(probe.items)
    if got != probe.expect:
        out.add("expect", f"expected order {probe.expect}, got {got}")


def evaluate(ssn: Session, probes: Sequence[Probe]) -> list[ProbeFailure]:
    failures: list[ProbeFailure] = []
    for index, probe in enumerate(probes):
        out = _Failures(index)
        try:
            _evaluate_one(ssn, probe, out)
        except LookupError as exc:
            out.add("probe", str(exc.args[0]))
        failures.extend(out.items)
    return failures


def _evaluate_one(ssn: Session, probe: Any, out: _Failures) -> None:
    if isinstance(probe, TaskProbe):
        _task_probe(ssn, probe, out)
    elif isinstance(probe, JobProbe):
        _job_probe(ssn, probe, out)
    elif isinstance(probe, VictimProbe):
        task = find_task(ssn, probe.task)
        candidates = [find_task(ssn, key) for key in probe.candidates]
        fn = ssn.preemptable if probe.kind == "preemptor" else ssn.reclaimable
        _victims(fn(task, candidates), probe.victims, "victims", out)
    elif isinstance(probe, VictimTasksProbe):
        tasks = [find_task(ssn, key) for key in probe.tasks]
        _victims(ssn.victim_tasks(tasks), probe.victims, "victims", out)
    elif isinstance(probe, OrderProbe):
        _order_probe(ssn, probe, out)
