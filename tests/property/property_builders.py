"""Small cluster builders for the property tests (Volcano's test-builder defaults)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from vspec.engines import get_engine
from vspec.framework.scheduler import simulate
from vspec.invariants import InvariantInputs, get
from vspec.model.conf import load_conf
from vspec.model.corev1 import Container, Taint, Toleration
from vspec.model.objects import (
    GROUP_NAME_ANNOTATION,
    Cluster,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)
from vspec.model.result import SimulationResult

GI = 2**30


def node(name: str, cpu: float = 2, *, pods: int = 110, taints: list[Taint] | None = None) -> Node:
    allocatable = {"cpu": Fraction(cpu), "memory": Fraction(8 * GI), "pods": Fraction(pods)}
    return Node(ObjectMeta(name), allocatable, dict(allocatable), taints=taints or [])


def pod(
    job: str,
    name: str,
    cpu: float = 1,
    *,
    node_name: str = "",
    namespace: str = "ns",
    priority: int | None = None,
    tolerations: list[Toleration] | None = None,
) -> Pod:
    requests = {"cpu": Fraction(cpu)} if cpu else {}
    return Pod(
        ObjectMeta(
            name, namespace, uid=f"{namespace}-{name}", annotations={GROUP_NAME_ANNOTATION: job}
        ),
        phase="Running" if node_name else "Pending",
        node_name=node_name,
        priority=priority,
        tolerations=tolerations or [],
        containers=[Container(requests=requests)],
    )


def pod_group(
    name: str,
    min_member: int,
    *,
    queue: str = "q",
    phase: str = "Inqueue",
    namespace: str = "ns",
    priority_class: str = "",
) -> PodGroup:
    return PodGroup(
        ObjectMeta(name, namespace),
        queue=queue,
        min_member=min_member,
        phase=phase,
        priority_class_name=priority_class,
    )


def cluster(
    nodes: list[Node],
    pods: list[Pod],
    groups: list[PodGroup],
    *,
    queues: list[Queue] | None = None,
    classes: list[PriorityClass] | None = None,
) -> Cluster:
    return Cluster(
        nodes=nodes,
        pods=pods,
        pod_groups=groups,
        queues=queues if queues is not None else [Queue(ObjectMeta("q"))],
        priority_classes=classes or [],
    )


def run(
    conf: dict[str, Any],
    world: Cluster,
    *,
    default_flags: bool = True,
    cycles: int = 1,
    verbosity: int = 3,
) -> tuple[InvariantInputs, SimulationResult]:
    c = load_conf(conf, default_plugin_flags=default_flags)
    result = simulate(c, world, seed=3, cycles=cycles, verbosity=verbosity)
    return InvariantInputs(c, world, 3, None, cycles, verbosity, engine=get_engine()), result


def violations(name: str, inputs: InvariantInputs, result: SimulationResult) -> list[str]:
    inv = get(name)
    assert inv is not None
    return inv.check(inputs, result)
