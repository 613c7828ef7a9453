"""The job updater at session close (``jobStatus``, ``isPodGroupStatusUpdated``,
``RecordJobStatusEvent``): over random jobs, conditions and task changes, including
changes after a first close (the counts it reads are kept per job version), each pod
group gets the phase and counts, the write decision and the event Volcano's rules give
when counted afresh."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import NOW, node, pod, pod_group, queue, session
from vspec.api.job_info import JobInfo
from vspec.api.types import ALLOCATED_STATUSES, COMPLETED_STATUSES, TaskStatus
from vspec.framework.framework import close_session
from vspec.framework.job_updater import update_all
from vspec.framework.session import Session
from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster
from vspec.model.versions import V1_10_0, V1_11_0

PHASES = ["Pending", "Inqueue", "Running", "Unknown", "Completed"]
READY = "tasks in gang are ready to be scheduled"
# Conditions a pod group may hold when the session opens: gang's own (stamped by an
# earlier session, or by this one's uid "test"), and another type gang never writes.
CONDITIONS = st.lists(
    st.builds(
        Condition,
        type=st.sampled_from(["Scheduled", "Unschedulable", "Other"]),
        status=st.sampled_from(["True", "False"]),
        reason=st.sampled_from([READY, "NotEnoughResources"]),
        message=st.sampled_from(["", "0/1 tasks in gang unschedulable: x"]),
        transition_id=st.sampled_from(["earlier", "test"]),
        last_transition_time=st.sampled_from([NOW, NOW - timedelta(seconds=1)]),
    ),
    max_size=3,
)
JOBS = st.lists(
    st.tuples(
        st.integers(0, 3),  # minMember
        st.sampled_from(PHASES),
        st.integers(0, 3),  # pods
        CONDITIONS,
        st.integers(0, 3),  # running, succeeded, failed as the pod group last had them
    ),
    min_size=1,
    max_size=4,
)
CHANGES = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from(list(TaskStatus))),
    max_size=6,
)


def _session(jobs: list[tuple[int, str, int, list[Condition], int]]) -> Session:
    pods, groups = [], []
    for j, (min_member, phase, n, conditions, count) in enumerate(jobs):
        pg = pod_group("ns", f"j{j}", "q", min_member=min_member, phase=phase)
        pg.conditions = list(conditions)
        pg.running = pg.succeeded = pg.failed = count
        groups.append(pg)
        pods += [pod("ns", f"j{j}-{i}", f"j{j}", {"cpu": "1"}) for i in range(n)]
    cluster = Cluster(
        nodes=[node("n1", {"cpu": "8", "memory": "8Gi", "pods": "20"})],
        pods=pods,
        pod_groups=groups,
        queues=[queue("q")],
    )
    return session(cluster, [{"name": "gang"}], verbosity=0)


def _change(ssn: Session, changes: list[tuple[int, int, TaskStatus]]) -> None:
    jobs = list(ssn.jobs.values())
    for j, i, status in changes:
        tasks = list(jobs[j % len(jobs)].tasks.values())
        if tasks:
            jobs[j % len(jobs)].update_task_status(tasks[i % len(tasks)], status)


def _phase(ssn: Session, job: JobInfo) -> str:
    """``jobStatus``'s phase, counted from the index afresh."""
    pg = job.pod_group
    assert pg is not None
    index = job.task_status_index

    def count(*statuses: TaskStatus) -> int:
        return sum(len(index.get(s, {})) for s in statuses)

    unschedulable = any(
        c.type == "Unschedulable" and c.status == "True" and c.transition_id == ssn.uid
        for c in pg.conditions
    )
    if count(TaskStatus.Running) and unschedulable:
        return "Unknown"
    ended = COMPLETED_STATUSES if ssn.gates.completed_counts_failed else {TaskStatus.Succeeded}
    allocated = count(*ALLOCATED_STATUSES, *ended)
    if allocated >= pg.min_member:
        return "Completed" if count(*ended) == allocated else "Running"
    return "Inqueue" if pg.phase == "Inqueue" else "Pending"


def _expected(ssn: Session) -> dict[str, tuple[object, ...]]:
    """Per job: phase, running, succeeded, failed, written, and the event's reason."""
    expected: dict[str, tuple[object, ...]] = {}
    for uid, job in ssn.jobs.items():
        pg = job.pod_group
        assert pg is not None
        phase = _phase(ssn, job)
        counts = tuple(len(job.task_status_index.get(s, {})) for s in _COUNTED)
        old = ssn.pod_group_status[uid]
        assert old is not None

        def unstamped(c: Condition) -> tuple[str, ...]:
            return c.type, c.status, c.reason, c.message

        written = (phase, *counts) != (old.phase, old.running, old.succeeded, old.failed) or [
            unstamped(c) for c in pg.conditions
        ] != [unstamped(c) for c in old.conditions]
        event: str | None = "Scheduled" if written else None
        if phase in ("Unknown", "Pending", "Inqueue"):
            event = "Unschedulable"
        expected[uid] = (phase, *counts, written, event)
    return expected


_COUNTED = (TaskStatus.Running, TaskStatus.Succeeded, TaskStatus.Failed)


def _closed(ssn: Session, written: dict[str, bool]) -> dict[str, tuple[object, ...]]:
    events = {uid: reason for uid, _, reason, _ in ssn.cache.effects.events}
    got: dict[str, tuple[object, ...]] = {}
    for uid, job in ssn.jobs.items():
        pg = job.pod_group
        assert pg is not None
        counts = (pg.running, pg.succeeded, pg.failed)
        got[uid] = (pg.phase, *counts, written[uid], events.get(uid))
    return got


@settings(max_examples=150, deadline=None)
@given(JOBS, CHANGES, CHANGES, st.booleans())
def test_close_writes_what_the_rules_give_counted_afresh(
    jobs: list[tuple[int, str, int, list[Condition], int]],
    before: list[tuple[int, int, TaskStatus]],
    after: list[tuple[int, int, TaskStatus]],
    v1_10: bool,
) -> None:
    ssn = _session(jobs)
    ssn.gates = V1_10_0 if v1_10 else V1_11_0
    _change(ssn, before)
    ssn.plugins["gang"].on_session_close(ssn)
    expected = _expected(ssn)
    assert _closed(ssn, update_all(ssn)) == expected
    # Tasks change after the counts were read: the next close follows them.
    ssn.cache.effects.events.clear()
    _change(ssn, after)
    ssn.plugins["gang"].on_session_close(ssn)
    expected = _expected(ssn)
    assert _closed(ssn, update_all(ssn)) == expected


def test_ready_jobs_share_the_session_stamped_condition() -> None:
    """Every ready job's Scheduled condition is the session's: its uid and time."""
    ssn = _session([(0, "Running", 1, [], 0), (1, "Pending", 2, [], 0)])
    _change(ssn, [(1, 0, TaskStatus.Running)])
    close_session(ssn)
    conditions = [job.condition("Scheduled") for job in ssn.jobs.values()]
    assert conditions[0] == conditions[1]
    assert conditions[0] is not None
    assert (conditions[0].transition_id, conditions[0].last_transition_time) == ("test", NOW)
