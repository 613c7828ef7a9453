"""resourcequota: minResources against the namespace quotas' status.hard/status.used."""

from __future__ import annotations

from typing import Any

from tests.builders import kube_object, pod_group, queue, session
from vspec.model.objects import Cluster

ENTRY = {"name": "resourcequota", "enableJobEnqueued": True}


def _quota(name: str, hard: dict[str, Any], used: dict[str, Any] | None = None) -> Any:
    status: dict[str, Any] = {"hard": hard}
    if used is not None:
        status["used"] = used
    # spec.hard is deliberately larger: Volcano reads only the status.
    return kube_object(
        "ResourceQuota", "ns1", name, {"spec": {"hard": {"cpu": 100}}, "status": status}
    )


def _cluster(*objects: Any, min_resources: dict[str, Any] | None = None) -> Cluster:
    groups = [
        pod_group("ns1", f"pg{i}", "q1", min_member=1, min_resources=min_resources) for i in (1, 2)
    ]
    groups.append(pod_group("ns2", "other", "q1", min_member=1, min_resources={"cpu": 50}))
    return Cluster(queues=[queue("q1")], pod_groups=groups, objects=list(objects))


def test_fits_status_hard() -> None:
    ssn = session(
        _cluster(_quota("q", {"cpu": "2", "memory": "2G"}), min_resources={"cpu": 2}), [ENTRY]
    )
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg1"]) is True


def test_admitted_jobs_count_against_the_quota() -> None:
    quota = _quota("q", {"cpu": "3"}, used={"cpu": "1"})
    ssn = session(_cluster(quota, min_resources={"cpu": 1, "memory": "1Gi"}), [ENTRY])
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg1"]) is True
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg2"]) is True
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg1"]) is False
    msg = ssn.cache.effects.events[-1][3]
    assert msg == (
        "resource quota insufficient, requested: map[cpu:1], used: map[cpu:1], limited: map[cpu:3]"
    )


def test_every_quota_of_the_namespace_must_fit() -> None:
    objects = (_quota("big", {"cpu": "10"}), _quota("small", {"memory": "1Gi"}))
    ssn = session(_cluster(*objects, min_resources={"cpu": 1, "memory": "2Gi"}), [ENTRY])
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg1"]) is False


def test_namespaces_without_quota_and_jobs_without_min_resources_pass() -> None:
    ssn = session(_cluster(_quota("q", {"cpu": "1"})), [ENTRY])
    assert ssn.job_enqueueable(ssn.jobs["ns1/pg1"]) is True  # no minResources
    assert ssn.job_enqueueable(ssn.jobs["ns2/other"]) is True  # no quota in ns2
