"""The in-session state a session's result records before the deferred close: each
task's status and node, each pod group's phase, each job's pipelined tasks and the
queues' shares. Go's unit tests read it after a spec's last cycle; a timeline captures
every session, for the invariants it checks after each.

On a timeline a session changes few of the cluster's pods (the day's six hours: about
13 of 860) and few of its jobs (about 3 of 190 captured anew), so the tasks are not
listed again from every pod: :class:`TaskCapture` keeps the last capture and patches
it. Listing them afresh read every pod's key, about a microsecond a pod (pods are cold
in memory by then), which was most of the capture's cost.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, eq, is_
from typing import TYPE_CHECKING

from vspec.api.job_info import JobInfo
from vspec.api.task_info import task_status_of
from vspec.api.types import TaskStatus
from vspec.model.changes import Changed, changes_of, list_changes
from vspec.model.objects import Cluster, Pod
from vspec.model.result import SimulationResult, TaskResult

if TYPE_CHECKING:
    from vspec.framework.session import Session

_UNBOUND = frozenset({TaskStatus.Pending, TaskStatus.Allocated, TaskStatus.Pipelined})
# ``str`` of each status, looked up: the capture names every task's every session.
_STATUS_TEXT = {status: str(status) for status in TaskStatus}
_POD_KEY = attrgetter("meta.key")
_PIPELINED = attrgetter("pipelined")
# Not Volcano's: a job's captured tasks, in JobInfo.derived (_captured).
_CAPTURED = "capture.tasks"


def capture_session_state(
    ssn: Session, cluster: Cluster, result: SimulationResult, kept: TaskCapture
) -> dict[str, str]:
    """What Go's unit tests read before the deferred close: in-session phases and tasks,
    and the queues' shares as the actions left them. Tasks come in the cluster's pod
    order, each as its session job holds it, else (a pod no job holds) as the cluster
    has it; one result per pod. ``kept`` is the scheduler's last capture, patched.

    Returns each pod group's in-session phase, by job, in the session's job order (a
    new dict, the caller's): the close makes each job's result with its phases and
    conditions at once (scheduler._record_pod_groups), where a result made here was
    made again in part there."""
    result.queues = {}
    for queue_uid, queue in ssn.queues.items():
        for plugin in ssn.plugins.values():
            shares = plugin.queue_shares(queue_uid)
            if shares is not None:
                result.queues[queue.name] = shares.result(plugin.name)
                break
    captured, phases, pipelined = kept.jobs(ssn)
    # Each job's list is its capture's, the very list while the job's tasks stand, as
    # its task results are: a result's readers read it, never change it.
    result.pipelined.update(pipelined)
    tasks = kept.tasks(cluster.pods, captured, cluster.pods_changed)
    if result.tasks:  # a result passed in with tasks keeps them, as an update does
        result.tasks.update(tasks)
    else:
        result.tasks = tasks
    # A dict comprehension: one frame for the session's jobs, not a generator resumed
    # once per job.
    return {uid: phase for uid, phase in phases.items() if phase is not None}


@dataclass(frozen=True)
class Captured:
    """A job's tasks as the capture reads them, at the job's ``version``."""

    version: int
    tasks: dict[str, TaskResult]
    pipelined: list[tuple[str, str]]  # the results' own list, shared, never changed


def _captured(job: JobInfo) -> Captured:
    """The job's tasks as results, kept in ``JobInfo.derived`` with the job's version: a
    job carried to the next session had no task touched (SchedulerCache's "Carried
    jobs"), and a session that touches one moves the version, so at an equal version
    every task has the status and node it had when captured. A timeline captures every
    session, where most live jobs are such carried ones."""
    kept = job.derived.get(_CAPTURED)
    if isinstance(kept, Captured) and kept.version == job.version:
        return kept
    tasks = {}
    for task in job.tasks.values():
        status = task.status
        # Allocated and Pipelined tasks hold a node in the session but are not bound.
        node = None if status in _UNBOUND else task.node_name or None
        tasks[task.key] = TaskResult(node, _STATUS_TEXT[status])
    pipelined = [(t.key, t.node_name) for t in job.tasks_in(TaskStatus.Pipelined)]
    captured = job.derived[_CAPTURED] = Captured(job.version, tasks, pipelined)
    return captured


def _unheld(pod: Pod) -> TaskResult:
    """A pod no session job holds, as the cluster has it."""
    return TaskResult(pod.node_name or None, _STATUS_TEXT[task_status_of(pod)])


def fresh_tasks(pods: Sequence[Pod], jobs: Mapping[str, Captured]) -> dict[str, TaskResult]:
    """The tasks listed from every pod: the pods' keys in order, each as the last job
    (in ``jobs``' order) holding it has it, else as the cluster has it; then the tasks
    jobs hold of no pod, in the jobs' order."""
    return _listed(pods, jobs)[0]


def _listed(
    pods: Sequence[Pod], jobs: Mapping[str, Captured]
) -> tuple[dict[str, TaskResult], list[str]]:
    """:func:`fresh_tasks`, and the pods' keys in order."""
    held: dict[str, TaskResult] = {}
    for job in jobs.values():
        held.update(job.tasks)
    # The cluster's pods take their places first, in order, by C loops alone; the few
    # no job holds are then written as the cluster has them.
    keys = list(map(_POD_KEY, pods))
    tasks: dict[str, TaskResult] = {}
    tasks.update(dict.fromkeys(keys))
    tasks.update(held)
    unheld = set(keys).difference(held)
    if unheld:
        pod_of = dict(zip(keys, pods, strict=True))
        for key in unheld:
            tasks[key] = _unheld(pod_of[key])
    return tasks, keys


class _JobCaptures:
    """The last capture of each job (its tasks, its pod group's phase, its pipelined
    tasks) and what tells which jobs the next capture reads again."""

    __slots__ = ("captured", "mark", "phases", "pipelined", "touched")

    def __init__(self) -> None:
        self.mark: object | None = None  # the feed mark of the session captured
        self.captured: dict[str, Captured] = {}
        self.phases: dict[str, str | None] = {}  # None: no pod group
        self.pipelined: dict[str, list[tuple[str, str]]] = {}
        self.touched: set[str] = set()  # the jobs that session touched before its capture


def _job_capture(job: JobInfo) -> tuple[Captured, str | None]:
    pg = job.pod_group
    return _captured(job), None if pg is None else pg.phase


# The jobs whose capture may differ from the last, and the last's jobs that ended.
_JobsMoved = tuple[Collection[str], Collection[str]]
# The job captures TaskCapture.jobs last handed out, the ones before them, and the jobs
# whose capture may differ between the two and those that ended (None: any).
_Moved = tuple[dict[str, Captured], dict[str, Captured], _JobsMoved | None]


class TaskCapture:
    """A scheduler's last capture of its session's tasks, kept to make the next one by
    patching it (:class:`_Patchable`) where a fresh listing (:func:`fresh_tasks`) would
    read every pod. Either way the next capture is what a fresh listing gives, in the
    same order.

    Each job's capture is kept too (:meth:`jobs`): when the session's job feed follows
    the session last captured (vspec.framework.cache, JobFeed), a job it does not name
    opened as it opened then, and a job neither session touched before its capture
    (``SchedulerCache.touched_jobs``: its tasks and its phase did not move) is
    captured as then, so only the others are read."""

    def __init__(self) -> None:
        self._last: _Patchable | None = None
        self._jobs = _JobCaptures()
        self._moved: _Moved | None = None

    def jobs(
        self, ssn: Session
    ) -> tuple[dict[str, Captured], dict[str, str | None], dict[str, list[tuple[str, str]]]]:
        """Each of the session's jobs' capture, pod group phase (None: none) and
        pipelined tasks, in the session's job order: dicts the caller must not change."""
        jobs, feed, kept = ssn.jobs, ssn.job_feed, self._jobs
        touched = set(ssn.cache.touched_jobs)
        moved: _JobsMoved | None = None
        before = kept.captured
        if feed.follows(kept.mark):
            # Copies: the task capture keeps the last dict to compare (_Patchable).
            captured, phases = kept.captured.copy(), kept.phases.copy()
            pipelined = kept.pipelined.copy()
            for uid in feed.gone:
                del captured[uid], phases[uid], pipelined[uid]
            again = (feed.changed | touched | kept.touched) & jobs.keys()
            moved = again, feed.gone
            for uid in again:
                made = captured[uid], phases[uid] = _job_capture(jobs[uid])
                pipelined[uid] = made[0].pipelined
            if not all(map(eq, captured, jobs)):  # in the session's order (same keys)
                captured = dict(zip(jobs, map(captured.__getitem__, jobs), strict=True))
                phases = dict(zip(jobs, map(phases.__getitem__, jobs), strict=True))
                pipelined = dict(zip(jobs, map(pipelined.__getitem__, jobs), strict=True))
        else:
            captured = dict(zip(jobs, map(_captured, jobs.values()), strict=True))
            phases = {
                uid: None if job.pod_group is None else job.pod_group.phase
                for uid, job in jobs.items()
            }
            pipelined = dict(zip(captured, map(_PIPELINED, captured.values()), strict=True))
        kept.mark, kept.touched = feed.mark, touched
        kept.captured, kept.phases, kept.pipelined = captured, phases, pipelined
        self._moved = (captured, before, moved)
        return captured, phases, pipelined

    def tasks(
        self, pods: list[Pod], jobs: dict[str, Captured], report: Changed[Pod] | None = None
    ) -> dict[str, TaskResult]:
        """The tasks of ``pods`` and ``jobs`` (each job's capture, in the session's job
        order): a new dict, the caller's own. ``jobs`` is kept and must not change.
        ``report``: the pods' change report (vspec.model.changes), if any."""
        last = self._last
        if last is not None and last.patched(pods, jobs, report, self._moved_since(last, jobs)):
            # ``copy``, not ``dict``: the kept dict has holes where pods went, and
            # ``dict`` of a dict with any copies it key by key (~40 us a session), where
            # ``copy`` copies the table at once while a third at most are holes.
            return last.tasks.copy()
        tasks, keys = _listed(pods, jobs)
        self._last = _Patchable.of(pods, keys, jobs, tasks)
        return dict(tasks)

    def _moved_since(self, last: _Patchable, jobs: dict[str, Captured]) -> _JobsMoved | None:
        """The jobs whose capture may differ between the last capture's jobs and ``jobs``,
        and the jobs of those that ended, when :meth:`jobs` made ``jobs`` from those (a
        session's few: the job feed's changed, touched and gone ones); else None (every
        job is compared)."""
        moved = self._moved
        if moved is None or moved[0] is not jobs or moved[1] is not last.jobs:
            return None
        return moved[2]


class _Patchable:
    """A capture that the next can be patched from: each pod's key once, each task held
    by one job, and every held task a pod's. Then each pod's task is its holder's, or
    the pod's own while no job holds it, and the pods a session did not replace (the
    same objects: the model is copy-on-write) keep their place and, unless their
    holder's capture changed, their result. A capture that is not patchable (a key
    twice, a job holding another's task or one of no pod) is listed afresh until one
    is again."""

    def __init__(
        self,
        source: list[Pod],
        jobs: dict[str, Captured],
        tasks: dict[str, TaskResult],
        pod_of: dict[str, Pod],
        holder: dict[str, str],
    ) -> None:
        self.source = source  # the pods list itself, which a change report names
        self.jobs = jobs
        self.tasks = tasks  # in the pods' order
        self.pod_of = pod_of  # each pod by key, in the pods' order
        self.holder = holder  # each held task's job

    @classmethod
    def of(
        cls,
        pods: list[Pod],
        keys: list[str],
        jobs: dict[str, Captured],
        tasks: dict[str, TaskResult],
    ) -> _Patchable | None:
        """The capture ``tasks`` of ``pods`` (their keys ``keys``), listed afresh, as a
        patchable one; None when it is not."""
        pod_of = dict(zip(keys, pods, strict=True))
        if not len(pod_of) == len(pods) == len(tasks):  # a key twice, or tasks of no pod
            return None
        holder = {key: uid for uid, job in jobs.items() for key in job.tasks}
        if sum(len(job.tasks) for job in jobs.values()) != len(holder):
            return None  # a task held twice
        return cls(pods, jobs, tasks, pod_of, holder)

    def patched(
        self,
        pods: list[Pod],
        jobs: dict[str, Captured],
        report: Changed[Pod] | None,
        moved: _JobsMoved | None,
    ) -> bool:
        """Whether the capture was brought to ``pods`` and ``jobs``; False when it was
        not patchable there (and is left half moved on: the caller lists afresh).
        ``report``: the pods' change report (vspec.model.changes), used when it goes
        from the last pods list to ``pods``; ``moved``: the jobs whose capture may
        differ from the last, and those that ended (None: any job may have)."""
        changes = changes_of(report, self.source, pods)
        if changes is None:
            changes = list_changes(list(self.pod_of.values()), pods, keep_order=True)
        if changes is None:
            return False
        found = self._pods_moved_on(*changes)
        if found is None or len(self.pod_of) != len(pods):
            return False
        # The pods by key, patched, are ``pods`` in order (one C pass by identity): the
        # keys are then in the pods' order, and so are the tasks patched alike.
        if not all(map(is_, self.pod_of.values(), pods)):
            return False
        removed, new, dirty = found
        if not self._jobs_moved_on(jobs, dirty, moved) or any(
            map(self.holder.__contains__, removed)
        ):
            return False  # a task held twice, or of no pod
        holder, pod_of, tasks = self.holder, self.pod_of, self.tasks
        values: dict[str, TaskResult] = {}
        for key in dirty:
            if key in pod_of:  # else gone, and held by none
                uid = holder.get(key)
                values[key] = _unheld(pod_of[key]) if uid is None else jobs[uid].tasks[key]
        for key in removed:
            del tasks[key]
        for key in new:
            tasks[key] = values[key]
        tasks.update(values)
        self.source = pods
        self.jobs = jobs
        return True

    def _pods_moved_on(
        self, gone: list[Pod], added: list[Pod]
    ) -> tuple[list[str], list[str], list[str]] | None:
        """The pods by key with ``gone`` taken out and ``added`` put in: a pod of a key
        that went in its place, one of a new key last. The keys taken out for good, the
        new keys and the keys whose result is worked out again; None when ``gone`` are
        not the pods by key's or a key would be listed twice."""
        pod_of = self.pod_of
        going: dict[str, bool] = {}  # a gone pod's key -> whether a pod replaced it
        for pod in gone:
            key = pod.meta.key
            if pod_of.get(key) is not pod or key in going:
                return None  # not the pods it was brought to
            going[key] = False
        new: list[str] = []
        dirty = list(map(_POD_KEY, added))
        for key, pod in zip(dirty, added, strict=True):
            if key not in pod_of:
                new.append(key)
            elif going.get(key) is False:
                going[key] = True
            else:
                return None  # a key twice
            pod_of[key] = pod
        removed = [key for key, replaced in going.items() if not replaced]
        for key in removed:
            del pod_of[key]
        return removed, new, dirty

    def _jobs_moved_on(
        self, jobs: dict[str, Captured], dirty: list[str], moved: _JobsMoved | None
    ) -> bool:
        """The holders brought to ``jobs``: the tasks of the jobs whose capture changed
        (or that ended) join ``dirty``; False on a task held twice or of no pod.
        ``moved``: the jobs whose capture may have changed and those that ended, else
        every job is compared."""
        last, holder, pod_of = self.jobs, self.holder, self.pod_of
        if moved is None:
            changed = [uid for uid, job in jobs.items() if last.get(uid) is not job]
            ended: Collection[str] = last.keys() - jobs.keys()
        else:
            changed = [uid for uid in moved[0] if last.get(uid) is not jobs[uid]]
            ended = moved[1]
        for uid in chain(ended, changed):
            was = last.get(uid)
            if was is None:
                continue
            for key in was.tasks:
                if holder.get(key) == uid:
                    del holder[key]
                    dirty.append(key)
        for uid in changed:
            for key in jobs[uid].tasks:
                if holder.setdefault(key, uid) != uid or key not in pod_of:
                    return False
                dirty.append(key)
        return True
