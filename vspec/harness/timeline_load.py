"""``timeline`` -> :class:`~vspec.model.timeline.Timeline`.

The arrivals' objects are built by the spec's own cluster builder, so a job in a
timeline takes every form a job in ``cluster`` takes, and a name clash with the cluster
(or between arrivals) is the loader's usual located error. Run times and gaps given as
distributions are drawn here, once, from the spec's seed: two configurations compared
on one workload see the same durations.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Protocol

from vspec.golang import parse_duration
from vspec.harness.yamlload import At
from vspec.model.objects import (
    GROUP_NAME_ANNOTATION,
    TASK_SPEC_KEY,
    Cluster,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    shallow_copy,
)
from vspec.model.timeline import Arrival, NodeEvent, NodeEventKind, Timeline

_NODE_EVENTS: tuple[NodeEventKind, ...] = ("add", "cordon", "uncordon", "drain", "remove")


class ObjectBuilder(Protocol):
    """What the spec loader's cluster builder offers a timeline."""

    def objects_at(self, at: At) -> Cluster:
        """The pod groups and pods of the cluster-shaped mapping at ``at``, defined
        against everything defined so far."""
        ...

    def node_at(self, at: At) -> Node:
        """The node entry at ``at``, defined against everything defined so far."""
        ...

    def rename(self, kind: str, obj: Pod | PodGroup, at: At) -> None:
        """Define an object that a copy of an arrival brings."""
        ...


def duration(raw: Any, at: At) -> timedelta:
    """A Go duration string or a number of seconds (the schema checked the shape)."""
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return timedelta(seconds=raw)
    try:
        return parse_duration(str(raw))
    except ValueError as exc:
        raise at.error(f"{raw!r} is not a duration: {exc}") from None


def draw(raw: Any, at: At, rng: random.Random) -> timedelta:
    """A duration, or one draw of a distribution form."""
    if not isinstance(raw, Mapping):
        return duration(raw, at)
    if "uniform" in raw:
        lo, hi = (duration(v, at / "uniform" / i) for i, v in enumerate(raw["uniform"]))
        if hi < lo:
            raise (at / "uniform").error("the upper bound is below the lower one")
        return lo + timedelta(seconds=rng.uniform(0, (hi - lo).total_seconds()))
    if "exponential" in raw:
        mean = duration(raw["exponential"], at / "exponential").total_seconds()
        return timedelta(seconds=rng.expovariate(1 / mean) if mean > 0 else 0)
    options = raw["choice"]
    index = rng.randrange(len(options))
    return duration(options[index], at / "choice" / index)


def load_timeline(at: At, builder: ObjectBuilder, seed: int, nodes: list[Node]) -> Timeline:
    raw: dict[str, Any] = at.value or {}
    rng = random.Random(f"vspec-timeline-{seed}")
    timeline = Timeline(location=at.location())
    if "period" in raw:
        timeline.period = duration(raw["period"], at / "period")
        if timeline.period <= timedelta(0):
            raise (at / "period").error("the schedule period must be longer than 0")
    if "until" in raw:
        timeline.until = duration(raw["until"], at / "until")
    timeline.skip = raw.get("skip", "idle")
    for i in range(len(raw.get("arrivals") or ())):
        timeline.arrivals.extend(_arrivals(at / "arrivals" / i, builder, rng))
    timeline.arrivals.sort(key=lambda a: a.at)  # stable: file order within one time
    known = {n.meta.name for n in nodes}
    for i in range(len(raw.get("nodes") or ())):
        timeline.node_events.append(_node_event(at / "nodes" / i, builder, known))
    timeline.node_events.sort(key=lambda e: e.at)
    return timeline


def _arrivals(at: At, builder: ObjectBuilder, rng: random.Random) -> list[Arrival]:
    raw: dict[str, Any] = at.value
    template = builder.objects_at(at)
    pods_by_task = {_task_name(p) for p in (*template.pods, *template.held_pods)}
    for task in raw.get("runForTask") or {}:
        if task not in pods_by_task:
            known = ", ".join(sorted(pods_by_task)) or "none"
            raise (at / "runForTask" / task).error(
                f"no task {task!r} in this arrival (its tasks: {known})", key=True
            )
    start = duration(raw["at"], at / "at")
    if "count" not in raw:
        return [_arrival(at, start, template, rng)]
    arrivals = []
    when = start
    for i in range(int(raw["count"])):
        if i and "every" in raw:
            when += draw(raw["every"], at / "every", rng)
        arrivals.append(_arrival(at, when, _copy(template, i, at, builder), rng))
    return arrivals


def _arrival(at: At, when: timedelta, objects: Cluster, rng: random.Random) -> Arrival:
    raw: dict[str, Any] = at.value
    per_task = raw.get("runForTask") or {}
    per_job = raw.get("runForEach", "pod") == "job"
    drawn: dict[tuple[str, str], timedelta] = {}
    run_for: dict[str, timedelta] = {}
    for pod in (*objects.pods, *objects.held_pods):
        task = _task_name(pod)
        if task in per_task:
            given, where, share = per_task[task], at / "runForTask" / task, task
        elif "runFor" in raw:
            given, where, share = raw["runFor"], at / "runFor", ""
        else:
            continue
        if not per_job:
            run_for[pod.meta.key] = draw(given, where, rng)
            continue
        # One draw per job (and per task under runForTask): its pods start and end
        # together, as the workers of a training or MPI job do.
        job = pod.meta.annotations.get(GROUP_NAME_ANNOTATION) or pod.meta.key
        if (job, share) not in drawn:
            drawn[job, share] = draw(given, where, rng)
        run_for[pod.meta.key] = drawn[job, share]
    return Arrival(
        when,
        objects.pod_groups,
        objects.pods,
        run_for,
        objects.held_pods,
        tuple(raw.get("tags") or ()),
        at.location(),
    )


def _task_name(pod: Pod) -> str:
    return pod.meta.labels.get(TASK_SPEC_KEY) or pod.meta.name


def _copy(template: Cluster, index: int, at: At, builder: ObjectBuilder) -> Cluster:
    """Copy ``index`` of an arrival: every pod group and pod named ``<name>-<index>``
    (a job's pods keep their ``<job>-<task>-<n>`` shape)."""
    renamed = {pg.meta.name: f"{pg.meta.name}-{index}" for pg in template.pod_groups}
    groups = []
    for pg in template.pod_groups:
        new = shallow_copy(pg)
        new.meta = _renamed_meta(pg.meta, renamed[pg.meta.name])
        builder.rename("pod group", new, at)
        groups.append(new)
    return Cluster(
        pod_groups=groups,
        pods=[_copy_pod(p, index, renamed, at, builder) for p in template.pods],
        held_pods=[_copy_pod(p, index, renamed, at, builder) for p in template.held_pods],
    )


def _copy_pod(pod: Pod, index: int, renamed: dict[str, str], at: At, builder: ObjectBuilder) -> Pod:
    group = pod.group_name
    name = pod.meta.name
    if group in renamed and name.startswith(f"{group}-"):
        name = renamed[group] + name[len(group) :]
    else:
        name = f"{name}-{index}"
    new_pod = shallow_copy(pod)
    new_pod.meta = _renamed_meta(pod.meta, name)
    if group in renamed:
        new_pod.meta.annotations[GROUP_NAME_ANNOTATION] = renamed[group]
    builder.rename("pod", new_pod, at)
    return new_pod


def _renamed_meta(meta: ObjectMeta, name: str) -> ObjectMeta:
    """A copy named ``name``, built directly: a day's arrivals copy 50,000 of them, and
    ``dataclasses.replace`` first gathers every field by name."""
    uid = meta.uid
    if uid == f"{meta.namespace}-{meta.name}":
        uid = f"{meta.namespace}-{name}"  # the builders' default uid follows the name
    elif uid:
        uid = f"{uid}-{name}"
    return ObjectMeta(
        name,
        meta.namespace,
        uid,
        dict(meta.labels),
        dict(meta.annotations),
        meta.creation_timestamp,
        meta.deletion_timestamp,
        meta.location,
    )


def _node_event(at: At, builder: ObjectBuilder, known: set[str]) -> NodeEvent:
    raw: dict[str, Any] = at.value
    kind = next(k for k in _NODE_EVENTS if k in raw)
    when = duration(raw["at"], at / "at")
    if kind == "add":
        node = builder.node_at(at / "add")
        known.add(node.meta.name)
        return NodeEvent(when, kind, node.meta.name, node, at.location())
    name = str(raw[kind])
    if name not in known:
        raise (at / kind).error(f"no node {name!r} in the cluster or added before this event")
    return NodeEvent(when, kind, name, None, at.location())
