"""``vspec compare A B --workload FILE``: one timeline under two scheduler configurations.

Both runs load the same workload with the same seed, so they see the same arrivals and
run times; the table sets their metrics (:func:`vspec.timeline.metrics.standard_metrics`,
plus any ``--metric``) side by side with the difference, and says for each tag of jobs
which configuration made them wait less. ``--plots DIR`` writes the SVG plots,
``--csv DIR`` (or ``--parquet DIR``) the per-pod, per-job and per-tick records.

A report of two timeline runs, so it lives with the reports; imports the harness's
loader, the timeline and the Engine seam, and is handed the engine to run.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from vspec.errors import VspecError
from vspec.model.engine import Engine
from vspec.timeline import metrics as m
from vspec.timeline.expr import MetricError, evaluate, format_value, parse_bound
from vspec.timeline.records import TimelineResult

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@dataclass
class Run:
    name: str
    result: TimelineResult


def run_compare(args: argparse.Namespace, engine: Engine) -> int:
    """``vspec compare``'s handler (its command line is :mod:`vspec.cli.compare`'s): both
    timelines run on ``engine``."""
    from vspec.harness.loader import load_scheduler_conf, load_workload
    from vspec.timeline.clock import run_timeline

    for text in args.metric:
        try:
            parse_bound(f"{text} == 0")
        except MetricError as exc:
            print(f"vspec: error: --metric {text!r}: {exc}", file=sys.stderr)
            return EXIT_USAGE
    runs: list[Run] = []
    try:
        for path, name in zip(args.confs, _names(args.confs), strict=True):
            conf = load_scheduler_conf(path)
            cluster, timeline = load_workload(args.workload, options=conf.options, seed=args.seed)
            print(f"running {name} ({path}) ...", file=sys.stderr, flush=True)
            result = run_timeline(conf, cluster, timeline, seed=args.seed, engine=engine)
            runs.append(Run(name, result))
    except VspecError as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print_table(runs, args.metric, sys.stdout)
    return _write_files(runs, args.plots, args.csv, args.parquet)


def _names(paths: Sequence[Path]) -> list[str]:
    stems = [p.stem.removesuffix("-configmap") for p in paths]
    return stems if len(set(stems)) == len(stems) else ["A", "B"]


def _write_files(
    runs: list[Run], plots: Path | None, csv_dir: Path | None, parquet_dir: Path | None
) -> int:
    try:
        if plots is not None:
            from vspec.report.timeline_plots import all_plots

            plots.mkdir(parents=True, exist_ok=True)
            for file, svg in all_plots({r.name: r.result for r in runs}).items():
                (plots / file).write_text(svg, encoding="utf-8")
            print(f"plots written to {plots}/", file=sys.stderr)
        if csv_dir is not None:
            from vspec.timeline.export import write_csv

            for run in runs:
                write_csv(run.result, csv_dir, prefix=f"{run.name}-")
            print(f"CSV records written to {csv_dir}/", file=sys.stderr)
        if parquet_dir is not None:
            from vspec.timeline.export import write_parquet

            for run in runs:
                write_parquet(run.result, parquet_dir, prefix=f"{run.name}-")
            print(f"Parquet records written to {parquet_dir}/", file=sys.stderr)
    except (VspecError, OSError) as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def print_table(runs: list[Run], extra: Sequence[str], out: TextIO) -> None:
    rows = m.standard_metrics(r.result for r in runs)
    rows += [m.Metric(text, text, False, "lower") for text in extra]
    a, b = runs
    table = [("metric", a.name, b.name, f"{b.name} - {a.name}")]
    verdicts = []
    for row in rows:
        va, vb = _value(row.expression, a.result), _value(row.expression, b.result)
        table.append(
            (row.name, _cell(va, row.duration), _cell(vb, row.duration), _difference(va, vb, row))
        )

    widths = [max(len(r[i]) for r in table) for i in range(4)]
    for i, cells in enumerate(table):
        out.write(
            "  ".join(
                c.ljust(w) if j == 0 else c.rjust(w)
                for j, (c, w) in enumerate(zip(cells, widths, strict=True))
            ).rstrip()
            + "\n"
        )
        if i == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")
    verdicts = [_verdict(tag, a, b) for tag in [None, *m.union(m.tags(r.result) for r in runs)]]
    footer = [_cost(r) for r in runs]
    out.write("\n" + "\n".join([*verdicts, *footer]) + "\n")


def _cost(run: Run) -> str:
    r = run.result
    return (
        f"{run.name}: {r.sessions} sessions run, {r.skipped} periods jumped, "
        + f"{r.cpu_seconds:.1f} CPU-s"
    )


def _value(expression: str, result: TimelineResult) -> float | None:
    try:
        return evaluate(expression, result)
    except MetricError:
        return None  # e.g. no job with this tag in this run


def _cell(value: float | None, duration: bool) -> str:
    return "-" if value is None else format_value(value, duration=duration)


def _difference(a: float | None, b: float | None, row: m.Metric) -> str:
    if a is None or b is None or (math.isinf(a) and math.isinf(b)):
        return ""
    if math.isinf(a) or math.isinf(b):
        better = math.isinf(a) == (row.better == "lower")
        return "better" if better else "worse"
    delta = b - a
    if abs(delta) < 1e-9:
        return "same"
    text = format_value(delta, duration=row.duration) if row.duration else f"{delta:+.4g}"
    if row.duration and delta > 0:
        text = "+" + text
    if a and abs(delta / a) < 10:
        text += f" ({delta / abs(a):+.0%})"
    improved = (delta < 0) == (row.better == "lower")
    return f"{text} {'better' if improved else 'worse'}"


def _verdict(tag: str | None, a: Run, b: Run) -> str:
    """Which run made these jobs wait less: fewer never started, else the lower median
    wait, else the lower mean wait of those that started."""
    where = m.JobFilter(tag=tag)
    what = f"jobs tagged {tag}" if tag else "all jobs"
    sides = [_standing(m.job_values(r.result, "wait", where)) for r in (a, b)]
    if not sides[0][0] or not sides[1][0]:
        return f"{what}: not in both runs"
    rank_a, rank_b = sides[0][1:], sides[1][1:]  # never started, median, mean
    if rank_a == rank_b:
        return f"{what}: wait the same under both"
    a_first = rank_a < rank_b
    winner, loser = (a, b) if a_first else (b, a)
    w, lo = (sides[0], sides[1]) if a_first else (sides[1], sides[0])
    return (
        f"{what} wait less under {winner.name}: {_summary(w)} against {_summary(lo)} "
        f"under {loser.name}"
    )


def _standing(waits: list[float]) -> tuple[int, int, float, float]:
    started = [w for w in waits if not math.isinf(w)]
    median = m.percentile(waits, 50) if waits else math.inf
    mean = m.mean(started) if started else math.inf
    return len(waits), len(waits) - len(started), median, mean


def _summary(side: tuple[int, int, float, float]) -> str:
    jobs, never, median, mean = side
    started = f"{jobs - never} of {jobs} started"
    return (
        f"{started}, median wait {format_value(median, duration=True)}, "
        f"mean of the started {format_value(mean, duration=True)}"
    )
