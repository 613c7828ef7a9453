"""``vspec compare A B [C ...] --workload FILE``: one timeline under several scheduler
configurations.

Every run loads the same workload with the same seed, so they all see the same arrivals
and run times; the table sets their metrics (:func:`vspec.timeline.metrics.standard_metrics`,
plus any ``--metric``) side by side, each run's difference from the first, and says for
each tag of jobs which configuration made them wait least. ``--plots DIR`` writes the SVG
plots, ``--csv DIR`` (or ``--parquet DIR``) the per-pod, per-job and per-tick records.

A conf that cannot be read, or whose run fails, is reported with its file and the others
still make their columns (the exit status says one failed); a workload that cannot be
loaded stops the comparison. The runs themselves (serial or ``--workers`` processes, and
their progress) are :mod:`vspec.report.compare_runs`'.

A report of timeline runs, so it lives with the reports; imports the harness's loader,
the timeline and the Engine seam, and is handed the engine to run and the view that
shows the runs' progress.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from vspec.errors import VspecError
from vspec.model.engine import Engine
from vspec.report.compare_runs import ConfRun, Failure, ProgressView, Run, Workload, run_confs
from vspec.timeline import metrics as m
from vspec.timeline.expr import MetricError, evaluate, format_value, parse_bound
from vspec.timeline.records import TimelineResult

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# The view of the runs' progress, given each run's name and file.
ViewFactory = Callable[[dict[str, Path]], ProgressView]


def run_compare(args: argparse.Namespace, engine: Engine, view: ViewFactory) -> int:
    """``vspec compare``'s handler (its command line is :mod:`vspec.cli.compare`'s): every
    conf's timeline runs on ``engine``, shown by ``view``."""
    if len(args.confs) < 2:
        print("vspec: error: compare needs two confs or more", file=sys.stderr)
        return EXIT_USAGE
    for text in args.metric:
        try:
            parse_bound(f"{text} == 0")
        except MetricError as exc:
            print(f"vspec: error: --metric {text!r}: {exc}", file=sys.stderr)
            return EXIT_USAGE
    confs, status = _read_confs(args.confs)
    if not confs:
        return status
    workload = Workload(args.workload, args.seed, args.until)
    named = {conf.name: conf.path for conf in confs}
    outcomes = run_confs(confs, workload, engine, view(named), args.workers)
    failures = [o for o in outcomes if isinstance(o, Failure)]
    if any(f.workload for f in failures):
        print(f"vspec: error: {failures[-1].message}", file=sys.stderr)
        return EXIT_USAGE
    for failure in failures:
        print(f"vspec: error: {failure.message}", file=sys.stderr)
    runs = [o for o in outcomes if isinstance(o, Run)]
    if failures:
        status = max(status, EXIT_FAILED)
    if runs:
        print_table(runs, args.metric, sys.stdout)
    return max(status, _write_files(runs, args.plots, args.csv, args.parquet))


def _read_confs(paths: Sequence[Path]) -> tuple[list[ConfRun], int]:
    """The confs that can be read, each named for its column, and the exit status so far
    (a usage error, said with its file, line and key, for each that cannot)."""
    from vspec.harness.loader import load_scheduler_conf, scheduler_conf_mapping

    confs, status = [], EXIT_OK
    for path, name in zip(paths, _names(paths), strict=True):
        try:
            scheduler_conf_mapping(path)  # its actions and plugins registered, located
            confs.append(ConfRun(name, path, load_scheduler_conf(path)))
        except VspecError as exc:
            print(f"vspec: error: {exc}", file=sys.stderr)
            status = EXIT_USAGE
    return confs, status


def _names(paths: Sequence[Path]) -> list[str]:
    """Each conf's column: its file's stem (less ``-configmap``), and ``-2``, ``-3`` ...
    after a stem seen before."""
    names: list[str] = []
    for path in paths:
        stem = name = path.stem.removesuffix("-configmap")
        n = 1
        while name in names:
            n += 1
            name = f"{stem}-{n}"
        names.append(name)
    return names


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
    """The metrics of every run side by side, then each run's difference from the first
    (with two runs: ``B - A``), the verdicts on who waited least, and each run's cost."""
    rows = m.standard_metrics(r.result for r in runs)
    rows += [m.Metric(text, text, False, "lower") for text in extra]
    first = runs[0]
    table = [("metric", *(r.name for r in runs), *(f"{r.name} - {first.name}" for r in runs[1:]))]
    for row in rows:
        values = [_value(row.expression, r.result) for r in runs]
        table.append(
            (
                row.name,
                *(_cell(v, row.duration) for v in values),
                *(_difference(values[0], v, row) for v in values[1:]),
            )
        )

    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
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
    tags = [None, *m.union(m.tags(r.result) for r in runs)]
    verdicts = [_verdict(tag, runs) for tag in tags] if len(runs) > 1 else []
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


def _verdict(tag: str | None, runs: list[Run]) -> str:
    """Which run made these jobs wait least: fewer never started, else the lower median
    wait, else the lower mean wait of those that started; with more than two runs, the
    others in that order (ties in the order of the columns)."""
    where = m.JobFilter(tag=tag)
    what = f"jobs tagged {tag}" if tag else "all jobs"
    sides = [_standing(m.job_values(r.result, "wait", where)) for r in runs]
    pair = len(runs) == 2
    if not all(side[0] for side in sides):
        return f"{what}: not in {'both' if pair else 'every'} run{'s' if pair else ''}"
    ranks = [side[1:] for side in sides]  # never started, median, mean
    if all(rank == ranks[0] for rank in ranks):
        return f"{what}: wait the same under {'both' if pair else 'all'}"
    order = sorted(range(len(runs)), key=lambda i: ranks[i])
    best, rest = order[0], order[1:]
    if pair:
        loser = rest[0]
        return (
            f"{what} wait less under {runs[best].name}: {_summary(sides[best])} against "
            f"{_summary(sides[loser])} under {runs[loser].name}"
        )
    then = "; ".join(f"{runs[i].name}: {_summary(sides[i])}" for i in rest)
    return f"{what} wait least under {runs[best].name}: {_summary(sides[best])}; then {then}"


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
