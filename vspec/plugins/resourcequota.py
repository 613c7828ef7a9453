"""resourcequota: admit a job only while its namespace's ResourceQuotas have room for its
minResources (``plugins/resourcequota/resourcequota.go``).

Volcano reads each quota's *status* (``status.hard`` / ``status.used``, as the quota
controller last wrote them), never its spec, and adds what it admitted earlier in the
session, so several jobs of one namespace cannot pass on the same headroom.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

from vspec.api.job_info import JobInfo
from vspec.api.types import PERMIT, REJECT
from vspec.errors import SpecError
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.registry import register_plugin
from vspec.model.corev1 import ResourceList, parse_resource_list

if TYPE_CHECKING:
    from vspec.framework.session import Session

QuotaStatus = tuple[ResourceList, ResourceList]  # (hard, used)


def quota_add(left: Mapping[str, Fraction], right: Mapping[str, Fraction]) -> ResourceList:
    """``quota.Add``: the union of both lists, summed where both name a resource."""
    result = dict(left)
    for name, q in right.items():
        result[name] = result.get(name, Fraction(0)) + q
    return result


def quota_mask(resources: Mapping[str, Fraction], names: Iterable[str]) -> ResourceList:
    """``quota.Mask``: only the named resources."""
    wanted = set(names)
    return {name: q for name, q in resources.items() if name in wanted}


def quota_exceeded(usage: Mapping[str, Fraction], hard: Mapping[str, Fraction]) -> list[str]:
    """``quota.LessThanOrEqual``'s second result: the limits ``usage`` goes beyond."""
    return [name for name, limit in hard.items() if name in usage and usage[name] > limit]


def format_quantity(q: Fraction) -> str:
    """A quantity in the plain form Kubernetes prints (``2``, ``1500m``)."""
    if q.denominator == 1:
        return str(q.numerator)
    milli = q * 1000
    return f"{milli.numerator}m" if milli.denominator == 1 else str(float(q))


def format_resource_list(resources: Mapping[str, Fraction]) -> str:
    """A resource list as Go's ``%v`` prints a map: keys sorted, ``map[k:v ...]``.

    Go prints the raw ``resource.Quantity`` structs here; vspec prints the quantities.
    """
    body = " ".join(f"{k}:{format_quantity(v)}" for k, v in sorted(resources.items()))
    return f"map[{body}]"


def namespace_quotas(ssn: Session) -> dict[str, dict[str, QuotaStatus]]:
    """``ssn.NamespaceInfo``: per namespace, each ResourceQuota's status by quota name."""
    quotas: dict[str, dict[str, QuotaStatus]] = {}
    for obj in ssn.cluster.objects_of_kind("ResourceQuota"):
        status: Mapping[str, Any] = obj.body.get("status") or {}
        try:
            hard = parse_resource_list(status.get("hard"))
            used = parse_resource_list(status.get("used"))
        except ValueError as exc:
            raise SpecError(f"ResourceQuota {obj.meta.key}: {exc}", obj.meta.location) from exc
        quotas.setdefault(obj.meta.namespace, {})[obj.meta.name] = (hard, used)
    return quotas


@register_plugin
class ResourceQuotaPlugin(Plugin):
    """JobEnqueueable: a job's minResources must fit its namespace's ResourceQuotas."""

    name: ClassVar[str] = "resourcequota"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def on_session_open(self, ssn: Session) -> None:
        quotas = namespace_quotas(ssn)
        # What this session already admitted, per namespace.
        pending: dict[str, ResourceList] = {}
        log = ssn.log

        def job_enqueueable(job: JobInfo) -> int:
            pg = job.pod_group
            if pg is None or pg.min_resources is None:
                return PERMIT
            requests = pg.min_resources
            namespace_quota = quotas.get(job.namespace)
            if namespace_quota is None:
                return PERMIT
            for hard, used in namespace_quota.values():
                requested = quota_mask(requests, hard)
                in_use = used
                if job.namespace in pending:
                    in_use = quota_add(pending[job.namespace], used)
                new_usage = quota_mask(quota_add(in_use, requested), requested)
                exceeded = quota_exceeded(new_usage, hard)
                if exceeded:
                    msg = (
                        "resource quota insufficient, requested: "
                        f"{format_resource_list(quota_mask(requested, exceeded))}, "
                        f"used: {format_resource_list(quota_mask(used, exceeded))}, "
                        f"limited: {format_resource_list(quota_mask(hard, exceeded))}"
                    )
                    log.v(
                        4,
                        f"enqueueable false for job: {job.namespace}/{job.name}, because :{msg}",
                    )
                    ssn.record_pod_group_event(job, "Normal", "Unschedulable", msg)
                    return REJECT
            # Quirk kept: the whole minResources is remembered, not only the quota's names.
            pending[job.namespace] = quota_add(pending.get(job.namespace, {}), requests)
            return PERMIT

        ssn.add_job_enqueueable_fn(self.name, job_enqueueable)
