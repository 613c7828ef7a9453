"""A pod's QoS class (``k8s.io/kubernetes/pkg/apis/core/v1/helper/qos.GetPodQOS``)."""

from __future__ import annotations

from fractions import Fraction

from vspec.model.objects import Pod

BEST_EFFORT = "BestEffort"
BURSTABLE = "Burstable"
GUARANTEED = "Guaranteed"
_QOS_RESOURCES = ("cpu", "memory")


def pod_qos_class(pod: Pod) -> str:
    """Guaranteed: every container limits cpu and memory, and requests equal limits;
    BestEffort: no cpu or memory request or limit at all; Burstable otherwise.

    Read from the pod as written, as Volcano reads the pod it is given: a request the
    API server would have defaulted to its limit but the spec leaves out counts as
    missing (the pod is then Burstable), as its resource request does (found by vspec
    diff: a pod with a memory limit and no memory request).
    """
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for container in (*pod.containers, *pod.init_containers):
        found = set()
        for name in _QOS_RESOURCES:
            limit = container.limits.get(name)
            request = container.requests.get(name)
            if request is not None and request > 0:
                requests[name] = requests.get(name, Fraction(0)) + request
            if limit is not None and limit > 0:
                found.add(name)
                limits[name] = limits.get(name, Fraction(0)) + limit
        if len(found) != len(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed and requests == limits:
        return GUARANTEED
    return BURSTABLE
