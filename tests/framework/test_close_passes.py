"""The close passes' short cuts against the rules they stand for: gang stamping its ready
jobs together (``Session.stamp_pod_group_conditions``) and the job updater's condition
comparison field by field, over drawn pod group conditions."""

from __future__ import annotations

import random
from dataclasses import astuple, replace
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from tests.builders import node, pod, pod_group, queue
from vspec.framework.cache import SchedulerCache
from vspec.framework.job_updater import _same_conditions
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
