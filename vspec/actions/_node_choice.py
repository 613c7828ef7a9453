"""Choosing one node for a task, as allocate and backfill do: the
``predicateErrorCacheEnable`` base those actions (and preempt) share, and the pick of
the best-scored feasible node.

In Volcano each action is a package of its own and repeats these lines; here they live
once, below the actions, so that no action imports another. Not an action: the leading
underscore keeps the registry from importing it as one. Imports the api, the framework
and the scheduler helpers (:mod:`vspec.util`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.framework import columnar
from vspec.framework.arguments import Arguments
from vspec.framework.interface import Action, ArgumentSpec, BoolArgument
from vspec.framework.session import Session
from vspec.util.scheduler_helper import draw_tied, prioritize_nodes, select_best_node

if TYPE_CHECKING:
    from vspec.framework.columns import Column, NodeColumns

PREDICATE_ERROR_CACHE_KEY = "predicateErrorCacheEnable"
PREDICATE_ERROR_CACHE = BoolArgument(
    PREDICATE_ERROR_CACHE_KEY, True, "reuse a task role's node errors within a job turn"
)


class ErrorCacheAction(Action):
    """An action that reads ``predicateErrorCacheEnable`` (allocate, backfill, preempt).

    Volcano's actions are process-wide singletons: a value once read persists across
    sessions, and a configuration without the key keeps it.
    """

    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (PREDICATE_ERROR_CACHE,)

    def __init__(self) -> None:
        self.enable_predicate_error_cache = True

    def read_error_cache_flag(self, ssn: Session) -> None:
        raw = next((c.arguments for c in ssn.configurations if c.name == self.name), {})
        self.enable_predicate_error_cache = PREDICATE_ERROR_CACHE.read(
            Arguments(raw, ssn.log), self.enable_predicate_error_cache
        )


def choose_node(ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> NodeInfo | None:
    """One node: take it; several: score them, BestNode, then SelectBestNode."""
    if len(nodes) == 1:
        ssn.recorder.chose(ssn, task, nodes[0])
        return nodes[0]
    scores = prioritize_nodes(ssn, task, nodes)
    best = ssn.best_node_fn(task, scores)
    if best is None:
        best = select_best_node(ssn, task, scores)
    ssn.recorder.chose(ssn, task, best)
    return best


def choose_row(ssn: Session, task: TaskInfo, cols: NodeColumns, rows: Column) -> NodeInfo | None:
    """:func:`choose_node` for the nodes at ``rows``, scored all at once when every scorer
    is columnar; the best score above -1, ties broken by the same seeded draw."""
    nodes = cols.nodes
    if len(rows) == 1:
        best: NodeInfo | None = nodes[int(rows[0])]
    else:
        scores = columnar.scores(ssn, task, cols, rows)
        top = float("nan") if scores is None else float(scores.max())
        if scores is None or ssn.best_node_fns_registered() or top != top:
            # not all columnar, a BestNode function, or a NaN score: the dict keys decide
            return choose_node(ssn, task, [nodes[r] for r in rows])
        best = _best_scored(ssn, task, nodes, rows, scores, top)
    ssn.recorder.chose(ssn, task, best)
    return best


def _best_scored(
    ssn: Session, task: TaskInfo, nodes: list[NodeInfo], rows: Column, scores: Column, top: float
) -> NodeInfo | None:
    """``SelectBestNode`` over scores in node order (``top`` the highest, not NaN): the
    top score above -1, ties broken by the same seeded draw over the tied nodes in
    scoring order."""
    if not top > -1.0:
        return None
    tied = rows[scores == top]
    if len(tied) == 1:
        return nodes[int(tied[0])]
    if ssn.prefer is not None:
        return draw_tied(ssn, task, [nodes[int(row)] for row in tied])
    return nodes[int(tied[ssn.rng.randrange(len(tied))])]
