"""logprint: the seed's plugin, printing exactly what its Go code prints.

The seed (``../shared/seed/``; the full file is ``pkg/scheduler/plugins/logprint/logprint.go``
of github.com/Stringxy/volcano-custom-plugin-demo) registers a print function that, for
each job the ``print`` action hands it, logs at V(1)

- ``Job %s/%s is pending, try to schedule it on node %s`` with the namespace and the name
  only when ``job.IsPending()``; Go renders the third verb ``%!s(MISSING)``. That is a bug
  of the seed's plugin, kept here (quirk kept) and reported by the ``logprint-correct``
  invariant once per run;
- ``Job %s/%s is ready, detail info : %s`` with ``job.String()`` when ``job.IsReady()``
  (gang arithmetic only, not the session's JobReady; a job may be both).

Its ``OnSessionOpen`` logs ``Enter logPrint plugin ...`` at V(5) and, from a deferred
call, ``Leaving logPrint plugin. %s ...`` with its arguments (a ``map[string]interface{}``
as the conf's YAML gives it). Every line is rendered with Go's fmt rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain, compress
from operator import attrgetter, is_, ne
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, cast

from vspec.api.job_info import JobInfo
from vspec.api.pod_group_info import PodGroupTexts
from vspec.api.task_info import TaskTexts
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.registry import register_plugin
from vspec.gofmt import Typed, sprintf
from vspec.plugins._process_state import process_memory

if TYPE_CHECKING:
    from vspec.framework.cache import JobFeed
    from vspec.framework.session import Session
    from vspec.model.result import LogLine

PRINT_VERBOSITY = 1
PENDING_FORMAT = "Job %s/%s is pending, try to schedule it on node %s"
READY_FORMAT = "Job %s/%s is ready, detail info : %s"
# Lines of logprint.go at the demo repository's commit 6a810e8 (the seed's full code).
SOURCE_ENTER = "logprint.go:46"
SOURCE_LEAVING = "logprint.go:48"
SOURCE_PENDING = "logprint.go:53"
SOURCE_READY = "logprint.go:56"
# Not Go's: the texts of the tasks printed last, kept from session to session because
# printing every ready job's tasks each session was most of a verbosity-3 timeline's cost.
TASK_TEXTS = "logprint.task texts"
# Not Go's either: the texts of the pod groups printed last, kept the same way.
POD_GROUP_TEXTS = "logprint.pod group texts"
# Nor this: a job's lines, in JobInfo.derived with all they print (_job_lines).
JOB_LINES = "logprint.job lines"


def go_arguments(raw: Mapping[str, Any]) -> Typed:
    """The plugin's arguments as gopkg.in/yaml.v2 decodes them into ``framework.Arguments``:
    nested mappings become ``map[interface {}]interface {}``, sequences ``[]interface {}``."""
    return Typed("framework.Arguments", {k: _yaml_value(v) for k, v in raw.items()})


def _yaml_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return Typed("map[interface {}]interface {}", {k: _yaml_value(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return [_yaml_value(v) for v in value]
    return value


def pending_text(namespace: str, name: str) -> str:
    """``fmt.Sprintf(PENDING_FORMAT, namespace, name)``: ``%s`` of a string prints it as
    it is, and the third verb has no argument. An f-string, as logprint prints a line
    for every job every session, where fmt's general rendering cost a tenth of it."""
    return f"Job {namespace}/{name} is pending, try to schedule it on node %!s(MISSING)"


def ready_text(namespace: str, name: str, detail: str) -> str:
    """``fmt.Sprintf(READY_FORMAT, namespace, name, detail)`` (see :func:`pending_text`)."""
    return f"Job {namespace}/{name} is ready, detail info : {detail}"


Lines = tuple[tuple[str, str], ...]  # a job's lines: (text, source)


class _KeptLines(NamedTuple):
    """A job's lines and what they print, in ``JobInfo.derived``."""

    key: tuple[object, ...]  # JobInfo.printed()
    tasks: str  # the tasks' text, at the version key[0]
    lines: Lines


def _job_lines(job: JobInfo, task_text: TaskTexts, group_text: PodGroupTexts) -> Lines:
    """The job's lines, kept in ``JobInfo.derived`` by all they print, compared with
    ``==`` rather than hashed (equal strings and numbers held by a clone carried to the
    next session are mostly the very objects, so comparing is a pass of identity
    checks): a clone carried to the next session prints as before unless its pod
    group's status or conditions moved, or a task changed status, and most live jobs
    are carried. The tasks' text is kept with the job's version alone: a session's task
    changes only through the job's task methods, which move it."""
    key = job.printed()
    kept = job.derived.get(JOB_LINES)
    tasks = None
    if isinstance(kept, _KeptLines):
        if kept.key == key:
            return kept.lines
        if kept.key[0] == job.version:
            tasks = kept.tasks
    if tasks is None:
        tasks = job.tasks_go_string(task_text)
    lines = _render(job, tasks, group_text)
    job.derived[JOB_LINES] = _KeptLines(key, tasks, lines)
    return lines


def _render(job: JobInfo, tasks: str, group_text: PodGroupTexts) -> Lines:
    lines = []
    if job.is_pending():
        lines.append((pending_text(job.namespace, job.name), SOURCE_PENDING))
    if job.is_ready():
        detail = job.go_string(str, tasks, group_text)
        lines.append((ready_text(job.namespace, job.name, detail), SOURCE_READY))
    return tuple(lines)


# What a session may change of a job it keeps (the job contract of
# vspec.framework.interface.Plugin.carries_jobs): its tasks, through the task methods that
# move ``version``, and its pod group's status in place (the job updater's phase and
# counts; the conditions gang writes into the list or hand_back puts back as a new list).
# Read in C loops, the pod groups first (a dotted name costs a lookup per part each time),
# the conditions as a tuple of the frozen conditions themselves.
_VERSION = attrgetter("version")
_POD_GROUP = attrgetter("pod_group")
_STATUS = attrgetter("phase", "running", "succeeded", "failed")
_CONDITIONS = attrgetter("conditions")


class _Feed:
    """The lines the last print gave each job, by job object, and the status they
    were printed at (its version, its pod group, that one's :data:`_STATUS` and
    conditions). When the conf keeps the job contract, a job is the very object of the
    last session unless it changed (the cache hands a carried clone on,
    SchedulerCache's "Carried jobs"), and nothing but that status moves on a kept
    clone; an equal status then proves the same lines, so a print pays for the jobs
    that changed, not for the ~200 that live (equal values held by the very objects
    they were compare by identity, in C loops). The others are printed by
    :func:`_job_lines`.

    A print that sees the jobs as the session opened them (the first action's, as in
    the seed's conf) reads no job at all but those the snapshot's feed names
    (``JobFeed``): when the last print was such a print on the snapshot the feed
    follows, every other job opens as then and prints the lines it printed then, kept
    by job id (``by_uid``, ``mark``) with the log lines made of them (``made``, at
    ``made_at``'s level and cycle), which are logged again as they are. The
    scheduler's memo (``SchedulerState.memo``): only the last print's jobs are held,
    never read, a job looked up by identity alone."""

    __slots__ = ("by_uid", "lines", "made", "made_at", "mark", "status")

    def __init__(self) -> None:
        self.status: dict[JobInfo, tuple[object, ...]] = {}
        self.lines: dict[JobInfo, Lines] = {}
        # The last print's lines by job id, when it printed the jobs as they opened
        # from the snapshot of ``mark`` (else ``mark`` is None).
        self.by_uid: dict[str, Lines] = {}
        self.mark: object | None = None
        # The log lines of ``by_uid``'s, made at (level, cycle) ``made_at``.
        self.made: dict[str, tuple[LogLine, ...]] = {}
        self.made_at = (-1, -1)

    def __call__(
        self, ssn: Session, jobs: list[JobInfo], task_text: TaskTexts, group_text: PodGroupTexts
    ) -> bool:
        """Log each job's lines, in order; False, with nothing logged, when a job has no
        pod group."""
        session_jobs = ssn.jobs
        as_opened = (
            ssn.jobs_as_opened
            and len(jobs) == len(session_jobs)
            and all(map(is_, jobs, session_jobs.values()))
        )
        feed = ssn.job_feed
        if as_opened and feed.follows(self.mark):
            self._fed(ssn, feed, task_text, group_text)
            return True
        done = self._compared(jobs, task_text, group_text)
        self.mark, self.by_uid, self.made = None, {}, {}
        if done is None:
            return False
        if as_opened:
            self.mark, self.by_uid = feed.mark, dict(zip(session_jobs, done, strict=True))
            self.made_at = (-1, -1)
        ssn.log.each(PRINT_VERBOSITY, chain.from_iterable(done))
        return True

    def _fed(
        self, ssn: Session, feed: JobFeed, task_text: TaskTexts, group_text: PodGroupTexts
    ) -> None:
        """Log the lines of the last print, those of the jobs the feed names printed
        again (every job has a pod group: the snapshot hands no other)."""
        jobs, log = ssn.jobs, ssn.log
        by_uid, made = self.by_uid, self.made
        at = (PRINT_VERBOSITY, log.cycle)
        if self.made_at != at:
            made.clear()
            self.made_at = at
        for uid in feed.gone:
            del by_uid[uid]
            made.pop(uid, None)
        for uid in feed.changed:
            by_uid[uid] = _job_lines(jobs[uid], task_text, group_text)
            made.pop(uid, None)
        if len(made) < len(by_uid):
            for uid in by_uid.keys() - made.keys():
                made[uid] = log.made(PRINT_VERBOSITY, by_uid[uid])
        self.mark = feed.mark
        self.status, self.lines = {}, {}  # not kept by this path
        log.extend(PRINT_VERBOSITY, list(chain.from_iterable(map(made.__getitem__, jobs))))

    def _compared(
        self, jobs: list[JobInfo], task_text: TaskTexts, group_text: PodGroupTexts
    ) -> list[Lines] | None:
        """Each job's lines by the status comparison; None when a job has no pod group."""
        groups = list(map(_POD_GROUP, jobs))
        try:
            status = list(
                zip(
                    map(_VERSION, jobs),
                    groups,
                    map(_STATUS, groups),
                    map(tuple, map(_CONDITIONS, groups)),
                    strict=True,
                )
            )
        except AttributeError:  # a job without a pod group: _job_lines prints it
            return None
        lines: list[Lines | None] = list(map(self.lines.get, jobs))
        for i in compress(range(len(jobs)), map(ne, map(self.status.get, jobs), status)):
            lines[i] = _job_lines(jobs[i], task_text, group_text)
        done = cast(list[Lines], lines)
        self.status = dict(zip(jobs, status, strict=True))
        self.lines = dict(zip(jobs, done, strict=True))
        return done


def _print(
    ssn: Session, jobs: list[JobInfo], task_text: TaskTexts, group_text: PodGroupTexts
) -> None:
    """Log each job's lines: from the feed (:class:`_Feed`) when the conf keeps the job
    contract, else (or for a job without a pod group) each from :func:`_job_lines`."""
    if ssn.cache.carries_jobs and ssn.state.memo(_Feed)(ssn, jobs, task_text, group_text):
        return
    lines = [_job_lines(job, task_text, group_text) for job in jobs]
    ssn.log.each(PRINT_VERBOSITY, chain.from_iterable(lines))


@register_plugin
class LogprintPlugin(Plugin):
    """Logs each pending and each ready job at V(1) when the print action runs."""

    name: ClassVar[str] = "logprint"
    carries_jobs: ClassVar[bool] = True
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log
        log.v(5, "Enter logPrint plugin ...", SOURCE_ENTER)
        memory = process_memory(ssn)
        task_text = memory.get(TASK_TEXTS)
        if not isinstance(task_text, TaskTexts):
            task_text = memory[TASK_TEXTS] = TaskTexts()
        group_text = memory.get(POD_GROUP_TEXTS)
        if not isinstance(group_text, PodGroupTexts):
            group_text = memory[POD_GROUP_TEXTS] = PodGroupTexts()

        def print_jobs(jobs: list[JobInfo]) -> None:
            if not log.enabled(PRINT_VERBOSITY):
                return
            task_text.next_session()
            group_text.next_session()
            _print(ssn, jobs, task_text, group_text)

        ssn.add_print_fn(self.name, print_jobs)
        if log.enabled(5):
            leaving = sprintf("Leaving logPrint plugin. %s ...", go_arguments(self.arguments))
            log.v(5, leaving, SOURCE_LEAVING)
