"""drf: dominant shares, job order, preemption by share, event handlers, and hDRF
(queue order, reclaim, and Volcano's TestHDRF allocations)."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.api.resource import Resource
from vspec.errors import EngineError
from vspec.framework.scheduler import simulate
from vspec.framework.session import Session
from vspec.golang import parse_go_float
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster, Pod, Queue
from vspec.plugins._job_accounting import dominant_share, share
from vspec.plugins.drf import DrfPlugin, resource_saturated

FLAGS = {"name": "drf", "enableJobOrder": True, "enablePreemptable": True}
HDRF = {**FLAGS, "enableHierarchy": True, "enableQueueOrder": True, "enableReclaimable": True}


def _pods(group: str, running: int, pending: int, cpu: str = "1") -> list[Pod]:
    pods = [
        pod("c1", f"{group}-r{i}", group, {"cpu": cpu}, phase="Running", node_name="n1")
        for i in range(running)
    ]
    pods += [pod("c1", f"{group}-p{i}", group, {"cpu": cpu}) for i in range(pending)]
    return pods


def _hq(name: str, hierarchy: str, weights: str) -> Queue:
    q = queue(name)
    q.meta.annotations["volcano.sh/hierarchy"] = hierarchy
    q.meta.annotations["volcano.sh/hierarchy-weights"] = weights
    return q


def _flat_ssn() -> Session:
    """4 cpu, 10 pods: c1/l has one pending task, c1/r three running ones."""
    return session(
        Cluster(
            nodes=[node("n1", {"cpu": "4", "memory": "4Gi", "pods": "10"})],
            pods=_pods("l", 0, 1) + _pods("r", 3, 0),
            pod_groups=[pod_group("c1", "l", "q1"), pod_group("c1", "r", "q1")],
            queues=[queue("q1")],
        ),
        [FLAGS],
    )


def _drf(ssn: Session) -> DrfPlugin:
    plugin = ssn.plugins["drf"]
    assert isinstance(plugin, DrfPlugin)
    return plugin


def test_share_is_the_largest_fraction_including_pods() -> None:
    total = Resource(4000, 100, {"pods": 10.0})
    assert dominant_share(Resource(1000, 0, {"pods": 1.0}), total) == ("cpu", 0.25)
    assert dominant_share(Resource(0, 0, {"pods": 5.0}), total) == ("pods", 0.5)
    # Only the cluster's resources (>= 0.1) count.
    assert dominant_share(Resource(0, 0, {"x/y": 1.0}), Resource(0, 0, {"x/y": 0.05})) == (
        "",
        0.0,
    )
    # helpers.Share: against a zero total, holding anything is a full share.
    assert (share(1, 0), share(0, 0), share(1, 4)) == (1.0, 0.0, 0.25)


def test_job_order_prefers_the_smaller_share() -> None:
    ssn = _flat_ssn()
    drf = _drf(ssn)
    assert drf.job_attrs["c1/r"].share == 0.75
    assert drf.job_attrs["c1/l"].share == 0
    assert ssn.job_order_fn(ssn.jobs["c1/l"], ssn.jobs["c1/r"])
    assert not ssn.job_order_fn(ssn.jobs["c1/r"], ssn.jobs["c1/l"])
    assert "DRF JobOrderFn: <c1/r> share state: 0.75, <c1/l> share state: 0" in ssn.log.texts()


def test_preemptable_reduces_the_victim_job_cumulatively() -> None:
    ssn = _flat_ssn()
    preemptor = task(ssn, "c1/l-p0")
    r = [task(ssn, f"c1/r-r{i}") for i in range(3)]
    # ls = 1/4; r drops to 2/4 (victim), 1/4 (equal: victim), 0/4 (not).
    assert ssn.preemptable(preemptor, r) == r[:2]


def test_event_handlers_keep_shares_current() -> None:
    ssn = _flat_ssn()
    drf = _drf(ssn)
    l0 = task(ssn, "c1/l-p0")
    stmt = ssn.statement()
    stmt.allocate(l0, ssn.nodes["n1"])
    assert drf.job_attrs["c1/l"].share == 0.25
    assert (
        "DRF AllocateFunc: task <c1/l-p0>, resreq <cpu 1000.00, memory 0.00, pods 1.00>,  "
        "share <0.25>, namespace share <-1>" in ssn.log.texts()
    )
    stmt.discard()
    assert drf.job_attrs["c1/l"].share == 0
    assert any(line.startswith("DRF EvictFunc: task <c1/l-p0>") for line in ssn.log.texts())


def test_without_hierarchy_no_queue_order_or_reclaim() -> None:
    ssn = _flat_ssn()
    assert ssn.registered("queue_order", "drf") is None
    assert ssn.registered("reclaimable", "drf") is None


def _hdrf_ssn() -> Session:
    """8 cpu; queue a (root/a) holds job a: 4 running + 1 pending; queue b (root/b)
    holds job b: 1 running + 2 pending."""
    return session(
        Cluster(
            nodes=[node("n1", {"cpu": "8", "memory": "8Gi", "pods": "100"})],
            pods=_pods("a", 4, 1) + _pods("b", 1, 2),
            pod_groups=[pod_group("c1", "a", "qa"), pod_group("c1", "b", "qb")],
            queues=[_hq("qa", "root/a", "1/1"), _hq("qb", "root/b", "1/1")],
        ),
        [HDRF],
    )


def test_hierarchy_queue_order_prefers_the_smaller_share() -> None:
    ssn = _hdrf_ssn()
    qa, qb = ssn.queues["qa"], ssn.queues["qb"]
    assert ssn.queue_order_fn(qb, qa)
    assert not ssn.queue_order_fn(qa, qb)


def test_hierarchy_reclaim_compares_queues_after_the_move() -> None:
    ssn = _hdrf_ssn()
    a_running = [task(ssn, f"c1/a-r{i}") for i in range(2)]
    # b gets 2/8 and each a-task alone leaves a at 3/8: every candidate is a victim
    # (each is tried on its own, not cumulatively).
    assert ssn.reclaimable(task(ssn, "c1/b-p0"), a_running) == a_running
    # a would hold 5/8 while b drops to nothing: no victim.
    assert ssn.reclaimable(task(ssn, "c1/a-p0"), [task(ssn, "c1/b-r0")]) == []
    # The real tree is untouched by the simulation.
    assert _drf(ssn).job_attrs["c1/a"].share == 0.5


def test_hierarchy_equal_shares_do_not_reclaim() -> None:
    ssn = session(
        Cluster(
            nodes=[node("n1", {"cpu": "8", "memory": "8Gi", "pods": "100"})],
            pods=_pods("a", 3, 1) + _pods("b", 1, 2),
            pod_groups=[pod_group("c1", "a", "qa"), pod_group("c1", "b", "qb")],
            queues=[_hq("qa", "root/a", "1/1"), _hq("qb", "root/b", "1/1")],
        ),
        [HDRF],
    )
    assert ssn.reclaimable(task(ssn, "c1/b-p0"), [task(ssn, "c1/a-r0")]) == []


def test_resource_saturated() -> None:
    alloc = Resource(2000, 0, {"pods": 2.0})
    # Holds all it asked for of cpu.
    assert resource_saturated(alloc, Resource(2000, 0, {"pods": 4.0}), {"cpu", "pods"})
    # Asks for more, and everything is still in demand.
    assert not resource_saturated(alloc, Resource(4000, 0, {"pods": 4.0}), {"cpu", "pods"})
    # cpu is no longer in demand in the cluster.
    assert resource_saturated(alloc, Resource(4000, 0, {"pods": 4.0}), {"pods"})


def test_weights_parse_like_go_and_are_raised_to_one() -> None:
    assert parse_go_float("2.5") == 2.5
    assert parse_go_float("1_0") == 0.0  # Go rejects underscores without a base prefix
    assert parse_go_float(" 3") == 0.0
    ssn = session(
        Cluster(
            nodes=[node("n1", {"cpu": "8", "memory": "8Gi", "pods": "100"})],
            pods=_pods("a", 1, 0),
            pod_groups=[pod_group("c1", "a", "qa")],
            queues=[_hq("qa", "root/x/y", "1/0.5/abc")],
        ),
        [HDRF],
    )
    root = _drf(ssn).root
    assert root.children is not None
    x = root.children["x"]
    assert x.weight == 1.0
    assert x.children is not None and x.children["y"].weight == 1.0


def _go_hdrf_case(
    node_res: dict[str, str], groups: dict[str, tuple[str, str, str]], queues: list[Queue]
) -> Counter[str]:
    """Run allocate as Volcano's TestHDRF does (drf hierarchy, then proportion)."""
    pods = [
        pod("default", f"{pg}-p{i}", pg, {"cpu": cpu, "memory": mem})
        for pg, (_, cpu, mem) in groups.items()
        for i in range(30 if len(groups) > 3 else 10)
    ]
    cluster = Cluster(
        nodes=[node("n", node_res)],
        pods=pods,
        pod_groups=[
            pod_group("default", pg, q, phase="Inqueue") for pg, (q, _, _) in groups.items()
        ],
        queues=queues,
    )
    conf = load_conf(
        {
            "actions": "allocate",
            "tiers": [
                {
                    "plugins": [
                        {
                            "name": "drf",
                            "enableHierarchy": True,
                            "enableQueueOrder": True,
                            "enableJobOrder": True,
                        }
                    ]
                },
                {
                    "plugins": [
                        {
                            "name": "proportion",
                            "enableJobEnqueued": True,
                            "enableQueueOrder": True,
                            "enableReclaimable": True,
                        }
                    ]
                },
            ],
        },
        default_plugin_flags=False,
    )
    result = simulate(conf, cluster)
    return Counter(b.task.split("/")[1].split("-p")[0] for b in result.binds)


def test_go_hdrf_rescaling() -> None:
    bound = _go_hdrf_case(
        {"cpu": "10", "memory": "10G", "pods": "50"},
        {
            "pg1": ("root-sci", "1", "1G"),
            "pg21": ("root-eng-dev", "1", "0G"),
            "pg22": ("root-eng-prod", "0", "1G"),
        },
        [
            _hq("root-sci", "root/sci", "100/50"),
            _hq("root-eng-dev", "root/eng/dev", "100/50/50"),
            _hq("root-eng-prod", "root/eng/prod", "100/50/50"),
        ],
    )
    assert bound == {"pg1": 5, "pg21": 5, "pg22": 5}


def test_go_hdrf_blocking_nodes() -> None:
    bound = _go_hdrf_case(
        {"cpu": "30", "memory": "30G", "pods": "500"},
        {
            "pg1": ("root-pg1", "1", "0G"),
            "pg2": ("root-pg2", "1", "0G"),
            "pg31": ("root-pg3-pg31", "1", "0G"),
            "pg32": ("root-pg3-pg31", "0", "1G"),
            "pg4": ("root-pg4", "0", "1G"),
        },
        [
            _hq("root-pg1", "root/pg1", "100/25"),
            _hq("root-pg2", "root/pg2", "100/25"),
            _hq("root-pg3-pg31", "root/pg3/pg31", "100/25/50"),
            _hq("root-pg3-pg32", "root/pg3/pg32", "100/25/50"),
            _hq("root-pg4", "root/pg4", "100/25"),
        ],
    )
    assert bound == {"pg1": 10, "pg2": 10, "pg31": 10, "pg32": 15, "pg4": 15}


def test_hierarchy_deeper_than_its_weights_is_an_engine_error() -> None:
    conf = load_conf({"actions": "", "tiers": [{"plugins": [HDRF]}]}, default_plugin_flags=False)
    cluster = Cluster(
        nodes=[node("n1", {"cpu": "1", "memory": "1Gi", "pods": "10"})],
        pods=_pods("a", 0, 1),
        pod_groups=[pod_group("c1", "a", "qa")],
        queues=[_hq("qa", "root/x/y", "1/1")],
    )
    # Volcano panics (index out of range); vspec stops with an engine error.
    with pytest.raises(EngineError, match="more levels than its weights"):
        simulate(conf, cluster)
