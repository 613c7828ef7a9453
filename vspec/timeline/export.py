"""CSV exports of a timeline run's records, for a user's own analysis (pandas, polars,
a spreadsheet): one row per pod, per job and per tick, times in seconds after the start.

Parquet is left out on purpose: the one cheap writer (pyarrow) is a large native
dependency for three small tables, and every tool that reads Parquet reads CSV.
"""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

from vspec.timeline import metrics as m
from vspec.timeline.records import TimelineResult


def _seconds(result: TimelineResult, moment: datetime | None) -> str:
    return "" if moment is None else f"{(moment - result.start).total_seconds():g}"


def pod_rows(result: TimelineResult) -> list[dict[str, str]]:
    return [
        {
            "pod": p.key,
            "job": p.job,
            "queue": p.queue,
            "submitted": _seconds(result, p.submitted),
            "bound": _seconds(result, p.bound),
            "node": p.node,
            "finished": _seconds(result, p.finished),
            "binds": str(p.binds),
            "evictions": str(p.evictions),
        }
        for p in result.pods.values()
    ]


def job_rows(result: TimelineResult) -> list[dict[str, str]]:
    return [
        {
            "job": j.key,
            "queue": j.queue,
            "tags": " ".join(j.tags),
            "minAvailable": str(j.min_available),
            "pods": str(j.pods),
            "submitted": _seconds(result, j.submitted),
            "started": _seconds(result, j.started),
            "completed": _seconds(result, j.completed),
            "evictions": str(j.evictions),
        }
        for j in result.jobs.values()
    ]


def tick_rows(result: TimelineResult) -> list[dict[str, str]]:
    resources, queues = m.resources(result), m.queues(result)
    rows = []
    for t in result.ticks:
        row = {
            "time": _seconds(result, t.time),
            "session": str(int(t.session)),
            "pending": str(t.pending),
            "running": str(t.running),
            "binds": str(t.binds),
            "evictions": str(t.evictions),
        }
        for r in resources:
            row[f"used:{r}"] = f"{t.used.get(r, 0.0):g}"
            row[f"capacity:{r}"] = f"{t.capacity.get(r, 0.0):g}"
        for q in queues:
            for r in resources:
                row[f"queue:{q}:used:{r}"] = f"{t.queue_used.get(q, {}).get(r, 0.0):g}"
                row[f"queue:{q}:deserved:{r}"] = f"{t.queue_deserved.get(q, {}).get(r, 0.0):g}"
        rows.append(row)
    return rows


def write_csv(result: TimelineResult, directory: Path, prefix: str = "") -> list[Path]:
    """``<prefix>pods.csv``, ``<prefix>jobs.csv`` and ``<prefix>ticks.csv`` in ``directory``.
    Resources are in Volcano's units: cpu in millicores, memory in bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in (
        ("pods", pod_rows(result)),
        ("jobs", job_rows(result)),
        ("ticks", tick_rows(result)),
    ):
        path = directory / f"{prefix}{name}.csv"
        with path.open("w", newline="", encoding="utf-8") as out:
            fields = list(rows[0]) if rows else []
            writer = csv.DictWriter(out, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
        written.append(path)
    return written
