"""A completion batch rewrites only the pods it touches, to what a rebuild gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vspec.model.objects import ObjectMeta, Pod
from vspec.timeline.clock import _pods_completed


def _rebuilt(pods: list[Pod], done: set[str], gone: set[str]) -> list[tuple[str, str]]:
    """Every pod visited: the gone taken out, the done succeeded."""
    return [
        (p.meta.key, "Succeeded" if p.meta.key in done else p.phase)
        for p in pods
        if p.meta.key not in gone
    ]


@given(
    names=st.lists(st.integers(0, 30), max_size=25),
    done=st.sets(st.integers(0, 35)),
    gone=st.sets(st.integers(0, 35)),
)
def test_a_batch_gives_the_rebuilt_cluster_and_keeps_the_untouched_pods(
    names: list[int], done: set[int], gone: set[int]
) -> None:
    """Keys repeat in some drawn lists (the full rebuild's path); keys in ``done`` or
    ``gone`` that no pod has change nothing."""
    pods = [Pod(ObjectMeta(f"p{n}", "ns"), phase="Running") for n in names]
    done_keys = {f"ns/p{n}" for n in done}
    gone_keys = {f"ns/p{n}" for n in gone}
    before = list(pods)
    after = _pods_completed(pods, done_keys, gone_keys)
    assert pods == before and after is not pods  # copy-on-write: the old list stays
    assert [(p.meta.key, p.phase) for p in after] == _rebuilt(pods, done_keys, gone_keys)
    untouched = {id(p) for p in pods if p.meta.key not in done_keys}
    assert all(id(p) in untouched for p in after if p.phase == "Running")
    assert all(p.phase == "Running" for p in pods)  # a succeeded pod is a copy
