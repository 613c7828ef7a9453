"""A completion batch rewrites only the pods it touches, to what a rebuild gives, with
the places it keeps from batch to batch stale or not."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vspec.model.objects import ObjectMeta, Pod
from vspec.timeline.clock import _Places, _pods_completed


def _rebuilt(pods: list[Pod], done: set[str], gone: set[str]) -> list[tuple[str, str]]:
    """Every pod visited: the gone taken out, the done succeeded."""
    return [
        (p.meta.key, "Succeeded" if p.meta.key in done else p.phase)
        for p in pods
        if p.meta.key not in gone
    ]


def _pod(n: int) -> Pod:
    return Pod(ObjectMeta(f"p{n}", "ns"), phase="Running")


_keys = st.sets(st.integers(0, 14), max_size=3).map(lambda ns: {f"ns/p{n}" for n in ns})
# A job's pods go together, and rarely: most batches take nothing out.
_gone: st.SearchStrategy[set[str]] = st.sets(st.integers(0, 14), max_size=2).map(
    lambda ns: {f"ns/p{n}" for n in ns}
) | st.just(set())
# Between two batches arrivals and sessions may append pods, take some out, or (never in vspec, but
# nothing forbids it) reorder them: the kept places must never be trusted blindly.
_between = st.sampled_from(["same", "arrive", "append", "drop first", "reverse"])


# Mostly distinct names, as a cluster's are; a repeated one takes the full rebuild.
_names = st.lists(st.integers(0, 12), unique=True, max_size=12) | st.lists(st.integers(0, 5))


@given(
    names=_names,
    batches=st.lists(st.tuples(_keys, _gone, _between), min_size=2, max_size=8),
)
def test_batches_give_the_rebuilt_cluster_and_keep_the_untouched_pods(
    names: list[int], batches: list[tuple[set[str], set[str], str]]
) -> None:
    """Keys repeat in some drawn lists (the full rebuild's path); keys in ``done`` or
    ``gone`` that no pod has change nothing."""
    pods = [_pod(n) for n in names]
    places = _Places()
    fresh = 100
    for done, gone, between in batches:
        before = list(pods)
        after, changes = _pods_completed(pods, done, gone, places)
        assert pods == before and after is not pods  # copy-on-write: the old list stays
        if changes is not None:  # the old list less those taken, plus those put, by identity
            taken, put = changes
            left = [id(p) for p in pods]
            for p in taken:
                left.remove(id(p))
            assert sorted([*left, *map(id, put)]) == sorted(map(id, after))
        else:
            assert len({p.meta.key for p in pods}) < len(pods)  # repeated keys: rebuilt
        assert [(p.meta.key, p.phase) for p in after] == _rebuilt(pods, done, gone)
        kept = {id(p) for p in pods if p.meta.key not in done}
        assert all(id(p) in kept for p in after if p.phase == "Running")
        assert all(p.phase == "Running" for p in pods)  # a succeeded pod is a copy
        pods = [p if p.phase == "Running" else _pod(int(p.meta.name[1:])) for p in after]
        if between == "arrive":  # as the clock's arrivals append, telling the places
            places.appended([f"ns/p{fresh}"], len(pods))
            pods = [*pods, _pod(fresh)]
            fresh += 1
        elif between == "append":  # as a session's held pods do, untold
            pods.append(_pod(fresh))
            fresh += 1
        elif between == "drop first":
            pods = pods[1:]
        elif between == "reverse":
            pods.reverse()


def test_places_outlive_a_finished_job_and_an_arrival() -> None:
    """A job's pods taken out and an arrival appended: the places kept still answer,
    shifted by the places taken out before them, without finding them all again."""
    pods = [_pod(n) for n in range(6)]
    places = _Places()
    pods, _ = _pods_completed(pods, {"ns/p1"}, {"ns/p1", "ns/p2"}, places)  # p1, p2 go
    places.appended(["ns/p9"], len(pods))
    pods = [*pods, _pod(9)]
    kept = places.at
    after, changes = _pods_completed(pods, {"ns/p4", "ns/p9"}, set(), places)
    assert changes is not None and [p.meta.name for p in changes[0]] == ["p9", "p4"]
    assert places.at is kept and places.out == [1, 2]  # used, not found again
    assert [(p.meta.name, p.phase) for p in after] == [
        ("p0", "Running"),
        ("p3", "Running"),
        ("p4", "Succeeded"),
        ("p5", "Running"),
        ("p9", "Succeeded"),
    ]
