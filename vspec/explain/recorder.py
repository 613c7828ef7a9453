"""The recorder behind ``vspec explain`` and the HTML report.

It watches the plugins by wrapping the session's functions once per session
(:meth:`SessionPlugins.wrap_fns`), and takes the actions' own decisions from the
:class:`~vspec.framework.recorder.Recorder` hooks. Only the tasks asked about are
recorded: for the others each wrapper costs one membership test. For the asked-about
tasks the per-node memos are switched off (their node-local keys become None), so that
every plugin verdict is really computed and seen; the memos are exact, so the outcome
is the same.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Sequence
from typing import Any

from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import UNLIMITED, Resource, amount, amounts
from vspec.api.task_info import TaskInfo
from vspec.api.types import ABSTAIN, ALLOCATED_STATUSES, PERMIT, Status, TaskStatus
from vspec.api.unschedule_info import FitError, FitErrors
from vspec.errors import VspecError
from vspec.explain.records import (
    Attempt,
    Check,
    ClusterState,
    Gang,
    JobExplanation,
    NodeState,
    NodeVerdict,
    PodBar,
    QueueState,
    ResourceShare,
    RoleCount,
    RoomCheck,
    TaskExplanation,
    VictimSearch,
    VictimVote,
    Vote,
)
from vspec.explain.summary import summarize, summarize_job
from vspec.framework.interface import QueueShares
from vspec.framework.recorder import Recorder
from vspec.framework.session import Session
from vspec.framework.session_plugins import Kind, NodeLocalKeyFn
from vspec.model.result import LogLine

# Session questions about a job whose answers the explanation shows, by kind.
_JOB_QUESTIONS: tuple[Kind, ...] = ("job_valid", "job_ready", "job_pipelined", "job_enqueueable")
_QUEUE_TASK_QUESTIONS: tuple[Kind, ...] = ("allocatable", "preemptive")
_VICTIM_KINDS: tuple[Kind, ...] = ("preemptable", "reclaimable")


def _vote_word(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return "permit" if value == PERMIT else "abstain" if value == ABSTAIN else "reject"
    if value is None:
        return "pass"
    passed = getattr(value, "passed", True)
    if passed:
        return "pass"
    return f"fail: {getattr(value, 'reason', '')} {getattr(value, 'message', '')}".rstrip()


class ExplainRecorder(Recorder):
    """Records why, for ``tasks`` (``namespace/name``) and the tasks of ``jobs``
    (``namespace/name``); for every task when both are None. ``clusters`` also keeps a
    picture of the whole cluster after each cycle (for the HTML report)."""

    def __init__(
        self,
        *,
        tasks: Collection[str] | None = None,
        jobs: Collection[str] | None = None,
        clusters: bool = False,
    ) -> None:
        self._all = tasks is None and jobs is None
        self._tasks = frozenset(tasks or ())
        self._jobs = frozenset(jobs or ())
        self._clusters = clusters
        self.explanations: list[TaskExplanation] = []
        self.job_explanations: list[JobExplanation] = []
        self.cluster_states: list[ClusterState] = []
        # The run's log as it grows (the engine's own list): still there if the run raises.
        self.log_lines: Sequence[LogLine] = []
        self._open: Session | None = None  # the session not closed yet
        self._session_state(cycle=0)

    def _session_state(self, cycle: int) -> None:
        self._cycle = cycle
        self._action = ""
        self._job_uids: set[str] = set(self._jobs)
        self._subjects: dict[str, tuple[str, str]] = {}  # task key -> (job uid, task uid)
        self._attempts: dict[str, list[Attempt]] = {}
        self._current: dict[str, Attempt] = {}
        self._rows: dict[str, dict[str, NodeVerdict]] = {}
        self._scores: dict[str, dict[float, list[NodeInfo]]] = {}
        self._victim_votes: dict[str, list[VictimVote]] = {}
        self._job_votes: dict[str, dict[str, dict[str, Vote]]] = {}
        self._rooms: dict[str, dict[str, RoomCheck]] = {}  # job -> plugin -> its room
        self._queue_votes: dict[str, dict[str, Vote]] = {}
        self._tiers: dict[str, int] = {}
        self._predicate_order: dict[str, int] = {}
        # id(FitError.statuses) -> (those statuses, the plugin that gave them); the list is
        # held so that its id stays its own. Allocate's memo copies a FitError around the
        # same list, and the error cache reuses the error itself.
        self._origins: dict[int, tuple[list[Status], str]] = {}

    def wants(self, task: TaskInfo) -> bool:
        return self._all or task.key in self._tasks or task.job in self._jobs

    # -- the session's hooks --------------------------------------------------------------
    def session_opened(self, ssn: Session) -> None:
        self._session_state(ssn.log.cycle)
        self._open = ssn
        self.log_lines = ssn.log.lines
        for index, tier in enumerate(ssn.tiers, start=1):
            for option in tier.plugins:
                self._tiers.setdefault(option.name, index)
        for job in ssn.jobs.values():
            for task in job.tasks.values():
                if not self.wants(task):
                    continue
                self._job_uids.add(job.uid)
                named = not self._all and task.key in self._tasks
                if named or task.status is TaskStatus.Pending:
                    self._subjects[task.key] = (job.uid, task.uid)
        self._instrument(ssn)

    def action_started(self, ssn: Session, action: str) -> None:
        self._action = action
        self._current.clear()
        self._rows.clear()

    def attempt(self, ssn: Session, task: TaskInfo) -> None:
        if self.wants(task):
            self._open_attempt(task)

    def predicated(
        self,
        ssn: Session,
        task: TaskInfo,
        ordered: list[NodeInfo],
        examined: int,
        found: list[NodeInfo],
        errors: FitErrors,
    ) -> None:
        if not self.wants(task):
            return
        attempt = self._draft(task)
        fitting = {node.name for node in found}
        for node in ordered[:examined]:
            row = self._row(task, node)
            row.fits = node.name in fitting
            error = errors.nodes.get(node.name)
            if error is not None and all(check.passed for check in row.checks):
                row.checks.insert(0, self._unseen_failure(error))
        attempt.not_examined = len(ordered) - examined
        attempt.feasible = [node.name for node in found]

    def _unseen_failure(self, error: Exception) -> Check:
        """A failure no plugin was asked about now: a verdict the action reused from its
        per-role error cache (named after the plugin that gave it), else the action's
        own check."""
        origin = self._origins.get(id(error.statuses)) if isinstance(error, FitError) else None
        if origin is None:
            return _check(f"({self._action})", error)
        check = _check(origin[1], error)
        check.cached = True
        return check

    def scored(self, ssn: Session, task: TaskInfo, scores: dict[float, list[NodeInfo]]) -> None:
        if not self.wants(task):
            return
        for total, nodes in scores.items():
            for node in nodes:
                self._row(task, node).total = total
        self._scores[task.key] = scores

    def chose(self, ssn: Session, task: TaskInfo, node: NodeInfo | None) -> None:
        if not self.wants(task) or node is None:
            return
        attempt = self._draft(task)
        attempt.chosen = node.name
        for nodes in self._scores.pop(task.key, {}).values():
            if node in nodes and len(nodes) > 1:
                attempt.tied = [n.name for n in nodes]

    def victims(
        self,
        ssn: Session,
        task: TaskInfo,
        node: NodeInfo,
        candidates: list[TaskInfo],
        victims: list[TaskInfo],
        error: str | None,
    ) -> None:
        if not self.wants(task):
            return
        search = VictimSearch(
            node.name,
            [c.key for c in candidates],
            self._victim_votes.pop(task.key, []),
            [v.key for v in victims],
            error,
        )
        self._draft(task).victims.append(search)

    def evicted(self, ssn: Session, task: TaskInfo, victim: TaskInfo) -> None:
        if not self.wants(task):
            return
        searches = self._draft(task).victims
        if searches:
            searches[-1].evicted.append(victim.key)

    def session_failed(self, ssn: Session) -> None:
        """Explain the session as it stood when it raised, if that state can still be
        read (and it was not explained already: its close raised)."""
        if self._open is ssn:
            with contextlib.suppress(Exception):
                self.session_closing(ssn)

    def session_closing(self, ssn: Session) -> None:
        self._open = None
        for key, (job_uid, task_uid) in self._subjects.items():
            job = ssn.jobs.get(job_uid)
            task = job.tasks.get(task_uid) if job is not None else None
            if job is None or task is None:
                continue
            explanation = TaskExplanation(
                task=key,
                job=job_uid,
                queue=job.queue,
                cycle=self._cycle,
                status=str(task.status),
                node=task.node_name or None,
                summary="",
                attempts=self._attempts.get(key, []),
                gang=self._gang(job),
                queues=self._queue_states(ssn, job.queue),
            )
            explanation.summary = summarize(explanation)
            self.explanations.append(explanation)
        for job in ssn.jobs.values():
            if job.uid in self._jobs or self._podless(job):
                self.job_explanations.append(self._job_explanation(ssn, job))
        if self._clusters:
            self.cluster_states.append(self._cluster_state(ssn))

    def _job_explanation(self, ssn: Session, job: JobInfo) -> JobExplanation:
        held = [
            pod.meta.key
            for pod in ssn.cache.cluster.held_pods
            if f"{pod.meta.namespace}/{pod.group_name}" == job.uid
        ]
        votes = self._job_votes.get(job.uid, {}).get("job_enqueueable", {})
        explanation = JobExplanation(
            job=job.uid,
            queue=job.queue,
            cycle=self._cycle,
            phase=job.pod_group.phase if job.pod_group is not None else "",
            min_member=job.min_available,
            min_resources=amounts(job.min_resources()) if job.has_min_resources() else None,
            pods=len(job.tasks),
            summary="",
            held_pods=held,
            enqueue=sorted(votes.values(), key=lambda v: v.tier),
            rooms=list(self._rooms.get(job.uid, {}).values()),
        )
        explanation.summary = summarize_job(explanation)
        return explanation

    # -- attempts and rows ------------------------------------------------------------------
    def _open_attempt(self, task: TaskInfo) -> Attempt:
        attempt = Attempt(self._cycle, self._action)
        self._current[task.key] = attempt
        self._rows[task.key] = {}
        self._attempts.setdefault(task.key, []).append(attempt)
        self._subjects.setdefault(task.key, (task.job, task.uid))
        return attempt

    def _draft(self, task: TaskInfo) -> Attempt:
        """The current attempt for ``task``; one is opened for an action that did not say."""
        current = self._current.get(task.key)
        return current if current is not None else self._open_attempt(task)

    def _row(self, task: TaskInfo, node: NodeInfo) -> NodeVerdict:
        attempt = self._draft(task)
        rows = self._rows[task.key]
        row = rows.get(node.name)
        if row is None:
            row = rows[node.name] = NodeVerdict(node.name, fits=True)
            attempt.nodes.append(row)
        return row

    def _check_seen(self, task: TaskInfo, node: NodeInfo, check: Check) -> None:
        row = self._row(task, node)
        order = self._predicate_order
        if row.checks and order.get(check.plugin, 0) <= order.get(row.checks[-1].plugin, -1):
            row.checks = []  # the chain is asked again: keep its latest answers
        row.checks.append(check)
        row.fits = all(c.passed for c in row.checks)

    # -- watching the plugins -----------------------------------------------------------------
    def _instrument(self, ssn: Session) -> None:
        wants = self.wants

        def node_local(key_fn: NodeLocalKeyFn) -> NodeLocalKeyFn:
            return lambda task: None if wants(task) else key_fn(task)

        ssn.wrap_fns("predicate", self._predicate_spy, node_local)
        ssn.wrap_fns("node_order", self._node_order_spy, node_local)
        ssn.wrap_fns("batch_node_order", self._batch_spy)
        for kind in _JOB_QUESTIONS:
            ssn.wrap_fns(kind, self._job_spy(kind))
        ssn.wrap_fns("overused", self._overused_spy)
        for kind in _QUEUE_TASK_QUESTIONS:
            ssn.wrap_fns(kind, self._queue_task_spy(kind))
        for kind in _VICTIM_KINDS:
            ssn.wrap_fns(kind, self._victim_spy)
        chain = [name for tier in ssn.chain("predicate") for name, _ in tier]
        self._predicate_order = {name: i for i, name in enumerate(chain)}

    def _vote(self, plugin: str, value: object) -> Vote:
        return Vote(plugin, self._tiers.get(plugin, 0), _vote_word(value))

    def _predicate_spy(self, plugin: str, fn: Callable[[TaskInfo, NodeInfo], Any]) -> Any:
        wants, origins = self.wants, self._origins

        def spy(task: TaskInfo, node: NodeInfo) -> Any:
            try:
                result = fn(task, node)
            except VspecError:
                raise
            except Exception as exc:
                if isinstance(exc, FitError):
                    # Any task's: one asked about may reuse it (the role's error cache,
                    # allocate's memo). The statuses are kept, not the error and its
                    # traceback, whose frames would hold whole sessions alive.
                    origins[id(exc.statuses)] = (exc.statuses, plugin)
                if wants(task):
                    self._check_seen(task, node, _check(plugin, exc))
                raise
            if wants(task):
                self._check_seen(task, node, Check(plugin, True))
            return result

        return spy

    def _node_order_spy(self, plugin: str, fn: Callable[[TaskInfo, NodeInfo], float]) -> Any:
        wants = self.wants

        def spy(task: TaskInfo, node: NodeInfo) -> float:
            score = fn(task, node)
            if wants(task):
                self._row(task, node).scores[plugin] = score
            return score

        return spy

    def _batch_spy(
        self, plugin: str, fn: Callable[[TaskInfo, list[NodeInfo]], dict[str, float]]
    ) -> Any:
        def spy(task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
            scores = fn(task, nodes)
            if self.wants(task):
                for node in nodes:
                    if node.name in scores:
                        self._row(task, node).scores[f"{plugin}/batch"] = scores[node.name]
            return scores

        return spy

    def _job_spy(self, kind: str) -> Callable[[str, Callable[[JobInfo], Any]], Any]:
        def wrap(plugin: str, fn: Callable[[JobInfo], Any]) -> Any:
            def spy(job: JobInfo) -> Any:
                watched = self._all or job.uid in self._job_uids or self._podless(job)
                if kind == "job_enqueueable" and watched:
                    self._room_seen(plugin, job)  # before the vote, which changes it
                answer = fn(job)
                if watched:
                    votes = self._job_votes.setdefault(job.uid, {}).setdefault(kind, {})
                    votes[plugin] = self._vote(plugin, answer)
                return answer

            return spy

        return wrap

    def _podless(self, job: JobInfo) -> bool:
        """A job without pods, explained whenever the whole cluster is watched: it
        is easily missed (no task of it is ever pending)."""
        return (self._all or self._clusters) and not job.tasks

    def _room_seen(self, plugin: str, job: JobInfo) -> None:
        ssn = self._open
        instance = ssn.plugins.get(plugin) if ssn is not None else None
        room = instance.enqueue_room(job) if instance is not None else None
        if room is None or not job.has_min_resources():
            return
        wanted = job.min_resources().clone().add(room.held)
        asked = job.min_resources()
        short = [
            name
            for name in ("cpu", "memory", *asked.scalars)
            if name != "pods" and asked.get(name) > 0 and wanted.get(name) > room.room.get(name)
        ]
        check = RoomCheck(plugin, room.where, amounts(room.room), amounts(room.held), short)
        self._rooms.setdefault(job.uid, {})[plugin] = check

    def _overused_spy(self, plugin: str, fn: Callable[[QueueInfo], bool]) -> Any:
        def spy(queue: QueueInfo) -> bool:
            answer = fn(queue)
            self._queue_votes.setdefault(queue.uid, {})[plugin] = self._vote(plugin, answer)
            return answer

        return spy

    def _queue_task_spy(
        self, kind: str
    ) -> Callable[[str, Callable[[QueueInfo, TaskInfo], bool]], Any]:
        def wrap(plugin: str, fn: Callable[[QueueInfo, TaskInfo], bool]) -> Any:
            def spy(queue: QueueInfo, task: TaskInfo) -> bool:
                answer = fn(queue, task)
                if self.wants(task):
                    votes = self._draft(task).queue_votes
                    votes[:] = [v for v in votes if (v.plugin, v.question) != (plugin, kind)]
                    vote = self._vote(plugin, answer)
                    vote.question = kind
                    votes.append(vote)
                return answer

            return spy

        return wrap

    def _victim_spy(
        self,
        plugin: str,
        fn: Callable[[TaskInfo, list[TaskInfo]], tuple[list[TaskInfo], int]],
    ) -> Any:
        def spy(actor: TaskInfo, candidates: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
            found, vote = fn(actor, candidates)
            if self.wants(actor):
                entry = VictimVote(
                    plugin, self._tiers.get(plugin, 0), _vote_word(vote), [t.key for t in found]
                )
                self._victim_votes.setdefault(actor.key, []).append(entry)
            return found, vote

        return spy

    # -- state at the end of the cycle --------------------------------------------------------
    def _gang(self, job: JobInfo) -> Gang:
        roles: dict[str, RoleCount] = {
            role: RoleCount(role, n, 0, 0, 0) for role, n in job.task_min_available.items()
        }
        for task in job.tasks.values():
            count = roles.setdefault(task.task_role, RoleCount(task.task_role, 0, 0, 0, 0))
            if task.status in ALLOCATED_STATUSES or task.status is TaskStatus.Succeeded:
                count.ready += 1
            elif task.status is TaskStatus.Pipelined:
                count.pipelined += 1
            elif task.status is TaskStatus.Pending:
                count.pending += 1
        is_ready = job.is_ready() and job.check_task_ready()
        votes = {
            kind: sorted(answers.values(), key=lambda v: v.tier)
            for kind, answers in self._job_votes.get(job.uid, {}).items()
        }
        return Gang(
            job=job.uid,
            phase=job.pod_group.phase if job.pod_group is not None else "",
            min_available=job.min_available,
            ready=job.ready_task_num(),
            pipelined=job.waiting_task_num(),
            pending=job.count(TaskStatus.Pending),
            valid=job.valid_task_num() >= job.min_available and job.check_task_valid(),
            is_ready=is_ready,
            is_pipelined=job.is_pipelined() and job.check_task_pipelined(),
            roles=[r for r in roles.values() if r.role or r.min_available],
            votes=votes,
            fit_error="" if is_ready else job.fit_error(),
        )

    def _queue_states(self, ssn: Session, queue_uid: str) -> list[QueueState]:
        states = []
        votes = sorted(self._queue_votes.get(queue_uid, {}).values(), key=lambda v: v.tier)
        queue = ssn.queues.get(queue_uid)
        name = queue.name if queue is not None else queue_uid
        for plugin in ssn.plugins.values():
            shares = plugin.queue_shares(queue_uid)
            if shares is not None:
                states.append(_queue_state(name, plugin.name, shares, votes))
        return states

    def _cluster_state(self, ssn: Session) -> ClusterState:
        state = ClusterState(self._cycle)
        for node in ssn.node_list:
            pods = [
                PodBar(t.key, t.job, str(t.status), amounts(t.resreq)) for t in node.tasks.values()
            ]
            state.nodes.append(NodeState(node.name, amounts(node.allocatable), pods))
        for job in ssn.jobs.values():
            pending = [t.key for t in job.tasks_in(TaskStatus.Pending)]
            if pending:
                state.pending[job.uid] = pending
            if not job.tasks and job.pod_group is not None:
                state.podless[job.uid] = job.pod_group.phase
        for queue_uid in ssn.queues:
            state.queues.extend(self._queue_states(ssn, queue_uid))
        return state


def _check(plugin: str, error: Exception) -> Check:
    if isinstance(error, FitError):
        code = max((s.code for s in error.statuses), default=None)
        reasons = [
            f"{s.plugin}: {s.reason}" if s.plugin and s.plugin != plugin else s.reason
            for s in error.statuses
            if s.reason
        ]
        return Check(plugin, False, code.name if code is not None else "", reasons)
    return Check(plugin, False, "Error", [str(error)])


def _limit(res: Resource | None, name: str) -> float | None:
    if res is None:
        return None
    value = res.get(name)
    return None if value >= UNLIMITED else amount(name, value)


def _queue_state(name: str, plugin: str, shares: QueueShares, votes: list[Vote]) -> QueueState:
    names: dict[str, None] = {}
    for res in (shares.deserved, shares.allocated, shares.request, shares.guarantee):
        names.update(dict.fromkeys(n for n in res.resource_names() if n != "pods"))
    rows = [
        ResourceShare(
            resource=n,
            deserved=amount(n, shares.deserved.get(n)),
            allocated=amount(n, shares.allocated.get(n)),
            capability=_limit(shares.capability, n),
            real_capability=_limit(shares.real_capability, n),
            guarantee=amount(n, shares.guarantee.get(n)),
            request=amount(n, shares.request.get(n)),
            at_deserved=shares.allocated.get(n) >= shares.deserved.get(n),
        )
        for n in names
    ]
    return QueueState(name, plugin, shares.share, rows, votes)
