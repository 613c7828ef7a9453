"""How the cluster moves on between two sessions (docs/spec-format.md, "Cycles").

One rule for every engine: each reports what its session did (binds, evictions, the
annotations it patched onto pods, the pod group statuses written at close) and this
module makes the next cluster, so that vspec's engine and the real Volcano see the same
cluster at every cycle.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, count, islice

from vspec.model.changes import Changed, changed
from vspec.model.objects import Cluster, Pod, PodGroup, shallow_copy


def _running(pod: Pod, node: str, patched: Mapping[str, str] | None) -> Pod:
    """``pod`` bound to ``node`` and running, with the annotations patched while placing
    it (device shares), which the next session's device pools read back; the input pod
    is untouched (copied as :func:`shallow_copy` copies, at a third of ``copy.copy``'s
    cost: every bind of every session)."""
    pod = shallow_copy(pod)
    pod.node_name = node
    pod.phase = "Running"
    if patched:
        pod.meta = shallow_copy(pod.meta)
        pod.meta.annotations = {**pod.meta.annotations, **patched}
    return pod


def next_cluster(
    cluster: Cluster,
    *,
    binds: Mapping[str, str],
    evicted: Collection[str],
    patched: Mapping[str, Mapping[str, str]],
    pod_groups: Mapping[str, PodGroup],
    known: KnownPods | None = None,
) -> Cluster:
    """The cluster one schedule period later: bound pods (``binds``, pod key -> node) run
    carrying the annotations patched while placing them, evicted and terminating pods are
    gone, pod groups carry the status written at close (``pod_groups``, by job key; a
    pod group not given is unchanged). A Volcano Job's held pods appear once their pod
    group has left Pending, as its controller's ``syncJob`` creates them.

    On a real cluster a victim stays Releasing for its grace period, so a preemptor is
    only pipelined until the victim is gone; here that takes one period.

    ``known``: what the caller knows of ``cluster``'s pods and pod groups (the scheduler
    cache keeps it), so that a period with nothing to take out finds the bound pods, and
    the written pod groups, by identity alone: reading every pod's fields cost about a
    microsecond a pod, a session's pods being cold by then, where a pass over their
    identities costs a fifth of that.
    """
    gone: list[Pod] = []
    added: list[Pod] = []
    if known is not None and not (evicted or known.terminating):
        pods = _bound_in_place(cluster.pods, binds, patched, known.by_key, gone, added)
    else:
        pods = _moved_on(cluster.pods, binds, evicted, patched, gone, added)
    group_changes: tuple[list[PodGroup], list[PodGroup]] = ([], [])
    groups = _written_back(
        cluster.pod_groups, pod_groups, None if known is None else known.groups, *group_changes
    )
    held: list[Pod] = []
    if cluster.held_pods:
        out_of_pending = {pg.meta.key for pg in groups if pg.phase not in ("", "Pending")}
        for pod in cluster.held_pods:
            group = f"{pod.meta.namespace}/{pod.group_name}"
            if group in out_of_pending:
                pods.append(pod)
                added.append(pod)
            else:
                held.append(pod)
    nodes = cluster.nodes
    return Cluster(
        nodes=nodes,
        pods=pods,
        pod_groups=groups,
        queues=cluster.queues,
        priority_classes=cluster.priority_classes,
        objects=cluster.objects,
        held_pods=held,
        # What this period changed (vspec.model.changes, "Change reports").
        nodes_changed=Changed(nodes, nodes, len(nodes), [], {}),
        pods_changed=changed(None, cluster.pods, pods, gone, added),
        pod_groups_changed=changed(None, cluster.pod_groups, groups, *group_changes),
    )


def _moved_on(
    pods: list[Pod],
    binds: Mapping[str, str],
    evicted: Collection[str],
    patched: Mapping[str, Mapping[str, str]],
    gone: list[Pod],
    added: list[Pod],
) -> list[Pod]:
    """``pods`` with the bound ones running and the evicted and terminating ones taken
    out; those taken out or replaced go to ``gone``, their replacements to ``added``."""
    moved_on = []
    for pod in pods:
        key = pod.meta.key
        if key in evicted or pod.meta.deletion_timestamp is not None:
            gone.append(pod)
        elif key in binds:
            running = _running(pod, binds[key], patched.get(key))
            gone.append(pod)
            added.append(running)
            moved_on.append(running)
        else:
            moved_on.append(pod)
    return moved_on


@dataclass(frozen=True, slots=True)
class KnownPods:
    """What a caller knows of a cluster's pods: each by key (keys unique), and whether
    any is terminating (has a deletion timestamp)."""

    by_key: Mapping[str, Pod]
    terminating: bool
    # Each pod group by job id (``namespace/name``, ids unique); None: not known.
    groups: Mapping[str, PodGroup] | None = None


def _written_back(
    pod_groups: list[PodGroup],
    written: Mapping[str, PodGroup],
    known: Mapping[str, PodGroup] | None,
    gone: list[PodGroup],
    added: list[PodGroup],
) -> list[PodGroup]:
    """``pod_groups`` with those of the jobs in ``written`` replaced by copies of the
    written ones, in place; the others are the same objects. Those replaced go to
    ``gone``, their copies to ``added``. ``known``: ``pod_groups`` by job id, to find
    the written ones by identity instead of reading every one's name (a session writes
    back a few of its live jobs' pod groups)."""
    if not written:
        return list(pod_groups)
    if known is not None and written.keys() <= known.keys():
        at = {id(known[uid]): pg for uid, pg in written.items()}
        groups = list(pod_groups)
        for i in compress(count(), map(at.__contains__, map(id, pod_groups))):
            gone.append(pod_groups[i])
            groups[i] = _copied(at[id(pod_groups[i])])
            added.append(groups[i])
        return groups
    groups = []
    for pg in pod_groups:
        found = written.get(f"{pg.meta.namespace}/{pg.meta.name}")
        if found is None:
            groups.append(pg)
        else:
            gone.append(pg)
            added.append(_copied(found))
            groups.append(added[-1])
    return groups


def _copied(pg: PodGroup) -> PodGroup:
    """The API server's copy of a written pod group: nothing the session holds is shared."""
    pg = shallow_copy(pg)
    pg.conditions = list(pg.conditions)
    return pg


def _bound_in_place(
    pods: list[Pod],
    binds: Mapping[str, str],
    patched: Mapping[str, Mapping[str, str]],
    by_key: Mapping[str, Pod],
    gone: list[Pod],
    added: list[Pod],
) -> list[Pod]:
    """``pods`` with the bound ones running in their places, found by identity; those
    replaced go to ``gone``, their replacements to ``added``."""
    moved_on = list(pods)
    if not binds:
        return moved_on
    bound = {id(pod): key for key in binds if (pod := by_key.get(key)) is not None}
    for i in _places_of(pods, bound):
        key = bound[id(pods[i])]
        gone.append(pods[i])
        moved_on[i] = _running(pods[i], binds[key], patched.get(key))
        added.append(moved_on[i])
    return moved_on


def _places_of(items: Sequence[object], ids: Mapping[int, object]) -> list[int]:
    """The places in ``items`` (each object listed once) of the objects of ``ids``, in
    order, found by identity by a C loop from the end, where a session's binds mostly
    are (the pods of the jobs that arrived last): it stops once all are found, instead
    of reading every pod's identity each session. (The pod groups a session writes back
    are as often those of jobs long running, whose pods finish: found from the start.)"""
    last = len(items) - 1
    hits = compress(count(last, -1), map(ids.__contains__, map(id, reversed(items))))
    places = list(islice(hits, len(ids)))
    places.reverse()
    return places
