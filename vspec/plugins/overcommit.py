"""overcommit: admit jobs while the cluster, scaled by a factor, has room
(``plugins/overcommit/overcommit.go``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from vspec.api.job_info import JobInfo
from vspec.api.resource import ZERO, Resource
from vspec.api.types import PERMIT, REJECT
from vspec.framework.arguments import Arguments
from vspec.framework.interface import ArgumentSpec, EnqueueRoom, FloatArgument, Plugin
from vspec.framework.registry import register_plugin
from vspec.plugins._job_accounting import running_job_reservation

if TYPE_CHECKING:
    from vspec.framework.session import Session

OVERCOMMIT_FACTOR = "overcommit-factor"
DEFAULT_OVERCOMMIT_FACTOR = 1.2
OVERCOMMIT_FACTOR_ARG = FloatArgument(
    OVERCOMMIT_FACTOR,
    DEFAULT_OVERCOMMIT_FACTOR,
    "multiplier of the cluster's allocatable resources that enqueue may promise; "
    "values below 1.0 are replaced by the default with a warning",
)
CLUSTER_OVERUSED = "resource in cluster is overused"


@register_plugin
class OvercommitPlugin(Plugin):
    """Enqueue jobs while inqueue minResources fit the overcommitted idle resources."""

    name: ClassVar[str] = "overcommit"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (OVERCOMMIT_FACTOR_ARG,)

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.factor = DEFAULT_OVERCOMMIT_FACTOR
        self.idle_resource = Resource()
        self.inqueue_resource = Resource()

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log
        log.v(5, "Enter overcommit plugin ...")
        self.factor = OVERCOMMIT_FACTOR_ARG.read(self.arguments, self.factor)
        if self.factor < 1.0:
            log.warning(
                f"Invalid input {self.factor:f} for overcommit-factor, reason: overcommit-factor "
                f"cannot be less than 1, using default value: {DEFAULT_OVERCOMMIT_FACTOR:f}."
            )
            self.factor = DEFAULT_OVERCOMMIT_FACTOR

        used = Resource()
        for node in ssn.nodes.values():
            used.add(node.used)
        self.idle_resource = self._idle(ssn, used)

        for job in ssn.jobs.values():
            assert job.pod_group is not None  # the snapshot drops jobs without one
            if job.pod_group.phase == "Inqueue" and job.has_min_resources():
                # Gated pods' requests are not reserved, so they do not block other jobs.
                self.inqueue_resource.add(job.deduct_sch_gated_resources(job.min_resources()))
                continue
            reserved = running_job_reservation(job)
            if reserved is not None:
                self.inqueue_resource.add(reserved)

        ssn.add_job_enqueueable_fn(self.name, lambda job: self.job_enqueueable(ssn, job))
        ssn.add_job_enqueued_fn(self.name, self.job_enqueued)
        log.v(5, "Leaving overcommit plugin.")

    def _idle(self, ssn: Session, used: Resource) -> Resource:
        """total * factor - used, negative where nodes are overcommitted already."""
        scaled = ssn.total_resource.clone().multi(self.factor)
        short = used.less_equal_with_resources_name(scaled, ZERO)
        if short:
            # SubWithoutAssert logs instead of panicking.
            ssn.log.error(
                f"resources <[{' '.join(short)}]> are not sufficient to do operation: "
                f"<{scaled}> sub <{used}>"
            )
        return scaled.sub_without_assert(used)

    def job_enqueueable(self, ssn: Session, job: JobInfo) -> int:
        log = ssn.log
        if not job.has_min_resources():
            log.v(4, f"Job <{job.namespace}/{job.name}> is bestEffort, permit to be inqueue.")
            return PERMIT
        min_req = job.min_resources()
        # Only the dimensions the job asks for are compared.
        wanted = self.inqueue_resource.clone().add(min_req)
        if wanted.less_equal_with_dimension(self.idle_resource, min_req):
            log.v(4, f"Sufficient resources, permit job <{job.namespace}/{job.name}> to be inqueue")
            return PERMIT
        log.v(
            4,
            f"Resource in cluster is overused, reject job <{job.namespace}/{job.name}> "
            "to be inqueue",
        )
        ssn.record_pod_group_event(job, "Normal", "Unschedulable", CLUSTER_OVERUSED)
        return REJECT

    def enqueue_room(self, job: JobInfo) -> EnqueueRoom | None:
        where = (
            f"the cluster: allocatable x overcommit-factor {self.factor:g} - used; "
            "held = the minResources already inqueue"
        )
        return EnqueueRoom(where, self.idle_resource.clone(), self.inqueue_resource.clone())

    def job_enqueued(self, job: JobInfo) -> None:
        """Enqueue admitted the job: the next job sees that much less headroom."""
        if job.has_min_resources():
            self.inqueue_resource.add(job.deduct_sch_gated_resources(job.min_resources()))
