"""A pod's QoS class as ``GetPodQOS`` reads the pod it is given."""

from __future__ import annotations

from tests.builders import pod
from vspec.k8s.qos import BEST_EFFORT, BURSTABLE, GUARANTEED, pod_qos_class


def test_requests_equal_to_limits_of_cpu_and_memory_are_guaranteed() -> None:
    both = {"cpu": 1, "memory": "1Gi"}
    assert pod_qos_class(pod("ns", "p", requests=both, limits=both)) == GUARANTEED


def test_a_limit_without_its_request_is_burstable_as_written() -> None:
    """The API server would default the memory request to its limit; Volcano, given
    the pod without it, counts it missing (vspec diff found vspec's engine defaulting it)."""
    p = pod("ns", "p", requests={"cpu": 1}, limits={"cpu": 1, "memory": "1Gi"})
    assert pod_qos_class(p) == BURSTABLE


def test_nothing_requested_or_limited_is_best_effort() -> None:
    assert pod_qos_class(pod("ns", "p")) == BEST_EFFORT
