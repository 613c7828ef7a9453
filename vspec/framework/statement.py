"""Statement: the transaction actions build (``framework/statement.go``).

Operations change the session at once; ``commit`` sends them to the cache, ``discard``
rolls them back in reverse order. A statement that is neither committed nor discarded
leaves its tasks holding node resources for the rest of the session (Volcano does that
for a pipelined-but-not-ready job).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import TaskStatus
from vspec.errors import EngineError

if TYPE_CHECKING:
    from vspec.framework.session import Session


class Op(Enum):
    EVICT = "evict"
    PIPELINE = "pipeline"
    ALLOCATE = "allocate"


@dataclass
class Operation:
    """One step of a statement, which ``commit`` carries out and ``discard`` undoes."""

    name: Op
    task: TaskInfo
    reason: str = ""


class Statement:
    def __init__(self, ssn: Session) -> None:
        self.ssn = ssn
        self.operations: list[Operation] = []

    def _log_node(self, verb: str, task: TaskInfo, node: NodeInfo) -> None:
        """Formatted when read: three resources per placement are most of a small
        spec's log formatting."""
        log = self.ssn.log
        if log.enabled(3):
            log.infof(
                3,
                # The verb in the head: the invariants look for "After pipelined Task <".
                f"After {verb} Task <"
                + "{}/{}> to Node <{}>: idle <{}>, used <{}>, releasing <{}>",
                task.namespace,
                task.name,
                node.name,
                node.idle.values(),
                node.used.values(),
                node.releasing.values(),
            )

    def evict(self, reclaimee: TaskInfo, reason: str) -> None:
        ssn = self.ssn
        job = ssn.jobs.get(reclaimee.job)
        if job is not None:
            job.update_task_status(reclaimee, TaskStatus.Releasing)
        node = ssn.nodes.get(reclaimee.node_name)
        if node is not None:
            node.update_task(reclaimee)
        ssn._fire_deallocate(reclaimee)
        self.operations.append(Operation(Op.EVICT, reclaimee, reason))

    def _unevict(self, reclaimee: TaskInfo) -> None:
        """Quirk kept: the status goes back to Running whatever it was before."""
        ssn = self.ssn
        job = ssn.jobs.get(reclaimee.job)
        if job is not None:
            job.update_task_status(reclaimee, TaskStatus.Running)
        node = ssn.nodes.get(reclaimee.node_name)
        if node is not None:
            node.update_task(reclaimee)
        ssn._fire_allocate(reclaimee)

    def pipeline(self, task: TaskInfo, hostname: str, eviction_occurred: bool) -> None:
        ssn = self.ssn
        job = ssn.jobs.get(task.job)
        if job is None:
            raise EngineError(
                f"Failed to find Job <{task.job}> in Session <{ssn.uid}> index when pipeline."
            )
        job.update_task_status(task, TaskStatus.Pipelined)
        task.node_name = hostname
        task.eviction_occurred = eviction_occurred
        node = ssn.nodes.get(hostname)
        if node is None:
            raise EngineError(
                f"Failed to find Node <{hostname}> in Session <{ssn.uid}> index when pipeline."
            )
        node.add_task(task)
        self._log_node("pipelined", task, node)
        ssn._fire_allocate(task)
        self.operations.append(Operation(Op.PIPELINE, task))

    def unpipeline(self, task: TaskInfo) -> None:
        ssn = self.ssn
        job = ssn.jobs.get(task.job)
        if job is not None:
            job.update_task_status(task, TaskStatus.Pending)
        node = ssn.nodes.get(task.node_name)
        if node is not None:
            node.remove_task(task)
            self._log_node("unpipelined", task, node)
        ssn._fire_deallocate(task)
        task.node_name = ""

    def allocate(self, task: TaskInfo, node_info: NodeInfo) -> None:
        ssn = self.ssn
        hostname = node_info.name
        job = ssn.jobs.get(task.job)
        if job is None:
            raise EngineError(
                f"Failed to find Job <{task.job}> in Session <{ssn.uid}> index when allocating."
            )
        job.update_task_status(task, TaskStatus.Allocated)
        task.node_name = hostname
        node = ssn.nodes.get(hostname)
        if node is None:
            raise EngineError(
                f"Failed to find Node <{hostname}> in Session <{ssn.uid}> index when allocating."
            )
        node.add_task(task)
        self._log_node("allocated", task, node)
        ssn._fire_allocate(task)
        ssn.log.v(3, "Allocating operations ...")
        self.operations.append(Operation(Op.ALLOCATE, task))

    def _commit_allocate(self, task: TaskInfo) -> None:
        ssn = self.ssn
        try:
            ssn.dispatch(task)
        except EngineError as exc:
            ssn.log.error(f"Failed to allocate task: for {exc}")
            self._unallocate(task)

    def _unallocate(self, task: TaskInfo) -> None:
        ssn = self.ssn
        job = ssn.jobs.get(task.job)
        if job is not None:
            job.update_task_status(task, TaskStatus.Pending)
        node = ssn.nodes.get(task.node_name)
        if node is not None:
            ssn.log.v(3, f"Remove Task <{task.name}> on node <{task.node_name}>")
            node.remove_task(task)
        ssn._fire_deallocate(task)
        task.node_name = ""

    def discard(self) -> None:
        self.ssn.log.v(3, "Discarding operations ...")
        for op in reversed(self.operations):
            op.task.generate_last_tx_context()
            if op.name is Op.EVICT:
                self._unevict(op.task)
            elif op.name is Op.PIPELINE:
                self.unpipeline(op.task)
            else:
                self._unallocate(op.task)

    def commit(self) -> None:
        self.ssn.log.v(3, "Committing operations ...")
        for op in self.operations:
            op.task.clear_last_tx_context()
            if op.name is Op.EVICT:
                try:
                    self.ssn.cache.evict(op.task, op.reason)
                except EngineError as exc:
                    self.ssn.log.error(f"Failed to evict task: {exc}")
                    self._unevict(op.task)
            elif op.name is Op.ALLOCATE:
                self._commit_allocate(op.task)
