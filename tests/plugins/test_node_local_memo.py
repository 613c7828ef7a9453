"""Node-local memos: which plugins declare a task's verdicts and scores memoisable, and that
allocate's verdict memo and the session's score memo are invalidated by a node change and
bypassed whenever a function is not node-local."""

from __future__ import annotations

from typing import Any

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.actions.allocate import Allocate
from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.api.unschedule_info import FitError, FitErrors
from vspec.framework.scheduler import simulate
from vspec.framework.session import Session
from vspec.model.conf import load_conf
from vspec.model.corev1 import parse_affinity
from vspec.model.objects import Cluster, Pod
from vspec.util.node_memo import NodeMemo
from vspec.util.predicate_helper import Verdict
from vspec.util.scheduler_helper import prioritize_nodes

PREDICATES: dict[str, Any] = {"name": "predicates", "enablePredicate": True}
NODEORDER: dict[str, Any] = {"name": "nodeorder", "enableNodeOrder": True}
BINPACK: dict[str, Any] = {"name": "binpack", "enableNodeOrder": True}
ANTI_AFFINITY = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"app": "a"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}


def _cluster(*pods: Pod, pods_per_node: int = 10) -> Cluster:
    return Cluster(
        nodes=[node(f"n{i}", {"cpu": 4, "memory": "8Gi", "pods": pods_per_node}) for i in (1, 2)],
        queues=[queue("q1")],
        pod_groups=[pod_group("ns1", "pg1", "q1", min_member=1, phase="Inqueue")],
        pods=list(pods),
    )


def _pending(name: str, **kwargs: Any) -> Pod:
    return pod("ns1", name, "pg1", {"cpu": 1}, **kwargs)


def _prepared(ssn: Session, key: str) -> TaskInfo:
    """The task after its PrePredicate, when allocate asks for the key."""
    t: TaskInfo = task(ssn, key)
    ssn.pre_predicate_fn(t)
    return t


def _counting(ssn: Session, kind: str, name: str) -> list[int]:
    """Wrap a registered function (keeping its node-local declaration) to count calls."""
    calls = [0]
    fn = ssn.registered(kind, name)
    declared = ssn._node_local[kind].get(name)

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return fn(*args)

    ssn._add(kind, name, counted, declared)
    return calls


# -- which functions declare themselves node-local ---------------------------------------------


def test_predicates_key_after_pre_predicate_shared_by_alike_pods() -> None:
    ssn = session(_cluster(_pending("p1"), _pending("p2")), [PREDICATES], verbosity=3)
    p1 = task(ssn, "ns1/p1")
    # Before its PrePredicate the skipped filters are unknown: not node-local yet.
    assert ssn.node_local_key("predicate", p1) is None
    ssn.pre_predicate_fn(p1)
    key = ssn.node_local_key("predicate", p1)
    assert key is not None
    assert ssn.node_local_key("predicate", _prepared(ssn, "ns1/p2")) == key


def test_predicates_not_node_local_with_pod_dependent_filters() -> None:
    affine = _pending("p1", labels={"app": "a"})
    affine.affinity = parse_affinity(ANTI_AFFINITY)
    ssn = session(_cluster(affine), [PREDICATES], verbosity=3)
    assert ssn.node_local_key("predicate", _prepared(ssn, "ns1/p1")) is None


def test_predicates_not_node_local_when_its_lines_are_kept_or_verdicts_are_cached() -> None:
    for plugin, verbosity in (
        (PREDICATES, 4),
        ({**PREDICATES, "arguments": {"predicate.CacheEnable": True}}, 0),
        ({**PREDICATES, "arguments": {"predicate.ProportionalEnable": True}}, 0),
    ):
        ssn = session(_cluster(_pending("p1")), [plugin], verbosity=verbosity)
        assert ssn.node_local_key("predicate", _prepared(ssn, "ns1/p1")) is None


def test_undeclared_function_makes_the_chain_not_node_local() -> None:
    ssn = session(_cluster(_pending("p1")), [PREDICATES, NODEORDER, BINPACK], verbosity=3)
    t = _prepared(ssn, "ns1/p1")
    assert ssn.node_local_key("predicate", t) is not None
    assert ssn.node_local_key("node_order", t) is not None
    # A user plugin in the same tier whose predicate declares nothing.
    option = (
        load_conf({"actions": "", "tiers": [{"plugins": [{"name": "custom"}]}]}).tiers[0].plugins[0]
    )
    ssn.tiers[0].plugins.append(option)
    ssn.add_predicate_fn("custom", lambda task, node: None)
    assert ssn.node_local_key("predicate", t) is None
    # Registering again without the declaration withdraws it.
    ssn.add_node_order_fn("binpack", ssn.registered("node_order", "binpack"))
    assert ssn.node_local_key("node_order", t) is None


def test_score_keys_follow_the_request_and_verbosity() -> None:
    big = pod("ns1", "big", "pg1", {"cpu": 2})
    ssn = session(_cluster(_pending("p1"), _pending("p2"), big), [NODEORDER, BINPACK], verbosity=3)
    key = ssn.node_local_key("node_order", task(ssn, "ns1/p1"))
    assert key is not None
    assert ssn.node_local_key("node_order", task(ssn, "ns1/p2")) == key
    assert ssn.node_local_key("node_order", task(ssn, "ns1/big")) != key
    verbose = session(_cluster(_pending("p1")), [NODEORDER, BINPACK], verbosity=4)
    assert verbose.node_local_key("node_order", task(verbose, "ns1/p1")) is None


# -- allocate's verdict memo --------------------------------------------------------------------


def _allocate_predicate(ssn: Session, t: TaskInfo) -> Any:
    action = Allocate()
    return action._predicate_fn(ssn, t)[0]


def test_verdict_memo_reused_per_task_and_invalidated_by_a_node_change() -> None:
    ssn = session(
        _cluster(_pending("p1"), _pending("p2"), _pending("p3")), [PREDICATES], verbosity=3
    )
    calls = _counting(ssn, "predicate", "predicates")
    n1 = ssn.nodes["n1"]
    p1, p2, p3 = (_prepared(ssn, f"ns1/p{i}") for i in (1, 2, 3))
    action = Allocate()
    assert action._predicate_fn(ssn, p1)[0](p1, n1) is None
    assert action._predicate_fn(ssn, p2)[0](p2, n1) is None
    assert calls[0] == 1  # p2 shares p1's key: memo hit
    # The node takes p1: its version changes and p2 is predicated again.
    ssn.statement().allocate(p1, n1)
    assert action._predicate_fn(ssn, p2)[0](p2, n1) is None
    assert calls[0] == 2
    assert action._predicate_fn(ssn, p3)[0](p3, n1) is None
    assert calls[0] == 2
    # Another session's allocate starts afresh.
    action._verdicts, action._plugin_verdicts = NodeMemo(), NodeMemo()
    assert action._predicate_fn(ssn, p3)[0](p3, n1) is None
    assert calls[0] == 3


def test_tasks_that_differ_only_in_their_requests_share_the_plugins_verdict() -> None:
    big = pod("ns1", "big", "pg1", {"cpu": 2})
    huge = pod("ns1", "huge", "pg1", {"cpu": 8})
    ssn = session(_cluster(_pending("p1"), big, huge), [PREDICATES], verbosity=3)
    calls = _counting(ssn, "predicate", "predicates")
    n1 = ssn.nodes["n1"]
    p1, p2, p3 = (_prepared(ssn, key) for key in ("ns1/p1", "ns1/big", "ns1/huge"))
    action = Allocate()
    assert action._predicate_fn(ssn, p1)[0](p1, n1) is None
    assert action._predicate_fn(ssn, p2)[0](p2, n1) is None
    assert calls[0] == 1  # another request, the same plugins' key: their verdict reused
    assert _fit_error(p3, n1, action._predicate_fn(ssn, p3)[0](p3, n1)).reasons() == [
        "Insufficient cpu"
    ]
    assert calls[0] == 1  # short of resources: the plugins are not asked
    ssn.statement().allocate(p1, n1)
    assert action._predicate_fn(ssn, p2)[0](p2, n1) is None
    assert calls[0] == 2  # the node changed


def _fit_error(task: TaskInfo, node: NodeInfo, verdict: Verdict) -> FitError:
    """The FitError a task's FitErrors holds for ``verdict`` (a memo hit gives statuses)."""
    assert verdict is not None
    errors = FitErrors(task)
    errors.set_node_error(node.name, verdict)
    return errors.nodes[node.name]


def test_memoised_failure_follows_the_node() -> None:
    cluster = _cluster(_pending("p1"), _pending("p2"), _pending("p3"), pods_per_node=1)
    ssn = session(cluster, [PREDICATES], verbosity=3)
    n1 = ssn.nodes["n1"]
    p1, p2, p3 = (_prepared(ssn, f"ns1/p{i}") for i in (1, 2, 3))
    action = Allocate()
    assert action._predicate_fn(ssn, p2)[0](p2, n1) is None
    ssn.statement().allocate(p1, n1)
    fe = _fit_error(p2, n1, action._predicate_fn(ssn, p2)[0](p2, n1))
    again = _fit_error(p3, n1, action._predicate_fn(ssn, p3)[0](p3, n1))
    assert fe.reasons() == again.reasons() == ["Insufficient pods"]
    assert (fe.task_name, again.task_name) == ("p2", "p3")


def test_memoised_fit_error_names_the_asking_task() -> None:
    full = [node("n1", {"cpu": 1, "memory": "8Gi", "pods": 10})]
    cluster = _cluster(_pending("p1"), _pending("p2"))
    cluster.nodes = [*full, node("n2", {"cpu": 0, "memory": "8Gi", "pods": 10})]
    ssn = session(cluster, [PREDICATES], verbosity=3)
    n2 = ssn.nodes["n2"]
    p1, p2 = _prepared(ssn, "ns1/p1"), _prepared(ssn, "ns1/p2")
    action = Allocate()
    first = _fit_error(p1, n2, action._predicate_fn(ssn, p1)[0](p1, n2))
    second = _fit_error(p2, n2, action._predicate_fn(ssn, p2)[0](p2, n2))
    assert (first.task_name, second.task_name) == ("p1", "p2")
    assert first.reasons() == second.reasons() == ["Insufficient cpu"]


def test_verdict_memo_not_used_for_pod_dependent_filters() -> None:
    affine = [_pending(f"p{i}", labels={"app": "a"}) for i in (1, 2)]
    for p in affine:
        p.affinity = parse_affinity(ANTI_AFFINITY)
    ssn = session(_cluster(*affine), [PREDICATES], verbosity=3)
    calls = _counting(ssn, "predicate", "predicates")
    n1 = ssn.nodes["n1"]
    action = Allocate()
    for key in ("ns1/p1", "ns1/p2", "ns1/p2"):
        t = _prepared(ssn, key)
        assert action._predicate_fn(ssn, t)[0](t, n1) is None
    assert calls[0] == 3


# -- the session's score memo -------------------------------------------------------------------


def _best_scores(ssn: Session, t: TaskInfo) -> dict[str, float]:
    nodes: list[NodeInfo] = ssn.node_list
    return {n.name: score for score, ns in prioritize_nodes(ssn, t, nodes).items() for n in ns}


def test_score_memo_reused_and_invalidated_by_a_node_change() -> None:
    ssn = session(
        _cluster(_pending("p1"), _pending("p2")), [PREDICATES, NODEORDER, BINPACK], verbosity=3
    )
    calls = _counting(ssn, "node_order", "binpack")
    p1, p2 = task(ssn, "ns1/p1"), task(ssn, "ns1/p2")
    before = _best_scores(ssn, p1)
    assert calls[0] == 2
    assert _best_scores(ssn, p2) == before
    assert calls[0] == 2
    ssn.statement().allocate(p1, ssn.nodes["n1"])
    after = _best_scores(ssn, p2)
    assert calls[0] == 3  # only n1 is scored again
    assert after["n2"] == before["n2"] and after["n1"] != before["n1"]


def test_score_memo_not_used_for_undeclared_node_order() -> None:
    ssn = session(_cluster(_pending("p1")), [NODEORDER, BINPACK], verbosity=3)
    calls = [0]

    def custom(task: TaskInfo, node: NodeInfo) -> float:
        calls[0] += 1
        return 1.0

    ssn.add_node_order_fn("binpack", custom)
    p1 = task(ssn, "ns1/p1")
    _best_scores(ssn, p1)
    _best_scores(ssn, p1)
    assert calls[0] == 4


def test_score_failures_are_not_memoised() -> None:
    ssn = session(_cluster(_pending("p1")), [NODEORDER], verbosity=3)
    ssn.node_map.pop("n2")  # nodeorder fails on a node missing from the snapshot
    p1 = task(ssn, "ns1/p1")
    for _ in range(2):
        _best_scores(ssn, p1)
    warnings = [t for t in ssn.log.texts() if "Error in Calculating Priority" in t]
    assert len(warnings) == 2


# -- end to end: memo on (verbosity 3) and off (verbosity 5) decide alike ---------------------


def _mixed_cluster() -> Cluster:
    pods = []
    for j in range(6):
        for i in range(4):
            p = pod("ns1", f"j{j}-t-{i}", f"pg{j}", {"cpu": 1 + j % 2, "memory": "1Gi"})
            if j % 3 == 0:
                p.node_selector = {"zone": "a"}
            pods.append(p)
    pods.append(pod("ns1", "r0", "pg0", {"cpu": 2}, phase="Running", node_name="n0"))
    return Cluster(
        nodes=[
            node(f"n{i}", {"cpu": 4, "memory": "8Gi", "pods": 3}, labels={"zone": "ab"[i % 2]})
            for i in range(8)
        ],
        queues=[queue("q1"), queue("q2", weight=2)],
        pod_groups=[
            pod_group("ns1", f"pg{j}", f"q{1 + j % 2}", min_member=2 + j % 3, phase="Inqueue")
            for j in range(6)
        ],
        pods=pods,
    )


def test_simulation_decides_alike_with_and_without_memos() -> None:
    conf = load_conf(
        {
            "actions": "allocate, backfill",
            "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}]},
                {
                    "plugins": [
                        {"name": n}
                        for n in ("drf", "predicates", "proportion", "nodeorder", "binpack")
                    ]
                },
            ],
        }
    )
    memoised = simulate(conf, _mixed_cluster(), verbosity=3)
    plain = simulate(conf, _mixed_cluster(), verbosity=5)
    assert memoised.binds and len(memoised.binds) < 25  # some jobs do not fit
    assert memoised.binds == plain.binds
    assert memoised.pod_groups == plain.pod_groups
    assert memoised.events == plain.events
    assert [line for line in plain.logs if line.verbosity <= 3] == memoised.logs


def test_node_memo_keeps_the_most_recently_used_keys() -> None:
    memo: NodeMemo[int] = NodeMemo(capacity=2)
    memo.table("a")["n1"] = (0, 1)
    memo.table("b")["n1"] = (0, 2)
    assert memo.table("a") == {"n1": (0, 1)}  # used: "b" is now the oldest
    memo.table("c")["n1"] = (0, 3)  # drops "b"
    assert memo.table("a") == {"n1": (0, 1)}
    assert memo.table("b") == {}  # starts afresh, dropping "c"
    assert memo.table("c") == {}
