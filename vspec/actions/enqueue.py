"""The ``enqueue`` action (``actions/enqueue/enqueue.go``): admit pending jobs.

One job per queue per turn, queues in QueueOrder. No JobValid and no node check here:
an invalid or unfittable job still becomes Inqueue (quirk kept). A job without
``minResources`` bypasses every enqueue voter.
"""

from __future__ import annotations

from vspec.api.job_info import JobInfo
from vspec.api.queue_info import QueueInfo
from vspec.framework.interface import Action, Trace
from vspec.framework.job_answers import OpenGroups, in_session_order
from vspec.framework.registry import register_action
from vspec.framework.session import Session
from vspec.util.priority_queue import PriorityQueue


class _Waiting(OpenGroups):
    """The pending jobs as they opened, under ``_PENDING`` (enqueue's candidates)."""


_PENDING = "enqueue: pending"


def _waiting(job: JobInfo) -> str | None:
    return _PENDING if job.is_pending() else None


@register_action
class Enqueue(Action):
    """Move pending pod groups to Inqueue when the enqueue voters permit."""

    name = "enqueue"
    carries_jobs = True
    trace = Trace("Enter Enqueue ...", "enqueue.go:45", "Leaving Enqueue ...", "enqueue.go:104")

    def execute(self, ssn: Session) -> None:
        queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_order_fn)
        jobs_map: dict[str, PriorityQueue[JobInfo]] = {}
        if not (ssn.cache.carries_jobs and _pick_up_filed(ssn, queues, jobs_map)):
            _pick_up(ssn, queues, jobs_map)
        ssn.log.v(3, f"Try to enqueue PodGroup to {len(jobs_map)} Queues")
        while not queues.empty():
            queue = queues.pop()
            jobs = jobs_map.get(queue.uid)
            if jobs is None or jobs.empty():
                continue
            job = jobs.pop()
            if not job.has_min_resources() or ssn.job_enqueueable(job):
                ssn.job_enqueued(job)
                job.set_phase("Inqueue")
            queues.push(queue)


def _pick_up(
    ssn: Session, queues: PriorityQueue[QueueInfo], jobs_map: dict[str, PriorityQueue[JobInfo]]
) -> None:
    """Volcano's pass over every job: stamp its schedule start, push its queue when
    first seen and, when pending, the job into its queue's heap."""
    seen: set[str] = set()
    log = ssn.log
    for job in ssn.jobs.values():
        if job.schedule_start_timestamp is None:
            job.schedule_start_timestamp = ssn.now
        queue = ssn.queues.get(job.queue)
        if queue is None:
            log.error(f"Failed to find Queue <{job.queue}> for Job <{job.namespace}/{job.name}>")
            continue
        if queue.uid not in seen:
            log.v(5, f"Added Queue <{queue.name}> for Job <{job.namespace}/{job.name}>")
            seen.add(queue.uid)
            queues.push(queue)
        if job.is_pending():
            jobs_map.setdefault(job.queue, PriorityQueue(ssn.job_order_fn))
            log.v(5, f"Added Job <{job.namespace}/{job.name}> into Queue <{job.queue}>")
            jobs_map[job.queue].push(job)


def _pick_up_filed(
    ssn: Session, queues: PriorityQueue[QueueInfo], jobs_map: dict[str, PriorityQueue[JobInfo]]
) -> bool:
    """:func:`_pick_up` with the pending jobs filed by the job feed (:class:`_Waiting`):
    the pass over every job only stamps it and finds each queue's first job. False,
    with nothing pushed, where Volcano's pass logs a line (V(5), a job of an unknown
    queue); the stamps made stand, as that pass makes them alike."""
    log = ssn.log
    if log.enabled(5):
        return False
    known = ssn.queues
    first: dict[str, None] = {}
    now = ssn.now
    for job in ssn.jobs.values():
        if job.schedule_start_timestamp is None:
            job.schedule_start_timestamp = now
        first[job.queue] = None
    if not first.keys() <= known.keys():
        return False
    for name in first:
        queues.push(known[name])
    jobs = ssn.jobs
    waiting = ssn.state.memo(_Waiting).groups(ssn, _waiting).get(_PENDING, {})
    for uid in in_session_order(ssn, waiting):
        job = jobs[uid]
        if job.queue not in jobs_map:
            jobs_map[job.queue] = PriorityQueue(ssn.job_order_fn)
        jobs_map[job.queue].push(job)
    return True
