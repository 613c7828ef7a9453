"""sla: jobs that have waited longer than their service-level waiting time are admitted
and pipelined regardless of the other voters' abstentions (``plugins/sla/sla.go``).

The waiting time is the job's ``sla-waiting-time`` annotation (see JobInfo), else the
plugin argument of the same name. Volcano compares with the wall clock; vspec uses the
session's clock (``ssn.now``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, ClassVar

from vspec.api.job_info import JobInfo
from vspec.api.types import ABSTAIN, PERMIT
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.registry import register_plugin
from vspec.golang import format_go_duration, go_duration_error, parse_duration

if TYPE_CHECKING:
    from vspec.framework.session import Session

JOB_WAITING_TIME = "sla-waiting-time"


@register_plugin
class SlaPlugin(Plugin):
    """Jobs past their SLA waiting time go first and are admitted (enqueue, pipeline)."""

    name: ClassVar[str] = "sla"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (
        ArgumentSpec(
            JOB_WAITING_TIME,
            "duration",
            "unset",
            "waiting time of jobs without their own sla-waiting-time annotation (e.g. 1h2m3s)",
        ),
    )

    def _global_waiting_time(self, ssn: Session) -> timedelta | None:
        if JOB_WAITING_TIME not in self.arguments:
            return None
        raw = self.arguments[JOB_WAITING_TIME]
        text = raw if isinstance(raw, str) else ""
        try:
            waiting = parse_duration(text)
        except ValueError:
            ssn.log.error(
                "Error occurs in parsing global job waiting time in sla plugin, "
                f"err: {go_duration_error(text)}."
            )
            waiting = timedelta(0)
        if waiting <= timedelta(0):
            ssn.log.warning(
                f"Invalid global waiting time setting: {format_go_duration(waiting)} in sla plugin."
            )
            return None
        ssn.log.v(4, f"Global job waiting time is {format_go_duration(waiting)}.")
        return waiting

    def on_session_open(self, ssn: Session) -> None:
        ssn.log.v(4, "Enter sla plugin ...")
        global_waiting = self._global_waiting_time(ssn)

        def waiting_time(job: JobInfo) -> timedelta | None:
            return job.waiting_time if job.waiting_time is not None else global_waiting

        def job_order(left: JobInfo, right: JobInfo) -> int:
            lw, rw = waiting_time(left), waiting_time(right)
            if lw is None:
                return 0 if rw is None else 1
            if rw is None:
                return -1
            l_deadline = left.creation_timestamp + lw
            r_deadline = right.creation_timestamp + rw
            if l_deadline < r_deadline:
                return -1
            if l_deadline > r_deadline:
                return 1
            return 0

        def permitable(job: JobInfo) -> int:
            waiting = waiting_time(job)
            if waiting is None or ssn.now - job.creation_timestamp < waiting:
                return ABSTAIN
            return PERMIT

        ssn.add_job_order_fn(self.name, job_order)
        # Past its waiting time a job is admitted by enqueue and kept by allocate.
        ssn.add_job_enqueueable_fn(self.name, permitable)
        ssn.add_job_pipelined_fn(self.name, permitable)
        ssn.log.v(4, "Leaving sla plugin.")
