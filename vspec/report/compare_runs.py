"""``vspec compare``'s runs: one timeline per conf, in this process or in ``--workers``
processes, each run's progress handed to a view.

The confs are independent: each run loads the workload on its own (with its conf's
options and the command's seed) and runs its own clock, so a run in a worker process
gives the records the same run gives in this one. A conf whose run fails is reported and
the others still run, as one bad spec never stops the others; a workload that cannot be
loaded is the same error for every conf, so it stops the comparison.

The workers are forked, so that the plugins and actions the command imported (its
plugins dirs) are theirs too, and forked before the view starts drawing (rich draws
from a thread, which a fork must not copy mid-write). Their progress comes back through
a manager's queue, at most a few reports a second each.

Imports the harness's loader and the timeline; the view is the caller's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from vspec.errors import VspecError
from vspec.model.conf import SchedulerConf
from vspec.model.engine import Engine
from vspec.timeline.clock import Progress, ProgressHook
from vspec.timeline.records import TimelineResult

if TYPE_CHECKING:
    from concurrent.futures import Future
    from queue import Queue
    from types import TracebackType

SEND_EVERY = 0.25  # seconds between a worker's progress reports (its last one always goes)


@dataclass(frozen=True)
class ConfRun:
    """One conf to run: its column's name, its file, and the conf read from it."""

    name: str
    path: Path
    conf: SchedulerConf


@dataclass(frozen=True)
class Workload:
    """What every run shares: the workload file, the seed, and ``--until`` if given."""

    path: Path
    seed: int
    until: timedelta | None = None


@dataclass
class Run:
    name: str
    result: TimelineResult


@dataclass(frozen=True)
class Failure:
    """A conf's run that ended in an error; ``workload`` when the workload's own."""

    name: str
    message: str
    workload: bool = False


Outcome = Run | Failure


class ProgressView(Protocol):
    """What shows the runs' progress: entered while they run, told when each starts and
    where its clock is."""

    def __enter__(self) -> object: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...

    def started(self, name: str) -> None: ...

    def update(self, name: str, progress: Progress) -> None: ...


def run_confs(
    confs: list[ConfRun], workload: Workload, engine: Engine, view: ProgressView, workers: int = 1
) -> list[Outcome]:
    """Each conf's run, in the order of ``confs`` (up to the first workload error, which
    ends the comparison), in ``workers`` processes when more than one."""
    if workers > 1 and len(confs) > 1:
        return _in_processes(confs, workload, engine, view, workers)
    outcomes: list[Outcome] = []
    with view:
        for conf in confs:
            view.started(conf.name)
            outcome = run_one(conf, workload, engine, _named(view.update, conf.name))
            outcomes.append(outcome)
            if isinstance(outcome, Failure) and outcome.workload:
                break
    return outcomes


def run_one(
    conf: ConfRun, workload: Workload, engine: Engine, on_progress: ProgressHook | None
) -> Outcome:
    """One conf's run. An error is returned as a :class:`Failure`, not raised, so that the
    other runs go on and a worker's comes back as a value, with its message."""
    from vspec.harness.loader import load_workload
    from vspec.timeline.clock import run_timeline

    try:
        cluster, timeline = load_workload(
            workload.path, options=conf.conf.options, seed=workload.seed
        )
    except VspecError as exc:
        return Failure(conf.name, str(exc), workload=True)
    if workload.until is not None:
        timeline = replace(timeline, until=workload.until)
    try:
        result = run_timeline(
            conf.conf,
            cluster,
            timeline,
            seed=workload.seed,
            engine=engine,
            keep_logs=False,  # nothing here reads them; a week's would fill the memory
            on_progress=on_progress,
        )
    except VspecError as exc:
        return Failure(conf.name, f"{conf.path}: {exc}")
    return Run(conf.name, result)


def _named(update: Callable[[str, Progress], None], name: str) -> ProgressHook:
    return lambda progress: update(name, progress)


# -- in worker processes ---------------------------------------------------------------------

# A message from a worker: a run started (no progress yet) or where its clock is.
_Message = tuple[str, Progress | None]


def _in_processes(
    confs: list[ConfRun], workload: Workload, engine: Engine, view: ProgressView, workers: int
) -> list[Outcome]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    with context.Manager() as manager:
        queue: Queue[_Message | None] = manager.Queue()
        with ProcessPoolExecutor(min(workers, len(confs)), mp_context=context) as pool:
            # The pool forks all its workers at the first submit, before any thread runs.
            futures: list[Future[Outcome]] = [
                pool.submit(_run_in_worker, conf, workload, engine, queue) for conf in confs
            ]
            with view:
                listener = threading.Thread(target=_relay, args=(queue, view), daemon=True)
                listener.start()
                try:
                    outcomes = _collect(confs, futures)
                except BaseException:  # interrupted: the workers' runs may take hours
                    for child in multiprocessing.active_children():
                        child.terminate()
                    raise
                with suppress(EOFError, OSError):  # the manager gone: the relay is too
                    queue.put(None)
                listener.join()
    return outcomes


def _collect(confs: list[ConfRun], futures: list[Future[Outcome]]) -> list[Outcome]:
    """The outcomes in order, up to the first workload error (the runs not started yet
    are cancelled: they would fail the same way). A worker that dies (killed, out of
    memory) breaks the pool: its run and those not done fail, saying so."""
    from concurrent.futures.process import BrokenProcessPool

    outcomes: list[Outcome] = []
    for conf, future in zip(confs, futures, strict=True):
        try:
            outcome = future.result()
        except BrokenProcessPool:
            outcome = Failure(
                conf.name,
                f"{conf.path}: its worker process ended abruptly (killed, or out of memory?)",
            )
        outcomes.append(outcome)
        if isinstance(outcome, Failure) and outcome.workload:
            for rest in futures:
                rest.cancel()
            break
    return outcomes


def _relay(queue: Queue[_Message | None], view: ProgressView) -> None:
    """Hand the workers' messages to the view until told to stop, or until the manager
    is gone (the command interrupted)."""
    try:
        while (message := queue.get()) is not None:
            name, progress = message
            if progress is None:
                view.started(name)
            else:
                view.update(name, progress)
    except (EOFError, OSError):
        return


def _run_in_worker(
    conf: ConfRun, workload: Workload, engine: Engine, queue: Queue[_Message | None]
) -> Outcome:
    queue.put((conf.name, None))
    return run_one(conf, workload, engine, _Sender(conf.name, queue))


class _Sender:
    """A worker's progress hook: sends a report at most every :data:`SEND_EVERY` seconds
    (a session takes milliseconds; the queue is a round trip to the manager), and the
    last one."""

    def __init__(self, name: str, queue: Queue[_Message | None]) -> None:
        self.name, self.queue, self.sent = name, queue, 0.0

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if progress.done or now - self.sent >= SEND_EVERY:
            self.sent = now
            self.queue.put((self.name, progress))
