"""The cluster one period later (vspec.model.cycles.next_cluster): the pods are copied
and filtered by C loops with only the bound places written, which must come to the
rule pod by pod, duplicate keys and terminating pods included."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from vspec.model.cycles import KnownPods, _places_of, next_cluster
from vspec.model.objects import Cluster, ObjectMeta, Pod, PodGroup

_STAMP = datetime(2026, 1, 1)


@st.composite
def _pods(draw: st.DrawFn) -> list[Pod]:
    names = draw(st.lists(st.integers(0, 30), max_size=60, unique=draw(st.booleans())))
    ending = draw(st.booleans())  # some pods terminating
    return [
        Pod(
            ObjectMeta(
                f"p{n}",
                "ns",
                deletion_timestamp=_STAMP if ending and draw(st.booleans()) else None,
            )
        )
        for n in names
    ]


def _rule(pods: list[Pod], binds: dict[str, str], evicted: set[str]) -> list[tuple[str, str, str]]:
    """Each pod kept unless evicted or terminating, bound ones running on their node."""
    out = []
    for pod in pods:
        key = pod.meta.key
        if key in evicted or pod.meta.deletion_timestamp is not None:
            continue
        if key in binds:
            out.append((key, binds[key], "Running"))
        else:
            out.append((key, pod.node_name, pod.phase))
    return out


@given(
    pods=_pods(),
    bound=st.dictionaries(st.integers(0, 35), st.sampled_from(["n0", "n1"]), max_size=8),
    evicted=st.sets(st.integers(0, 35), max_size=5),
    told=st.booleans(),
)
def test_the_next_pods_are_the_rule_applied_pod_by_pod(
    pods: list[Pod], bound: dict[int, str], evicted: set[int], told: bool
) -> None:
    """``told``: the caller says what it knows of the pods (when their keys are unique),
    as the scheduler cache does."""
    binds = {f"ns/p{n}": node for n, node in bound.items()}
    gone = {f"ns/p{n}" for n in evicted}
    by_key = {p.meta.key: p for p in pods}
    known = None
    if told and len(by_key) == len(pods):
        terminating = any(p.meta.deletion_timestamp is not None for p in pods)
        known = KnownPods(by_key, terminating)
    after = next_cluster(
        Cluster(pods=pods), binds=binds, evicted=gone, patched={}, pod_groups={}, known=known
    )
    assert [(p.meta.key, p.node_name, p.phase) for p in after.pods] == _rule(pods, binds, gone)
    unbound = [p for p in after.pods if p.meta.key not in binds]
    assert all(any(p is q for q in pods) for p in unbound)  # the same objects, not copies
    assert all(p.phase == "Pending" for p in pods)  # the input untouched


@given(
    names=st.lists(st.integers(0, 20), max_size=30, unique=True),
    written=st.sets(st.integers(0, 25), max_size=8),
    told=st.booleans(),
)
def test_the_written_pod_groups_replace_theirs_in_place(
    names: list[int], written: set[int], told: bool
) -> None:
    """Found by identity when the caller knows the pod groups by job id (the scheduler
    cache), else by name: the same list either way, the written ones copied."""
    groups = [PodGroup(ObjectMeta(f"g{n}", "ns")) for n in names]
    wrote = {f"ns/g{n}": PodGroup(ObjectMeta(f"g{n}", "ns"), phase="Running") for n in written}
    wrote = {uid: pg for uid, pg in wrote.items() if any(uid == g.meta.key for g in groups)}
    known = KnownPods({}, False, {g.meta.key: g for g in groups}) if told else None
    after = next_cluster(
        Cluster(pod_groups=groups),
        binds={},
        evicted=set(),
        patched={},
        pod_groups=wrote,
        known=known,
    )
    assert [g.meta.key for g in after.pod_groups] == [g.meta.key for g in groups]
    for old, new in zip(groups, after.pod_groups, strict=True):
        source = wrote.get(old.meta.key)
        if source is None:
            assert new is old
        else:
            assert new == source
            assert new is not source
            assert new.conditions is not source.conditions
    assert all(g.phase == "Pending" for g in groups)  # the input untouched


@given(
    size=st.integers(0, 40),
    wanted=st.sets(st.integers(0, 45), max_size=10),
    pod_groups=st.booleans(),
)
def test_the_places_found_from_the_end_are_those_of_a_pass_over_every_item(
    size: int, wanted: set[int], pod_groups: bool
) -> None:
    """``_places_of`` stops once it found every object asked (some asked are in no
    place: a pod the caller knows that the list lost): the places, in order, are those
    a pass over the whole list finds."""
    items: list[Pod] | list[PodGroup] = (
        [PodGroup(ObjectMeta(f"g{n}", "ns")) for n in range(size)]
        if pod_groups
        else [Pod(ObjectMeta(f"p{n}", "ns")) for n in range(size)]
    )
    others = [Pod(ObjectMeta(f"o{n}", "ns")) for n in range(46)]
    ids = {id(items[n] if n < size else others[n]): n for n in wanted}
    assert _places_of(items, ids) == [i for i, x in enumerate(items) if id(x) in ids]
