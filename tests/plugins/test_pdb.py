"""pdb: victims are filtered so that no PodDisruptionBudget is overdrawn."""

from __future__ import annotations

from typing import Any

from tests.builders import kube_object, pod, pod_group, queue, session, task
from vspec.model.objects import Cluster

ENTRY = {"name": "pdb", "enablePreemptable": True, "enableReclaimable": True, "enabledVictim": True}
APP = {"app": "web"}


def _pdb(name: str, allowed: int, selector: Any, disrupted: tuple[str, ...] = ()) -> Any:
    body = {
        "spec": {"selector": selector},
        "status": {"disruptionsAllowed": allowed, "disruptedPods": dict.fromkeys(disrupted, "t")},
    }
    return kube_object("PodDisruptionBudget", "ns", name, body)


def _cluster(*budgets: Any) -> Cluster:
    def running(name: str, labels: dict[str, str]) -> Any:
        return pod("ns", name, "pg", {"cpu": 1}, phase="Running", node_name="n1", labels=labels)

    return Cluster(
        queues=[queue("q1")],
        pod_groups=[pod_group("ns", "pg", "q1")],
        pods=[
            running("w1", APP),
            running("w2", APP),
            running("w3", APP),
            running("db", {"app": "db"}),
            running("bare", {}),
            pod("ns", "preemptor", "pg", {"cpu": 1}),
        ],
        objects=list(budgets),
    )


def _names(tasks: list[Any]) -> list[str]:
    return [t.name for t in tasks]


def test_budget_is_spent_in_order_and_unlabelled_pods_are_dropped() -> None:
    ssn = session(_cluster(_pdb("web", 1, {"matchLabels": APP})), [ENTRY])
    tasks = [task(ssn, f"ns/{n}") for n in ("w1", "w2", "db", "bare", "w3")]
    assert _names(ssn.victim_tasks(tasks)) == ["w1", "db"]
    preemptor = task(ssn, "ns/preemptor")
    assert _names(ssn.preemptable(preemptor, tasks)) == ["w1", "db"]
    assert _names(ssn.reclaimable(preemptor, tasks)) == ["w1", "db"]


def test_disrupted_pods_do_not_spend_the_budget() -> None:
    ssn = session(_cluster(_pdb("web", 1, {"matchLabels": APP}, disrupted=("w1",))), [ENTRY])
    tasks = [task(ssn, f"ns/{n}") for n in ("w1", "w2", "w3")]
    assert _names(ssn.victim_tasks(tasks)) == ["w1", "w2"]


def test_empty_or_invalid_selectors_protect_nothing() -> None:
    budgets = (
        _pdb("empty", 0, {}),
        _pdb("invalid", 0, {"matchExpressions": [{"key": "app", "operator": "In"}]}),
        _pdb("expr", 0, {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]}),
    )
    ssn = session(_cluster(*budgets), [ENTRY])
    tasks = [task(ssn, f"ns/{n}") for n in ("w1", "db")]
    assert _names(ssn.victim_tasks(tasks)) == ["w1"]
