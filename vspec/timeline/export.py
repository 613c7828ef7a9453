"""Exports of a timeline run's records, for a user's own analysis (pandas, polars, a
spreadsheet): one row per pod, per job and per tick, times in seconds after the start.

CSV needs nothing; Parquet (typed columns, compressed) needs pyarrow, an optional extra
(``pip install 'vspec[parquet]'``): a large native library that most users of vspec never
need, so it is imported only when Parquet is asked for.
"""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

from vspec.errors import VspecError
from vspec.timeline import metrics as m
from vspec.timeline.records import TimelineResult

# A cell: text, a count, a quantity or a time in seconds; None where there is none (a
# pod never bound), an empty CSV cell and a Parquet null.
Cell = str | int | float | None
Row = dict[str, Cell]

PARQUET_EXTRA = "pip install 'vspec[parquet]'"


def _seconds(result: TimelineResult, moment: datetime | None) -> float | None:
    return None if moment is None else (moment - result.start).total_seconds()


def pod_rows(result: TimelineResult) -> list[Row]:
    return [
        {
            "pod": p.key,
            "job": p.job,
            "queue": p.queue,
            "submitted": _seconds(result, p.submitted),
            "bound": _seconds(result, p.bound),
            "node": p.node,
            "finished": _seconds(result, p.finished),
            "binds": p.binds,
            "evictions": p.evictions,
        }
        for p in result.pods.values()
    ]


def job_rows(result: TimelineResult) -> list[Row]:
    return [
        {
            "job": j.key,
            "queue": j.queue,
            "tags": " ".join(j.tags),
            "minAvailable": j.min_available,
            "pods": j.pods,
            "submitted": _seconds(result, j.submitted),
            "started": _seconds(result, j.started),
            "completed": _seconds(result, j.completed),
            "evictions": j.evictions,
        }
        for j in result.jobs.values()
    ]


def tick_rows(result: TimelineResult) -> list[Row]:
    resources, queues = m.resources(result), m.queues(result)
    rows = []
    for t in result.ticks:
        row: Row = {
            "time": _seconds(result, t.time),
            "session": int(t.session),
            "pending": t.pending,
            "running": t.running,
            "binds": t.binds,
            "evictions": t.evictions,
        }
        for r in resources:
            row[f"used:{r}"] = float(t.used.get(r, 0.0))
            row[f"capacity:{r}"] = float(t.capacity.get(r, 0.0))
        for q in queues:
            for r in resources:
                row[f"queue:{q}:used:{r}"] = float(t.queue_used.get(q, {}).get(r, 0.0))
                row[f"queue:{q}:deserved:{r}"] = float(t.queue_deserved.get(q, {}).get(r, 0.0))
        rows.append(row)
    return rows


def _tables(result: TimelineResult) -> list[tuple[str, list[Row]]]:
    return [("pods", pod_rows(result)), ("jobs", job_rows(result)), ("ticks", tick_rows(result))]


def _text(cell: Cell) -> str:
    if cell is None:
        return ""
    return f"{cell:g}" if isinstance(cell, float) else str(cell)


def write_csv(result: TimelineResult, directory: Path, prefix: str = "") -> list[Path]:
    """``<prefix>pods.csv``, ``<prefix>jobs.csv`` and ``<prefix>ticks.csv`` in ``directory``.
    Resources are in Volcano's units: cpu in millicores, memory in bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in _tables(result):
        path = directory / f"{prefix}{name}.csv"
        with path.open("w", newline="", encoding="utf-8") as out:
            fields = list(rows[0]) if rows else []
            writer = csv.DictWriter(out, fieldnames=fields)
            writer.writeheader()
            writer.writerows({k: _text(v) for k, v in row.items()} for row in rows)
        written.append(path)
    return written


def write_parquet(result: TimelineResult, directory: Path, prefix: str = "") -> list[Path]:
    """The CSV tables as ``<prefix>pods.parquet``, ``jobs`` and ``ticks``, with typed
    columns (times and quantities as doubles, counts as integers, missing times null).

    Raises :class:`VspecError` naming the extra to install when pyarrow is missing.
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise VspecError(f"Parquet export needs pyarrow: {PARQUET_EXTRA}") from exc
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in _tables(result):
        path = directory / f"{prefix}{name}.parquet"
        pq.write_table(pa.Table.from_pylist(rows), path)
        written.append(path)
    return written
