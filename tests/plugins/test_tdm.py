"""tdm: revocable nodes only for revocable tasks inside the zone's window, victims by
disruption budget, and the job-level rules for preemptable jobs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.api.unschedule_info import FitError
from vspec.model.objects import Cluster
from vspec.plugins.tdm import RevocableZoneError, parse_int_or_percent, zone_window

NOON = datetime(2025, 1, 1, 12, 34, 56, tzinfo=UTC)
ENTRY = {
    "name": "tdm",
    "enablePredicate": True,
    "enableNodeOrder": True,
    "enablePreemptable": True,
    "enabledVictim": True,
    "enableJobOrder": True,
    "enableJobPipelined": True,
    "enableJobStarving": True,
    "arguments": {"tdm.revocable-zone.rz1": "0:00-0:00", "tdm.revocable-zone.rz2": "0:00-0:01"},
}
REVOCABLE = {"volcano.sh/revocable-zone": "*"}
PREEMPTABLE = {"volcano.sh/preemptable": "true"}
STEADY = {"volcano.sh/preemptable": "false"}


def _running(name: str, node_name: str, group: str = "spot", labels: Any = PREEMPTABLE) -> Any:
    return pod("c1", name, group, {"cpu": 1}, phase="Running", node_name=node_name, labels=labels)


def _cluster() -> Cluster:
    big = {"cpu": 16, "memory": "64Gi", "pods": 10}
    return Cluster(
        nodes=[
            node("n1", big, labels={"volcano.sh/revocable-zone": "rz1"}),
            node("n3", big),
            node("n5", big, labels={"volcano.sh/revocable-zone": "rz2"}),
        ],
        queues=[queue("c1")],
        pod_groups=[
            pod_group("c1", "pg1", "c1"),
            pod_group("c1", "spot", "c1", annotations=PREEMPTABLE),
        ],
        pods=[
            pod("c1", "plain", "pg1", {"cpu": 1}, labels=STEADY),
            pod("c1", "revocable", "pg1", {"cpu": 1}, annotations=REVOCABLE),
            _running("r1", "n3"),
            _running("r2", "n3"),
            _running("z1", "n5"),
            _running("z2", "n5"),
            _running("guarded", "n3", group="pg1", labels=STEADY),
        ],
    )


def test_revocable_nodes_only_for_revocable_tasks_in_active_zones() -> None:
    ssn = session(_cluster(), [ENTRY], now=NOON)
    plain, revocable = task(ssn, "c1/plain"), task(ssn, "c1/revocable")
    n1, n3, n5 = ssn.nodes["n1"], ssn.nodes["n3"], ssn.nodes["n5"]
    with pytest.raises(FitError, match="not allow to dispatch to revocable node"):
        ssn.predicate_fn(plain, n1)
    ssn.predicate_fn(revocable, n1)
    ssn.predicate_fn(plain, n3)
    with pytest.raises(FitError, match="current time beyond revocable zone rz2:0:00-0:01"):
        ssn.predicate_fn(revocable, n5)
    assert ssn.node_order_fn(revocable, n1) == 100
    assert ssn.node_order_fn(plain, n1) == 0
    assert ssn.node_order_fn(revocable, n3) == 0
    with pytest.raises(RevocableZoneError):
        ssn.node_order_fn(revocable, n5)


def test_preemptable_preemptors_reject_and_victims_respect_the_budget() -> None:
    ssn = session(_cluster(), [ENTRY], now=NOON)
    candidates = [task(ssn, f"c1/{n}") for n in ("r1", "r2", "z1", "guarded")]
    assert ssn.registered("preemptable", "tdm")(task(ssn, "c1/revocable"), candidates)[1] == -1
    victims, vote = ssn.registered("preemptable", "tdm")(task(ssn, "c1/plain"), candidates)
    # Only preemptable running tasks on ordinary nodes, one per job without a budget.
    assert vote == 1
    assert [v.name for v in victims] == ["r1"]


def test_victim_tasks_drain_inactive_zones_once_per_period() -> None:
    ssn = session(_cluster(), [ENTRY], now=NOON)
    assert [v.name for v in ssn.victim_tasks([])] == ["z1"]
    assert ssn.victim_tasks([]) == []  # evicted less than tdm.evict.period ago


def test_budget_annotations_bound_the_victims() -> None:
    cluster = _cluster()
    cluster.pod_groups[1].meta.annotations["volcano.sh/jdb-min-available"] = "25%"
    ssn = session(cluster, [ENTRY], now=NOON)
    # 4 running tasks, at least ceil(25% of 4) = 1 must stay: 3 may go.
    assert ssn.plugins["tdm"].max_pod_evict_num(ssn, ssn.jobs["c1/spot"]) == 3
    cluster.pod_groups[1].meta.annotations = {"volcano.sh/jdb-max-unavailable": "1"}
    ssn = session(cluster, [ENTRY], now=NOON)
    assert ssn.plugins["tdm"].max_pod_evict_num(ssn, ssn.jobs["c1/spot"]) == 1


def test_job_rules() -> None:
    ssn = session(_cluster(), [ENTRY], now=NOON)
    pg1, spot = ssn.jobs["c1/pg1"], ssn.jobs["c1/spot"]
    assert ssn.job_order_fn(pg1, spot) is True  # non-preemptable first
    assert ssn.job_starving(pg1) is True  # has pending tasks
    assert ssn.job_starving(spot) is False  # preemptable jobs never starve
    assert ssn.job_pipelined(pg1) is True  # minMember 0


def test_zone_window_and_int_or_percent() -> None:
    start, end = zone_window("22:00-06:00", NOON)
    assert (start.hour, end.day, end.hour) == (22, 2, 6)
    with pytest.raises(RevocableZoneError, match="format error"):
        zone_window("10:00", NOON)
    with pytest.raises(RevocableZoneError):
        zone_window("24:00-01:00", NOON)
    assert parse_int_or_percent("3", 10) == 3
    assert parse_int_or_percent("15%", 10) == 2
    assert isinstance(parse_int_or_percent("abc", 10), str)


@pytest.mark.parametrize(
    ("window", "message"),
    [
        ("noon-01:00", 'parsing time "noon" as "15:04": cannot parse "noon" as "15"'),
        ("9am-10am", 'parsing time "9am" as "15:04": cannot parse "am" as ":"'),
        ("1:5-02:00", 'parsing time "1:5" as "15:04": cannot parse "5" as "04"'),
        ("24:00-01:00", 'parsing time "24:00": hour out of range'),
        ("00:60-01:00", 'parsing time "00:60": minute out of range'),
        ("00:000-01:00", 'parsing time "00:000": extra text: "0"'),
    ],
)
def test_a_malformed_window_fails_with_gos_message(window: str, message: str) -> None:
    # The message reaches the nodes' fit errors, which pod group conditions summarise.
    with pytest.raises(RevocableZoneError) as raised:
        zone_window(window, NOON)
    assert str(raised.value) == message


def test_a_one_digit_hour_parses() -> None:
    start, end = zone_window("9:05-10:00", NOON)
    assert (start.hour, start.minute, end.hour) == (9, 5, 10)
