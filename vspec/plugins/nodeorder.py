"""nodeorder: Kubernetes score plugins as Volcano weighs them (``plugins/nodeorder/nodeorder.go``).

NodeOrder scores one node at a time with no PreScore and no normalisation (so the node
affinity score is the raw sum of matching preferred weights). BatchNodeOrder scores the
candidate list with InterPodAffinity, TaintToleration and PodTopologySpread, each
normalised over that list; a scorer whose PreScore says "Skip" adds 0, so without
affinities, taints or spread constraints every node gets 100 x the taint weight.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.framework.arguments import Arguments
from vspec.framework.interface import ArgumentSpec, IntArgument, Plugin
from vspec.framework.registry import register_plugin
from vspec.golang import go_map
from vspec.k8s.filters import PREFER_NO_SCHEDULE
from vspec.k8s.labels import PreferredSchedulingTerms
from vspec.k8s.nodeinfo import K8sNodeInfo, Snapshot
from vspec.k8s.podinfo import CPU, MEMORY, PodInfo
from vspec.k8s.scores import (
    GPU,
    MAX_NODE_SCORE,
    ScoreError,
    balanced_allocation,
    default_normalize_score,
    image_locality,
    inter_pod_affinity_pre_score,
    inter_pod_affinity_score,
    intolerable_prefer_no_schedule_taints,
    least_allocated,
    min_max_normalize,
    most_allocated,
    pod_topology_spread_pre_score,
    prefer_no_schedule_tolerations,
)
from vspec.model.corev1 import Toleration

if TYPE_CHECKING:
    from vspec.framework.columns import Column, NodeColumns
    from vspec.framework.session import Session

NODE_AFFINITY_WEIGHT = "nodeaffinity.weight"
NODE_AFFINITY_WEIGHT_ARG = IntArgument(
    NODE_AFFINITY_WEIGHT, 2, "raw sum of matching preferred weights"
)
POD_AFFINITY_WEIGHT = "podaffinity.weight"
POD_AFFINITY_WEIGHT_ARG = IntArgument(POD_AFFINITY_WEIGHT, 2, "preferred inter-pod (anti-)affinity")
LEAST_REQUESTED_WEIGHT = "leastrequested.weight"
LEAST_REQUESTED_WEIGHT_ARG = IntArgument(LEAST_REQUESTED_WEIGHT, 1, "LeastAllocated (cpu, memory)")
BALANCED_RESOURCE_WEIGHT = "balancedresource.weight"
BALANCED_RESOURCE_WEIGHT_ARG = IntArgument(
    BALANCED_RESOURCE_WEIGHT, 1, "BalancedAllocation (cpu, memory, nvidia.com/gpu)"
)
MOST_REQUESTED_WEIGHT = "mostrequested.weight"
MOST_REQUESTED_WEIGHT_ARG = IntArgument(MOST_REQUESTED_WEIGHT, 0, "MostAllocated (cpu, memory)")
TAINT_TOLERATION_WEIGHT = "tainttoleration.weight"
TAINT_TOLERATION_WEIGHT_ARG = IntArgument(
    TAINT_TOLERATION_WEIGHT, 3, "untolerated PreferNoSchedule taints"
)
IMAGE_LOCALITY_WEIGHT = "imagelocality.weight"
IMAGE_LOCALITY_WEIGHT_ARG = IntArgument(IMAGE_LOCALITY_WEIGHT, 1, "images already on the node")
POD_TOPOLOGY_SPREAD_WEIGHT = "podtopologyspread.weight"
POD_TOPOLOGY_SPREAD_WEIGHT_ARG = IntArgument(
    POD_TOPOLOGY_SPREAD_WEIGHT, 2, "ScheduleAnyway spread constraints"
)


Scorer = Callable[["ScoreFacts", K8sNodeInfo], int]


@dataclass
class PriorityWeight:
    """``priorityWeight``: each scorer's weight, from the plugin's arguments."""

    least_requested: int = LEAST_REQUESTED_WEIGHT_ARG.value
    most_requested: int = MOST_REQUESTED_WEIGHT_ARG.value
    node_affinity: int = NODE_AFFINITY_WEIGHT_ARG.value
    pod_affinity: int = POD_AFFINITY_WEIGHT_ARG.value
    balanced_resource: int = BALANCED_RESOURCE_WEIGHT_ARG.value
    taint_toleration: int = TAINT_TOLERATION_WEIGHT_ARG.value
    image_locality: int = IMAGE_LOCALITY_WEIGHT_ARG.value
    pod_topology_spread: int = POD_TOPOLOGY_SPREAD_WEIGHT_ARG.value

    @classmethod
    def from_arguments(cls, args: Arguments) -> PriorityWeight:
        """``calculateWeight``: integers only (Go's GetInt)."""
        w = cls()
        w.node_affinity = NODE_AFFINITY_WEIGHT_ARG.read(args)
        w.pod_affinity = POD_AFFINITY_WEIGHT_ARG.read(args)
        w.least_requested = LEAST_REQUESTED_WEIGHT_ARG.read(args)
        w.most_requested = MOST_REQUESTED_WEIGHT_ARG.read(args)
        w.balanced_resource = BALANCED_RESOURCE_WEIGHT_ARG.read(args)
        w.taint_toleration = TAINT_TOLERATION_WEIGHT_ARG.read(args)
        w.image_locality = IMAGE_LOCALITY_WEIGHT_ARG.read(args)
        w.pod_topology_spread = POD_TOPOLOGY_SPREAD_WEIGHT_ARG.read(args)
        return w


class ScoreFacts:
    """What the scorers need from one task, derived once per session (its PodInfo is
    the cache's, derived once while the pod lives, shared with other plugins)."""

    __slots__ = (
        "images",
        "num_containers",
        "pod",
        "preferred_node_affinity",
        "score_key",
        "tolerations",
    )

    def __init__(
        self, task: TaskInfo, pod_info: PodInfo, score_keys: dict[Hashable, Hashable]
    ) -> None:
        pod = task.pod
        self.pod = pod_info
        self.images, self.num_containers = pod_info.images, pod_info.num_containers
        na = pod.affinity.node_affinity if pod.affinity else None
        preferred = na.preferred if na else ()
        self.preferred_node_affinity = PreferredSchedulingTerms(preferred)
        self.tolerations: list[Toleration] = prefer_no_schedule_tolerations(pod.tolerations)
        # Everything the per-node scorers read from the pod: pods alike share one key.
        key = (
            self.pod.non0_cpu,
            self.pod.non0_mem,
            tuple(sorted(self.pod.requested.items())),
            self.images,
            preferred,
        )
        self.score_key = score_keys.setdefault(key, key)


def _least(f: ScoreFacts, n: K8sNodeInfo) -> int:
    return least_allocated(f.pod, n)


def _most(f: ScoreFacts, n: K8sNodeInfo) -> int:
    return most_allocated(f.pod, n)


def _balanced(f: ScoreFacts, n: K8sNodeInfo) -> int:
    return balanced_allocation(f.pod, n)


def _node_affinity(f: ScoreFacts, n: K8sNodeInfo) -> int:
    """The raw sum of matching preferred weights (Volcano calls no NormalizeScore)."""
    if f.preferred_node_affinity.error is not None:
        raise ScoreError(f.preferred_node_affinity.error)
    return f.preferred_node_affinity.score(n.node)


# The scorers that read only a node's resource sums (_resource_sums), the pod's
# requests aside: balanced allocation reads the GPU's too, but only for a pod that
# requests one, whose task the row path declines (NodeOrderPlugin._declines).
_READ_SUMS = frozenset(("Least Request", "Most Request", "Balanced Request"))


def _resource_sums(n: K8sNodeInfo) -> tuple[int, ...]:
    """All that :func:`_least`, :func:`_most` and :func:`_balanced` read of a node
    (``least_allocated``, ``most_allocated`` and ``balanced_allocation`` of
    vspec/k8s/scores.py, for a pod without a GPU request)."""
    alloc, used = n.allocatable, n.requested
    return (
        alloc.get(CPU, 0),
        alloc.get(MEMORY, 0),
        n.non0_cpu,
        n.non0_mem,
        used.get(CPU, 0),
        used.get(MEMORY, 0),
    )


def _k8s_value(
    node_map: dict[str, K8sNodeInfo], attribute: str, entry: str | None
) -> Callable[[NodeInfo], float]:
    """A node's row of a Kubernetes sum column: its view's ``attribute`` (its ``entry``
    when a dict, 0 when absent), 0 for a node the map lacks. One function per row: a
    column computes its rows again at every task change on them."""
    if entry is None:

        def value(node: NodeInfo) -> float:
            k8s_node = node_map.get(node.name)
            return 0 if k8s_node is None else getattr(k8s_node, attribute)

        return value

    def value_of_entry(node: NodeInfo) -> float:
        k8s_node = node_map.get(node.name)
        return 0 if k8s_node is None else getattr(k8s_node, attribute).get(entry, 0)

    return value_of_entry


class _RowPlan:
    """One score key's per-node scorers for the row path, in order: (weight, scorer,
    its per-row scores when fixed while the Nodes stand, else None); and, when the others
    read only the node's resource sums, the totals kept by those sums and the fixed
    scores (the same inputs give the same float64 sum). A session's nodes have few
    distinct sums (a placement, its commit and the next session's clone each mark a
    row changed, the first alone moving the sums), so most rows asked hit."""

    __slots__ = ("steps", "totals")

    def __init__(
        self,
        steps: list[tuple[float, Scorer, list[int | None] | None]],
        totals: dict[tuple[int, ...], float] | None,
    ) -> None:
        self.steps, self.totals = steps, totals


# Row plans kept over sessions (_RowPlans) up to this many score keys, and node-fixed
# score lists up to this many (label, pod key)s: then both start over.
_PLANS_KEPT = 1024
_FIXED_KEPT = 64


class _RowPlans:
    """The row path's plans per score key and the node-fixed scores per row, kept from
    session to session while the node map holds the same Node objects
    (``K8sMemo.node_derived``) and the same node columns: a fixed score reads only the
    pod's facts (in the key), the Node (labels, images), the image summaries of all the
    Nodes and their count, which stand as long; and a plan's totals are a function of
    the resource sums and the fixed scores. Per session they cost a pass over every
    row asked again (image locality, node affinity): most of the rows a session asks
    were asked by an earlier one."""

    __slots__ = ("cols", "fixed", "plans")

    def __init__(self) -> None:
        self.cols: NodeColumns | None = None
        self.fixed: dict[tuple[str, Hashable], list[int | None]] = {}
        self.plans: dict[Hashable, _RowPlan | None] = {}

    def of(self, cols: NodeColumns) -> _RowPlans:
        """These, started over unless they were made for ``cols``."""
        if self.cols is not cols:
            self.cols = cols
            self.fixed, self.plans = {}, {}
        return self

    def make_room(self) -> None:
        """Start over when a new plan would make too many (kept over a day's sessions)."""
        if len(self.plans) >= _PLANS_KEPT or len(self.fixed) >= _FIXED_KEPT:
            self.fixed.clear()
            self.plans.clear()


def _row_total(
    steps: list[tuple[float, Scorer, list[int | None] | None]],
    facts: ScoreFacts,
    node: K8sNodeInfo,
    fixed_scores: list[int],
) -> float:
    """The weighted sum of the scorers in order, the fixed ones' scores given in order."""
    total = 0.0
    fixed_at = 0
    for weight, scorer, fixed in steps:
        if fixed is None:
            score = scorer(facts, node)
        else:
            score = fixed_scores[fixed_at]
            fixed_at += 1
        total = total + float(score) * weight
    return total


def _columns_cpu_memory(
    pod: PodInfo, k8s: dict[str, Column], rows: Column, weight: int, least: bool
) -> Column:
    """``_cpu_memory_score`` per node (Python's floor division on non-negative ints)."""
    import numpy as np

    total = np.zeros(len(rows), dtype=np.int64)
    weight_sum = np.zeros(len(rows), dtype=np.int64)
    for alloc, non0, request in (
        (k8s["alloc_cpu"][rows], k8s["non0_cpu"][rows], pod.non0_cpu),
        (k8s["alloc_mem"][rows], k8s["non0_mem"][rows], pod.non0_mem),
    ):
        has = alloc != 0
        safe = np.where(has, alloc, 1)
        requested = non0 + request
        if least:
            part = np.where(requested > alloc, 0, (alloc - requested) * MAX_NODE_SCORE // safe)
        else:
            part = np.minimum(requested, alloc) * MAX_NODE_SCORE // safe
        total = total + np.where(has, part * weight, 0)
        weight_sum = weight_sum + np.where(has, weight, 0)
    result: Column = np.where(weight_sum != 0, total // np.where(weight_sum != 0, weight_sum, 1), 0)
    return result


def _columns_balanced(pod: PodInfo, k8s: dict[str, Column], rows: Column) -> Column:
    """``balanced_allocation`` per node without the GPU: the cpu and memory fractions
    (capped at 1) of the nodes that have each, std = |f0 - f1| / 2 with both, else 0."""
    import numpy as np

    fractions = []
    for alloc, used, request in (
        (k8s["alloc_cpu"][rows], k8s["used_cpu"][rows], pod.requested.get(CPU, 0)),
        (k8s["alloc_mem"][rows], k8s["used_mem"][rows], pod.requested.get(MEMORY, 0)),
    ):
        has = alloc != 0
        fraction = (used + request).astype(np.float64) / np.where(has, alloc, 1).astype(np.float64)
        fractions.append((has, np.where(fraction > 1, 1.0, fraction)))
    (has_cpu, cpu), (has_mem, mem) = fractions
    std = np.where(has_cpu & has_mem, np.abs((cpu - mem) / 2), 0.0)
    result: Column = ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    return result


def _fmt(score: float) -> str:
    """Go's ``%f``."""
    return f"{score:.6f}"


@register_plugin
class NodeOrderPlugin(Plugin):
    """Kubernetes node scores: image locality, least/most allocated, balanced resources,
    node affinity (per node); inter-pod affinity, taint toleration, topology spread (batch)."""

    name: ClassVar[str] = "nodeorder"
    carries_jobs: ClassVar[bool] = True
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (
        LEAST_REQUESTED_WEIGHT_ARG,
        MOST_REQUESTED_WEIGHT_ARG,
        NODE_AFFINITY_WEIGHT_ARG,
        POD_AFFINITY_WEIGHT_ARG,
        BALANCED_RESOURCE_WEIGHT_ARG,
        TAINT_TOLERATION_WEIGHT_ARG,
        IMAGE_LOCALITY_WEIGHT_ARG,
        POD_TOPOLOGY_SPREAD_WEIGHT_ARG,
    )

    _ssn: Session
    _snapshot: Snapshot
    _node_scorers: list[tuple[int, str, str, Scorer]]

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.weight = PriorityWeight()
        self._facts: dict[str, ScoreFacts] = {}
        self._prefer_no_schedule_nodes: frozenset[str] = frozenset()
        self._score_keys: dict[Hashable, Hashable] = {}
        # Per node, the last per-node score, for which pod spec and node generation: the
        # tasks of a job are scored one after another, so this bounded memo mostly hits.
        self._score_last: dict[str, tuple[Hashable, int, float, list[tuple[str, int, int]]]] = {}
        self._k8s_reads: dict[tuple[str, str], Callable[[NodeInfo], float]] = {}
        self._labels: frozenset[str] = frozenset()  # the log labels of _node_scorers
        # Per score key its row plan, and the scores of node-fixed scorers per row,
        # filled in as rows are asked (_row_plan, _fixed): (label, pod key) -> per row.
        self._rows = _RowPlans()

    def on_session_open(self, ssn: Session) -> None:
        self.weight = PriorityWeight.from_arguments(self.arguments)
        self._ssn = ssn
        self._snapshot = snapshot = ssn.k8s_snapshot()
        # Read from the Node objects alone: kept while the node map's Nodes stand.
        self._prefer_no_schedule_nodes = ssn.cache.k8s.node_derived(
            ("nodeorder", PREFER_NO_SCHEDULE),
            lambda: frozenset(
                ni.name
                for ni in snapshot.node_list
                if ni.node.taints and any(t.effect == PREFER_NO_SCHEDULE for t in ni.node.taints)
            ),
        )
        self._node_scorers = scorers = self._scorers()
        self._labels = frozenset(label for _, label, _, _ in scorers)
        self._rows = ssn.cache.k8s.node_derived(
            ("nodeorder", "rows", tuple((weight, label) for weight, label, _, _ in scorers)),
            _RowPlans,
        )
        ssn.add_node_order_fn(
            self.name,
            self.node_order,
            node_local=self.node_local_key,
            columnar=self.node_scores,
            lasting=True,
        )
        ssn.add_batch_node_order_fn(self.name, self.batch_node_order, columnar=self.batch_scores)

    def _task_facts(self, task: TaskInfo) -> ScoreFacts:
        facts = self._facts.get(task.key)
        if facts is None or facts.pod.pod is not task.pod:
            facts = ScoreFacts(task, self._ssn.pod_info(task.pod), self._score_keys)
            self._facts[task.key] = facts
        return facts

    def _scorers(self) -> list[tuple[int, str, str, Scorer]]:
        """The per-node scorers with a non-zero weight, in Volcano's order: (weight, log
        label, failure label, scorer)."""
        w = self.weight
        total_nodes = len(self._snapshot.node_list)

        def images(f: ScoreFacts, n: K8sNodeInfo) -> int:
            return image_locality(f.images, f.num_containers, n, total_nodes)

        candidates: list[tuple[int, str, str, Scorer]] = [
            (w.image_locality, "Image Locality", "Image Locality Priority", images),
            (w.least_requested, "Least Request", "Least Allocated Priority", _least),
            (w.most_requested, "Most Request", "Most Allocated Priority", _most),
            (
                w.balanced_resource,
                "Balanced Request",
                "Balanced Resource Allocation Priority",
                _balanced,
            ),
            (w.node_affinity, "Node Affinity", "Calculate Node Affinity Priority", _node_affinity),
        ]
        return [c for c in candidates if c[0] != 0]

    # -- NodeOrder --------------------------------------------------------------------------------
    def node_local_key(self, task: TaskInfo) -> Hashable | None:
        """Per-node scores read the task's score fields and the node's pods only; they are
        memoisable unless their V(4)/V(5) lines are kept."""
        if self._ssn.log.enabled(4):
            return None
        return self._task_facts(task).score_key

    def node_order(self, task: TaskInfo, node: NodeInfo) -> float:
        """Sum of weight x score; a failing scorer logs a warning and fails the node."""
        log = self._ssn.log
        facts = self._task_facts(task)
        k8s_node = self._ssn.node_map.get(node.name)
        last = self._score_last.get(node.name)
        if (
            last is not None
            and k8s_node is not None
            and last[0] is facts.score_key
            and last[1] == k8s_node.generation
        ):
            score, parts = last[2], last[3]
        else:
            score, parts = self._score_node(task, facts, node.name, k8s_node)
            if k8s_node is not None:
                self._score_last[node.name] = (facts.score_key, k8s_node.generation, score, parts)
        self._log_parts(task, node.name, parts)
        if log.enabled(4):
            log.v(
                4,
                f"Nodeorder Total Score for task<{task.namespace}/{task.name}> on node "
                f"{node.name} is: {_fmt(score)}",
            )
        return score

    def node_scores(self, task: TaskInfo, cols: NodeColumns, rows: Column) -> Column | None:
        """:meth:`node_order` for the nodes at ``rows`` at once: the same weighted sum in
        the same order; None where a scorer would fail (no node map entry, a bad
        preferred term) or has no columnar form (the GPU's balanced allocation)."""
        import numpy as np

        facts = self._task_facts(task)
        if cols.few(len(rows)):
            return self._few_scores(facts, cols, rows)
        known = cols.column(("nodeorder", "known"), self._known, np.bool_)
        if not known[rows].all():
            return None
        k8s = self._k8s_columns(cols)
        total = np.zeros(len(rows), dtype=np.float64)
        for weight, label, _, scorer in self._node_scorers:
            scores = self._column_scores(label, scorer, facts, cols, rows, k8s)
            if scores is None:
                return None
            total = total + scores.astype(np.float64) * float(weight)
        return total

    def _known(self, node: NodeInfo) -> bool:
        return node.name in self._ssn.node_map

    def _few_scores(self, facts: ScoreFacts, cols: NodeColumns, rows: Column) -> Column | None:
        """:meth:`node_scores` of a few rows by the per-node scorers, summed as there;
        None where a row has no node map entry or the columnar form declines (see
        :meth:`_column_scores`). Where the plan's other scorers read only the node's
        resource sums, a row's total is kept while the Nodes stand by those sums and the
        node-fixed scores (:class:`_RowPlan`)."""
        import numpy as np

        plan = self._row_plan(facts, cols)
        if plan is None:
            return None
        node_map, names = self._ssn.node_map, cols.names
        steps, kept = plan.steps, plan.totals
        totals = []
        for row in rows.tolist():  # Python ints index lists faster than numpy ones
            k8s_node = node_map.get(names[row])
            if k8s_node is None:
                return None
            fixed_scores = []
            for _, scorer, fixed in steps:
                if fixed is not None:
                    known = fixed[row]
                    if known is None:
                        known = fixed[row] = scorer(facts, k8s_node)
                    fixed_scores.append(known)
            if kept is None:
                totals.append(_row_total(steps, facts, k8s_node, fixed_scores))
                continue
            key = (*_resource_sums(k8s_node), *fixed_scores)
            total = kept.get(key)
            if total is None:
                total = kept[key] = _row_total(steps, facts, k8s_node, fixed_scores)
            totals.append(total)
        return np.array(totals, dtype=np.float64)

    def _row_plan(self, facts: ScoreFacts, cols: NodeColumns) -> _RowPlan | None:
        """Per scorer, its weight and, for a scorer fixed while the Nodes stand (image
        locality, per image set; node affinity without preferred terms), its scores per
        row, each filled in when first asked (a session asks a few rows of many tasks;
        the rows of the nodes that did not change are answered by the memo of earlier
        sessions: ``NodeColumns.memo``); None when a scorer declines the task
        (:meth:`_declines`). Once per score key (which holds the images, the requests
        and the preferred terms: all that decides either) while the Nodes stand
        (:class:`_RowPlans`)."""
        rows = self._rows.of(cols)
        plans = rows.plans
        if facts.score_key in plans:
            return plans[facts.score_key]
        rows.make_room()
        if self._declines(facts):
            plans[facts.score_key] = None
            return None
        steps: list[tuple[float, Scorer, list[int | None] | None]] = []
        by_sums = True
        for weight, label, _, scorer in self._node_scorers:
            fixed: list[int | None] | None = None
            if label == "Image Locality":
                key = (facts.images, facts.num_containers)
                fixed = self._fixed_rows(label, key, cols)
            elif label == "Node Affinity" and not facts.preferred_node_affinity.terms:
                fixed = self._fixed_rows(label, (), cols)
            elif label not in _READ_SUMS:
                by_sums = False
            steps.append((float(weight), scorer, fixed))
        plan = plans[facts.score_key] = _RowPlan(steps, {} if by_sums else None)
        return plan

    def _fixed_rows(self, label: str, key: Hashable, cols: NodeColumns) -> list[int | None]:
        fixed = self._rows.of(cols).fixed
        found = fixed.get((label, key))
        if found is None:
            found = fixed[(label, key)] = [None] * cols.size
        return found

    def _declines(self, facts: ScoreFacts) -> bool:
        """Whether a scorer of this session has no columnar form for the task: balanced
        allocation with a GPU request, node affinity with a bad preferred term."""
        labels = self._labels
        return bool(
            ("Balanced Request" in labels and facts.pod.requested.get(GPU))
            or ("Node Affinity" in labels and facts.preferred_node_affinity.error is not None)
        )

    def _column_scores(
        self,
        label: str,
        scorer: Scorer,
        facts: ScoreFacts,
        cols: NodeColumns,
        rows: Column,
        k8s: dict[str, Column],
    ) -> Column | None:
        import numpy as np

        pod = facts.pod
        if label == "Least Request":
            return _columns_cpu_memory(pod, k8s, rows, 50, least=True)
        if label == "Most Request":
            return _columns_cpu_memory(pod, k8s, rows, 1, least=False)
        if label == "Balanced Request":
            if pod.requested.get(GPU):
                return None
            return _columns_balanced(pod, k8s, rows)
        if label == "Node Affinity":
            if facts.preferred_node_affinity.error is not None:
                return None
            if not facts.preferred_node_affinity.terms:
                return np.zeros(len(rows), dtype=np.int64)
            key: Hashable = facts.score_key
        else:  # Image Locality
            key = (facts.images, facts.num_containers)
        return self._fixed(label, key, scorer, facts, cols, rows)

    def _fixed(
        self,
        label: str,
        key: Hashable,
        scorer: Scorer,
        facts: ScoreFacts,
        cols: NodeColumns,
        rows: Column,
    ) -> Column:
        """A scorer that reads only the pod and the node's labels or images (fixed while
        the Nodes stand) at ``rows`` (each known to the node map), each row computed once
        per pod key while they stand (:class:`_RowPlans`). Only the rows asked: the memo
        of the scores (``NodeColumns.memo``) asks the few whose node changed, and the
        rows of every node cost a millisecond (1,000 nodes) where these cost
        microseconds."""
        import numpy as np

        known = self._fixed_rows(label, key, cols)
        node_map, names = self._ssn.node_map, cols.names
        scores = []
        for row in rows.tolist():
            score = known[row]
            if score is None:
                score = known[row] = scorer(facts, node_map[names[row]])
            scores.append(score)
        return np.array(scores, dtype=np.int64)

    def _k8s_columns(self, cols: NodeColumns) -> dict[str, Column]:
        """The Kubernetes node sums the resource scorers read, as int64 columns."""
        import numpy as np

        reads = self._k8s_reads
        if not reads:
            node_map = self._ssn.node_map
            reads.update(
                (("nodeorder", name), _k8s_value(node_map, attribute, entry))
                for name, attribute, entry in (
                    ("alloc_cpu", "allocatable", CPU),
                    ("alloc_mem", "allocatable", MEMORY),
                    ("non0_cpu", "non0_cpu", None),
                    ("non0_mem", "non0_mem", None),
                    ("used_cpu", "requested", CPU),
                    ("used_mem", "requested", MEMORY),
                )
            )
        return {key[1]: cols.column(key, value, np.int64) for key, value in reads.items()}

    def _log_parts(self, task: TaskInfo, name: str, parts: list[tuple[str, int, int]]) -> None:
        log = self._ssn.log
        if log.enabled(5):
            for label, weight, s in parts:
                log.v(
                    5,
                    f"Node: {name}, task<{task.namespace}/{task.name}> {label} weight "
                    f"{weight}, score: {_fmt(float(s) * float(weight))}",
                )

    def _score_node(
        self, task: TaskInfo, facts: ScoreFacts, name: str, k8s_node: K8sNodeInfo | None
    ) -> tuple[float, list[tuple[str, int, int]]]:
        score = 0.0
        parts: list[tuple[str, int, int]] = []
        for weight, label, failure, scorer in self._node_scorers:
            try:
                if k8s_node is None:
                    raise ScoreError(
                        f'getting node "{name}" from Snapshot: nodeinfo not found for '
                        f'node name "{name}"'
                    )
                s = scorer(facts, k8s_node)
            except ScoreError as err:
                # Volcano has logged the scores computed so far, then warns.
                self._log_parts(task, name, parts)
                self._ssn.log.warning(f"Node: {name}, {failure} Failed because of Error: {err}")
                raise
            score += float(s) * float(weight)
            parts.append((label, weight, s))
        return score, parts

    # -- BatchNodeOrder ---------------------------------------------------------------------------
    def batch_node_order(self, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        facts = self._task_facts(task)
        names = [n.name for n in nodes]
        affinity = self._inter_pod_affinity_scores(task, facts, names)
        taints = self._taint_toleration_scores(task, facts, names)
        spread = self._pod_topology_spread_scores(task, nodes, names)
        if not affinity and not spread:
            # Adding their 0.0s changes no taint score: a weighted score is a float of an
            # int, never -0.0. Most tasks have neither (every task of W1, W2 and W3).
            scores = dict(taints)
        else:
            scores = {
                name: affinity.get(name, 0.0) + taints.get(name, 0.0) + spread.get(name, 0.0)
                for name in names
            }
        log = self._ssn.log
        if log.enabled(4):
            log.v(
                4, f"Batch Total Score for task {task.namespace}/{task.name} is: {go_map(scores)}"
            )
        return scores

    def batch_scores(self, task: TaskInfo, cols: NodeColumns, rows: Column) -> Column | None:
        """:meth:`batch_node_order` at once where only the taint score can be non-zero and
        no candidate has a PreferNoSchedule taint (every node then gets 100 x weight);
        None otherwise."""
        import numpy as np

        facts = self._task_facts(task)
        if facts.pod.parse_error is not None or task.pod.topology_spread_constraints:
            return None
        if inter_pod_affinity_pre_score(facts.pod, self._snapshot) is not None:
            return None
        tainted = self._prefer_no_schedule_nodes
        if tainted and any(cols.names[r] in tainted for r in rows):
            return None
        # affinity.get(name, 0.0) + taints.get(name, 0.0) + spread.get(name, 0.0): the
        # float of an int plus 0.0 on either side is that float (never -0.0), one array.
        taint = float(MAX_NODE_SCORE * self.weight.taint_toleration)
        scores: Column = np.full(len(rows), taint, dtype=np.float64)
        return scores

    def _weighted(
        self, task: TaskInfo, what: str, names: list[str], scores: list[int], weight: int
    ) -> dict[str, float]:
        result = {name: float(s * weight) for name, s in zip(names, scores, strict=True)}
        return self._logged(task, what, result)

    def _logged(self, task: TaskInfo, what: str, result: dict[str, float]) -> dict[str, float]:
        log = self._ssn.log
        if log.enabled(4):
            log.v(4, f"{what} Score for task {task.namespace}/{task.name} is: {go_map(result)}")
        return result

    def _nodes_of(self, names: list[str], what: str) -> list[K8sNodeInfo]:
        node_map = self._ssn.node_map
        missing = [name for name in names if name not in node_map]
        if missing:
            raise ScoreError(
                f'calculate {what} priority failed getting node "{missing[0]}" from Snapshot'
            )
        return [node_map[name] for name in names]

    def _inter_pod_affinity_scores(
        self, task: TaskInfo, facts: ScoreFacts, names: list[str]
    ) -> dict[str, float]:
        if not names:
            return {}
        if facts.pod.parse_error is not None:
            raise ScoreError(f"failed to parse pod: {facts.pod.parse_error}")
        topology = inter_pod_affinity_pre_score(facts.pod, self._snapshot)
        if topology is None:
            return {}
        raw = [
            inter_pod_affinity_score(topology, ni.node)
            for ni in self._nodes_of(names, "inter pod affinity")
        ]
        return self._weighted(
            task, "inter pod affinity", names, min_max_normalize(raw), self.weight.pod_affinity
        )

    def _taint_toleration_scores(
        self, task: TaskInfo, facts: ScoreFacts, names: list[str]
    ) -> dict[str, float]:
        if not names:
            return {}
        tainted = self._prefer_no_schedule_nodes
        if tainted and any(name in tainted for name in names):
            raw = [
                intolerable_prefer_no_schedule_taints(ni.node.taints, facts.tolerations)
                for ni in self._nodes_of(names, "taint toleration")
            ]
            normalized = default_normalize_score(raw, reverse=True)
            return self._weighted(
                task, "taint toleration", names, normalized, self.weight.taint_toleration
            )
        # No candidate has one: each gets the top score, built at C speed (it is asked
        # for every task over all its feasible nodes).
        top = float(MAX_NODE_SCORE * self.weight.taint_toleration)
        return self._logged(task, "taint toleration", dict.fromkeys(names, top))

    def _pod_topology_spread_scores(
        self, task: TaskInfo, nodes: list[NodeInfo], names: list[str]
    ) -> dict[str, float]:
        if not task.pod.topology_spread_constraints or not names:
            return {}
        candidates = [n.node for n in nodes if n.node is not None]
        state = pod_topology_spread_pre_score(task.pod, candidates, self._snapshot)
        if state is None:
            return {}
        raw = [state.score(ni) for ni in self._nodes_of(names, "pod topology spread")]
        return self._weighted(
            task,
            "pod topology spread",
            names,
            state.normalize(names, raw),
            self.weight.pod_topology_spread,
        )
