"""What a job holds and reserves, as several plugins account it (``plugins/util/util.go``,
``api/helpers/helpers.go``): shares, allocated and inqueue resources, reservations, and
the task lists they log.

Not a plugin: the leading underscore keeps the registry from importing it as one.
"""

from __future__ import annotations

from vspec.api.job_info import JobInfo
from vspec.api.resource import (
    CPU,
    IGNORED_DEVICES,
    MEMORY,
    MIN_RESOURCE,
    Resource,
    is_scalar_resource_name,
)
from vspec.api.task_info import TaskInfo
from vspec.api.types import allocated_status
from vspec.model.quantity import milli_value, value


def share(allocated: float, total: float) -> float:
    """``helpers.Share``: allocated/total; against a zero total, 1 if anything is held."""
    if total == 0:
        return 0.0 if allocated == 0 else 1.0
    return allocated / total


def dominant_share(allocated: Resource, total: Resource) -> tuple[str, float]:
    """(dominant resource, share): the largest :func:`share` of ``allocated`` over
    ``total.resource_names()`` (the first name on a tie, "" and 0 when none is above 0).

    ``resource_names``, ``get`` and ``share`` written out: drf and proportion work a
    share out on every allocate and deallocate event, and the calls were most of it.
    A name is the total's only from ``MIN_RESOURCE`` on, so ``share`` is the plain
    quotient here; a scalar is never named cpu or memory (``add_quantity`` routes
    those), so ``scalars.get`` is ``get``.
    """
    result, dominant = 0.0, ""
    whole = total.milli_cpu
    if whole >= MIN_RESOURCE:
        value = allocated.milli_cpu / whole
        if value > result:
            result, dominant = value, CPU
    whole = total.memory
    if whole >= MIN_RESOURCE:
        value = allocated.memory / whole
        if value > result:
            result, dominant = value, MEMORY
    held = allocated.scalars
    for name, whole in total.scalars.items():
        if whole >= MIN_RESOURCE:
            value = held.get(name, 0.0) / whole
            if value > result:
                result, dominant = value, name
    return dominant, result


def allocated_task_num(job: JobInfo) -> int:
    """``CalculateAllocatedTaskNum``: tasks in Bound, Binding, Running or Allocated."""
    return sum(
        len(tasks) for status, tasks in job.task_status_index.items() if allocated_status(status)
    )


def _ignored_scalar(name: str) -> bool:
    """Quota counts, names that are no scalar resource, and the vGPU devices."""
    return (
        name.startswith("count/")
        or not is_scalar_resource_name(name)
        or any(device in name for device in IGNORED_DEVICES)
    )


def inqueue_resource(job: JobInfo, allocated: Resource) -> Resource:
    """``GetInqueueResource``: the part of minResources a running job has not got yet.

    Quirk kept: scalars are read with ``Quantity.Value()`` (whole units) although
    allocations hold them in milli units, and a scalar the job holds none of is
    reserved whole.
    """
    inqueue = Resource()
    pg = job.pod_group
    if pg is None or pg.min_resources is None:
        return inqueue
    for name, quantity in pg.min_resources.items():
        if name == CPU:
            reserved = milli_value(quantity) - allocated.milli_cpu
            if reserved > 0:
                inqueue.milli_cpu = reserved
        elif name == MEMORY:
            reserved = value(quantity) - allocated.memory
            if reserved > 0:
                inqueue.memory = reserved
        elif _ignored_scalar(name):
            continue
        elif name not in allocated.scalars:
            inqueue.scalars[name] = float(value(quantity))
        else:
            reserved = value(quantity) - allocated.scalars[name]
            if reserved > 0:
                inqueue.scalars[name] = reserved
    return inqueue


def running_job_reservation(job: JobInfo) -> Resource | None:
    """What a Running job with minResources still reserves in its queue or cluster.

    Proportion and overcommit both count it (only once the job holds at least minMember
    allocated tasks, so that a finished driver does not reserve its share again);
    None when the rule does not apply.
    """
    pg = job.pod_group
    if (
        pg is None
        or pg.phase != "Running"
        or pg.min_resources is None
        or allocated_task_num(job) < pg.min_member
    ):
        return None
    return job.deduct_sch_gated_resources(inqueue_resource(job, job.allocated))


def format_tasks(tasks: list[TaskInfo]) -> str:
    """Go's ``%+v`` of a task slice: ``[<task> <task>]`` (nil prints ``[]``)."""
    return "[" + " ".join(str(t) for t in tasks) + "]"
