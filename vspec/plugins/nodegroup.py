"""nodegroup: bind queues to groups of nodes (``plugins/nodegroup/nodegroup.go``).

A node's group is its label ``volcano.sh/nodegroup-name``; a queue's ``spec.affinity``
lists the groups its pods must or should (not) use. The queue is read from the *pod*
(``volcano.sh/queue-name`` label or annotation, or ``scheduling.volcano.sh/queue-name``
annotation), not from its pod group; pods naming no queue are not constrained.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import Code, Status
from vspec.api.unschedule_info import FitError
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.registry import register_plugin
from vspec.golang import go_float
from vspec.model.objects import QUEUE_NAME_ANNOTATION

if TYPE_CHECKING:
    from vspec.framework.session import Session

NODE_GROUP_NAME_KEY = "volcano.sh/nodegroup-name"
QUEUE_NAME_KEY = "volcano.sh/queue-name"
BASE_SCORE = 100.0
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

GroupSets = dict[str, set[str]]  # queue name -> node groups


def _groups(rules: Any, key: str) -> set[str]:
    if not isinstance(rules, Mapping):
        return set()
    return {str(g) for g in rules.get(key) or ()}


def _format(sets: GroupSets) -> str:
    """Go's ``%v`` of ``map[string]sets.Set[string]``."""
    inner = (
        f"{queue}:map[{' '.join(f'{g}:{{}}' for g in sorted(groups))}]"
        for queue, groups in sorted(sets.items())
    )
    return f"map[{' '.join(inner)}]"


class QueueGroupAffinity:
    """The queues' node-group rules (``queueGroupAffinity``)."""

    def __init__(self) -> None:
        self.anti_affinity_required: GroupSets = {}
        self.anti_affinity_preferred: GroupSets = {}
        self.affinity_required: GroupSets = {}
        self.affinity_preferred: GroupSets = {}

    @classmethod
    def from_queues(cls, ssn: Session) -> QueueGroupAffinity:
        rules = cls()
        for queue in ssn.queues.values():
            affinity = queue.queue.affinity
            if not affinity:
                continue
            for key, required, preferred in (
                ("nodeGroupAffinity", rules.affinity_required, rules.affinity_preferred),
                (
                    "nodeGroupAntiAffinity",
                    rules.anti_affinity_required,
                    rules.anti_affinity_preferred,
                ),
            ):
                section = affinity.get(key)
                if section is None:
                    continue
                if groups := _groups(section, PREFERRED):
                    preferred[queue.name] = groups
                if groups := _groups(section, REQUIRED):
                    required[queue.name] = groups
        return rules

    def satisfied(self, queue: str, group: str) -> bool:
        """Affinity (required or preferred) admits; required anti-affinity vetoes.

        Quirk kept: a preferred anti-affinity *admits* the group, overriding the veto,
        and a queue without any rule admits no node at all.
        """
        if not queue:
            return True
        ok = group in self.affinity_required.get(queue, ())
        ok = ok or group in self.affinity_preferred.get(queue, ())
        if group in self.anti_affinity_required.get(queue, ()):
            ok = False
        if group in self.anti_affinity_preferred.get(queue, ()):
            ok = True
        return ok

    def score(self, queue: str, group: str) -> float:
        """+100 for a required group, +50 for a preferred one; -1 if preferred-avoided."""
        if not queue:
            return 0.0
        score = 0.0
        if group in self.affinity_required.get(queue, ()):
            score += BASE_SCORE
        if group in self.affinity_preferred.get(queue, ()):
            score += 0.5 * BASE_SCORE
        if group in self.anti_affinity_preferred.get(queue, ()):
            score = -1.0
        return score


def pod_queue(task: TaskInfo) -> str:
    """``GetPodQueue``: the queue a pod names for itself."""
    meta = task.pod.meta
    if QUEUE_NAME_KEY in meta.labels:
        return meta.labels[QUEUE_NAME_KEY]
    if QUEUE_NAME_KEY in meta.annotations:
        return meta.annotations[QUEUE_NAME_KEY]
    return meta.annotations.get(QUEUE_NAME_ANNOTATION, "")


def node_group(node: NodeInfo) -> str:
    return node.node.meta.labels.get(NODE_GROUP_NAME_KEY, "") if node.node is not None else ""


@register_plugin
class NodeGroupPlugin(Plugin):
    """Predicate and NodeOrder from the queues' node-group affinity."""

    name: ClassVar[str] = "nodegroup"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log
        rules = QueueGroupAffinity.from_queues(ssn)
        log.v(
            4,
            "queueGroupAffinity queueGroupAntiAffinityRequired "
            f"<{_format(rules.anti_affinity_required)}> queueGroupAntiAffinityPreferred "
            f"<{_format(rules.anti_affinity_preferred)}> queueGroupAffinityRequired "
            f"<{_format(rules.affinity_required)}> queueGroupAffinityPreferred "
            f"<{_format(rules.affinity_preferred)}> groupLabelName <{NODE_GROUP_NAME_KEY}>",
        )

        def node_order(task: TaskInfo, node: NodeInfo) -> float:
            group, queue = node_group(node), pod_queue(task)
            score = rules.score(queue, group)
            log.v(
                4,
                f"task <{task.namespace}>/<{task.name}> queue {queue} on node {node.name} "
                f"of nodegroup {group}, score {go_float(score)}",
            )
            return score

        fit_is_nil = ssn.gates.nodegroup_fit_is_nil

        def predicate(task: TaskInfo, node: NodeInfo) -> None:
            group, queue = node_group(node), pod_queue(task)
            if not rules.satisfied(queue, group):
                raise FitError.with_status(
                    task, node.name, Status(Code.UnschedulableAndUnresolvable, "node not satisfy")
                )
            log.v(
                4,
                f"task <{task.namespace}>/<{task.name}> queue {queue} on node {node.name} "
                f"of nodegroup {group}",
            )
            if not fit_is_nil:
                # v1.10.0 answered a fitting node with a FitError of a Success status: the
                # actions pass the node, but the plugins after this one are never asked
                # (gate nodegroup_fit_is_nil, upstream a2630bb09 "nodegroup return nil").
                raise FitError.with_status(
                    task, node.name, Status(Code.Success, "node satisfy task", self.name)
                )

        ssn.add_node_order_fn(self.name, node_order)
        ssn.add_predicate_fn(self.name, predicate)
