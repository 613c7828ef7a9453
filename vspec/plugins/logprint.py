"""logprint: log which jobs are pending and which are ready (a vspec plugin, not Volcano's).

The ``print`` action calls the print function of every enabled plugin, in tier order,
with all the session's jobs; this plugin's logs one V(1) line per pending job and one
per ready job, so a spec can see the gang state at that point of the cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from vspec.api.job_info import JobInfo
from vspec.api.types import TaskStatus
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.registry import register_plugin

if TYPE_CHECKING:
    from vspec.framework.session import Session

PRINT_VERBOSITY = 1


def _phase(job: JobInfo) -> str:
    return job.pod_group.phase if job.pod_group is not None else ""


def pending_line(job: JobInfo) -> str:
    return (
        f"Job {job.namespace}/{job.name} is pending: phase <{_phase(job)}>, "
        f"{job.count(TaskStatus.Pending)} of {len(job.tasks)} tasks pending, "
        f"minAvailable {job.min_available}, queue <{job.queue}>"
    )


def ready_line(job: JobInfo) -> str:
    return (
        f"Job {job.namespace}/{job.name} is ready: minAvailable {job.min_available}, "
        f"ready tasks {job.ready_task_num()}/{len(job.tasks)}, queue <{job.queue}>, "
        f"phase <{_phase(job)}>"
    )


@register_plugin
class LogprintPlugin(Plugin):
    """Logs each pending and each ready job at V(1) when the print action runs."""

    name: ClassVar[str] = "logprint"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log

        def print_jobs(jobs: list[JobInfo]) -> None:
            if not log.enabled(PRINT_VERBOSITY):
                return
            for job in jobs:
                if job.is_pending():
                    log.v(PRINT_VERBOSITY, pending_line(job))
                # "Ready" is the session's verdict (JobReady over the enabled plugins),
                # not only gang's arithmetic; a job may be pending and ready at once.
                if ssn.job_ready(job):
                    log.v(PRINT_VERBOSITY, ready_line(job))

        ssn.add_print_fn(self.name, print_jobs)
