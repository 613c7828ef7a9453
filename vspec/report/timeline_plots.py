"""SVG plots of timeline runs: wait distribution, utilisation and queue share over time.

Each function takes runs by name (one or several, drawn on one chart) and returns the
SVG text, so ``vspec compare --plots`` writes files and the HTML report can hold the same
charts inline. pygal draws them, as it draws the report's: SVG written by Python, no
script referenced (``js=[]``), its comments and config script dropped, so the same runs
give the same text.

Imports the timeline's records and metrics, pygal and :mod:`vspec.report.svg`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pygal

from vspec.report.svg import STYLE, render
from vspec.timeline import metrics as m
from vspec.timeline.records import TimelineResult

Runs = Mapping[str, TimelineResult]
MAX_POINTS = 2000  # per line: longer series are thinned to their changes


def _chart(title: str, x_title: str, y_title: str) -> pygal.XY:
    return pygal.XY(
        title=title,
        x_title=x_title,
        y_title=y_title,
        style=STYLE,
        js=[],
        width=800,
        height=420,
        dots_size=0,
        show_dots=False,
        stroke_style={"width": 2},
        legend_at_bottom=True,
        truncate_legend=-1,
        range=(0, 1),
    )


def _steps(xs: list[float], ys: list[float], end: float) -> list[tuple[float, float]]:
    """A step function as XY points (each value held until the next x), changes only."""
    points: list[tuple[float, float]] = []
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        if points and points[-1][1] == y:
            continue
        if points:
            points.append((x, points[-1][1]))
        points.append((x, y))
        if len(points) > MAX_POINTS and i < len(xs) - 1:
            break
    if points:
        points.append((end, points[-1][1]))
    return points


def _hours(result: TimelineResult) -> tuple[list[float], float]:
    xs = [(t.time - result.start).total_seconds() / 3600 for t in result.ticks]
    return xs, (result.end - result.start).total_seconds() / 3600


def wait_distribution(runs: Runs, *, tag: str | None = None) -> str:
    """The share of jobs (tagged ``tag``, or all) that had started within each wait, per
    run: the higher and further left a curve, the shorter the waits. Jobs that never
    started keep a curve below 1."""
    label = f"jobs tagged {tag}" if tag else "all jobs"
    chart = _chart(
        f"Wait until minAvailable pods are bound ({label})", "wait (minutes)", "share of jobs"
    )
    longest = 0.0
    curves = {}
    for name, result in runs.items():
        waits = m.job_values(result, "wait", m.JobFilter(tag=tag))
        if not waits:
            continue
        started = sorted(w / 60 for w in waits if not math.isinf(w))
        longest = max([longest, *started])
        never = len(waits) - len(started)
        ys = [(i + 1) / len(waits) for i in range(len(started))]
        curves[f"{name} ({len(waits)} jobs{f', {never} never started' if never else ''})"] = (
            started,
            ys,
        )
    for title, (xs, ys) in curves.items():
        chart.add(title, _steps([0.0, *xs], [0.0, *ys], max(longest, 1.0)))
    return render(chart)


def utilisation(runs: Runs, *, resource: str = "cpu") -> str:
    """Requests on nodes over allocatable, over time, per run."""
    chart = _chart(f"Utilisation: {resource}", "time (hours)", "used / allocatable")
    for name, result in runs.items():
        xs, end = _hours(result)
        chart.add(name, _steps(xs, m.utilisation(result, resource), end))
    return render(chart)


def queue_share(runs: Runs) -> str:
    """Each queue's dominant share of the cluster over time, and what it deserved."""
    chart = _chart("Queue share of the cluster", "time (hours)", "dominant share")
    for name, result in runs.items():
        xs, end = _hours(result)
        for queue in m.queues(result):
            share, deserved = m.share(result, queue), m.deserved(result, queue)
            if not any(share) and not any(deserved):
                continue
            chart.add(f"{name}: {queue}", _steps(xs, share, end))
            chart.add(
                f"{name}: {queue} deserved",
                _steps(xs, deserved, end),
                stroke_style={"width": 1, "dasharray": "4, 3"},
            )
    return render(chart)


def all_plots(runs: Runs) -> dict[str, str]:
    """File name -> SVG: every plot for these runs (a wait plot per tag too)."""
    plots = {"wait-distribution.svg": wait_distribution(runs)}
    for tag in m.union(m.tags(r) for r in runs.values()):
        plots[f"wait-distribution-{tag}.svg"] = wait_distribution(runs, tag=tag)
    for resource in m.union(m.resources(r) for r in runs.values()):
        plots[f"utilisation-{resource}.svg"] = utilisation(runs, resource=resource)
    plots["queue-share.svg"] = queue_share(runs)
    return plots
