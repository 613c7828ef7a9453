"""The liveness, order, eviction and phase invariants: each holds for the real engine
on a small scenario and reports the same scenario run on an engine broken on purpose."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import cluster, node, pod, pod_group, queue, run, violations
from vspec.actions import preempt as preempt_action
from vspec.api.job_info import JobInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.types import preemptable_status
from vspec.framework import job_updater
from vspec.framework.session import Session
from vspec.framework.statement import Statement
from vspec.k8s import labels
from vspec.model.objects import ObjectMeta, PriorityClass, Queue
from vspec.plugins import conformance

CLASSES = [PriorityClass(ObjectMeta("high"), 100), PriorityClass(ObjectMeta("low"), 1)]
ONE_TIER = ("priority", "gang", "conformance")


def conf(actions: str, *plugins: str) -> dict[str, Any]:
    return {"actions": actions, "tiers": [{"plugins": [{"name": p} for p in plugins]}]}


def test_liveness(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        return cluster(
            [node("n0", {"cpu": 4, "memory": "8Gi", "pods": 110})],
            [pod("ns", f"g-w-{i}", "g", {"cpu": 1}) for i in range(3)],
            [],
        )

    def gang() -> Any:
        w = world()
        w.pod_groups.append(pod_group("ns", "g", "q", min_member=3, phase="Inqueue"))
        return w

    settings = conf("enqueue, allocate", "priority", "gang")
    inputs, result = run(settings, gang())
    assert len(result.binds) == 3
    assert violations("liveness", inputs, result) == []

    monkeypatch.setattr(JobInfo, "is_ready", lambda self: False)  # gangs never ready
    inputs, result = run(settings, gang())
    assert result.binds == []
    [message] = violations("liveness", inputs, result)
    assert "job ns/g could have been placed whole on n0" in message


def test_liveness_asked_of_a_conf_without_allocate_holds() -> None:
    """A spec may ask for liveness where allocate never runs: nothing is bound, and
    that breaks no promise about allocate (it was a ValueError)."""
    world = cluster(
        [node("n0", {"cpu": 4, "memory": "8Gi", "pods": 110})],
        [pod("ns", "g-0", "g", {"cpu": 1})],
        [pod_group("ns", "g", "q", min_member=1, phase="Inqueue")],
    )
    for actions in ("enqueue", "enqueue, backfill"):
        inputs, result = run(conf(actions, "priority", "gang"), world)
        assert result.binds == []
        assert violations("liveness", inputs, result) == []


def test_liveness_of_a_job_that_an_untouched_node_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Something is bound, but not on n1 nor in queue q2, whose job fits n1 whole."""

    def world() -> Any:
        away = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "gpu", "operator": "NotIn", "values": ["true"]}]}
            ]
        }}}  # fmt: skip
        return cluster(
            [node(f"n{i}", {"cpu": 1, "memory": "8Gi", "pods": 110}) for i in range(2)],
            [pod("ns", "a-0", "a", {"cpu": 1}), pod("ns", "b-0", "b", {"cpu": 1}, affinity=away)],
            [
                pod_group("ns", "a", "q", min_member=1, phase="Inqueue"),
                pod_group("ns", "b", "q2", min_member=1, phase="Inqueue"),
            ],
            queues=[Queue(ObjectMeta("q")), Queue(ObjectMeta("q2"))],
        )

    settings = conf("enqueue, allocate", "priority", "gang", "predicates")
    inputs, result = run(settings, world())
    assert len(result.binds) == 2
    assert violations("liveness", inputs, result) == []

    # NotIn wrongly requires the label: b-0 fits no node, a-0 still binds.
    monkeypatch.setattr(labels, "_requirement_matches", _not_in_needs_the_label)
    inputs, result = run(settings, world())
    assert [b.task for b in result.binds] == ["ns/a-0"]
    [message] = violations("liveness", inputs, result)
    assert "job ns/b could have been placed whole on n" in message and "got no bind" in message


def _partial(min_member: int, lost_role: str = "big") -> Any:
    """Two 2-core nodes; job g: a 3-core pod no node takes (role ``lost_role``, first in
    task order), and a 1-core pod of role "small"."""
    return cluster(
        [node(f"n{i}", {"cpu": 2, "memory": "8Gi", "pods": 110}) for i in range(2)],
        [
            pod("ns", "g-a-0", "g", {"cpu": 3}, labels={"volcano.sh/task-spec": lost_role}),
            pod("ns", "g-b-0", "g", {"cpu": 1}, labels={"volcano.sh/task-spec": "small"}),
        ],
        [pod_group("ns", "g", "q", min_member=min_member, phase="Inqueue")],
    )


def test_liveness_goes_on_past_a_pod_that_fits_nowhere(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = conf("enqueue, allocate", "priority", "gang", "predicates")
    inputs, result = run(settings, _partial(1))
    assert [b.task for b in result.binds] == ["ns/g-b-0"]
    assert violations("liveness", inputs, result) == []

    # minMember is the pod count: Volcano stops at the pod that fits nowhere.
    inputs, result = run(settings, _partial(2))
    assert result.binds == []
    assert violations("liveness", inputs, result) == []
    # The pod that fits nowhere shares the other's role: that role is skipped.
    inputs, result = run(settings, _partial(1, lost_role="small"))
    assert result.binds == []
    assert violations("liveness", inputs, result) == []

    # Allocate stops at the first task that fits nowhere.
    monkeypatch.setattr(JobInfo, "need_continue_allocating", lambda self: False)
    inputs, result = run(settings, _partial(1))
    assert result.binds == []
    [message] = violations("liveness", inputs, result)
    assert "job ns/g could have been placed whole on n" in message


_real_requirement_matches = labels._requirement_matches


def _not_in_needs_the_label(req: Any, node_labels: Any) -> bool:
    if req[1] == labels.NOT_IN and req[0] not in node_labels:
        return False
    return _real_requirement_matches(req, node_labels)


def test_allocate_order(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        return cluster(
            [node("n0", {"cpu": 1, "memory": "8Gi", "pods": 110})],
            [pod("ns", "lo-p", "lo", {"cpu": 1}), pod("ns", "hi-p", "hi", {"cpu": 1})],
            [
                pod_group("ns", "lo", "q", min_member=1, phase="Inqueue", priority_class="low"),
                pod_group("ns", "hi", "q", min_member=1, phase="Inqueue", priority_class="high"),
            ],
            classes=CLASSES,
        )

    settings = conf("enqueue, allocate", "priority", "gang")
    inputs, result = run(settings, world())
    assert [b.task for b in result.binds] == ["ns/hi-p"]
    assert violations("allocate-order", inputs, result) == []

    # Jobs by ascending priority.
    monkeypatch.setattr(Session, "job_order_fn", lambda self, a, b: a.priority < b.priority)
    inputs, result = run(settings, world())
    assert [b.task for b in result.binds] == ["ns/lo-p"]
    first_bind, passed_over = violations("allocate-order", inputs, result)
    assert "its first task ns/hi-p should be bound first; the first bind was ns/lo-p" in first_bind
    assert "job ns/hi got no bind though it fits whole on n0, where only jobs after it" in (
        passed_over
    )

    # With room for both, the jobs' first binds still come in the wrong order.
    roomy = world()
    roomy.nodes.append(node("n1", {"cpu": 1, "memory": "8Gi", "pods": 110}))
    inputs, result = run(settings, roomy)
    assert [b.task for b in result.binds] == ["ns/lo-p", "ns/hi-p"]
    turns, _ = violations("allocate-order", inputs, result)
    assert "job ns/hi got its first bind after job ns/lo, which comes after it" in turns


def test_allocate_order_judges_the_first_jobs_own_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first bind is the first job's, but not its first task by TaskOrder: reported
    (the check compares the first bind before asking whether the job fits whole, so a
    first bind of the job's is not taken for its first task)."""
    world = cluster(
        [node("n0", {"cpu": 2, "memory": "8Gi", "pods": 110})],
        [pod("ns", f"j-{i}", "j", {"cpu": 1}) for i in range(2)],
        [pod_group("ns", "j", "q", min_member=2, phase="Inqueue")],
    )
    settings = conf("enqueue, allocate", "priority", "gang")
    inputs, result = run(settings, world)
    assert [b.task for b in result.binds] == ["ns/j-0", "ns/j-1"]
    assert violations("allocate-order", inputs, result) == []

    # Tasks by descending replica index.
    monkeypatch.setattr(Session, "task_order_fn", lambda self, a, b: a.name > b.name)
    inputs, result = run(settings, world)
    assert [b.task for b in result.binds] == ["ns/j-1", "ns/j-0"]
    [message] = violations("allocate-order", inputs, result)
    assert "its first task ns/j-0 should be bound first; the first bind was ns/j-1" in message


def test_allocate_order_counts_what_earlier_jobs_took_of_the_capability() -> None:
    """Found by the seed-configuration property test: hi-b is refused because hi-a took
    half of the queue's 1Gi capability, and lo's one byte still fits after it. A job
    passed over for the capability the jobs before it took was not passed over."""
    half = 512 * 2**20 + 1
    world = cluster(
        [node(f"n{i}", {"cpu": 2, "memory": "4Gi", "pods": 110}) for i in range(2)],
        [
            pod("ns", "hi-a-0", "hi-a", {"memory": half}),
            pod("ns", "hi-b-0", "hi-b", {"memory": half}),
            pod("ns", "lo-0", "lo", {"memory": 1}),
        ],
        [
            pod_group("ns", "hi-a", "q", min_member=1, priority_class="high"),
            pod_group("ns", "hi-b", "q", min_member=1, priority_class="high"),
            pod_group("ns", "lo", "q", min_member=1, priority_class="low"),
        ],
        queues=[queue("q", capability={"cpu": 1, "memory": "1Gi"})],
        classes=CLASSES,
    )
    settings = conf("enqueue, allocate", "priority", "gang", "proportion")
    inputs, result = run(settings, world)
    assert sorted(b.task for b in result.binds) == ["ns/hi-a-0", "ns/lo-0"]
    assert violations("allocate-order", inputs, result) == []


def test_allocate_order_puts_gangs_that_are_not_ready_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Job r runs its minMember already and has a pod pending; job w runs nothing."""
    world = cluster(
        [node("n0", {"cpu": 4, "memory": "8Gi", "pods": 110})],
        [
            pod("ns", "w-0", "w", {"cpu": 1}),
            pod("ns", "r-0", "r", {"cpu": 1}, node_name="n0"),
            pod("ns", "r-1", "r", {"cpu": 1}),
        ],
        [
            pod_group("ns", "w", "q", min_member=1, phase="Inqueue"),
            pod_group("ns", "r", "q", min_member=1, phase="Running"),
        ],
    )
    settings = conf("enqueue, allocate", "priority", "gang")
    inputs, result = run(settings, world)
    assert [b.task for b in result.binds] == ["ns/w-0", "ns/r-1"]
    assert violations("allocate-order", inputs, result) == []

    # gang's JobOrder reversed: ready jobs first.
    monkeypatch.setattr(
        Session, "job_order_fn", lambda self, a, b: a.is_ready() and not b.is_ready()
    )
    inputs, result = run(settings, world)
    assert [b.task for b in result.binds] == ["ns/r-1", "ns/w-0"]
    turns, first = violations("allocate-order", inputs, result)
    assert "job ns/w got its first bind after job ns/r, which comes after it" in turns
    assert "its first task ns/w-0 should be bound first; the first bind was ns/r-1" in first


def _pipelined_first_world() -> Any:
    """Found by vspec fuzz in the mixed space: drf puts "gpu" first (it holds nothing:
    its running pod is terminating), whose first task fits only the terminating pod's
    GPU and is pipelined; that raises its share past "cpu"'s, which is bound next, and
    gpu's second task is bound after it."""
    from vspec.model.objects import DEFAULT_NOW

    releasing = pod("ns", "gpu-a-1", "gpu", {"nvidia.com/gpu": 1}, node_name="n1")
    releasing.meta.deletion_timestamp = DEFAULT_NOW
    return cluster(
        [
            node("n0", {"cpu": 2, "memory": "4Gi", "pods": 1}),
            node("n1", {"cpu": 8, "memory": "2Gi", "pods": 4, "nvidia.com/gpu": 1}),
        ],
        [
            pod("ns", "cpu-a-0", "cpu", {"cpu": "999m"}),
            pod("ns", "cpu-a-1", "cpu", {"cpu": "999m"}, node_name="n0"),
            pod("ns", "gpu-a-0", "gpu", {"nvidia.com/gpu": 1}),
            releasing,
            pod("ns", "gpu-b-0", "gpu", {"memory": 1}),
        ],
        [
            pod_group("ns", "cpu", "q", phase="Running"),
            pod_group("ns", "gpu", "q", phase="Running"),
        ],
    )


@pytest.mark.parametrize("cycles", [1, 2])
def test_allocate_order_lets_a_turn_end_with_a_pipelined_task(cycles: int) -> None:
    settings = conf("allocate", "priority", "drf")
    inputs, result = run(settings, _pipelined_first_world(), cycles=cycles)
    assert [b.task for b in result.binds if b.cycle == 0] == ["ns/cpu-a-0", "ns/gpu-b-0"]
    assert violations("allocate-order", inputs, result) == []


def test_allocate_order_judges_turns_only_where_pipelining_is_known() -> None:
    """The same binds with no pipelined task are out of order; over two cycles at
    verbosity 1 nothing tells whether the first cycle pipelined one."""
    settings = conf("allocate", "priority", "drf")
    inputs, result = run(settings, _pipelined_first_world())
    result.pipelined.clear()
    result.tasks["ns/gpu-a-0"].status = "Pending"
    turns = violations("allocate-order", inputs, result)
    assert "job ns/gpu got its first bind after job ns/cpu, which comes after it" in turns[0]
    inputs, result = run(settings, _pipelined_first_world(), cycles=2, verbosity=1)
    assert violations("allocate-order", inputs, result) == []


def test_allocate_order_reads_gang_readiness_by_count_alone() -> None:
    """Job r reaches minMember by count (a running pod plus a pending best-effort one)
    but runs none of role b's two pending pods; job w runs nothing. Gang's JobOrder in
    v1.11 asks IsReady only, so r sorts as ready and w goes first, though r is not ready
    for JobReady."""
    role = "volcano.sh/task-spec"
    world = cluster(
        [node("n0", {"cpu": 4, "memory": "8Gi", "pods": 110})],
        [
            pod("ns", "w-0", "w", {"cpu": 1}),
            pod("ns", "r-a-0", "r", {"cpu": 1}, node_name="n0", annotations={role: "a"}),
            pod("ns", "r-a-1", "r", {}, annotations={role: "a"}),
            pod("ns", "r-b-0", "r", {"cpu": 1}, annotations={role: "b"}),
            pod("ns", "r-b-1", "r", {"cpu": 1}, annotations={role: "b"}),
        ],
        [
            pod_group("ns", "w", "q", min_member=1, phase="Inqueue"),
            pod_group("ns", "r", "q", min_member=2, phase="Running"),
        ],
    )
    world.pod_groups[1].min_task_member = {"b": 2}
    inputs, result = run(conf("enqueue, allocate", "priority", "gang"), world)
    assert [b.task for b in result.binds] == ["ns/w-0", "ns/r-b-0", "ns/r-b-1"]
    assert violations("allocate-order", inputs, result) == []


def test_task_order(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        return cluster(
            [node("n0", {"cpu": 2, "memory": "8Gi", "pods": 110})],
            [
                pod("ns", "g-lo-0", "g", {"cpu": 1}, priority=1),
                pod("ns", "g-hi-0", "g", {"cpu": 1}, priority=5),
            ],
            [pod_group("ns", "g", "q", min_member=2, phase="Inqueue")],
        )

    settings = conf("enqueue, allocate", "priority", "gang")
    inputs, result = run(settings, world())
    assert [b.task for b in result.binds] == ["ns/g-hi-0", "ns/g-lo-0"]
    assert violations("task-order", inputs, result) == []

    # Tasks by ascending priority.
    monkeypatch.setattr(
        Session, "task_order_fn", lambda self, a, b: a.pod.priority < b.pod.priority
    )
    inputs, result = run(settings, world())
    assert [b.task for b in result.binds] == ["ns/g-lo-0", "ns/g-hi-0"]
    [message] = violations("task-order", inputs, result)
    assert "ns/g-hi-0 was bound after ns/g-lo-0, which comes later" in message


def preempt_world(*, victim_namespace: str = "ns", preemptor_cpu: float = 1) -> Any:
    """A running low-priority pod fills the node; a high-priority job waits."""
    return cluster(
        [node("n0", {"cpu": 1, "memory": "8Gi", "pods": 1})],
        [
            pod(victim_namespace, "run-p", "run", {"cpu": 1}, node_name="n0"),
            pod("ns", "wait-p", "wait", {"cpu": preemptor_cpu}),
        ],
        [
            pod_group(
                victim_namespace, "run", "q", min_member=0, phase="Running", priority_class="low"
            ),
            pod_group("ns", "wait", "q", min_member=1, phase="Inqueue", priority_class="high"),
        ],
        classes=CLASSES,
    )


def test_preempt_victims_eligible(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = conf("enqueue, allocate, preempt", *ONE_TIER)
    inputs, result = run(settings, preempt_world(preemptor_cpu=0))
    assert result.evictions == []  # a best-effort preemptor may not take a 1-CPU pod
    assert violations("preempt-victims-eligible", inputs, result) == []

    monkeypatch.setattr(
        preempt_action,
        "may_be_preempted_by",
        lambda preemptor, task: preemptable_status(task.status) and task.preemptable,
    )
    inputs, result = run(settings, preempt_world(preemptor_cpu=0))
    assert [e.task for e in result.evictions] == ["ns/run-p"]
    [message] = violations("preempt-victims-eligible", inputs, result)
    assert "ns/run-p was evicted (preempt) but no pending pod" in message


def test_critical_pods_protected(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = conf("enqueue, allocate, preempt", *ONE_TIER)
    inputs, result = run(settings, preempt_world(victim_namespace="kube-system"))
    assert result.evictions == []
    assert violations("critical-pods-protected", inputs, result) == []

    monkeypatch.setattr(conformance, "evictable", lambda evictor, evictees: (evictees, 1))
    inputs, result = run(settings, preempt_world(victim_namespace="kube-system"))
    assert [e.task for e in result.evictions] == ["kube-system/run-p"]
    [message] = violations("critical-pods-protected", inputs, result)
    assert "critical pod kube-system/run-p was evicted (preempt)" in message


def test_gang_victims_keep_min(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        w = preempt_world()
        w.pod_groups[0].min_member = 1  # the victim's job needs its only pod
        return w

    settings = conf("enqueue, allocate, preempt", *ONE_TIER)
    inputs, result = run(settings, world())
    assert result.evictions == []
    assert violations("gang-victims-keep-min", inputs, result) == []

    monkeypatch.setattr(Session, "preemptable", lambda self, preemptor, preemptees: preemptees)
    inputs, result = run(settings, world())
    assert [e.task for e in result.evictions] == ["ns/run-p"]
    [message] = violations("gang-victims-keep-min", inputs, result)
    assert "job ns/run were evicted and it is left with 0 placed, below minMember 1" in message


def test_reclaim_victims_eligible(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        return cluster(
            [node("n0", {"cpu": 2, "memory": "8Gi", "pods": 110})],
            [pod("ns", f"run-{i}", "run", {"cpu": 1}, node_name="n0") for i in range(2)]
            + [pod("ns", "wait-p", "wait", {"cpu": 1})],
            [
                pod_group("ns", "run", "q1", min_member=1, phase="Running"),
                pod_group("ns", "wait", "q2", min_member=1, phase="Inqueue"),
            ],
            queues=[Queue(ObjectMeta("q1"), reclaimable=False), Queue(ObjectMeta("q2"))],
        )

    settings = conf("enqueue, allocate, reclaim", "priority", "conformance", "proportion")
    inputs, result = run(settings, world())
    assert result.evictions == []
    assert violations("reclaim-victims-eligible", inputs, result) == []

    monkeypatch.setattr(QueueInfo, "reclaimable", lambda self: True)
    inputs, result = run(settings, world())
    assert [e.task for e in result.evictions] == ["ns/run-0"]
    [message] = violations("reclaim-victims-eligible", inputs, result)
    assert "reclaimed ns/run-0 from queue q1, which is not reclaimable" in message


def test_preempt_for_pipelined(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        w = preempt_world()
        w.pods.append(
            pod("ns", "wait-q", "wait", {"cpu": 1})
        )  # the gang needs two CPUs, the node has one
        w.pod_groups[1].min_member = 2
        return w

    settings = conf("enqueue, allocate, preempt", *ONE_TIER)
    inputs, result = run(settings, world())
    assert result.evictions == []
    assert violations("preempt-for-pipelined", inputs, result) == []

    monkeypatch.setattr(Statement, "discard", Statement.commit)  # keep failed evictions
    inputs, result = run(settings, world())
    assert [e.task for e in result.evictions] == ["ns/run-p"]
    [message] = violations("preempt-for-pipelined", inputs, result)
    assert "ns/run-p was preempted, but no other job of queue q" in message


def test_phase_consistent(monkeypatch: pytest.MonkeyPatch) -> None:
    def world() -> Any:
        return cluster(
            [node("n0", {"cpu": 2, "memory": "8Gi", "pods": 110})],
            [pod("ns", f"g-w-{i}", "g", {"cpu": 1}) for i in range(2)],
            [],
        )

    def gang() -> Any:
        w = world()
        w.pod_groups.append(pod_group("ns", "g", "q", min_member=2, phase="Inqueue"))
        return w

    settings = conf("enqueue, allocate", "priority", "gang")
    inputs, result = run(settings, gang())
    assert result.pod_groups["ns/g"].phase == "Running"
    assert violations("phase-consistent", inputs, result) == []

    monkeypatch.setattr(job_updater, "job_phase", lambda *_: "Inqueue")
    inputs, result = run(settings, gang())
    [message] = violations("phase-consistent", inputs, result)
    assert "job ns/g: pod group phase Inqueue after the last cycle" in message
