"""The invariants of the plugins beyond the core (vspec/invariants/rules_beyond_core.py)
hold on the engine's outcome and catch the plugin mutants of tests/mutation/mutants.py:
each test runs a small scenario on the engine, then on the engine with the plugin's rule
broken as the mutant breaks it (or on the outcome changed by hand), and asks the
invariant."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.builders import cluster, kube_object, node, pod, pod_group, run, violations
from vspec.model.objects import Cluster, KubeObject
from vspec.model.result import Bind, Eviction
from vspec.plugins import numaaware, resourcequota
from vspec.plugins.task_topology import JobManager


def _with(world: Cluster, *objects: KubeObject) -> Cluster:
    return replace(world, objects=[*world.objects, *objects])


# -- quota-respected -------------------------------------------------------------------------


def _quota_world() -> Cluster:
    """Quota of 2 CPUs in ns, 1 used; two Pending jobs of 1 CPU each: one fits exactly."""
    groups = [
        pod_group("ns", name, "q", min_member=1, min_resources={"cpu": 1}) for name in ("a", "b")
    ]
    pods = [pod("ns", f"{name}-0", name, {"cpu": 1}) for name in ("a", "b")]
    quota = kube_object(
        "ResourceQuota",
        "ns",
        "quota",
        {"spec": {"hard": {"cpu": "2"}}, "status": {"hard": {"cpu": "2"}, "used": {"cpu": "1"}}},
    )
    return _with(cluster([node("n")], pods, groups), quota)


QUOTA_CONF = {"actions": "enqueue", "tiers": [{"plugins": [{"name": "resourcequota"}]}]}


def _enqueued(result: Any) -> list[str]:
    return sorted(k for k, pg in result.pod_groups.items() if pg.session_phase == "Inqueue")


def test_quota_respected_holds_and_catches_a_refusal_at_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs, result = run(QUOTA_CONF, _quota_world())
    assert len(_enqueued(result)) == 1
    assert violations("quota-respected", inputs, result) == []

    # The mutant resourcequota-at-hard-limit: usage equal to hard is refused.
    def at_limit(usage: Any, hard: Any) -> list[str]:
        return [name for name, limit in hard.items() if name in usage and usage[name] >= limit]

    monkeypatch.setattr(resourcequota, "quota_exceeded", at_limit)
    inputs, broken = run(QUOTA_CONF, _quota_world())
    assert _enqueued(broken) == []
    [message] = violations("quota-respected", inputs, broken)
    assert "resourcequota refused job ns/a though its namespace's quotas have room" in message


def test_quota_respected_catches_jobs_admitted_past_the_quota() -> None:
    inputs, result = run(QUOTA_CONF, _quota_world())
    both = {
        key: replace(pg, session_phase="Inqueue", phase="Inqueue")
        for key, pg in result.pod_groups.items()
    }
    broken = replace(result, pod_groups=both, events=[])
    [message] = violations("quota-respected", inputs, broken)
    assert message.startswith("cycle 0: enqueue admitted jobs of namespace ns past its quota")


# -- pdb-respected -------------------------------------------------------------------------------


def _budget(name: str, job: str, allowed: int) -> KubeObject:
    body = {
        "spec": {"selector": {"matchLabels": {"job": job}}},
        "status": {"disruptionsAllowed": allowed},
    }
    return kube_object("PodDisruptionBudget", "ns", name, body)


def _pdb_world() -> Cluster:
    """Job j runs two pods under a budget of one disruption, job k one pod under one."""
    pods = [
        pod("ns", f"{job}-{i}", job, {"cpu": 1}, node_name="n", labels={"job": job})
        for job, count in (("j", 2), ("k", 1))
        for i in range(count)
    ]
    groups = [pod_group("ns", job, "q", phase="Running") for job in ("j", "k")]
    world = cluster([node("n")], pods, groups)
    return _with(world, _budget("pdb-j", "j", 1), _budget("pdb-k", "k", 1))


PDB_CONF = {"actions": "shuffle", "tiers": [{"plugins": [{"name": "pdb"}]}]}


def test_pdb_respected_holds_and_catches_the_last_allowed_disruption_vetoed() -> None:
    inputs, result = run(PDB_CONF, _pdb_world())
    evicted = sorted(e.task for e in result.evictions)
    assert evicted in (["ns/j-0", "ns/k-0"], ["ns/j-1", "ns/k-0"])
    assert violations("pdb-respected", inputs, result) == []
    # As the mutant pdb-budget-off-by-one does: the budget's last disruption is vetoed.
    spared = replace(result, evictions=[e for e in result.evictions if e.task != "ns/k-0"])
    [message] = violations("pdb-respected", inputs, spared)
    assert "shuffle left Running pod ns/k-0 though pdb offers it as a victim" in message


def test_pdb_respected_catches_a_budget_overspent() -> None:
    inputs, result = run(PDB_CONF, _pdb_world())
    both = [Eviction("ns/j-0", "shuffle"), Eviction("ns/j-1", "shuffle")]
    overspent = replace(result, evictions=[*both, Eviction("ns/k-0", "shuffle")])
    [message] = violations("pdb-respected", inputs, overspent)
    assert "PodDisruptionBudget ns/pdb-j allows 1 disruption(s)" in message


# -- numa-fit ------------------------------------------------------------------------------------


def _numa_world(policy: str) -> Cluster:
    """One node of two NUMA nodes of two CPUs each; Guaranteed pods of 2 and 3 CPUs."""
    details = {str(c): {"numa": c // 2, "socket": 0, "core": c} for c in range(4)}
    topology = kube_object(
        "Numatopology",
        "",
        "n",
        {
            "spec": {
                "policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": policy},
                "numares": {"cpu": {"allocatable": "0-3", "capacity": 4}},
                "cpuDetail": details,
            }
        },
    )
    notes = {"volcano.sh/numa-topology-policy": policy}
    pods = [
        pod("ns", f"p{cpu}-0", f"p{cpu}", lim, limits=lim, annotations=notes)
        for cpu in (3, 2)
        for lim in [{"cpu": cpu, "memory": "1Gi"}]
    ]
    groups = [pod_group("ns", f"p{cpu}", "q", min_member=1, phase="Inqueue") for cpu in (3, 2)]
    return _with(
        cluster([node("n", {"cpu": 8, "memory": "8Gi", "pods": 110})], pods, groups), topology
    )


NUMA_CONF = {
    "actions": "allocate",
    "tiers": [{"plugins": [{"name": "gang"}, {"name": "predicates"}, {"name": "numa-aware"}]}],
}


def test_numa_fit_holds_and_catches_a_pod_admitted_without_a_preferred_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs, result = run(NUMA_CONF, _numa_world("single-numa-node"))
    # 3 CPUs need both NUMA nodes: single-numa-node refuses them; 2 CPUs fit one.
    assert [(b.task, b.node) for b in result.binds] == [("ns/p2-0", "n")]
    assert violations("numa-fit", inputs, result) == []

    # The mutant numa-restricted-admits-all: every policy admits.
    real = numaaware.predicate_policy

    def admits(*args: Any) -> Any:
        return real(*args)[0], True

    monkeypatch.setattr(numaaware, "predicate_policy", admits)
    inputs, broken = run(NUMA_CONF, _numa_world("single-numa-node"))
    assert "ns/p3-0" in {b.task for b in broken.binds}
    [message] = violations("numa-fit", inputs, broken)
    assert "Guaranteed pod ns/p3-0 bound to n" in message
    assert "no preferred single-numa-node NUMA hint" in message


def test_numa_fit_catches_a_policy_the_node_does_not_have() -> None:
    inputs, result = run(NUMA_CONF, _numa_world("restricted"))
    assert violations("numa-fit", inputs, result) == []
    world = _numa_world("restricted")
    other = replace(world.objects[0], body={"spec": {"policies": {"CPUManagerPolicy": "none"}}})
    inputs = replace(inputs, cluster=replace(world, objects=[other]))
    [message] = violations("numa-fit", inputs, result)
    assert "CPU manager policy is 'none', not static" in message


# -- revocable-zones -----------------------------------------------------------------------------


def _zone_world(notes: dict[str, str]) -> Cluster:
    revocable = node("r", labels={"volcano.sh/revocable-zone": "rz"})
    pods = [pod("ns", "a-0", "a", {"cpu": 1}, annotations=notes)]
    return cluster([revocable], pods, [pod_group("ns", "a", "q", min_member=1, phase="Inqueue")])


ANY_ZONE = {"volcano.sh/revocable-zone": "*"}


def _zone_conf(window: str) -> dict[str, Any]:
    tdm = {"name": "tdm", "arguments": {"tdm.revocable-zone.rz": window}}
    return {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}, tdm]}]}


def test_revocable_zones_hold_and_catch_a_bind_outside_the_window() -> None:
    # The spec's clock is 00:00 UTC: inside 00:00-23:59, outside 10:00-12:00.
    inputs, result = run(_zone_conf("00:00-23:59"), _zone_world(ANY_ZONE))
    assert [b.node for b in result.binds] == ["r"]
    assert violations("revocable-zones", inputs, result) == []
    inputs, result = run(_zone_conf("10:00-12:00"), _zone_world(ANY_ZONE))
    assert result.binds == []
    broken = replace(result, binds=[Bind("ns/a-0", "r")])
    [message] = violations("revocable-zones", inputs, broken)
    assert "revocable zone rz is outside its window 10:00-12:00 at 00:00:00" in message


def test_revocable_zones_catch_a_pod_that_may_not_use_the_zone() -> None:
    # A pod annotated preemptable may use the zone as one annotated "*" does.
    inputs, result = run(_zone_conf("00:00-23:59"), _zone_world({"volcano.sh/preemptable": "true"}))
    assert [b.node for b in result.binds] == ["r"]
    assert violations("revocable-zones", inputs, result) == []
    inputs, result = run(_zone_conf("00:00-23:59"), _zone_world({}))
    assert result.binds == []
    broken = replace(result, binds=[Bind("ns/a-0", "r")])
    [message] = violations("revocable-zones", inputs, broken)
    assert "neither annotated volcano.sh/revocable-zone: '*' nor preemptable" in message


# -- task-topology-order ------------------------------------------------------------------------


def _topology_world() -> Cluster:
    notes = {
        "volcano.sh/task-topology-affinity": "ps,worker",
        "volcano.sh/task-topology-task-order": "ps,worker",
    }
    pods = [
        pod("ns", f"{role}-0", "j", {"cpu": 1}, annotations={"volcano.sh/task-spec": role})
        for role in ("worker", "ps")
    ]
    group = pod_group("ns", "j", "q", min_member=2, phase="Inqueue", annotations=notes)
    return cluster([node("n")], pods, [group])


TOPOLOGY_CONF = {
    "actions": "allocate",
    "tiers": [{"plugins": [{"name": "task-topology"}, {"name": "priority"}, {"name": "gang"}]}],
}


def test_task_topology_order_holds_and_catches_the_roles_reversed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs, result = run(TOPOLOGY_CONF, _topology_world())
    assert [b.task for b in result.binds] == ["ns/ps-0", "ns/worker-0"]
    assert violations("task-topology-order", inputs, result) == []

    # The mutant task-topology-order-reversed: the roles' order is read backwards.
    real = JobManager.affinity_order
    monkeypatch.setattr(JobManager, "affinity_order", lambda self, a, b: -real(self, a, b))
    inputs, broken = run(TOPOLOGY_CONF, _topology_world())
    assert [b.task for b in broken.binds] == ["ns/worker-0", "ns/ps-0"]
    [message] = violations("task-topology-order", inputs, broken)
    assert "job ns/j bound ns/ps-0 (role ps) after ns/worker-0" in message
