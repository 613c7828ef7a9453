"""``controllerMinResources`` of a compact ``jobs`` entry: the pod group's minResources
as Volcano v1.11.0's job controller computes it for a Volcano Job
(``calcPGMinResources``), so that enqueue judges a compact job as it judges the Job.

A compact task has no minAvailable of its own (Volcano's job webhook would set it to the
task's replicas), so the controller's rule comes down to: the requests, plus one
``pods`` each, of the job's first ``minMember`` pods, its tasks taken in descending
priority of their class (a stable order among equals).
"""

from __future__ import annotations

from fractions import Fraction

from vspec.k8s.podinfo import pod_requests
from vspec.model.corev1 import ResourceList
from vspec.model.objects import Cluster, Pod, PodGroup


def set_controller_min_resources(
    jobs: list[tuple[PodGroup, list[list[Pod]]]], cluster: Cluster
) -> None:
    """Each pod group's minResources from its tasks' pods (one list per task, in order)."""
    values = {pc.meta.name: pc.value for pc in cluster.priority_classes}
    for pg, tasks in jobs:
        ordered = sorted(
            (pods for pods in tasks if pods),
            key=lambda pods: -values.get(pods[0].priority_class_name, 0),
        )
        chosen = [pod for pods in ordered for pod in pods][: pg.min_member]
        out: ResourceList = {}
        for pod in chosen:
            usage = {**pod_requests(pod, non_missing=False), "pods": Fraction(1)}
            for name, value in usage.items():
                out[name] = out.get(name, Fraction(0)) + value
        pg.min_resources = out
