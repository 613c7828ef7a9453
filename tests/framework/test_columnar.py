"""The columnar allocate path (vspec/framework/columnar.py) against the per-node path.

The per-node path is the reference: it calls every plugin function node by node, as
Volcano does. Forcing the columnar path on small drawn clusters (its node threshold
set to 0) must change nothing a user can see: binds, pipelines, statuses, pod group
conditions (the fit error messages), every log line; and per task, the same verdict
and FitError statuses on every node and the same float64 score on every feasible node.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import session
from vspec.actions.allocate import predicate
from vspec.api.resource import ZERO
from vspec.api.types import Code, Status, TaskStatus
from vspec.api.unschedule_info import FitError, FitErrors
from vspec.engines import get_engine
from vspec.framework import columnar
from vspec.framework.recorder import Recorder
from vspec.framework.scheduler import simulate
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, clusters, scheduler_confs
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.model.conf import SchedulerOptions, load_conf
from vspec.model.objects import Cluster
from vspec.model.result import LogBlock, LogLine, LogRecords, Severity, SimulationResult
from vspec.timeline.clock import run_timeline
from vspec.util.scheduler_helper import prioritize_nodes

SPACE = ConfSpace(
    actions=("print", "enqueue", "allocate", "backfill"),
    plugins=("priority", "gang", "drf", "predicates", "proportion", "nodeorder", "binpack"),
    require_actions=("allocate",),
    require_plugins=("predicates", "nodeorder", "binpack"),
)
BOUNDS = ClusterBounds(max_nodes=10, max_jobs=6, max_replicas=4)


def _forced() -> Any:
    return mock.patch.object(columnar, "COLUMNAR_MIN_NODES", 0)


def _seen(result: SimulationResult) -> dict[str, object]:
    return {
        "binds": result.binds,
        "pipelined": result.pipelined,
        "tasks": {k: (t.node, t.status) for k, t in result.tasks.items()},
        "pod groups": {k: (p.phase, p.conditions) for k, p in result.pod_groups.items()},
        "logs": [(line.verbosity, line.text) for line in result.logs],
    }


@settings(deadline=None)
@given(
    scheduler_confs(SPACE),
    clusters(BOUNDS),
    st.sampled_from([0, 3]),
    st.integers(1, 2),
    st.sampled_from([0, 30, 60]),
)
def test_columnar_run_is_the_per_node_run(
    raw: dict[str, Any], cluster: Cluster, verbosity: int, cycles: int, sample: int
) -> None:
    """``sample``: the percentage of nodes a predicate pass looks for (0: all of these
    small clusters), so that passes stop short of the last node too."""
    conf = load_conf(raw)
    if sample:
        conf.options = SchedulerOptions(min_nodes_to_find=1, percentage_of_nodes_to_find=sample)
    # A recorder that watches per-node calls keeps the whole run on the per-node path.
    scalar = simulate(conf, cluster, verbosity=verbosity, cycles=cycles, recorder=Recorder())
    with _forced():
        fast = simulate(conf, cluster, verbosity=verbosity, cycles=cycles)
    assert _seen(fast) == _seen(scalar)


@pytest.mark.parametrize("log", [4, 0])  # 0: the log of rows synced starts over each session
@settings(max_examples=30, deadline=None)
@given(case=timeline_specs(SPACE, ClusterBounds(max_nodes=6, max_jobs=5, max_replicas=3)))
def test_columns_kept_between_sessions_give_the_per_node_timeline(
    case: GeneratedTimelineSpec, log: int
) -> None:
    """The cache keeps the columns from session to session, recomputing the rows of the
    nodes that changed (read from a log of the rows synced kept over sessions, or marked
    on every answer when the log starts over): over arrivals, binds and completions,
    the per-node records."""
    from vspec.framework import columns

    with mock.patch.object(columnar, "COLUMNAR_MIN_NODES", 10**9):
        scalar = run_timeline(
            case.conf, case.cluster, case.timeline, seed=case.seed, engine=get_engine()
        )
    with _forced(), mock.patch.object(columns, "CHANGES_KEPT", log):
        fast = run_timeline(
            case.conf, case.cluster, case.timeline, seed=case.seed, engine=get_engine()
        )
    assert fast.sessions == scalar.sessions
    assert fast.pods == scalar.pods and fast.jobs == scalar.jobs and fast.ticks == scalar.ticks
    assert fast.simulation.binds == scalar.simulation.binds


@pytest.mark.parametrize("kept", [8, 0])  # 0: a new list of rows at every node map
@settings(max_examples=30, deadline=None)
@given(case=timeline_specs(SPACE, ClusterBounds(max_nodes=6, max_jobs=5, max_replicas=3)))
def test_companions_compared_where_the_k8s_memo_built_views_again_are_the_node_maps(
    case: GeneratedTimelineSpec, kept: int
) -> None:
    """Carried columns compare only the node-map entries and the nodes of the rows the
    K8s memo built again since their last renewal (``K8sMemo.rebuilt_since``): at every
    session their companions are still the session's node-map entries and their nodes
    the session's nodes, each the very object, each node watched at its row and the
    nodes no longer held watched no more."""
    from vspec.k8s import nodeinfo

    real = columnar.session_columns
    reported = []
    held: list[Any] = []

    def checked(ssn: Any) -> Any:
        cols = real(ssn)
        if cols is not None:
            fresh = [ssn.node_map.get(name) for name in cols.names]
            assert all(map(operator.is_, cols._companions, fresh))
            assert all(map(operator.is_, cols.nodes, ssn.node_list))
            for row, node in enumerate(cols.nodes):
                assert node._sink is cols._dirty and node._sink_row == row
            now = set(map(id, cols.nodes))
            assert all(node._sink is None for node in held if id(node) not in now)
            held[:] = cols.nodes
            reported.append(cols.companions_mark is not None)
        return cols

    with (
        _forced(),
        mock.patch.object(columnar, "session_columns", checked),
        mock.patch.object(nodeinfo, "_REBUILT_KEPT", kept),
    ):
        run_timeline(case.conf, case.cluster, case.timeline, seed=case.seed, engine=get_engine())
    assert len(reported) < 2 or any(reported)  # the report is followed from the second


# Negative too: Volcano's GetInt takes any integer
# (specs/findings/negative-score-weight-panics.yaml).
_WEIGHTS = st.integers(-5, 5)


@st.composite
def _plugins(draw: st.DrawFn) -> list[dict[str, Any]]:
    nodeorder = {
        f"{name}.weight": draw(_WEIGHTS)
        for name in (
            "leastrequested",
            "mostrequested",
            "balancedresource",
            "nodeaffinity",
            "tainttoleration",
            "imagelocality",
        )
    }
    binpack = {"binpack.weight": draw(_WEIGHTS), "binpack.cpu": draw(_WEIGHTS)}
    return [
        {"name": "predicates", "enablePredicate": True},
        {"name": "nodeorder", "enableNodeOrder": True, "arguments": nodeorder},
        {"name": "binpack", "enableNodeOrder": True, "arguments": binpack},
    ]


@pytest.mark.parametrize("few", [0, 1000])  # numpy on every row set; row by row on all
@settings(deadline=None)
@given(cluster=clusters(BOUNDS), plugins=_plugins())
def test_columnar_verdicts_and_scores_are_the_per_node_ones(
    cluster: Cluster, plugins: list[dict[str, Any]], few: int
) -> None:
    from vspec.framework import columns

    with _forced(), mock.patch.object(columns, "FEW_ROWS", few):
        _check_verdicts_and_scores(cluster, plugins)


def _check_verdicts_and_scores(cluster: Cluster, plugins: list[dict[str, Any]]) -> None:
    with _forced():
        ssn = session(cluster, plugins, verbosity=0)
        cols = columnar.session_columns(ssn)
    assert cols is not None
    for job in ssn.jobs.values():
        for task in job.tasks_in(TaskStatus.Pending):
            try:
                ssn.pre_predicate_fn(task)
            except Exception:  # a PreFilter failure: allocate tries no node
                continue
            answers = columnar.allocate_verdicts(
                ssn,
                task,
                cols,
                lambda node, task=task: ssn.predicate_for_allocate_action(task, node),
            )
            if answers is None:
                continue
            verdicts, fits_idle = answers
            feasible = []
            for row, node in enumerate(cols.nodes):
                fe = predicate(ssn, task, node)
                code = int(verdicts.codes[row])
                got = None if code == 0 else verdicts.statuses[code - 1]
                assert got == (None if fe is None else fe.statuses), node.name
                assert fits_idle[row] == task.init_resreq.less_equal(node.idle, ZERO)
                if fe is None:
                    feasible.append(row)
            if len(feasible) < 2:
                continue
            import numpy as np

            rows = np.array(feasible)
            scores = columnar.scores(ssn, task, cols, rows)
            if scores is None:
                continue
            by_node = {
                n.name: s
                for s, ns in prioritize_nodes(ssn, task, [cols.nodes[r] for r in rows]).items()
                for n in ns
            }
            assert [float(s) for s in scores] == [by_node[cols.names[r]] for r in rows]


@settings(deadline=None)
@given(
    cluster=clusters(BOUNDS),
    plugins=_plugins(),
    moves=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99), st.booleans()), max_size=6),
)
def test_row_scores_kept_by_resource_sums_over_placements_are_the_per_node_ones(
    cluster: Cluster, plugins: list[dict[str, Any]], moves: list[tuple[int, int, bool]]
) -> None:
    """Row by row, nodeorder keeps a row's total by the node's resource sums and its
    node-fixed scores for the session: after each drawn placement (allocated where it
    fits Idle, else pipelined), every pending task's score on every node is the per-node
    one (rows of equal sums share a total; a placement moves the sums)."""
    import numpy as np

    from vspec.framework import columns

    with _forced(), mock.patch.object(columns, "FEW_ROWS", 1000):
        ssn = session(cluster, plugins, verbosity=0)
        cols = columnar.session_columns(ssn)
        assert cols is not None
        every = np.arange(cols.size)
        for task in _pending_between_placements(ssn, cols, moves):
            scores = columnar.scores(ssn, task, cols, every)
            if scores is not None:
                by_node = {
                    n.name: s
                    for s, ns in prioritize_nodes(ssn, task, cols.nodes).items()
                    for n in ns
                }
                assert [float(s) for s in scores] == [by_node[n] for n in cols.names]


def _pending_between_placements(
    ssn: Any, cols: Any, moves: list[tuple[int, int, bool]]
) -> Iterator[Any]:
    """Every pending task, then after each drawn placement (a pending task allocated on
    a node where it fits Idle, else pipelined there) every pending task again."""
    stmt = ssn.statement()
    for which, where, bind in [*moves, (0, 0, False)]:
        pending = [t for j in ssn.jobs.values() for t in j.tasks_in(TaskStatus.Pending)]
        yield from pending
        if not pending:
            return
        task, node = pending[which % len(pending)], cols.nodes[where % cols.size]
        if bind and task.init_resreq.less_equal(node.idle, ZERO):
            stmt.allocate(task, node)
        else:
            stmt.pipeline(task, node.name, False)


@settings(deadline=None)
@given(cluster=clusters(BOUNDS), plugins=_plugins(), picks=st.lists(st.randoms(), max_size=4))
def test_scores_of_row_subsets_asked_in_turn_are_the_per_node_ones(
    cluster: Cluster, plugins: list[dict[str, Any]], picks: list[Any]
) -> None:
    """The node-fixed scorers (image locality, preferred node affinity) compute a row when
    first asked and keep it for the session: subsets of rows asked one after another,
    numpy on every set, each score the per-node one."""
    import numpy as np

    from vspec.framework import columns

    with _forced(), mock.patch.object(columns, "FEW_ROWS", 0):
        ssn = session(cluster, plugins, verbosity=0)
        cols = columnar.session_columns(ssn)
        assert cols is not None
        for job in ssn.jobs.values():
            for task in job.tasks_in(TaskStatus.Pending):
                for pick in picks:
                    rows = np.array(
                        sorted(pick.sample(range(cols.size), pick.randint(1, cols.size)))
                    )
                    scores = columnar.scores(ssn, task, cols, rows)
                    if scores is None:
                        continue
                    nodes = [cols.nodes[r] for r in rows]
                    by_node = {
                        n.name: s
                        for s, ns in prioritize_nodes(ssn, task, nodes).items()
                        for n in ns
                    }
                    assert [float(s) for s in scores] == [by_node[cols.names[r]] for r in rows]


@pytest.mark.parametrize("few", [0, 1000])  # numpy on every row set; row by row on all
@pytest.mark.parametrize("keys", [64, 2])  # 2: answers dropped and made again in turn
@settings(deadline=None)
@given(
    cluster=clusters(BOUNDS),
    plugins=_plugins(),
    moves=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99), st.booleans()), max_size=6),
)
def test_verdicts_kept_over_placements_are_the_per_node_ones(
    cluster: Cluster,
    plugins: list[dict[str, Any]],
    moves: list[tuple[int, int, bool]],
    few: int,
    keys: int,
) -> None:
    """The fit's and the plugins' answers and their combination are kept and brought up
    to date on the rows whose node changed (the combination on the rows either wrote
    since): after each drawn placement (allocated where it fits Idle, else pipelined),
    every pending task's verdicts on every node, asked in turn (requests and keys
    interleaved), are the per-node ones."""
    from vspec.framework import columns

    with (
        _forced(),
        mock.patch.object(columns, "FEW_ROWS", few),
        mock.patch.object(columns, "MEMO_KEYS", keys),
    ):
        ssn = session(cluster, plugins, verbosity=0)
        cols = columnar.session_columns(ssn)
        assert cols is not None
        for task in _pending_between_placements(ssn, cols, moves):
            _check_verdicts(ssn, cols, task)


def _check_verdicts(ssn: Any, cols: Any, task: Any) -> None:
    try:
        ssn.pre_predicate_fn(task)
    except Exception:  # a PreFilter failure: allocate tries no node
        return
    answers = columnar.allocate_verdicts(
        ssn, task, cols, lambda node: ssn.predicate_for_allocate_action(task, node)
    )
    if answers is None:
        return
    verdicts, fits_idle = answers
    for row, node in enumerate(cols.nodes):
        fe = predicate(ssn, task, node)
        code = int(verdicts.at(row))
        got = None if code == 0 else verdicts.statuses[code - 1]
        assert got == (None if fe is None else fe.statuses), node.name
        assert fits_idle[row] == task.init_resreq.less_equal(node.idle, ZERO)


def test_combined_verdicts_follow_the_answers_they_were_combined_from() -> None:
    """A combination is brought up to date on the rows its answers logged since; other
    plugins' answers (their key dropped and made again: codes numbered anew) or a log
    started over (every row written) combine every row again."""
    from vspec.api.node_info import NodeInfo
    from vspec.api.resource import Resource
    from vspec.framework.columns import NodeColumns

    cols = NodeColumns([NodeInfo(None, f"n{i}") for i in range(4)])
    fit, plugins = columnar._FitAnswers(4, Resource(1000, 0)), columnar._PluginAnswers(4)
    plugins.codes[:] = [0, 1, 0, 1]
    plugins.statuses.append([Status(Code.Unschedulable, "first")])
    fit.codes[:] = [0, 0, 2, 1]

    def combined(plugins: Any) -> list[Any]:
        verdicts = columnar._combined(cols, fit, plugins)
        return [verdicts.statuses[c - 1] if c else None for c in verdicts.at(range(4))]

    short = fit.statuses
    assert combined(plugins) == [None, plugins.statuses[0], short[1], short[0]]
    fit.codes[1] = 1  # unlogged: not combined again
    assert combined(plugins) == [None, plugins.statuses[0], short[1], short[0]]
    fit.wrote([1], 4)
    assert combined(plugins) == [None, short[0], short[1], short[0]]
    fit.codes[:] = 0
    fit.wrote(range(4), 4)  # every row: a new log
    assert combined(plugins) == [None, plugins.statuses[0], None, plugins.statuses[0]]
    other = columnar._PluginAnswers(4)
    other.codes[:] = [1, 0, 0, 0]
    other.statuses.append([Status(Code.Unschedulable, "other")])
    assert combined(other) == [other.statuses[0], None, None, None]


def test_columnar_choice_keeps_select_best_nodes_floor_of_minus_one() -> None:
    """Every feasible node at -1 or less: no best node (Volcano's nil, its panic); one
    above -1, however far below 0: that node."""
    from pathlib import Path

    from vspec.errors import EngineError
    from vspec.harness.loader import load_file

    finding = (
        Path(__file__).resolve().parents[2] / "specs/findings/negative-score-weight-panics.yaml"
    )
    below, above, _ = load_file(finding).specs
    with _forced(), pytest.raises(EngineError, match="no best node for task ns/j-0"):
        simulate(below.scheduler, below.cluster)
    with _forced():
        binds = simulate(above.scheduler, above.cluster).binds
    assert [(b.task, b.node) for b in binds] == [("ns/j-0", "n1")]


def test_coded_fit_errors_read_as_the_per_node_ones() -> None:
    unresolvable = [Status(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint")]
    short = [Status(Code.Unschedulable, "Insufficient cpu")]
    names = ["n0", "n1", "n2", "n3"]

    class Task:
        namespace, name = "ns", "p"

    coded = FitErrors.of_codes(Task(), names, [3, 0, 2], [1, 2, 1], [unresolvable, short])
    plain = FitErrors()
    for node, statuses in (("n3", unresolvable), ("n0", short), ("n2", unresolvable)):
        plain.set_node_error(node, FitError("ns", "p", node, statuses))
    assert coded.unschedulable_and_unresolvable_nodes() == {"n2", "n3"}
    assert (
        str(coded)
        == str(plain)
        == ("0/3 nodes are unavailable: 1 Insufficient cpu, 2 node(s) had untolerated taint.")
    )
    assert list(coded.nodes) == ["n3", "n0", "n2"]
    assert str(coded.nodes["n0"]) == "task ns/p on node n0 fit failed: Insufficient cpu"


def test_log_records_read_blocks_as_lines() -> None:
    log = LogRecords([LogLine(3, Severity.INFO, "a")])
    assert [line.text for line in log] == ["a"]  # lines alone: the records themselves
    log.append_block(LogBlock(3, Severity.INFO, "Predicates failed: ", lambda i: f"n{i}", 3))
    log.append(LogLine(1, Severity.INFO, "Job ns/j is ready"))
    log.append_block(LogBlock(3, Severity.INFO, "x", str, 0))  # an empty block adds nothing
    texts = ["a", "Predicates failed: n0", "Predicates failed: n1", "Predicates failed: n2"]
    texts.append("Job ns/j is ready")
    assert len(log) == 5
    assert [line.text for line in log] == texts
    assert [log[i].text for i in range(-5, 5)] == texts + texts
    assert [line.text for line in log[-2:]] == texts[-2:]
    assert [line.text for line in log.starting_with("Job ")] == ["Job ns/j is ready"]
    assert [line.text for line in log.starting_with("Predicates failed: n1")] == [texts[2]]
    assert log == [LogLine(3, Severity.INFO, t) if i < 4 else log[4] for i, t in enumerate(texts)]


@given(st.lists(st.one_of(st.none(), st.integers(0, 3)), max_size=8))
def test_log_records_iterate_as_they_index(records: list[int | None]) -> None:
    """Lines and blocks in any order (None: a line; n: a block of n lines): walking
    the log (runs between blocks) gives what indexing it (a search over the blocks'
    starts) gives, line by line."""
    log = LogRecords()
    for k, count in enumerate(records):
        if count is None:
            log.append(LogLine(3, Severity.INFO, f"line {k}"))
        else:
            log.append_block(LogBlock(3, Severity.INFO, f"block {k}: ", str, count))
    walked = [line.text for line in log]
    assert walked == [log[i].text for i in range(len(log))]
    assert len(walked) == sum(1 if count is None else count for count in records)


@settings(deadline=None)
@given(
    st.lists(
        st.tuples(*[st.sampled_from([0.0, 0.05, 0.1, 0.15, 999.95, 1000.0, 1e18, 2.0**60])] * 3),
        min_size=1,
        max_size=6,
    ),
    st.tuples(*[st.sampled_from([0.0, 0.1, 0.2, 1000.0, 1000.05, 1000.1, 1e18])] * 3),
)
def test_columnar_fit_is_less_equal_at_the_tolerance(
    idles: list[tuple[float, float, float]], req: tuple[float, float, float]
) -> None:
    from vspec.api.node_info import NodeInfo
    from vspec.api.resource import ZERO, Resource
    from vspec.framework.columns import NodeColumns

    nodes = []
    for i, (cpu, memory, gpu) in enumerate(idles):
        node = NodeInfo(None, f"n{i}")
        node.idle = Resource(cpu, memory, {"nvidia.com/gpu": gpu} if gpu else {})
        nodes.append(node)
    request = Resource(req[0], req[1], {"nvidia.com/gpu": req[2]})
    codes = NodeColumns(nodes).fit(request, NodeColumns(nodes).idle)
    for node, code in zip(nodes, codes, strict=True):
        short = request.less_equal_with_resources_name(node.idle, ZERO)
        assert (code == 0) == request.less_equal(node.idle, ZERO) == (not short)
        assert code == 0 or ["cpu", "memory", "nvidia.com/gpu"][code - 1] == short[0]


def test_memo_recomputes_only_the_rows_whose_node_changed() -> None:
    import numpy as np

    from vspec.api.node_info import NodeInfo
    from vspec.framework.columns import NodeColumns

    nodes = [NodeInfo(None, f"n{i}") for i in range(4)]
    cols = NodeColumns(nodes)
    asked: list[list[int]] = []

    def compute(rows: Any) -> Any:
        asked.append([int(r) for r in rows])
        return np.array([float(nodes[r].version) for r in rows])

    every = np.arange(4)
    assert list(cols.memo("k", every, compute)) == [0.0] * 4
    assert list(cols.memo("k", np.array([3, 1]), compute)) == [0.0, 0.0]
    nodes[2]._changed()
    assert list(cols.memo("k", every, compute)) == [0.0, 0.0, 1.0, 0.0]
    assert list(cols.memo("other", np.array([2]), compute)) == [1.0]
    assert asked == [[0, 1, 2, 3], [2], [2]]
    nodes[0]._changed()
    assert cols.memo("k", every, lambda rows: None) is None  # declined: nothing kept
    assert list(cols.memo("k", np.array([1, 0]), compute)) == [0.0, 1.0]
    assert asked[-1] == [0]


def test_kept_answers_name_the_rows_whose_node_changed_since_settled() -> None:
    from vspec.api.node_info import NodeInfo
    from vspec.framework import columns

    nodes = [NodeInfo(None, f"n{i}") for i in range(4)]
    cols = columns.NodeColumns(nodes)
    made: list[str] = []

    def make() -> list[str]:
        made.append("k")
        return made

    answers, stale = cols.kept("k", make)
    assert answers is made and list(stale) == [0, 1, 2, 3]
    nodes[2]._changed()
    assert list(cols.kept("k", make)[1]) == [0, 1, 2, 3]  # not settled yet
    cols.settle("k")
    assert list(cols.kept("k", make)[1]) == []
    nodes[3]._changed()
    nodes[1]._changed()
    nodes[3]._changed()
    assert list(cols.kept("k", make)[1]) == [1, 3]
    cols.settle("k")
    nodes[0]._changed()
    assert list(cols.kept("k", make)[1]) == [0]
    assert made == ["k"]  # made once, kept while used
    for key in range(columns.MEMO_KEYS):  # the least recently used key is dropped
        cols.kept(key, list)
    assert list(cols.kept("k", make)[1]) == [0, 1, 2, 3] and made == ["k", "k"]


def test_memos_and_kept_answers_outlive_renew_but_for_the_rows_that_changed() -> None:
    """The next session asks a carried key again only for the nodes that changed: those
    reported in the last session, and those the next session's snapshot cloned anew."""
    import numpy as np

    from vspec.api.node_info import NodeInfo
    from vspec.framework.columns import NodeColumns

    nodes = [NodeInfo(None, f"n{i}") for i in range(6)]
    cols = NodeColumns(nodes)
    asked: list[list[int]] = []

    def compute(rows: Any) -> Any:
        asked.append([int(r) for r in rows])
        return np.zeros(len(rows))

    every = np.arange(6)
    cols.memo("k", every, compute)
    cols.kept("kept", list)
    cols.settle("kept")
    nodes[1]._changed()  # in the last session, after both were current
    cols.idle("cpu")  # a read syncs the reported rows
    nodes[4]._changed()  # reported, not yet synced
    fresh = [*nodes]
    fresh[2] = NodeInfo(None, "n2")  # cloned anew by the next snapshot
    assert cols.renew(fresh, [None] * 6)
    cols.memo("k", every, compute)
    assert asked == [[0, 1, 2, 3, 4, 5], [1, 2, 4]]
    assert list(cols.kept("kept", list)[1]) == [1, 2, 4]
    cols.settle("kept")
    assert list(cols.kept("kept", list)[1]) == []


def test_node_local_keys_hold_for_one_session_unless_declared_lasting() -> None:
    """Answers kept under a node-local key serve later sessions only when every function
    of the chain declares its keys lasting: a user's key may mean something else in the
    next session (its plugin's state, the clock)."""
    plugins = [
        {"name": "predicates", "enablePredicate": True},
        {"name": "nodeorder", "enableNodeOrder": True},
    ]
    first = session(Cluster(), plugins, verbosity=0)  # nodes: none needed to ask
    second = session(Cluster(), plugins, verbosity=0)
    for kind in ("predicate", "node_order"):
        assert first.node_local_scope(kind) is None  # the built-ins declare it
    for ssn in (first, second):  # predicates' slot taken by a function not declared lasting
        ssn.add_predicate_fn("predicates", lambda task, node: None, node_local=lambda task: "same")
    assert first.node_local_scope("predicate") is not None
    assert first.node_local_scope("predicate") != second.node_local_scope("predicate")
    assert first.node_local_scope("node_order") is None  # only the predicate chain has it


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(*[st.sampled_from([0.0, 0.1, 1000.0, 1000.05, 1e18, -500.0])] * 4),
        min_size=1,
        max_size=5,
    ),
    st.lists(st.integers(min_value=0, max_value=4), max_size=6),
)
def test_resource_columns_read_each_nodes_vectors(
    rows: list[tuple[float, float, float, float]], changed: list[int]
) -> None:
    """Each resource column (cpu and memory by their own readers, a scalar by ``get``)
    holds every node's value of its vector, FutureIdle included, after task changes."""
    from vspec.api.node_info import NodeInfo
    from vspec.api.resource import Resource
    from vspec.framework.columns import NodeColumns

    def vector(cpu: float, memory: float, gpu: float) -> Resource:
        return Resource(cpu, memory, {"nvidia.com/gpu": gpu} if gpu else {})

    nodes = []
    for i, (cpu, memory, gpu, releasing) in enumerate(rows):
        node = NodeInfo(None, f"n{i}")
        node.idle, node.used = vector(cpu, memory, gpu), vector(memory, cpu, releasing)
        node.allocatable = vector(cpu + 1, memory + 2, gpu)
        node.releasing = vector(releasing, releasing, releasing)
        nodes.append(node)
    cols = NodeColumns(nodes)
    reads = (
        (cols.idle, lambda n: n.idle),
        (cols.used, lambda n: n.used),
        (cols.allocatable, lambda n: n.allocatable),
        (cols.future_idle, lambda n: n.future_idle()),
    )
    for step in [None, *changed]:
        if step is not None and step < len(nodes):
            node = nodes[step]
            node.idle = vector(node.idle.memory, node.idle.milli_cpu + 1, step)
            node.releasing = vector(step, 0.0, 0.0)
            node._changed()
        for column, of in reads:
            for name in ("cpu", "memory", "nvidia.com/gpu"):
                assert list(column(name)) == [of(n).get(name) for n in nodes], name
