"""How the cluster moves on between two sessions (docs/spec-format.md, "Cycles").

One rule for every engine: each reports what its session did (binds, evictions, the
annotations it patched onto pods, the pod group statuses written at close) and this
module makes the next cluster, so that vspec's engine and the real Volcano see the same
cluster at every cycle.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

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
) -> Cluster:
    """The cluster one schedule period later: bound pods (``binds``, pod key -> node) run
    carrying the annotations patched while placing them, evicted and terminating pods are
    gone, pod groups carry the status written at close (``pod_groups``, by job key; a
    pod group not given is unchanged). A Volcano Job's held pods appear once their pod
    group has left Pending, as its controller's ``syncJob`` creates them.

    On a real cluster a victim stays Releasing for its grace period, so a preemptor is
    only pipelined until the victim is gone; here that takes one period.
    """
    pods = [
        _running(pod, binds[key], patched.get(key)) if key in binds else pod
        for pod in cluster.pods
        if (key := pod.meta.key) not in evicted and pod.meta.deletion_timestamp is None
    ]
    groups: list[PodGroup] = []
    for pg in cluster.pod_groups:
        written = pod_groups.get(f"{pg.meta.namespace}/{pg.meta.name}")
        if written is not None:
            pg = shallow_copy(written)
            pg.conditions = list(pg.conditions)
        groups.append(pg)
    out_of_pending = {pg.meta.key for pg in groups if pg.phase not in ("", "Pending")}
    held: list[Pod] = []
    for pod in cluster.held_pods:
        group = f"{pod.meta.namespace}/{pod.group_name}"
        (pods if group in out_of_pending else held).append(pod)
    return Cluster(
        nodes=cluster.nodes,
        pods=pods,
        pod_groups=groups,
        queues=cluster.queues,
        priority_classes=cluster.priority_classes,
        objects=cluster.objects,
        held_pods=held,
    )
