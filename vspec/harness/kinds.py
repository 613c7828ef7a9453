"""Which Kubernetes kinds a cluster may hold, and what becomes of each.

A manifest vspec takes goes to its converter; one of a kind Volcano's scheduler reads but
vspec does not model, or of a taken kind in another apiVersion, is a located error; one
the scheduler ignores too (a Deployment, a Service, an Event, ...) is a located warning.
Nothing is dropped in silence.
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
        return None, f"{kind} {api} is not an apiVersion vspec takes; write {served}"
    if kind in READ_NOT_MODELLED:
        return None, (
            f"{kind} ({api}) is read by Volcano's scheduler ({READ_NOT_MODELLED[kind]}) but "
            "not modelled by vspec; leave it out"
        )
    return None, f"ignored: Volcano's scheduler does not read {kind} ({api})"


def check_api_version(raw: Mapping[str, Any], target: Target) -> str:
    """For a manifest in a typed list (``nodes``, ``pods``, ...): an error message when
    its apiVersion is not the one vspec takes for its kind, else ""."""
    got, why = classify(raw)
    if got == target:
        return ""
    served = _TAKEN_BY_KIND.get(str(raw.get("kind", "")))
    if why.startswith("ignored: ") and served is not None:
        # In a list of this kind the manifest is meant as one: its apiVersion is wrong.
        kind, api = raw.get("kind"), raw.get("apiVersion")
        return f"{kind} {api} is not an apiVersion vspec takes; write {served}"
    return why
