"""Metrics of a timeline run, from its records alone: per job the wait (submit to
minAvailable pods bound) and completion (submit to every pod finished), per queue the
share of the cluster over time against vspec's fair-share reference, utilisation per
resource over time, evictions and makespan. ``expect.metrics`` (:mod:`vspec.timeline.expr`)
and ``vspec compare`` read these; a job that never started waits forever (``inf``).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from vspec.timeline.records import JobRecord, Tick, TimelineResult

INF = math.inf
JOB_SERIES = ("wait", "completion")


JOB_STATES = ("started", "unstarted", "completed", "unfinished")


@dataclass(frozen=True)
class JobFilter:
    tag: str | None = None
    queue: str | None = None
    job: str | None = None  # a glob over ns/name
    state: str | None = None  # one of JOB_STATES

    def __call__(self, job: JobRecord) -> bool:
        if self.tag is not None and self.tag not in job.tags:
            return False
        if self.state is not None and not _in_state(job, self.state):
            return False
        if self.queue is not None and job.queue != self.queue:
            return False
        return self.job is None or fnmatch.fnmatchcase(job.key, self.job)

    def describe(self) -> str:
        parts = [
            f"{k}={v}" for k, v in (("tag", self.tag), ("queue", self.queue), ("job", self.job))
        ]
        return ", ".join(p for p in parts if not p.endswith("=None"))


def _in_state(job: JobRecord, state: str) -> bool:
    if state in ("started", "unstarted"):
        return (job.started is not None) == (state == "started")
    return (job.completed is not None) == (state == "completed")


def jobs(result: TimelineResult, where: JobFilter = JobFilter()) -> list[JobRecord]:
    return [j for j in result.jobs.values() if where(j)]


def job_values(result: TimelineResult, series: str, where: JobFilter = JobFilter()) -> list[float]:
    """One value per selected job: seconds of wait or of completion."""
    values = []
    for job in jobs(result, where):
        end = job.started if series == "wait" else job.completed
        values.append(INF if end is None else (end - job.submitted).total_seconds())
    return values


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank percentile (p in 0..100): a value some job actually had."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def makespan(result: TimelineResult) -> float:
    """Seconds from the start of the clock to the last job's completion (inf if any
    job never completed)."""
    ends = [j.completed for j in result.jobs.values()]
    if any(e is None for e in ends):
        return INF
    return max(((e - result.start).total_seconds() for e in ends if e is not None), default=0.0)


# -- series over time ------------------------------------------------------------------------


def durations(result: TimelineResult) -> list[float]:
    """How long each tick's state held, in seconds (the last one until the end)."""
    ticks = result.ticks
    out = []
    for i, tick in enumerate(ticks):
        end = ticks[i + 1].time if i + 1 < len(ticks) else result.end
        out.append(max(0.0, (end - tick.time).total_seconds()))
    return out


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole > 0 else 0.0


def utilisation(result: TimelineResult, resource: str) -> list[float]:
    return [_ratio(t.used.get(resource, 0.0), t.capacity.get(resource, 0.0)) for t in result.ticks]


def _dominant(amounts: dict[str, float], tick: Tick) -> float:
    return max((_ratio(v, tick.capacity.get(n, 0.0)) for n, v in amounts.items()), default=0.0)


def share(result: TimelineResult, queue: str) -> list[float]:
    """The queue's dominant share of the cluster: its largest used/capacity ratio."""
    return [_dominant(t.queue_used.get(queue, {}), t) for t in result.ticks]


def deserved(result: TimelineResult, queue: str) -> list[float]:
    return [_dominant(t.queue_deserved.get(queue, {}), t) for t in result.ticks]


def fairness(result: TimelineResult, queue: str) -> list[float]:
    """Used over deserved, in the resource where the queue is shortest of it; 1 when it
    deserves nothing (it wants nothing)."""
    out = []
    for t in result.ticks:
        wanted = {n: v for n, v in t.queue_deserved.get(queue, {}).items() if v > 0}
        used = t.queue_used.get(queue, {})
        out.append(min((used.get(n, 0.0) / v for n, v in wanted.items()), default=1.0))
    return out


def tick_counts(result: TimelineResult, what: Callable[[Tick], float]) -> list[float]:
    return [what(t) for t in result.ticks]


def time_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    total = sum(weights)
    if total <= 0:
        return values[-1] if values else 0.0
    return sum(v * w for v, w in zip(values, weights, strict=True)) / total


def longest(holds: Sequence[bool], weights: Sequence[float]) -> float:
    """The longest stretch of consecutive ticks over which a condition holds (seconds)."""
    best = run = 0.0
    for ok, w in zip(holds, weights, strict=True):
        run = run + w if ok else 0.0
        best = max(best, run)
    return best


def total(holds: Sequence[bool], weights: Sequence[float]) -> float:
    return sum(w for ok, w in zip(holds, weights, strict=True) if ok)


def queues(result: TimelineResult) -> list[str]:
    names: dict[str, None] = {}
    for tick in result.ticks:
        names.update(dict.fromkeys(tick.queue_used))
    return list(names)


def resources(result: TimelineResult) -> list[str]:
    names: dict[str, None] = {}
    for tick in result.ticks:
        names.update(dict.fromkeys(tick.capacity))
    return list(names)


def tags(result: TimelineResult) -> list[str]:
    names: dict[str, None] = {}
    for job in result.jobs.values():
        names.update(dict.fromkeys(job.tags))
    return list(names)


# -- the standard table ------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """One row of ``vspec compare``'s table: a name and the expression that computes it."""

    name: str
    expression: str
    duration: bool  # printed as a duration
    better: str  # "lower" or "higher": which way a difference is an improvement


def standard_metrics(runs: Iterable[TimelineResult]) -> list[Metric]:
    """The rows every comparison shows, for the tags, queues and resources the runs have."""
    runs = list(runs)
    found_tags = union(tags(r) for r in runs)
    found_queues = union([j.queue for j in r.jobs.values() if j.queue] for r in runs)
    found_resources = union(resources(r) for r in runs)
    rows = [
        Metric("jobs", "jobs", False, "higher"),
        Metric("makespan", "makespan", True, "lower"),
        Metric("evictions", "evictions", False, "lower"),
    ]
    for where, label in [("", "all jobs"), *((f", tag={t!r}", f"tag {t}") for t in found_tags)]:
        started = f"{where}, state=started"
        rows += [
            Metric(f"never started ({label})", f"count(state=unstarted{where})", False, "lower"),
            Metric(f"not completed ({label})", f"count(state=unfinished{where})", False, "lower"),
            Metric(f"wait p50 ({label})", f"p50(wait{where})", True, "lower"),
            Metric(f"wait p95 ({label})", f"p95(wait{where})", True, "lower"),
            Metric(f"wait mean, started ({label})", f"mean(wait{started})", True, "lower"),
            Metric(f"wait max, started ({label})", f"max(wait{started})", True, "lower"),
            Metric(f"completion p50 ({label})", f"p50(completion{where})", True, "lower"),
        ]
    for r in found_resources:
        rows.append(Metric(f"utilisation {r} (mean)", f"mean(util({r!r}))", False, "higher"))
    for q in found_queues:
        rows.append(Metric(f"queue {q} share (mean)", f"mean(share({q!r}))", False, "higher"))
        below = f"total(fairness({q!r}) < 0.8)"
        rows.append(Metric(f"queue {q} below 80% of deserved", below, True, "lower"))
    return rows


def union(lists: Iterable[list[str]]) -> list[str]:
    out: dict[str, None] = {}
    for names in lists:
        out.update(dict.fromkeys(names))
    return list(out)
