"""The engine's one seam for front-ends that want to know *why* (``vspec explain``, the
HTML report): the session and the actions tell a :class:`Recorder` what they decided.

The session always holds one; by default it is :data:`NO_RECORDER`, whose methods do
nothing and keep nothing, so a run that asks for no explanation pays one empty call per
task attempt and no per-(task, node) cost at all. Hooks are called where the decision is
already at hand (never computing anything for the recorder), and a recorder must not
change what the session decides: it may wrap the session's plugin functions (see
:meth:`Recorder.session_opened`) but must call each exactly as the session would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vspec.api.node_info import NodeInfo
    from vspec.api.task_info import TaskInfo
    from vspec.api.unschedule_info import FitErrors
    from vspec.framework.session import Session


class Recorder:
    """Hooks in the order a session meets them; each is a no-op here."""

    # Whether the per-node hooks (predicated, scored) and the plugin functions' per-node
    # calls must all happen: when False, allocate may decide a task over all nodes at
    # once (vspec.framework.columnar) and call none of them (chose is still called).
    watches_nodes = True

    def session_opened(self, ssn: Session) -> None:
        """Every plugin has registered its functions (a recorder may wrap them now)."""

    def action_started(self, ssn: Session, action: str) -> None:
        """``action`` is about to execute on ``ssn``."""

    def attempt(self, ssn: Session, task: TaskInfo) -> None:
        """The current action starts trying to place ``task``."""

    def predicated(
        self,
        ssn: Session,
        task: TaskInfo,
        ordered: list[NodeInfo],
        examined: int,
        found: list[NodeInfo],
        errors: FitErrors,
    ) -> None:
        """Nodes were predicated for ``task``: the first ``examined`` of ``ordered`` were
        looked at, ``found`` fit, ``errors`` says why the others did not."""

    def scored(self, ssn: Session, task: TaskInfo, scores: dict[float, list[NodeInfo]]) -> None:
        """``PrioritizeNodes`` gave ``scores`` (total score -> nodes) for ``task``."""

    def chose(self, ssn: Session, task: TaskInfo, node: NodeInfo | None) -> None:
        """The action chose ``node`` (None: none) for ``task`` among the scored nodes."""

    def victims(
        self,
        ssn: Session,
        task: TaskInfo,
        node: NodeInfo,
        candidates: list[TaskInfo],
        victims: list[TaskInfo],
        error: str | None,
    ) -> None:
        """Preempt or reclaim asked the plugins which of ``candidates`` on ``node`` may
        go for ``task``; ``error`` is why those ``victims`` do not make room, if they don't."""

    def evicted(self, ssn: Session, task: TaskInfo, victim: TaskInfo) -> None:
        """Preempt or reclaim evicted ``victim`` to make room for ``task`` (preempt's
        evictions are in a statement, undone if it is discarded)."""

    def session_closing(self, ssn: Session) -> None:
        """Every action ran; the plugins and the job updater have not closed yet."""

    def session_failed(self, ssn: Session) -> None:
        """The session raised (a plugin's error, a Volcano panic, an interrupt): the last
        look at it as it stood, before it is released and the error goes on."""


class _NoRecorder(Recorder):
    watches_nodes = False


NO_RECORDER: Recorder = _NoRecorder()
