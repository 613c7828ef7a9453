"""Node sampling, scoring and victim validation (``util/scheduler_helper.go``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.resource import ZERO
from vspec.api.task_info import TaskInfo
from vspec.errors import GoError
from vspec.golang import go_map
from vspec.model.conf import SchedulerOptions

if TYPE_CHECKING:
    from vspec.framework.session import Session

BASELINE_PERCENTAGE_OF_NODES_TO_FIND = 50


def num_feasible_nodes_to_find(num_all_nodes: int, opts: SchedulerOptions) -> int:
    """``CalculateNumOfFeasibleNodesToFind``: sample big clusters, as kube-scheduler does."""
    if num_all_nodes <= opts.min_nodes_to_find or opts.percentage_of_nodes_to_find >= 100:
        return num_all_nodes
    percentage = opts.percentage_of_nodes_to_find
    if percentage <= 0:
        percentage = BASELINE_PERCENTAGE_OF_NODES_TO_FIND - int(num_all_nodes / 125)
        percentage = max(percentage, opts.min_percentage_of_nodes_to_find)
    return max(int(num_all_nodes * percentage / 100), opts.min_nodes_to_find)


def prioritize_nodes(
    ssn: Session, task: TaskInfo, nodes: list[NodeInfo]
) -> dict[float, list[NodeInfo]]:
    """``PrioritizeNodes``: order score + batch score per node, grouped by score.

    A node whose NodeOrder call fails gets no order score; a failing batch scorer
    empties the whole result (as in Volcano). No plugin registers NodeMap/NodeReduce
    in v1.11, so that part contributes nothing. Order scores of node-local NodeOrder
    functions are memoised for the session (``ssn.score_memo``).
    """
    order_fns = ssn.node_order_fns()
    key = ssn.node_local_key("node_order", task)
    memo = None if key is None else ssn.score_memo.table(key)
    order_scores: list[float] = []  # per node (0 where a NodeOrder call failed)
    for node in nodes:
        if memo is not None:
            hit = memo.get(node.name)
            if hit is not None and hit[0] == node.version:
                order_scores.append(hit[1])
                continue
        try:
            score = 0.0
            for fn in order_fns:
                score += fn(task, node)
        except GoError as exc:
            ssn.log.error(f"Error in Calculating Priority for the node:{exc}")
            order_scores.append(0.0)
            continue
        order_scores.append(score)
        if memo is not None:
            memo[node.name] = (node.version, score)
    scores: dict[float, list[NodeInfo]] = {}
    try:
        batch = ssn.batch_node_order_fn(task, nodes)
    except GoError as exc:
        ssn.log.error(f"Error in Calculating batch Priority for the node, err {exc}")
        ssn.recorder.scored(ssn, task, scores)
        return scores
    verbose = ssn.log.enabled(5)
    node_scores: dict[str, float] = {}
    get = batch.get
    for node, order in zip(nodes, order_scores, strict=True):
        score = order + get(node.name, 0.0)
        group = scores.get(score)
        if group is None:
            scores[score] = [node]
        else:
            group.append(node)
        if verbose:
            node_scores[node.name] = score
    if verbose:
        ssn.log.v(
            5,
            f"Prioritize nodeScoreMap for task<{task.namespace}/{task.name}> is: "
            f"{go_map(node_scores)}",
        )
    ssn.recorder.scored(ssn, task, scores)
    return scores


def sort_nodes(scores: dict[float, list[NodeInfo]], first: str | None = None) -> list[NodeInfo]:
    """Descending score; within a score, the order the nodes were scored in. Volcano's
    order there is its predicate workers' finishing order, which varies from run to run
    (``PredicateNodes`` runs 16 goroutines): a replay of another run (vspec diff) puts
    the node that run took, ``first``, ahead of its equals."""
    ordered = []
    for score in sorted(scores, reverse=True):
        nodes = scores[score]
        if first is not None and any(node.name == first for node in nodes):
            nodes = sorted(nodes, key=lambda node: node.name != first)
        ordered += nodes
    return ordered


def preferred_node(ssn: Session, task: TaskInfo) -> str | None:
    """The node a replayed run took for ``task`` in this session (``ssn.prefer``)."""
    return None if ssn.prefer is None else ssn.prefer(ssn.log.cycle, task.key)


def select_best_node(
    ssn: Session, task: TaskInfo, scores: dict[float, list[NodeInfo]]
) -> NodeInfo | None:
    """The best score above -1; ties broken at random (seeded here)."""
    best: list[NodeInfo] = []
    max_score = -1.0
    for score, nodes in scores.items():
        if score > max_score:
            max_score = score
            best = nodes
    if not best:
        return None
    if len(best) == 1:
        return best[0]
    return draw_tied(ssn, task, best)


def draw_tied(ssn: Session, task: TaskInfo, tied: Sequence[NodeInfo]) -> NodeInfo:
    """``SelectBestNode``'s random draw among the nodes tied for the best score. A
    session replaying another run's draws (``ssn.prefer``: vspec diff replays
    Volcano's) takes the node that run took when it is among these, after the same
    draw, so that the draws after it stay as they were."""
    drawn = tied[ssn.rng.randrange(len(tied))]
    wanted = preferred_node(ssn, task)
    return next((node for node in tied if node.name == wanted), drawn)


def job_valid_for(ssn: Session, job: JobInfo, action: str) -> bool:
    """``JobValid`` as the actions check it, logging Volcano's V(4) skip line."""
    result = ssn.job_valid(job)
    if result is None or result.passed:
        return True
    ssn.log.v(
        4,
        f"Job <{job.namespace}/{job.name}> Queue <{job.queue}> skip {action}, "
        f"reason: {result.reason}, message {result.message}",
    )
    return False


def validate_victims(preemptor: TaskInfo, node: NodeInfo, victims: list[TaskInfo]) -> str | None:
    """The error ``ValidateVictims`` returns, or None when the victims make room."""
    future_idle = node.future_idle()
    for victim in victims:
        future_idle.add(victim.resreq)
    if not preemptor.init_resreq.less_equal(future_idle, ZERO):
        return (
            f"not enough resources: requested <{preemptor.init_resreq}>, "
            f"but future idle <{future_idle}>"
        )
    return None
