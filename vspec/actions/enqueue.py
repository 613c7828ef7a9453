"""The ``enqueue`` action (``actions/enqueue/enqueue.go``): admit pending jobs.

One job per queue per turn, queues in QueueOrder. No JobValid and no node check here:
an invalid or unfittable job still becomes Inqueue (quirk kept). A job without
``minResources`` bypasses every enqueue voter.
"""

from __future__ import annotations

from vspec.api.job_info import JobInfo
from vspec.api.queue_info import QueueInfo
from vspec.framework.interface import Action, Trace
from vspec.framework.job_answers import pending_jobs
from vspec.framework.registry import register_action
from vspec.framework.session import Session
from vspec.util.priority_queue import PriorityQueue


@register_action
class Enqueue(Action):
    """Move pending pod groups to Inqueue when the enqueue voters permit."""

    name = "enqueue"
    carries_jobs = True
    trace = Trace("Enter Enqueue ...", "enqueue.go:45", "Leaving Enqueue ...", "enqueue.go:104")

    def execute(self, ssn: Session) -> None:
        queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_order_fn)
        seen: set[str] = set()
        jobs_map: dict[str, PriorityQueue[JobInfo]] = {}
        log = ssn.log
        pending = pending_jobs(ssn)
        for uid, job in ssn.jobs.items():
            if job.schedule_start_timestamp is None:
                job.schedule_start_timestamp = ssn.now
            queue = ssn.queues.get(job.queue)
            if queue is None:
                log.error(
                    f"Failed to find Queue <{job.queue}> for Job <{job.namespace}/{job.name}>"
                )
                continue
            if queue.uid not in seen:
                log.v(5, f"Added Queue <{queue.name}> for Job <{job.namespace}/{job.name}>")
                seen.add(queue.uid)
                queues.push(queue)
            if pending[uid]:
                jobs_map.setdefault(job.queue, PriorityQueue(ssn.job_order_fn))
                log.v(5, f"Added Job <{job.namespace}/{job.name}> into Queue <{job.queue}>")
                jobs_map[job.queue].push(job)
        log.v(3, f"Try to enqueue PodGroup to {len(jobs_map)} Queues")
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
