"""The report's pictures, drawn by pygal as SVG that the page holds inline.

pygal writes SVG itself (no browser-side drawing), so a chart is plain markup in the
page: nothing is fetched, and the page reads the same offline. Its tooltip script is
never referenced (``js=[]``), and the comments and config script it adds are dropped.
"""

from __future__ import annotations

from collections import defaultdict

import pygal

from vspec.explain.records import ClusterState, NodeState
from vspec.report.svg import STYLE, render

# The queue chart's two series in colours of their own: the node charts' palette means
# jobs, and its first colours would otherwise mean "deserved" and "allocated" there.
QUEUE_STYLE = STYLE.__class__(**{**STYLE.to_dict(), "colors": ("#b0b0b0", "#37474f")})

MAX_NODES = 40  # node bars per picture; the busiest nodes are kept
MAX_JOBS = 12  # legend entries; the other jobs share one colour
BAR_HEIGHT = 16


def _resources(nodes: list[NodeState]) -> list[str]:
    names: dict[str, None] = {}
    for node in nodes:
        names.update(dict.fromkeys(n for n, v in node.allocatable.items() if v > 0))
    return list(names)


def _busiest(state: ClusterState) -> list[NodeState]:
    if len(state.nodes) <= MAX_NODES:
        return state.nodes
    ranked = sorted(state.nodes, key=lambda n: -len(n.pods))[:MAX_NODES]
    keep = {n.node for n in ranked}
    return [n for n in state.nodes if n.node in keep]  # in the cluster's order


def nodes_chart(state: ClusterState) -> str | None:
    """One bar per node and resource, the share of its allocatable each job holds; None
    when no pod is on any node (a chart would be an empty frame saying "No data").

    A pipelined pod waits for pods being released, whose room it is promised: drawn on
    top of them it would take a bar past 100%, so its share is drawn up to the node's
    allocatable only."""
    nodes = _busiest(state)
    resources = _resources(nodes)
    labels = [(node, res) for node in nodes for res in resources if node.allocatable.get(res)]
    usage: dict[str, list[float | None]] = defaultdict(lambda: [None] * len(labels))
    totals: dict[str, float] = defaultdict(float)
    for i, (node, res) in enumerate(labels):
        held = 0.0
        # The pods on the node first, then the pipelined ones, in the room that is left.
        for pod in sorted(node.pods, key=lambda p: p.status == "Pipelined"):
            amount = pod.request.get(res, 0.0)
            if not amount:
                continue
            job = pod.job or "(no job)"
            share = 100 * amount / node.allocatable[res]
            if pod.status == "Pipelined":
                job += " (pipelined)"
                share = min(share, max(0.0, 100.0 - held))
                if not share:
                    continue
            held += share
            usage[job][i] = (usage[job][i] or 0.0) + share
            totals[job] += share
    shown = sorted(totals, key=lambda job: -totals[job])[:MAX_JOBS]
    if not shown:
        return None
    other: list[float | None] = [None] * len(labels)
    for job, values in usage.items():
        if job not in shown:
            other = [_plus(a, b) for a, b in zip(other, values, strict=True)]
    title = f"after cycle {state.cycle}: % of each node's allocatable, by job"
    if len(nodes) < len(state.nodes):
        title += f" ({len(nodes)} busiest of {len(state.nodes)} nodes)"
    chart = pygal.HorizontalStackedBar(
        js=[],
        disable_xml_declaration=True,
        style=STYLE,
        title=title,
        width=760,
        height=90 + BAR_HEIGHT * max(len(labels), 1) + 14 * ((len(shown) + 3) // 3),
        range=(0, 100),
        legend_at_bottom=True,
        legend_at_bottom_columns=3,
        truncate_legend=-1,
        print_values=False,
    )
    chart.x_labels = [f"{node.node} {res}" for node, res in labels]
    for job in shown:
        chart.add(job, usage[job])
    if any(v is not None for v in other):
        chart.add("other jobs", other)
    return render(chart)


def _plus(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else a + b


def queues_chart(state: ClusterState) -> str | None:
    """Each queue's allocated amount per resource as a share of what it deserves."""
    rows = [
        (f"{q.queue} {r.resource} ({q.plugin})", r.allocated, r.deserved)
        for q in state.queues
        for r in q.resources
        if r.deserved > 0 or r.allocated > 0
    ]
    if not rows:
        return None
    chart = pygal.HorizontalBar(
        js=[],
        disable_xml_declaration=True,
        style=QUEUE_STYLE,
        title=f"after cycle {state.cycle}: queue allocated, % of deserved",
        width=760,
        height=110 + 2 * BAR_HEIGHT * len(rows),
        legend_at_bottom=True,
    )
    chart.x_labels = [label for label, _, _ in rows]
    chart.add("deserved", [100.0 if deserved > 0 else None for _, _, deserved in rows])
    chart.add(
        "allocated",
        [100 * alloc / deserved if deserved > 0 else None for _, alloc, deserved in rows],
    )
    return render(chart)
