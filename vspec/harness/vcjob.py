"""Volcano Job manifests (``batch.volcano.sh/v1alpha1`` Job) -> a PodGroup and its pods.

What the scheduler sees of a Volcano Job is what v1.11.0's job controller makes of it
(pkg/controllers/job: ``createOrUpdatePodGroup``, ``calcPGMinResources`` and
``createJobPod``), after the admission webhooks of a ``deployed`` cluster have filled in
its defaults and checked it (pkg/webhooks/admission/jobs, :mod:`vspec.harness.jobwebhook`).
In ``bare`` mode no webhook runs: the Job is converted as written.

The controller creates a Job's pods only once its PodGroup has left Pending (``syncJob``
syncs tasks only when the phase is neither "" nor Pending), so the pods of a fresh Job
are *held* (:attr:`Cluster.held_pods`) until a session has enqueued the group, and appear
in the next cycle, as on a cluster. A Job whose PodGroup or pods are given too (a
``kubectl get`` dump holds all three) adds only what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from vspec.harness import jobwebhook, kinds
from vspec.harness import manifests as mf
from vspec.harness.vcjob_types import Job, Policy, Task
from vspec.harness.yamlload import At
from vspec.k8s.podinfo import pod_requests
from vspec.model.conf import SchedulerOptions
from vspec.model.corev1 import ResourceList
from vspec.model.objects import (
    GROUP_NAME_ANNOTATION,
    TASK_SPEC_KEY,
    Cluster,
    ObjectMeta,
    Pod,
    PodGroup,
)
from vspec.model.spec import ClusterMode

API_VERSION = "batch.volcano.sh/v1alpha1"
# Annotations and labels the job controller writes on every pod (volcano.sh/apis
# batch/v1alpha1/labels.go); the scheduler reads the task spec and the group name.
TASK_INDEX = "volcano.sh/task-index"
JOB_NAME = "volcano.sh/job-name"
QUEUE_NAME = "volcano.sh/queue-name"
JOB_NAMESPACE = "volcano.sh/job-namespace"
JOB_VERSION = "volcano.sh/job-version"
TEMPLATE_KEY = "volcano.sh/template-uid"
RETRY_COUNT = "volcano.sh/job-retry-count"
NUMA_POLICY = "volcano.sh/numa-topology-policy"
# Job annotations the controller copies to its pods (and the labels of them it copies).
COPIED_ANNOTATIONS = ("volcano.sh/preemptable", "volcano.sh/cooldown-time")
REVOCABLE_ZONE = "volcano.sh/revocable-zone"
JDB_KEYS = ("volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable")


def parse(raw: Mapping[str, Any], at: At) -> Job:
    meta = mf.object_meta(raw, at, namespaced=True, uid="")
    spec = raw.get("spec") or {}
    s = at / "spec"
    tasks = [
        Task(
            name=str(t.get("name") or ""),
            replicas=int(t.get("replicas", 0)),
            min_available=None if t.get("minAvailable") is None else int(t["minAvailable"]),
            template=t.get("template") or {},
            topology_policy=str(t.get("topologyPolicy") or ""),
            at=s / "tasks" / i,
            policies=_policies(t.get("policies")),
            depends_on=None
            if t.get("dependsOn") is None
            else [str(n) for n in t["dependsOn"].get("name") or ()],
        )
        for i, t in enumerate(spec.get("tasks") or ())
    ]
    ttl = spec.get("ttlSecondsAfterFinished")
    return Job(
        meta=meta,
        min_available=int(spec.get("minAvailable") or 0),
        queue=str(spec.get("queue") or ""),
        scheduler_name=str(spec.get("schedulerName") or ""),
        priority_class_name=str(spec.get("priorityClassName") or ""),
        plugins={
            str(p): [str(a) for a in args or ()] for p, args in (spec.get("plugins") or {}).items()
        },
        tasks=tasks,
        max_retry=int(spec.get("maxRetry") or 0),
        ttl_seconds_after_finished=None if ttl is None else int(ttl),
        policies=_policies(spec.get("policies")),
        volumes=list(spec.get("volumes") or ()),
    )


def _policies(raw: list[Mapping[str, Any]] | None) -> list[Policy]:
    return [
        Policy(
            event=str(p.get("event") or ""),
            events=[str(e) for e in p.get("events") or ()],
            action=str(p.get("action") or ""),
            exit_code=None if p.get("exitCode") is None else int(p["exitCode"]),
        )
        for p in raw or ()
    ]


# -- the job controller: pkg/controllers/job ------------------------------------------------


def admit_and_create(
    raw: Mapping[str, Any], at: At, cluster: Cluster, options: SchedulerOptions, mode: ClusterMode
) -> None:
    """Admit the Job (``deployed``) and add to ``cluster`` what its controller makes."""
    job = parse(raw, at)
    if mode == "deployed":
        jobwebhook.mutate(job, options)
        queues = {q.meta.name: q for q in cluster.queues}
        queue_at = at / "spec" / "queue"
        # A queue that does not exist is reported where it is written.
        missing = job.queue not in queues and queue_at.value is not None
        jobwebhook.validate(job, queues, queue_at.location() if missing else at.location())
    _check_modelled(job, at)
    pod_group = _pod_group(job, cluster, at)
    existing = {p.meta.key for p in (*cluster.pods, *cluster.held_pods)}
    created = [p for p in _pods(job, pod_group, at) if p.meta.key not in existing]
    if pod_group.phase in ("", "Pending"):
        cluster.held_pods.extend(created)
    else:
        cluster.pods.extend(created)


def _check_modelled(job: Job, at: At) -> None:
    """What of an admitted Job vspec cannot model is an error: job volumes (the
    controller creates their PersistentVolumeClaims) and claims in a pod template; so is
    an unnamed task in bare mode."""
    if job.volumes:
        raise (at / "spec" / "volumes").error(
            "the job controller makes PersistentVolumeClaims of a Job's volumes: "
            + kinds.VOLUME_BINDING_NOT_MODELLED
        )
    for task in job.tasks:
        if not task.name:
            raise task.at.error(
                "a task needs a name (the webhook that names unnamed tasks does not run in "
                "bare mode)"
            )
        claim = kinds.claim_volume(task.template.get("spec") or {})
        if claim is not None:
            raise (task.at / "template" / "spec" / "volumes" / claim).error(
                kinds.VOLUME_BINDING_NOT_MODELLED
            )


def _pod_group(job: Job, cluster: Cluster, at: At) -> PodGroup:
    """``createOrUpdatePodGroup``: the Job's PodGroup, created, or updated to the Job's
    minMember, minResources, minTaskMember and priority class when it exists."""
    namespace = job.meta.namespace
    names = (job.pod_group_name, job.meta.name)
    existing = next(
        (
            pg
            for name in names
            for pg in cluster.pod_groups
            if pg.meta.namespace == namespace and pg.meta.name == name
        ),
        None,
    )
    min_task_member = {
        t.name: t.replicas if t.min_available is None else t.min_available for t in job.tasks
    }
    min_resources = _min_resources(job, cluster)
    if existing is not None:
        existing.min_member = job.min_available
        existing.min_resources = min_resources
        existing.min_task_member.update(min_task_member)
        existing.priority_class_name = job.priority_class_name
        return existing
    pod_group = PodGroup(
        meta=ObjectMeta(
            name=job.pod_group_name,
            namespace=namespace,
            labels=dict(job.meta.labels),
            annotations=dict(job.meta.annotations),
            creation_timestamp=job.meta.creation_timestamp,
            location=at.location(),
        ),
        queue=job.queue,
        min_member=job.min_available,
        min_task_member=min_task_member,
        min_resources=min_resources,
        priority_class_name=job.priority_class_name,
        phase="",  # just created: no controller has written a status yet
    )
    cluster.pod_groups.append(pod_group)
    return pod_group


def _pods(job: Job, pod_group: PodGroup, at: At) -> list[Pod]:
    return [
        _pod(job, task, index, pod_group.meta.name)
        for task in job.tasks
        for index in range(max(task.replicas, 0))
    ]


def _pod(job: Job, task: Task, index: int, group: str) -> Pod:
    """``createJobPod``: the task's template with the controller's names and keys."""
    template_meta = task.template.get("metadata") or {}
    spec = dict(task.template.get("spec") or {})
    spec.setdefault("schedulerName", job.scheduler_name)
    if not spec.get("priorityClassName") and job.priority_class_name:
        spec["priorityClassName"] = job.priority_class_name
    annotations = dict(template_meta.get("annotations") or {})
    annotations.update(
        {
            TASK_INDEX: str(index),
            TASK_SPEC_KEY: task.name,
            GROUP_NAME_ANNOTATION: group,
            JOB_NAME: job.meta.name,
            QUEUE_NAME: job.queue,
            JOB_VERSION: "0",
            TEMPLATE_KEY: f"{job.meta.name}-{task.name}",
            RETRY_COUNT: "0",
        }
    )
    if task.topology_policy:
        annotations[NUMA_POLICY] = task.topology_policy
    job_annotations = job.meta.annotations
    for key in (*COPIED_ANNOTATIONS, REVOCABLE_ZONE):
        if key in job_annotations:
            annotations[key] = job_annotations[key]
    jdb = next((k for k in JDB_KEYS if k in job_annotations), None)
    if jdb is not None:
        annotations[jdb] = job_annotations[jdb]
    labels = dict(template_meta.get("labels") or {})
    labels.update(
        {
            TASK_INDEX: str(index),
            JOB_NAME: job.meta.name,
            TASK_SPEC_KEY: task.name,
            JOB_NAMESPACE: job.meta.namespace,
            QUEUE_NAME: job.queue,
        }
    )
    for key in COPIED_ANNOTATIONS:
        if key in job.meta.labels:
            labels[key] = job.meta.labels[key]
    manifest = {
        "metadata": {
            "name": f"{job.meta.name}-{task.name}-{index}",
            "namespace": job.meta.namespace,
            "labels": labels,
            "annotations": annotations,
            "creationTimestamp": None,
        },
        "spec": spec,
    }
    pod = mf.pod_from_manifest(manifest, task.at / "template")
    pod.meta.creation_timestamp = job.meta.creation_timestamp
    return pod


def _min_resources(job: Job, cluster: Cluster) -> ResourceList:
    """``calcPGMinResources``: the requests of the first minAvailable pods, tasks taken in
    descending priority of their template's class (a stable order among equals)."""
    values = {pc.meta.name: pc.value for pc in cluster.priority_classes}
    tasks = sorted(
        job.tasks,
        key=lambda t: -values.get(str((t.template.get("spec") or {}).get("priorityClassName")), 0),
    )
    total_min = sum(t.replicas if t.min_available is None else t.min_available for t in tasks)
    counts = (
        _first_count(tasks, job.min_available)
        if job.min_available < total_min
        else _pg_min(tasks, job.min_available)
    )
    out: ResourceList = {}
    for task, count in counts:
        usage = _quota_usage(task)
        for name, value in usage.items():
            out[name] = out.get(name, Fraction(0)) + value * count
    return out


def _first_count(tasks: list[Task], count: int) -> list[tuple[Task, int]]:
    """``CalcFirstCountResources``: whole tasks until ``count`` pods are covered."""
    out: list[tuple[Task, int]] = []
    for task in tasks:
        if count <= task.replicas:
            out.append((task, count))
            break
        out.append((task, task.replicas))
        count -= task.replicas
    return out


def _pg_min(tasks: list[Task], job_min: int) -> list[tuple[Task, int]]:
    """``CalcPGMinResources``: each task's minAvailable first, then the rest of its
    replicas, until ``job_min`` pods are covered."""
    out: list[tuple[Task, int]] = []
    counted = 0
    for task in tasks:
        if task.min_available is None:
            continue
        valid = min(task.min_available, job_min - counted)
        out.append((task, valid))
        counted += valid
        if counted >= job_min:
            return out
    left = job_min - counted
    for task in tasks:
        rest = task.replicas
        if task.min_available is not None:
            if task.min_available == task.replicas:
                continue
            rest = task.replicas - task.min_available
        take = rest if left >= rest else left
        out.append((task, take))
        left -= take
        if left <= 0:
            break
    return out


def _quota_usage(task: Task) -> ResourceList:
    """``GetPodQuotaUsage`` of one pod of the task, the names the scheduler keeps: its
    requests (containers, init containers, overhead) and one ``pods``."""
    pod = mf.pod_from_manifest(
        {"metadata": {"name": "usage"}, "spec": task.template.get("spec") or {}}, task.at
    )
    usage: ResourceList = dict(pod_requests(pod, non_missing=False))
    usage["pods"] = Fraction(1)
    return usage
