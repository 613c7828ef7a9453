"""Example plugin: keep jobs off dedicated nodes unless they ask for them.

A node labelled ``example.vspec/dedicated=<team>`` only takes tasks of jobs whose pod
group carries the annotation ``example.vspec/dedicated: <team>``. Jobs that ask for a
team are steered to its nodes by a node-order bonus.
"""

from __future__ import annotations

from typing import ClassVar

from vspec.extension import (
    Arguments,
    ArgumentSpec,
    Code,
    FitError,
    FloatArgument,
    NodeInfo,
    Plugin,
    Session,
    Status,
    TaskInfo,
    register_plugin,
)

LABEL = "example.vspec/dedicated"


# Declared once: listed by `vspec plugins` and read with its default.
BONUS = FloatArgument("dedicated.bonus", 50.0, "node-order score for a requested node")


@register_plugin
class DedicatedNodes(Plugin):
    """Dedicated nodes take only the jobs that ask for them."""

    name: ClassVar[str] = "dedicated-nodes"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (BONUS,)

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.bonus = BONUS.read(arguments)

    def on_session_open(self, ssn: Session) -> None:
        def wanted(task: TaskInfo) -> str:
            job = ssn.jobs.get(task.job)
            if job is None or job.pod_group is None:
                return ""
            return job.pod_group.meta.annotations.get(LABEL, "")

        def predicate(task: TaskInfo, node: NodeInfo) -> None:
            team = node.node.meta.labels.get(LABEL, "") if node.node is not None else ""
            if team and team != wanted(task):
                reason = f"node(s) dedicated to {team}"
                raise FitError.with_status(task, node.name, Status(Code.Unschedulable, reason))

        def node_order(task: TaskInfo, node: NodeInfo) -> float:
            team = node.node.meta.labels.get(LABEL, "") if node.node is not None else ""
            return self.bonus if team and team == wanted(task) else 0.0

        ssn.add_predicate_fn(self.name, predicate)
        ssn.add_node_order_fn(self.name, node_order)
