"""Spec-level shrinking of a fuzz finding: remove whole objects while it still fails.

Hypothesis shrinks the choices a draw was made from, and each of its candidates costs a
full engine run: within the few seconds ``vspec fuzz`` gives it on a loaded machine it
often leaves jobs and nodes that the failure does not need (removing one pod's choices
shifts every later draw of the cluster). This works on the drawn spec itself: it tries
to drop a job, a node, a pod, a queue, the second cycle, to lower a pod limit, a
minMember or drop a request, to drop a scheduler action or plugin, or one detail of an
object (taints, tolerations, affinity...), one at a time, and keeps each edit after
which the *same* failure still shows (``fails``: the fuzzer's own engine and
invariants), until no edit keeps it. Every edit removes or lowers something, so the
result is never larger, and every candidate is of a shape the strategies draw (a pod
without its group, or on a node that does not exist, is never tried). Deterministic: the
same finding shrinks the same way.

Imports the model and the strategies' drawn specs.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from vspec.fuzz.strategies import HOSTNAME, GeneratedSpec
from vspec.model.objects import TASK_SPEC_KEY, ZERO_TIME, Cluster, Pod, PodGroup

Fails = Callable[[GeneratedSpec], bool]
# One pass: the keys it may edit in a spec, and the spec with one key's edit (None when
# that key has nothing left to edit).
Keys = Callable[[GeneratedSpec], list[Any]]
Edit = Callable[[GeneratedSpec, Any], GeneratedSpec | None]


@dataclass
class ShrinkStats:
    """What one shrink did (``vspec fuzz`` prints it with each finding)."""

    tried: int = 0  # candidates run
    kept: int = 0  # edits kept
    complete: bool = False  # no edit is left that keeps the failure (not stopped by time)


def shrink(
    case: GeneratedSpec, fails: Fails, *, deadline: float, stats: ShrinkStats | None = None
) -> GeneratedSpec:
    """The smallest spec reached from ``case`` by edits after which ``fails`` holds, by
    ``deadline`` (``time.perf_counter()``). ``case`` itself is not changed."""
    stats = stats if stats is not None else ShrinkStats()
    current = case
    progress = True
    while progress:
        progress = False
        for keys, edit in PASSES:
            for key in keys(current):
                if time.perf_counter() >= deadline:
                    return current
                candidate = edit(current, key)
                if candidate is None:
                    continue
                stats.tried += 1
                if fails(candidate):
                    current, progress = candidate, True
                    stats.kept += 1
    stats.complete = True
    return current


def size(case: GeneratedSpec) -> tuple[int, int]:
    """(nodes, pods): what a finding's readers count."""
    return len(case.cluster.nodes), len(case.cluster.pods)


# -- cluster edits --------------------------------------------------------------------------------


def _with_cluster(case: GeneratedSpec, cluster: Cluster) -> GeneratedSpec:
    return replace(case, cluster=cluster)


def _group_key(pg: PodGroup) -> tuple[str, str]:
    return pg.meta.namespace, pg.meta.name


def _pod_group_key(pod: Pod) -> tuple[str, str]:
    return pod.meta.namespace, pod.group_name


def _tidy(cluster: Cluster) -> Cluster:
    """Groups left without pods go (the strategies never draw an empty job); a group's
    minimums are lowered to the pods it keeps."""
    counts: dict[tuple[str, str], int] = {}
    roles: dict[tuple[str, str, str], int] = {}
    for pod in cluster.pods:
        key = _pod_group_key(pod)
        counts[key] = counts.get(key, 0) + 1
        role = (*key, pod.meta.labels.get(TASK_SPEC_KEY, ""))
        roles[role] = roles.get(role, 0) + 1
    kept = []
    for pg in cluster.pod_groups:
        key = _group_key(pg)
        if not counts.get(key):
            continue
        pg.min_member = min(pg.min_member, counts[key])
        pg.min_task_member = {
            role: min(n, roles.get((*key, role), 0)) for role, n in pg.min_task_member.items()
        }
        kept.append(pg)
    cluster.pod_groups = kept
    return cluster


def _jobs(case: GeneratedSpec) -> list[Any]:
    return [_group_key(pg) for pg in case.cluster.pod_groups]


def _drop_job(case: GeneratedSpec, key: Any) -> GeneratedSpec | None:
    if key not in _jobs(case):
        return None
    cluster = copy.deepcopy(case.cluster)
    cluster.pod_groups = [pg for pg in cluster.pod_groups if _group_key(pg) != key]
    cluster.pods = [p for p in cluster.pods if _pod_group_key(p) != key]
    return _with_cluster(case, cluster)


def _nodes(case: GeneratedSpec) -> list[Any]:
    return [n.meta.name for n in case.cluster.nodes] if len(case.cluster.nodes) > 1 else []


def _drop_node(case: GeneratedSpec, name: Any) -> GeneratedSpec | None:
    """A node goes with the pods bound to it (a pod on a missing node is no drawn shape)."""
    if len(case.cluster.nodes) < 2 or all(n.meta.name != name for n in case.cluster.nodes):
        return None
    cluster = copy.deepcopy(case.cluster)
    cluster.nodes = [n for n in cluster.nodes if n.meta.name != name]
    cluster.pods = [p for p in cluster.pods if p.node_name != name]
    return _with_cluster(case, _tidy(cluster))


def _pods(case: GeneratedSpec) -> list[Any]:
    return [p.meta.uid or p.meta.name for p in case.cluster.pods]


def _drop_pod(case: GeneratedSpec, uid: Any) -> GeneratedSpec | None:
    if uid not in _pods(case):
        return None
    cluster = copy.deepcopy(case.cluster)
    cluster.pods = [p for p in cluster.pods if (p.meta.uid or p.meta.name) != uid]
    return _with_cluster(case, _tidy(cluster))


def _bound_pods(case: GeneratedSpec) -> list[Any]:
    return [p.meta.uid or p.meta.name for p in case.cluster.pods if p.node_name]


def _drop_pod_and_room(case: GeneratedSpec, uid: Any) -> GeneratedSpec | None:
    """A bound pod goes with the room it took: its node shrinks by its requests (and by
    its pod slot when the node was at its limit), so a node the failure needs full stays
    full. Not tried where that leaves the node no cpu or memory."""
    if uid not in _bound_pods(case):
        return None
    cluster = copy.deepcopy(case.cluster)
    pod = next(p for p in cluster.pods if (p.meta.uid or p.meta.name) == uid)
    node = next((n for n in cluster.nodes if n.meta.name == pod.node_name), None)
    if node is None:
        return None
    room = dict(pod.containers[0].requests) if pod.containers else {}
    if sum(1 for p in cluster.pods if p.node_name == node.meta.name) == node.allocatable.get(
        "pods"
    ):
        room["pods"] = Fraction(1)
    if not room or any(node.allocatable.get(k, Fraction(0)) - v <= 0 for k, v in room.items()):
        return None
    for k, v in room.items():
        for resources in (node.allocatable, node.capacity):
            if k in resources:
                resources[k] -= v
    cluster.pods.remove(pod)
    return _with_cluster(case, _tidy(cluster))


def _queues(case: GeneratedSpec) -> list[Any]:
    return [q.meta.name for q in case.cluster.queues if q.meta.name != "root"]


def _drop_queue(case: GeneratedSpec, name: Any) -> GeneratedSpec | None:
    """A queue goes; its jobs move to the first queue left (none left: not tried)."""
    others = [q for q in _queues(case) if q != name]
    if name not in _queues(case) or not others:
        return None
    cluster = copy.deepcopy(case.cluster)
    cluster.queues = [q for q in cluster.queues if q.meta.name != name]
    for pg in cluster.pod_groups:
        if pg.queue == name:
            pg.queue = others[0]
    return _with_cluster(case, cluster)


def _one_cycle(case: GeneratedSpec, key: Any) -> GeneratedSpec | None:
    return replace(case, cycles=1) if case.cycles > 1 else None


def _always(case: GeneratedSpec) -> list[Any]:
    return [None]


# -- lower values: what lets a later pass drop more ----------------------------------------------

# A node's pod limit, lowered to a value the strategies draw: a finding about the limit
# then needs fewer pods to reach it. Never below the pods bound to the node: a node over
# its limit is where Volcano's quirks live (v1.11 only logs 'Node out of sync'), and a
# shrink that made one would slip from the finding to them.
_POD_LIMITS = (1, 2, 4)


def _pod_limits(case: GeneratedSpec) -> list[Any]:
    bound: dict[str, int] = {}
    for p in case.cluster.pods:
        bound[p.node_name] = bound.get(p.node_name, 0) + 1
    return [
        (i, limit)
        for i, n in enumerate(case.cluster.nodes)
        for limit in _POD_LIMITS
        if bound.get(n.meta.name, 0) <= limit < n.allocatable.get("pods", 0)
    ]


def _lower_pod_limit(case: GeneratedSpec, key: Any) -> GeneratedSpec | None:
    i, limit = key
    if key not in _pod_limits(case):
        return None
    cluster = copy.deepcopy(case.cluster)
    node = cluster.nodes[i]
    node.allocatable["pods"] = Fraction(limit)
    if "pods" in node.capacity:
        node.capacity["pods"] = Fraction(limit)
    return _with_cluster(case, cluster)


def _min_members(case: GeneratedSpec) -> list[Any]:
    return [
        (i, least)
        for i, pg in enumerate(case.cluster.pod_groups)
        for least in (0, 1)
        if least < pg.min_member
    ]


def _lower_min_member(case: GeneratedSpec, key: Any) -> GeneratedSpec | None:
    i, least = key
    if key not in _min_members(case):
        return None
    cluster = copy.deepcopy(case.cluster)
    cluster.pod_groups[i].min_member = least
    return _with_cluster(case, cluster)


_BASIC = ("cpu", "memory")


def _requests(case: GeneratedSpec) -> list[Any]:
    """A pod's request of one resource (a request of zero is never drawn: it goes), but
    never the last cpu or memory request: a best-effort pod is another case to Volcano
    (backfill's, with rules of its own in preempt and reclaim), and a shrink that made
    one would slip from the finding to those rules."""
    out: list[Any] = []
    for i, p in enumerate(case.cluster.pods):
        requests = p.containers[0].requests if p.containers else {}
        basic = [r for r in _BASIC if requests.get(r)]
        out.extend((i, r) for r in requests if r not in basic or len(basic) > 1)
    return out


def _drop_request(case: GeneratedSpec, key: Any) -> GeneratedSpec | None:
    if key not in _requests(case):
        return None
    i, resource = key
    cluster = copy.deepcopy(case.cluster)
    del cluster.pods[i].containers[0].requests[resource]
    return _with_cluster(case, cluster)


# -- object details: each cleared on its own ------------------------------------------------------

# What a detail is cleared to, by the cluster's list and the object's attribute paths
# (a number indexes a list: the strategies draw one container per pod). Each is a value
# the strategies also draw, so a cleared object is still of a drawn shape (a pod's class
# and priority go together: a class left without its priority, the loader resolves).
_Detail = tuple[str, tuple[tuple[str, Any], ...]]
_DETAILS: tuple[_Detail, ...] = (
    ("pods", (("tolerations", []),)),
    ("pods", (("affinity", None),)),
    ("pods", (("node_selector", {}),)),
    ("pods", (("containers.0.ports", []),)),
    ("pods", (("meta.deletion_timestamp", None),)),
    ("pods", (("meta.creation_timestamp", ZERO_TIME),)),
    ("pods", (("priority_class_name", ""), ("priority", None))),
    ("pod_groups", (("min_task_member", {}),)),
    ("pod_groups", (("min_resources", None),)),
    ("pod_groups", (("priority_class_name", ""),)),
    ("pod_groups", (("meta.creation_timestamp", ZERO_TIME),)),
    ("nodes", (("taints", []),)),
    ("nodes", (("unschedulable", False),)),
    ("queues", (("capability", {}),)),
    ("queues", (("deserved", {}),)),
    ("queues", (("guarantee", {}),)),
    ("queues", (("priority", 0),)),
    ("queues", (("reclaimable", None),)),
    ("queues", (("meta.creation_timestamp", ZERO_TIME),)),
)


def _walk(obj: Any, path: str) -> tuple[Any, str]:
    """The object holding the last step of ``path``, and that step."""
    *steps, last = path.split(".")
    for step in steps:
        obj = obj[int(step)] if step.isdigit() else getattr(obj, step)
    return obj, last


def _is_set(obj: Any, detail: _Detail) -> bool:
    """Whether clearing ``detail`` changes ``obj``."""
    for path, empty in detail[1]:
        try:
            holder, last = _walk(obj, path)
        except IndexError:
            return False
        if getattr(holder, last) != empty:
            return True
    return False


def _details(case: GeneratedSpec) -> list[Any]:
    return [
        (d, i)
        for d, detail in enumerate(_DETAILS)
        for i, obj in enumerate(getattr(case.cluster, detail[0]))
        if _is_set(obj, detail)
    ]


def _clear_detail(case: GeneratedSpec, key: Any) -> GeneratedSpec | None:
    d, i = key
    detail = _DETAILS[d]
    objects = getattr(case.cluster, detail[0])
    if i >= len(objects) or not _is_set(objects[i], detail):
        return None
    cluster = copy.deepcopy(case.cluster)
    for path, empty in detail[1]:
        holder, last = _walk(getattr(cluster, detail[0])[i], path)
        setattr(holder, last, copy.copy(empty))
    return _with_cluster(case, cluster)


def _labels(case: GeneratedSpec) -> list[Any]:
    """Node labels but the hostname (a node's own name, which Kubernetes always sets)."""
    return [
        (i, label)
        for i, n in enumerate(case.cluster.nodes)
        for label in n.meta.labels
        if label != HOSTNAME
    ]


def _drop_label(case: GeneratedSpec, key: Any) -> GeneratedSpec | None:
    i, label = key
    if i >= len(case.cluster.nodes) or label not in case.cluster.nodes[i].meta.labels:
        return None
    cluster = copy.deepcopy(case.cluster)
    del cluster.nodes[i].meta.labels[label]
    return _with_cluster(case, cluster)


def _unused_classes(case: GeneratedSpec) -> list[Any]:
    named = {p.priority_class_name for p in case.cluster.pods}
    named |= {g.priority_class_name for g in case.cluster.pod_groups}
    return [pc.meta.name for pc in case.cluster.priority_classes if pc.meta.name not in named]


def _drop_class(case: GeneratedSpec, name: Any) -> GeneratedSpec | None:
    if name not in _unused_classes(case):
        return None
    cluster = copy.deepcopy(case.cluster)
    cluster.priority_classes = [pc for pc in cluster.priority_classes if pc.meta.name != name]
    return _with_cluster(case, cluster)


# -- the scheduler conf ---------------------------------------------------------------------------


def _plugins(case: GeneratedSpec) -> list[Any]:
    tiers = case.scheduler.get("tiers") or []
    return [
        (t, entry.get("name"))
        for t, tier in enumerate(tiers)
        for entry in tier.get("plugins") or []
        if len(tier.get("plugins") or []) > 1 or len(tiers) > 1
    ]


def _drop_plugin(case: GeneratedSpec, key: Any) -> GeneratedSpec | None:
    """A plugin leaves its tier (a tier left empty goes too)."""
    if key not in _plugins(case):
        return None
    t, name = key
    scheduler = copy.deepcopy(case.scheduler)
    tier = scheduler["tiers"][t]
    tier["plugins"] = [e for e in tier["plugins"] if e.get("name") != name]
    if not tier["plugins"]:
        del scheduler["tiers"][t]
    return _with_scheduler(case, scheduler)


def _action_list(case: GeneratedSpec) -> list[str]:
    actions = case.scheduler.get("actions")
    return [a.strip() for a in actions.split(",") if a.strip()] if isinstance(actions, str) else []


def _actions(case: GeneratedSpec) -> list[Any]:
    actions = _action_list(case)
    return actions if len(actions) > 1 else []


def _drop_action(case: GeneratedSpec, name: Any) -> GeneratedSpec | None:
    actions = _action_list(case)
    if name not in actions or len(actions) < 2:
        return None
    scheduler = copy.deepcopy(case.scheduler)
    scheduler["actions"] = ", ".join(a for a in actions if a != name)
    return _with_scheduler(case, scheduler)


def _with_scheduler(case: GeneratedSpec, scheduler: dict[str, Any]) -> GeneratedSpec | None:
    """``case`` under another conf; None when Volcano would reject that conf."""
    from vspec.errors import ConfError

    try:
        return replace(case, scheduler=scheduler)
    except ConfError:
        return None


# Biggest first: a dropped job takes its pods with it, so the later passes try fewer.
PASSES: tuple[tuple[Keys, Edit], ...] = (
    (_jobs, _drop_job),
    (_nodes, _drop_node),
    (_pods, _drop_pod),
    (_bound_pods, _drop_pod_and_room),
    (_queues, _drop_queue),
    (_always, _one_cycle),
    (_pod_limits, _lower_pod_limit),
    (_min_members, _lower_min_member),
    (_requests, _drop_request),
    (_actions, _drop_action),
    (_plugins, _drop_plugin),
    (_details, _clear_detail),
    (_labels, _drop_label),
    (_unused_classes, _drop_class),
)
