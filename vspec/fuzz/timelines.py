"""Drawn timelines, for the property tests and ``vspec fuzz --timelines``.

A drawn timeline is a drawn cluster (:func:`vspec.fuzz.strategies.clusters`) plus the jobs of
a second drawn cluster, submitted Pending at drawn times with drawn run times, plus
cordon, uncordon and drain events on its nodes. Every invariant that applies is checked
after every session, against the cluster that session saw.

A drawn timeline stops at :data:`HORIZON`. Left open it can run for ever: with shuffle
and pdb (whose victim function passes every task no budget protects) every session evicts
every Running pod, the controller creates each again, the next session binds it and it
starts its run time again, so no job ever finishes and no session settles; preempt and
reclaim can evict back and forth the same way. Volcano does this too, so it is drawn, but
a few hundred sessions of it show all it has to show.

Imports the strategies, the timeline clock, the invariants and the harness's
per-session invariant settings; it is handed the engine to run.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from hypothesis import strategies as st

from vspec.errors import ConfError, PluginError, VspecError, culprit
from vspec.fuzz.strategies import (
    ClusterBounds,
    ConfSpace,
    GeneratedSpec,
    cluster_document,
    clusters,
    scheduler_confs,
)
from vspec.harness.timeline_check import PER_SESSION_DISABLED
from vspec.invariants import judged_inputs, run_checks
from vspec.model.engine import Engine
from vspec.model.objects import GROUP_NAME_ANNOTATION, Cluster, Pod, PodGroup
from vspec.model.timeline import Arrival, NodeEvent, NodeEventKind, Timeline

_EVENT_KINDS: tuple[NodeEventKind, ...] = ("cordon", "uncordon", "drain")
# Every drawn event is due by 15 minutes and every run is at most 15 minutes: timelines
# that do not evict in a loop are over by then (of 300 drawn with the mixed space's
# confs, one ran 33 minutes).
HORIZON = timedelta(minutes=30)


@dataclass
class GeneratedTimelineSpec(GeneratedSpec):
    """A drawn spec with a timeline."""

    timeline: Timeline = field(default_factory=Timeline)

    def document(self, **extra: Any) -> dict[str, Any]:
        doc = super().document(**extra)
        doc.pop("cycles", None)
        doc["timeline"] = timeline_document(self.timeline)
        return doc


def timeline_document(timeline: Timeline) -> dict[str, Any]:
    """The ``timeline`` key of a spec that the loader turns back into ``timeline``."""
    arrivals = []
    for arrival in timeline.arrivals:
        objects = cluster_document(Cluster(pods=arrival.pods, pod_groups=arrival.pod_groups))
        entry: dict[str, Any] = {"at": _seconds(arrival.at)}
        runs = {_seconds(d) for d in arrival.run_for.values()}
        if len(runs) == 1 and len(arrival.run_for) == len(arrival.pods):
            entry["runFor"] = runs.pop()
        elif arrival.run_for:
            entry["runForTask"] = {
                p.meta.name: _seconds(arrival.run_for[p.meta.key])
                for p in arrival.pods
                if p.meta.key in arrival.run_for
            }
        entry["podGroups"] = objects["podGroups"]
        entry["pods"] = objects["pods"]
        arrivals.append(entry)
    events = [{"at": _seconds(e.at), e.kind: e.node} for e in timeline.node_events]
    doc: dict[str, Any] = {"period": _seconds(timeline.period)}
    if timeline.until is not None:
        doc["until"] = _seconds(timeline.until)
    return {**doc, "arrivals": arrivals, "nodes": events}


def _seconds(delta: timedelta) -> str:
    return f"{int(delta.total_seconds())}s"


@st.composite
def timelines(draw: st.DrawFn, cluster: Cluster, bounds: ClusterBounds) -> Timeline:
    later = draw(clusters(bounds))
    queues = [q.meta.name for q in cluster.queues]
    nodes = [n.meta.name for n in cluster.nodes]
    arrivals = []
    for pg in later.pod_groups:
        group = copy.deepcopy(pg)
        group.meta.name = f"t-{pg.meta.name}"
        group.phase = "Pending"
        group.running = 0
        group.queue = draw(st.sampled_from(queues))
        pods = [_pending(p, group) for p in later.pods if p.job_id == pg.meta.key]
        run = timedelta(seconds=draw(st.integers(1, 900)))
        arrivals.append(
            Arrival(
                at=timedelta(seconds=draw(st.integers(0, 600))),
                pod_groups=[group],
                pods=pods,
                run_for={p.meta.key: run for p in pods},
            )
        )
    arrivals.sort(key=lambda a: a.at)
    events = [
        NodeEvent(
            at=timedelta(seconds=draw(st.integers(0, 900))),
            kind=draw(st.sampled_from(_EVENT_KINDS)),
            node=draw(st.sampled_from(nodes)),
        )
        for _ in range(draw(st.integers(0, 3)))
    ]
    events.sort(key=lambda e: e.at)
    return Timeline(
        period=timedelta(seconds=draw(st.sampled_from([5, 30]))),
        until=HORIZON,
        arrivals=arrivals,
        node_events=events,
    )


def _pending(pod: Pod, new: PodGroup) -> Pod:
    """A pod of the second cluster as a fresh submission into ``new``."""
    copy_ = copy.deepcopy(pod)
    copy_.meta.name = f"t-{pod.meta.name}"
    copy_.meta.uid = f"{pod.meta.namespace}-{copy_.meta.name}"
    copy_.meta.annotations[GROUP_NAME_ANNOTATION] = new.meta.name
    copy_.node_name = ""
    copy_.phase = "Pending"
    copy_.meta.deletion_timestamp = None
    return copy_


@st.composite
def timeline_specs(
    draw: st.DrawFn, space: ConfSpace, bounds: ClusterBounds
) -> GeneratedTimelineSpec:
    cluster = draw(clusters(bounds))
    return GeneratedTimelineSpec(
        draw(scheduler_confs(space)),
        cluster,
        seed=draw(st.integers(0, 2**16)),
        verbosity=draw(st.sampled_from([1, 3])),
        timeline=draw(timelines(cluster, bounds)),
    )


def examine_timeline(
    case: GeneratedTimelineSpec, engine: Engine, disabled: tuple[str, ...] = ()
) -> dict[str, list[str]]:
    """Run the timeline; the invariants violated after some session (the first session
    of each), or ``crash-<plugin>``. Raises :class:`ConfError` for a conf Volcano
    would reject."""
    from vspec.timeline.clock import run_timeline

    found: dict[str, list[str]] = {}
    off = (*disabled, *PER_SESSION_DISABLED)

    def after_session(now: Any, before: Cluster, session: Any) -> None:
        inputs = judged_inputs(case.conf, before, case.seed, now, 1, case.verbosity, engine=engine)
        for name, messages in run_checks(inputs, session, disabled=off).items():
            found.setdefault(name, [f"at {now:%H:%M:%S}: {m}" for m in messages])

    try:
        run_timeline(
            case.conf,
            case.cluster,
            case.timeline,
            seed=case.seed,
            verbosity=case.verbosity,
            on_session=after_session,
            engine=engine,
        )
    except ConfError:
        raise
    except VspecError as exc:
        return {f"crash-{_culprit_name(exc)}": [str(exc)]}
    return found


def _culprit_name(exc: VspecError) -> str:
    if isinstance(exc, PluginError):
        return exc.plugin
    found = culprit(exc)
    return found.name if found is not None else "engine"
