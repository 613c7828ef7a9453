"""Extension points: each kind is declared once (gate flag, tier rule), every declared
kind the session dispatches can be registered, and the points no built-in plugin uses
still dispatch by Volcano's rule (they mirror Go's API, so user plugins may use them)."""

from __future__ import annotations

import random
from typing import Any, get_args

import pytest

from vspec.api.job_info import JobInfo
from vspec.framework.cache import SchedulerCache
from vspec.framework.framework import open_session
from vspec.framework.log import Klog
from vspec.framework.session import Session
from vspec.framework.session_plugins import EXTENSION_POINTS, GATES, POINTS, Kind
from vspec.model.conf import FLAG_KEYS, SchedulerOptions, load_conf
from vspec.model.objects import Cluster

# Declared because Volcano's Session has them, though v1.11 never calls them.
REGISTRATION_ONLY = {"node_map", "node_reduce"}


def open_(tiers: list[list[dict[str, Any]]]) -> Session:
    conf = load_conf(
        {"actions": "", "tiers": [{"plugins": t} for t in tiers]}, default_plugin_flags=False
    )
    log = Klog(0)
    cache = SchedulerCache(Cluster(), SchedulerOptions(), log)
    return open_session(cache, conf, log=log, rng=random.Random(0), now=None, uid="t")


def test_each_kind_is_declared_once_with_a_known_gate_and_a_rule() -> None:
    kinds = [p.kind for p in EXTENSION_POINTS]
    assert sorted(kinds) == sorted(get_args(Kind)) and len(set(kinds)) == len(kinds)
    flags = set(FLAG_KEYS.values())
    for point in EXTENSION_POINTS:
        assert point.gate is None or point.gate in flags, point
        assert point.rule, point
    assert {k: p.gate for k, p in POINTS.items()} == GATES


def test_every_dispatched_kind_has_its_add_method() -> None:
    for kind in set(POINTS) - REGISTRATION_ONLY:
        names = (f"add_{kind}_fn", f"add_{kind}_fns")
        assert any(hasattr(Session, n) for n in names), kind
    for name in dir(Session):
        if name.startswith("add_") and name.endswith(("_fn", "_fns")):
            assert name.removeprefix("add_").removesuffix("s").removesuffix("_fn") in POINTS


def job(name: str) -> Any:
    class Fake:
        uid = name

    return Fake()


def test_target_job_takes_the_first_enabled_functions_answer() -> None:
    ssn = open_(
        [
            [
                {"name": "binpack", "enableTargetJob": False},
                {"name": "conformance", "enableTargetJob": True},
                {"name": "nodeorder", "enableTargetJob": True},
            ]
        ]
    )
    a, b = job("a"), job("b")
    ssn.add_target_job_fn("binpack", lambda jobs: a)  # not enabled: never asked
    ssn.add_target_job_fn("conformance", lambda jobs: None)
    ssn.add_target_job_fn("nodeorder", lambda jobs: b)
    # Quirk kept: the first enabled function decides, even when it answers nil.
    assert ssn.target_job([a, b]) is None
    ssn.add_target_job_fn("conformance", lambda jobs: b)
    assert ssn.target_job([a, b]) is b


def test_reserved_nodes_and_job_enqueued_call_every_enabled_function() -> None:
    calls: list[str] = []
    ssn = open_(
        [
            [{"name": "binpack", "enableReservedNodes": True, "enableJobEnqueued": True}],
            [{"name": "conformance", "enableReservedNodes": True, "enableJobEnqueued": False}],
        ]
    )
    for name in ("binpack", "conformance"):
        ssn.add_reserved_nodes_fn(name, lambda n=name: calls.append(f"reserve {n}"))
        ssn.add_job_enqueued_fn(name, lambda j, n=name: calls.append(f"enqueued {n}"))
    ssn.reserved_nodes()
    ssn.job_enqueued(job("a"))
    assert calls == ["reserve binpack", "reserve conformance", "enqueued binpack"]


@pytest.mark.parametrize(("flag", "expected"), [(True, 1), (False, 0)])
def test_cluster_order_is_kept_per_gate(flag: bool, expected: int) -> None:
    ssn = open_([[{"name": "binpack", "EnabledClusterOrder": flag}]])
    ssn.add_cluster_order_fn("binpack", lambda left, right: -1)
    assert len([fn for tier in ssn.chain("cluster_order") for _, fn in tier]) == expected


def test_job_starving_is_the_and_of_the_first_tier_with_any_function() -> None:
    ssn = open_(
        [
            [{"name": "binpack", "enableJobStarving": True}],
            [
                {"name": "conformance", "enableJobStarving": True},
                {"name": "nodeorder", "enableJobStarving": True},
            ],
        ]
    )
    ssn.add_job_starving_fns("conformance", lambda j: True)
    ssn.add_job_starving_fns("nodeorder", lambda j: False)
    starving: JobInfo = job("a")
    assert ssn.job_starving(starving) is False
    ssn.add_job_starving_fns("binpack", lambda j: True)
    assert ssn.job_starving(starving) is True


def test_own_state_holds_only_while_every_registered_function_declares_it() -> None:
    """One function of a kind registered without ``own_state`` (a user's, say) turns the
    leave-out off for the kinds asked; registering again under the same name decides."""
    ssn = open_([[{"name": "priority"}, {"name": "gang"}, {"name": "proportion"}]])
    kinds: tuple[Kind, ...] = ("job_order", "queue_order", "job_valid", "overused")
    assert ssn.reads_own_state(*kinds)
    ssn.add_job_order_fn("mine", lambda left, right: 0)
    assert not ssn.reads_own_state(*kinds) and ssn.reads_own_state("queue_order")
    ssn.add_job_order_fn("mine", lambda left, right: 0, own_state=True)
    assert ssn.reads_own_state(*kinds)
    ssn.add_overused_fn("gang", lambda queue: False)
    assert not ssn.reads_own_state("overused")
    ssn.clear()
    assert ssn.reads_own_state(*kinds)


def test_hierarchical_drf_orders_queues_by_a_shared_tree() -> None:
    ssn = open_([[{"name": "drf", "enableHierarchy": True}]])
    assert ssn.reads_own_state("job_order") and not ssn.reads_own_state("queue_order")
    assert open_([[{"name": "drf"}]]).reads_own_state("job_order", "queue_order")
