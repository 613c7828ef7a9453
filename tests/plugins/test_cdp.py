"""cdp: running pods within their cooldown time are protected from preemption."""

from __future__ import annotations

from datetime import timedelta

from tests.builders import NOW, pod, pod_group, queue, session, task
from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster

ENTRY = {"name": "cdp", "enablePreemptable": True}


def _scheduled(ago: timedelta) -> list[Condition]:
    return [Condition("PodScheduled", "True", last_transition_time=NOW - ago)]


def test_cooldown_protects_recent_running_pods() -> None:
    cooldown = {"volcano.sh/cooldown-time": "600s"}
    cluster = Cluster(
        queues=[queue("q1")],
        pod_groups=[pod_group("ns", "pg", "q1")],
        pods=[
            pod(
                "ns",
                "recent",
                "pg",
                {"cpu": 1},
                phase="Running",
                node_name="",
                annotations=cooldown,
                conditions=_scheduled(timedelta(seconds=100)),
            ),
            pod(
                "ns",
                "old",
                "pg",
                {"cpu": 1},
                phase="Running",
                annotations=cooldown,
                conditions=_scheduled(timedelta(seconds=800)),
            ),
            pod(
                "ns",
                "invalid",
                "pg",
                {"cpu": 1},
                phase="Running",
                labels={"volcano.sh/cooldown-time": "600abc"},
                conditions=_scheduled(timedelta(seconds=1)),
            ),
            pod(
                "ns",
                "pending",
                "pg",
                {"cpu": 1},
                annotations=cooldown,
                conditions=_scheduled(timedelta(seconds=1)),
            ),
            pod("ns", "preemptor", "pg", {"cpu": 1}),
        ],
    )
    ssn = session(cluster, [ENTRY])
    names = ["recent", "old", "invalid", "pending"]
    victims = ssn.preemptable(task(ssn, "ns/preemptor"), [task(ssn, f"ns/{n}") for n in names])
    assert [v.name for v in victims] == ["old", "invalid", "pending"]
    assert "invalid time duration volcano.sh/cooldown-time=600abc" in ssn.log.texts()
