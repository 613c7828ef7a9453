"""Which Kubernetes kinds a cluster may hold, and what becomes of each.

A manifest vspec takes goes to its converter; one of a kind Volcano's scheduler reads but
vspec does not model, or of a taken kind in another apiVersion, is a located error; one
the scheduler ignores too (a Deployment, a Service, an Argo Workflow, ...) is a located
warning, one per kind, naming the objects and, for a workload kind, what to write
instead. Nothing is dropped in silence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Target = Literal["node", "pod", "podGroup", "queue", "priorityClass", "job", "object"]

# (apiVersion, kind) -> converter. "object": kept whole for the plugins that read it.
TAKEN: dict[tuple[str, str], Target] = {
    ("v1", "Node"): "node",
    ("v1", "Pod"): "pod",
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): "podGroup",
    ("scheduling.volcano.sh/v1beta1", "Queue"): "queue",
    ("scheduling.k8s.io/v1", "PriorityClass"): "priorityClass",
    ("batch.volcano.sh/v1alpha1", "Job"): "job",
    ("v1", "ResourceQuota"): "object",  # resourcequota plugin
    ("policy/v1", "PodDisruptionBudget"): "object",  # pdb plugin
    ("v1", "Namespace"): "object",  # pod affinity namespace selectors
    ("nodeinfo.volcano.sh/v1alpha1", "Numatopology"): "object",  # numaaware plugin
}
# Kinds v1.11.0's scheduler watches (pkg/scheduler/cache/cache.go informers) that vspec
# does not model: taking them in silence would make a spec behave unlike the cluster.
READ_NOT_MODELLED = {
    "PersistentVolume": "volume binding",
    "PersistentVolumeClaim": "volume binding",
    "StorageClass": "volume binding",
    "CSINode": "volume binding",
    "CSIDriver": "volume binding",
    "CSIStorageCapacity": "volume binding",
}


# API groups Volcano served before v1.0 (kube-batch's and its successor's): a v1.11.0
# cluster has no CRD for them, so the API server answers "no matches for kind".
RETIRED_GROUPS = frozenset({"scheduling.incubator.k8s.io", "scheduling.sigs.dev"})
# Kinds v1.11.0's scheduler informs only for podtopologyspread's system default
# constraints (pkg/scheduler/cache/cache.go, newSchedulerCache), which vspec does not model.
DEFAULT_SPREAD_KINDS = frozenset({"Service", "ReplicaSet", "StatefulSet", "ReplicationController"})
# What to write instead of a kind whose controller makes the objects the scheduler sees.
_WORKLOAD = "its controller is not modelled: declare the pods it would create"
_VC_JOBS = "its controller is not modelled: declare the Volcano Jobs it would create"
INSTEAD: dict[str, str] = {
    "Deployment": _WORKLOAD,
    "ReplicaSet": _WORKLOAD,
    "StatefulSet": _WORKLOAD,
    "DaemonSet": _WORKLOAD,
    "ReplicationController": _WORKLOAD,
    "CronJob": _WORKLOAD,
    "batch/Job": _WORKLOAD,
    "SparkApplication": _WORKLOAD,
    "MPIJob": _WORKLOAD,
    "TFJob": _WORKLOAD,
    "PyTorchJob": _WORKLOAD,
    "Workflow": _VC_JOBS,
    "JobFlow": "the jobflow controller is not modelled: declare the Volcano Jobs of its flows",
    "JobTemplate": "a template only: the jobflow controller that makes Jobs of it is not "
    "modelled; declare those Jobs",
}
# A ConfigMap holding this key is the scheduler's conf, read from the spec's ``scheduler``.
SCHEDULER_CONF_KEY = "volcano-scheduler.conf"


# apiVersions of taken kinds that Kubernetes served once and no longer does.
REMOVED: dict[tuple[str, str], str] = {
    ("scheduling.k8s.io/v1alpha1", "PriorityClass"): "1.22",
    ("scheduling.k8s.io/v1beta1", "PriorityClass"): "1.22",
    ("policy/v1beta1", "PodDisruptionBudget"): "1.25",
}


# Pod volume sources that are PersistentVolumeClaims (an ephemeral volume makes one).
CLAIM_VOLUMES = ("persistentVolumeClaim", "ephemeral")
VOLUME_BINDING_NOT_MODELLED = (
    "Volcano's scheduler reads PersistentVolumeClaims (volume binding) and vspec does not "
    "model them; leave the claim out"
)


def claim_volume(pod_spec: Mapping[str, Any]) -> int | None:
    """The index of the first volume of a pod spec that is a PersistentVolumeClaim."""
    for index, volume in enumerate(pod_spec.get("volumes") or ()):
        if isinstance(volume, Mapping) and any(k in volume for k in CLAIM_VOLUMES):
            return index
    return None


def group(api_version: str) -> str:
    """The API group of ``apiVersion`` ("" for the core group's ``v1``)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


_TAKEN_BY_GROUP: dict[tuple[str, str], str] = {(group(api), kind): api for api, kind in TAKEN}
_TAKEN_BY_KIND: dict[str, str] = {kind: api for api, kind in TAKEN}


def classify(raw: Mapping[str, Any]) -> tuple[Target | None, str]:
    """The converter of the manifest ``raw``, or None with why it is not taken: an error
    message, or a warning message prefixed ``ignored: ``."""
    api, kind = str(raw.get("apiVersion", "")), str(raw.get("kind", ""))
    target = TAKEN.get((api, kind))
    if target is not None:
        return target, ""
    served = _TAKEN_BY_GROUP.get((group(api), kind))
    if served is not None:
        return None, _not_taken(api, kind, served)
    if group(api) in RETIRED_GROUPS:
        return None, (
            f"{kind} {api} is not served by a Volcano v1.11.0 cluster (the API server answers: "
            f'no matches for kind "{kind}" in version "{api}"); write the '
            "scheduling.volcano.sh/v1beta1 kinds"
        )
    if kind in READ_NOT_MODELLED:
        return None, (
            f"{kind} ({api}) is read by Volcano's scheduler ({READ_NOT_MODELLED[kind]}) but "
            "not modelled by vspec; leave it out"
        )
    if (api, kind) == ("v1", "ConfigMap") and SCHEDULER_CONF_KEY in (raw.get("data") or {}):
        return None, (
            f"this ConfigMap holds the scheduler's conf ({SCHEDULER_CONF_KEY}): name its file "
            "with the spec's scheduler key (scheduler: FILE), not in the cluster"
        )
    return None, f"ignored: {ignored_reason(api, kind)}"


def ignored_reason(api: str, kind: str) -> str:
    """Why a manifest of a kind vspec ignores is harmless, or what to write instead."""
    reason = f"Volcano's scheduler does not read {kind}"
    if kind in DEFAULT_SPREAD_KINDS and group(api) in ("", "apps"):
        reason = (
            f"Volcano's scheduler reads {kind} only for podtopologyspread's default "
            "constraints, which vspec does not model"
        )
    instead = INSTEAD.get(f"{group(api)}/{kind}") or INSTEAD.get(kind)
    return f"{reason}; {instead}" if instead else reason


def check_api_version(raw: Mapping[str, Any], target: Target) -> str:
    """For a manifest in a typed list (``nodes``, ``pods``, ...): an error message when
    its apiVersion is not the one vspec takes for its kind, else ""."""
    got, why = classify(raw)
    if got == target:
        return ""
    served = _TAKEN_BY_KIND.get(str(raw.get("kind", "")))
    if why.startswith("ignored: ") and served is not None:
        # In a list of this kind the manifest is meant as one: its apiVersion is wrong.
        return _not_taken(str(raw.get("apiVersion")), str(raw.get("kind")), served)
    return why


def _not_taken(api: str, kind: str, served: str) -> str:
    removed = REMOVED.get((api, kind))
    if removed is None:
        return f"{kind} {api} is not an apiVersion vspec takes; write {served}"
    return (
        f"{kind} {api} is no longer served (removed in Kubernetes {removed}; the API server "
        f'answers: no matches for kind "{kind}" in version "{api}"); write {served}'
    )
