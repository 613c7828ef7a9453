"""The close passes' short cuts against the rules they stand for: gang stamping its ready
jobs together (``Session.stamp_pod_group_conditions``) and the job updater's condition
comparison field by field, over drawn pod group conditions; the updater's pairing of
jobs with their opening statuses and the hand-back's kept spec check, over drawn orders
and steps."""

from __future__ import annotations

import random
from dataclasses import astuple, replace
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from tests.builders import node, pod, pod_group, queue
from vspec.api.job_info import JobInfo, same_spec
from vspec.framework.cache import PodGroupStatus, SchedulerCache, _Carried
from vspec.framework.job_updater import _same_conditions, _with_statuses
from vspec.framework.log import Klog
from vspec.framework.session import Session
from vspec.model.conf import SchedulerOptions
from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster

_TYPES = st.sampled_from(["Scheduled", "Unschedulable", "Other"])
_CONDITIONS = st.builds(
    Condition,
    type=_TYPES,
    status=st.sampled_from(["True", "False"]),
    reason=st.sampled_from(["", "r"]),
    message=st.sampled_from(["", "m"]),
    transition_id=st.sampled_from(["", "s1", "s2"]),
    last_transition_time=st.sampled_from([None, datetime(2025, 1, 1, tzinfo=UTC)]),
)


def _session(groups: int) -> Session:
    names = [f"j{i}" for i in range(groups)]
    cluster = Cluster(
        nodes=[node("n1", {"cpu": "4", "memory": "4Gi", "pods": "10"})],
        pods=[pod("ns", f"{name}-0", name, {"cpu": "1"}) for name in names],
        pod_groups=[pod_group("ns", name, "default") for name in names],
        queues=[queue("default")],
    )
    cache = SchedulerCache(cluster, SchedulerOptions(), Klog(0))
    return Session(
        "s", cache, [], [], log=Klog(0), rng=random.Random(0), now=datetime(2025, 1, 1, tzinfo=UTC)
    )


@given(st.lists(st.lists(_CONDITIONS, max_size=3), min_size=1, max_size=4), _CONDITIONS)
def test_stamping_together_is_updating_each(lists: list[list[Condition]], cond: Condition) -> None:
    stamped, updated = _session(len(lists)), _session(len(lists))
    for ssn in (stamped, updated):
        for job, conditions in zip(ssn.jobs.values(), lists, strict=True):
            assert job.pod_group is not None
            job.pod_group.conditions = list(conditions)
    stamped.stamp_pod_group_conditions(stamped.jobs.values(), cond)
    for job in updated.jobs.values():
        updated.update_pod_group_condition(job, cond)
    assert _conditions(stamped) == _conditions(updated)


def _conditions(ssn: Session) -> list[list[Condition]]:
    return [job.pod_group.conditions for job in ssn.jobs.values() if job.pod_group is not None]


def _unstamped(cond: Condition) -> tuple[object, ...]:
    return astuple(replace(cond, transition_id="", last_transition_time=None))


@given(st.lists(_CONDITIONS, max_size=3), st.lists(_CONDITIONS, max_size=3))
def test_conditions_compare_but_for_their_stamps(
    new: list[Condition], old: list[Condition]
) -> None:
    expected = list(map(_unstamped, new)) == list(map(_unstamped, old))
    assert _same_conditions(new, tuple(old)) is expected
    assert _same_conditions(list(old), tuple(old))


@given(
    st.lists(_CONDITIONS, max_size=3),
    st.lists(_CONDITIONS, max_size=3),
    st.lists(st.sampled_from(["", "s1", "s2"]), min_size=3, max_size=3),
    st.sampled_from(["s1", "s2"]),
)
def test_conditions_hold_but_for_an_unschedulable_stamped_by_the_session(
    drawn: list[Condition], old: list[Condition], stamps: list[str], session: str
) -> None:
    """Given the session's uid, the comparison also fails on an Unschedulable condition
    that is True and stamped by that session (the phase rule's Unknown). The new
    conditions are drawn, or the old ones stamped anew (as gang stamps a job's)."""
    new = drawn or [replace(c, transition_id=stamp) for c, stamp in zip(old, stamps, strict=False)]
    stamped = any(
        c.transition_id == session and c.type == "Unschedulable" and c.status == "True" for c in new
    )
    expected = list(map(_unstamped, new)) == list(map(_unstamped, old)) and not stamped
    assert _same_conditions(new, tuple(old), session) is expected


# The job updater pairs each job but the settled ones with the status it opened with by
# place when both dicts hold the very same id strings in order (the snapshot's), else by
# look-up.
_UIDS = st.lists(st.sampled_from([f"ns/j{i}" for i in range(6)]), unique=True, max_size=6)


@given(_UIDS, _UIDS, st.booleans(), _UIDS)
def test_jobs_pair_with_their_opening_status(
    jobs_order: list[str], status_order: list[str], same_strings: bool, settled: list[str]
) -> None:
    # The statuses' keys are the jobs' very strings, or equal strings made anew.
    def key(uid: str) -> str:
        return uid if same_strings else "".join(list(uid))

    jobs = {uid: _job(uid) for uid in jobs_order}
    before = {key(uid): _status(uid) for uid in status_order}
    if same_strings:
        before = {uid: before[uid] for uid in status_order}
    paired = list(_with_statuses(jobs, before, dict.fromkeys(settled, "Running")))
    assert [(job.uid, old) for job, old in paired] == [
        (uid, before.get(uid)) for uid in jobs_order if uid not in settled
    ]


def _job(uid: str) -> JobInfo:
    return JobInfo(uid)


def _status(uid: str) -> PodGroupStatus:
    return PodGroupStatus(uid, (), 0, 0, 0)


# The hand-back asks whether a carried clone's pod group holds its source's spec again
# only of other pod group objects; drawn steps change what a session and the cache may.
_STEPS = st.lists(
    st.sampled_from(
        [
            "status",  # the session writes the clone's status (the job contract)
            "source-same",  # the cache's job takes a copy of the same spec
            "source-other",  # ... of another spec
            "clone-same",  # the clone's pod group replaced by a copy of the same spec
            "clone-other",  # ... of another spec
            "source-none",
            "clone-none",
        ]
    ),
    max_size=12,
)


@given(_STEPS)
def test_a_carried_spec_is_asked_again_of_other_pod_groups(steps: list[str]) -> None:
    group = pod_group("ns", "j", "default", min_member=2)
    source, clone = JobInfo("ns/j", group), JobInfo("ns/j", replace(group))
    kept = _Carried(source, clone, clone.version)
    for step in [None, *steps]:
        if step == "status":
            if clone.pod_group is not None:
                clone.pod_group.phase = "Running"
                clone.pod_group.conditions = [*clone.pod_group.conditions]
        elif step is not None:
            whose, how = step.split("-")
            job = source if whose == "source" else clone
            now = job.pod_group or group
            job.pod_group = (
                None
                if how == "none"
                else replace(now, min_member=now.min_member + (how == "other"))
            )
        old, new = source.pod_group, clone.pod_group
        fresh = old is not None and new is not None and same_spec(old, new)
        got = kept.spec_kept()
        assert (got is not None) is fresh
        assert got is None or (got[0] is old and got[1] is new)
