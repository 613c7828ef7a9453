"""overcommit: the overcommit factor, inqueue accounting and enqueue verdicts."""

from __future__ import annotations

from typing import Any

from tests.builders import node, pod, pod_group, queue, session
from vspec.framework.session import Session
from vspec.model.objects import Cluster, Pod, PodGroup
from vspec.model.result import Severity
from vspec.plugins.overcommit import OvercommitPlugin


def _ssn(
    pods: list[Pod],
    groups: list[PodGroup],
    *,
    node_cpu: str = "10",
    arguments: dict[str, Any] | None = None,
) -> Session:
    cluster = Cluster(
        nodes=[node("n1", {"cpu": node_cpu, "memory": "10Gi", "pods": "100"})],
        pods=pods,
        pod_groups=groups,
        queues=[queue("q1")],
    )
    entry = {"name": "overcommit", "enableJobEnqueued": True, "arguments": arguments or {}}
    return session(cluster, [entry])


def _plugin(ssn: Session) -> OvercommitPlugin:
    plugin = ssn.plugins["overcommit"]
    assert isinstance(plugin, OvercommitPlugin)
    return plugin


def _running(n: int) -> list[Pod]:
    return [
        pod("c1", f"r{i}", "run", {"cpu": "1"}, phase="Running", node_name="n1") for i in range(n)
    ]


def test_idle_is_total_times_factor_minus_used() -> None:
    ssn = _ssn(_running(4), [pod_group("c1", "run", "q1", phase="Running")])
    plugin = _plugin(ssn)
    assert plugin.factor == 1.2
    assert plugin.idle_resource.milli_cpu == 10000 * 1.2 - 4000


def test_enqueue_admits_until_the_headroom_is_used() -> None:
    groups = [
        pod_group("c1", f"j{i}", "q1", min_member=1, min_resources={"cpu": "5"}) for i in range(3)
    ]
    groups.append(pod_group("c1", "best-effort", "q1"))
    ssn = _ssn(_running(4), [pod_group("c1", "run", "q1", phase="Running"), *groups])
    j0, j1 = ssn.jobs["c1/j0"], ssn.jobs["c1/j1"]
    assert ssn.job_enqueueable(j0)  # 5 <= 8
    ssn.job_enqueued(j0)
    assert not ssn.job_enqueueable(j1)  # 10 > 8
    assert ssn.cache.effects.events == [
        ("c1/j1", "Normal", "Unschedulable", "resource in cluster is overused")
    ]
    assert ssn.job_enqueueable(ssn.jobs["c1/best-effort"])
    assert "Job <c1/best-effort> is bestEffort, permit to be inqueue." in ssn.log.texts()


def test_without_job_enqueued_jobs_share_the_same_headroom() -> None:
    groups = [pod_group("c1", f"j{i}", "q1", min_resources={"cpu": "5"}) for i in range(2)]
    ssn = _ssn([], groups)
    assert ssn.job_enqueueable(ssn.jobs["c1/j0"])
    assert ssn.job_enqueueable(ssn.jobs["c1/j1"])  # nobody called JobEnqueued


def test_inqueue_and_running_jobs_hold_headroom() -> None:
    groups = [
        pod_group("c1", "inq", "q1", phase="Inqueue", min_resources={"cpu": "3"}),
        pod_group("c1", "run", "q1", phase="Running", min_member=1, min_resources={"cpu": "6"}),
    ]
    ssn = _ssn(_running(2), groups)
    # inq: 3; run: 6 - 2 allocated = 4.
    assert _plugin(ssn).inqueue_resource.milli_cpu == 7000


def test_factor_below_one_falls_back_with_a_warning() -> None:
    ssn = _ssn([], [], arguments={"overcommit-factor": 0.5})
    assert _plugin(ssn).factor == 1.2
    warnings = [line.text for line in ssn.log.lines if line.severity is Severity.WARNING]
    assert warnings == [
        "Invalid input 0.500000 for overcommit-factor, reason: overcommit-factor cannot be "
        "less than 1, using default value: 1.200000."
    ]


def test_factor_takes_ints_and_refuses_strings() -> None:
    assert _plugin(_ssn([], [], arguments={"overcommit-factor": 2})).factor == 2.0
    ssn = _ssn([], [], arguments={"overcommit-factor": "2"})
    assert _plugin(ssn).factor == 1.2
    assert "Could not parse argument: 2 for key overcommit-factor to float64" in ssn.log.texts()


def test_overcommitted_nodes_log_the_short_subtraction() -> None:
    ssn = _ssn(_running(2), [pod_group("c1", "run", "q1", phase="Running")], node_cpu="1")
    assert _plugin(ssn).idle_resource.milli_cpu < 0
    errors = [line.text for line in ssn.log.lines if line.severity is Severity.ERROR]
    assert len(errors) == 1
    assert errors[0].startswith(
        "resources <[cpu]> are not sufficient to do operation: <cpu 1200.00"
    )


def test_running_reservation_reads_scalars_in_whole_units() -> None:
    """GetInqueueResource quirk: minResources scalars are compared in whole units with
    allocations held in milli units."""
    gpu_node = node("n1", {"cpu": "10", "memory": "10Gi", "pods": "100", "nvidia.com/gpu": "8"})
    groups = [
        pod_group(
            "c1",
            "holds",
            "q1",
            phase="Running",
            min_member=1,
            min_resources={"cpu": "1", "nvidia.com/gpu": "4"},
        ),
        pod_group(
            "c1",
            "lacks",
            "q1",
            phase="Running",
            min_member=1,
            min_resources={"cpu": "1", "nvidia.com/gpu": "4"},
        ),
    ]
    pods = [
        pod(
            "c1", "h", "holds", {"cpu": "1", "nvidia.com/gpu": "1"}, phase="Running", node_name="n1"
        ),
        pod("c1", "l", "lacks", {"cpu": "1"}, phase="Running", node_name="n1"),
    ]
    cluster = Cluster(nodes=[gpu_node], pods=pods, pod_groups=groups, queues=[queue("q1")])
    ssn = session(cluster, [{"name": "overcommit", "enableJobEnqueued": True}])
    inqueue = _plugin(ssn).inqueue_resource
    # holds: 4 - 1000 milli-GPU < 0 reserves nothing; lacks: the whole 4 (not 4000).
    assert inqueue.scalars == {"nvidia.com/gpu": 4.0}
    assert inqueue.milli_cpu == 0
