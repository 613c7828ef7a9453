"""Campaigns beyond one process: ``--workers N`` processes on one machine and ``--shard K/N``
machines, sharing Hypothesis' example database (a directory, or a Redis server through
Hypothesis' own :class:`~hypothesis.extra.redis.RedisExampleDatabase`).

Each process of a campaign is one :class:`~vspec.harness.runner.Shard` of the campaign's
whole (a machine's shard split by :meth:`~vspec.harness.runner.Shard.split`), and takes
the batch seeds, spec files or examples of its residue, so that the processes explore
apart and together cover what one process would. What they find is shared twice over:
Hypothesis replays the failing examples another process saved (its database), and a
:class:`Ledger` in the same database records which process owns each finding, so that
the others replay it without shrinking or reporting it again, and keeps each shard's
summary and finding files for ``--collect`` to merge.

The processes are a :class:`concurrent.futures.ProcessPoolExecutor`'s; their lines come
back through one queue to the parent, which prints them (each prefixed with its
process) and redraws one progress line for them all.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

from vspec.errors import VspecError
from vspec.fuzz import DIFF_DATABASE

if TYPE_CHECKING:
    from queue import Queue

    from hypothesis.database import ExampleDatabase

    from vspec.diff.judge import Judge
    from vspec.fuzz.diff import DiffReport, Disagreement
    from vspec.fuzz.runner import FuzzReport
    from vspec.harness.runner import Shard

REDIS_PORT = 6379


def campaign_name(command: str, what: str, *, sharded: bool) -> str:
    """What the ledger names a campaign by: its command, what it runs (space, options,
    seed) and, for one machine's workers, this run (a rerun is another campaign; the
    shards of N machines are one campaign by their common seed, a restarted one too)."""
    run = "" if sharded else f":{os.getpid()}-{time.time_ns()}"
    return f"{command}:{what}{run}"


def redis_address(url: str) -> tuple[str, int, int]:
    """Host, port and database number of ``redis://HOST[:PORT][/DB]``; a ValueError
    saying what is wrong otherwise."""
    parts = urlsplit(url)
    try:
        port = parts.port or REDIS_PORT
    except ValueError:
        port = -1
    db = parts.path.strip("/") or "0"
    if parts.scheme != "redis" or not parts.hostname or port < 0 or not db.isdigit():
        raise ValueError(f"{url!r} is not a directory or redis://HOST:PORT[/DB]")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{url!r}: only redis://HOST:PORT[/DB] is understood")
    return parts.hostname, port, int(db)


def open_database(location: Path | str) -> ExampleDatabase:
    """The example database at ``location``: a directory, or a Redis URL (whose server
    must answer now, lest every process fail on its own later)."""
    if isinstance(location, Path):
        from hypothesis.database import DirectoryBasedExampleDatabase

        return DirectoryBasedExampleDatabase(str(location))
    from hypothesis.extra.redis import RedisExampleDatabase
    from redis import Redis
    from redis.exceptions import RedisError

    host, port, db = redis_address(location)
    client = Redis(host=host, port=port, db=db, socket_connect_timeout=10)
    try:
        client.ping()
    except RedisError as exc:
        raise VspecError(
            f"--database {location}: the Redis server does not answer ({exc})"
        ) from None
    return RedisExampleDatabase(client)


def process_label(shard: Shard | None, worker: int, workers: int) -> str:
    """How a process is named in the lines it prints and in the ledger."""
    parts = [f"shard {shard.index}/{shard.count}"] if shard is not None else []
    if workers > 1:
        parts.append(f"worker {worker + 1}/{workers}")
    return ", ".join(parts) or "main"


def share(total: int | None, slot: Shard) -> int | None:
    """The part of ``total`` examples the process ``slot`` of a campaign runs."""
    if total is None:
        return None
    return total // slot.count + (slot.index <= total % slot.count)


# -- the ledger -------------------------------------------------------------------------


@dataclass
class Ledger:
    """A campaign's records in its example database: who owns each finding, the finding
    files, and each process's summary. A campaign is named by its command, space and
    seed, the same on every machine of it.

    Owning a finding is a race the earliest claim wins: each process saves its claim
    (a wall-clock time and its name) and reads them all back. Two that claim within
    their clocks' skew may each think they were first, so the machines' clocks should
    be kept in step (NTP, as a cluster's are)."""

    db: ExampleDatabase
    campaign: str

    def _key(self, what: str) -> bytes:
        return f"vspec-campaign:{self.campaign}:{what}".encode()

    def claim(self, kind: str, who: str) -> str:
        """Claim ``kind`` for ``who``: the owner (``who`` if its claim was first)."""
        self.db.save(self._key(f"claim:{kind}"), f"{time.time_ns():020d} {who}".encode())
        return self.owner(kind) or who

    def owner(self, kind: str) -> str | None:
        claims = sorted(value.decode() for value in self.db.fetch(self._key(f"claim:{kind}")))
        return claims[0].split(" ", 1)[1] if claims else None

    def publish(self, kind: str, path: Path, who: str) -> None:
        """A finding's file, for ``--collect`` on any machine."""
        record = {"kind": kind, "file": path.name, "by": who, "text": path.read_text("utf-8")}
        self.db.save(self._key("findings"), json.dumps(record, sort_keys=True).encode())

    def findings(self) -> list[dict[str, str]]:
        records = [json.loads(value) for value in self.db.fetch(self._key("findings"))]
        return sorted(records, key=lambda r: (r["kind"], r["file"]))

    def summarise(self, who: str, summary: dict[str, Any]) -> None:
        """A process's summary; a process run again (a pod restarted) replaces its own."""
        for value in list(self.db.fetch(self._key("summaries"))):
            if json.loads(value)["by"] == who:
                self.db.delete(self._key("summaries"), value)
        record = json.dumps({**summary, "by": who}, sort_keys=True).encode()
        self.db.save(self._key("summaries"), record)

    def summaries(self) -> list[dict[str, Any]]:
        records = [json.loads(value) for value in self.db.fetch(self._key("summaries"))]
        return sorted(records, key=lambda r: str(r["by"]))


# -- the processes ----------------------------------------------------------------------


class QueueWriter:
    """A text stream a worker prints to: each line goes to the parent, with the
    worker's name."""

    def __init__(self, queue: Queue[tuple[str, ...]], who: str) -> None:
        self.queue, self.who, self._partial = queue, who, ""

    def write(self, text: str) -> int:
        self._partial += text
        *lines, self._partial = self._partial.split("\n")
        for line in lines:
            self.queue.put(("line", self.who, line))
        return len(text)

    def flush(self) -> None:
        return None


@dataclass
class Progress:
    """The parent's side of the queue: each worker's lines, prefixed with its name, and
    (on a terminal) one progress line of the campaign's totals, redrawn in place."""

    out: TextIO
    live: bool
    noun: str  # what is counted: "examples", "specs compared"
    started: float = 0.0

    def __post_init__(self) -> None:
        self.started = time.perf_counter()
        self._counts: dict[str, tuple[int, int]] = {}

    def handle(self, message: tuple[str, ...]) -> None:
        if message[0] == "line":
            _, who, line = message
            self._draw("")
            print(f"[{who}] {line}" if line else "", file=self.out, flush=True)
        else:
            _, who, done, found = message
            self._counts[who] = (int(done), int(found))
        self._draw(self.line())

    def line(self) -> str:
        done = sum(d for d, _ in self._counts.values())
        found = sum(f for _, f in self._counts.values())
        seconds = time.perf_counter() - self.started
        rate = done / seconds if seconds else 0.0
        return (
            f"{len(self._counts)} process(es): {done} {self.noun} in {seconds:.1f}s "
            f"({rate:.1f}/s), {found} finding(s)"
        )

    def _draw(self, text: str) -> None:
        if self.live:
            print(f"\r\x1b[K{text}", end="", file=self.out, flush=True)

    def end(self) -> None:
        self._draw("")


@contextmanager
def _listening(queue: Queue[tuple[str, ...]], progress: Progress) -> Iterator[None]:
    """A thread handing the workers' messages to ``progress`` while the block runs."""

    def listen() -> None:
        while (message := queue.get()) != ("end",):
            progress.handle(message)

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    try:
        yield
    finally:
        queue.put(("end",))
        thread.join()
        progress.end()


def run_processes(work: Callable[..., Any], tasks: Iterable[Any], progress: Progress) -> list[Any]:
    """``work(task, queue)`` for each task, each in its own process, their lines and
    counts shown by ``progress``; their results in the tasks' order.

    Forked, so that the plugins and actions the command imported (its plugins dirs) are
    the workers' too."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    tasks = list(tasks)
    context = multiprocessing.get_context("fork")
    with context.Manager() as manager:
        queue = manager.Queue()
        with (
            _listening(queue, progress),
            ProcessPoolExecutor(len(tasks), mp_context=context) as pool,
        ):
            futures = [pool.submit(work, task, queue) for task in tasks]
            return [future.result() for future in futures]


def plain(args: argparse.Namespace) -> argparse.Namespace:
    """The command line's options without its handler, for a worker to be sent."""
    return argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "handler"})


# -- vspec fuzz -------------------------------------------------------------------------


def fuzz_campaign_name(args: argparse.Namespace, seed: int, *, sharded: bool) -> str:
    """A ``vspec fuzz`` campaign's name: its space, the options that change its
    findings, its seed."""
    options = "".join(f":{flag}" for flag in ("timelines", "diff") if getattr(args, flag))
    return campaign_name("fuzz", f"{args.space}{options}:{seed}", sharded=sharded)


@dataclass(frozen=True)
class FuzzTask:
    """One process's share of a ``vspec fuzz`` campaign."""

    args: argparse.Namespace
    slot: Shard
    name: str
    seconds: float | None
    seed: int
    shrink: float
    campaign: str


def campaign_fuzz(
    args: argparse.Namespace, *, seconds: float | None, seed_value: int, shrink: float
) -> FuzzReport:
    """This machine's share of a campaign, in ``--workers`` processes; their reports
    merged, and kept in the ledger as this shard's summary."""
    from vspec.harness.runner import Shard

    machine = args.shard or Shard(1, 1)
    name = fuzz_campaign_name(args, seed_value, sharded=args.shard is not None)
    ledger = Ledger(open_database(args.database), name)
    options = plain(args)
    tasks = [
        FuzzTask(
            options,
            slot,
            process_label(args.shard, n, args.workers),
            seconds,
            seed_value,
            shrink,
            name,
        )
        for n, slot in enumerate(machine.split(args.workers))
    ]
    progress = Progress(sys.stderr, sys.stderr.isatty(), "examples")
    reports = run_processes(_fuzz_process, tasks, progress)
    report = merge_fuzz_reports(reports, time.perf_counter() - progress.started)
    who = process_label(args.shard, 0, 1)
    ledger.summarise(who, {"examples": report.examples, "seconds": report.seconds})
    return report


def _fuzz_process(task: FuzzTask, queue: Queue[tuple[str, ...]]) -> FuzzReport:
    from vspec.fuzz.runner import Fuzzer, _engines, _space, hypothesis_home
    from vspec.harness.attribution import cache_dir

    args = task.args
    engine, oracle = _engines(args)
    name = task.name

    def counted(report: FuzzReport) -> None:
        queue.put(("count", name, str(report.examples), str(len(report.findings))))

    fuzzer = Fuzzer(
        _space(args),
        engine,
        args.out,
        args.database,
        QueueWriter(queue, name),  # type: ignore[arg-type]
        shrink_seconds=task.shrink,
        first=args.first,
        oracle=oracle,
        slot=task.slot,
        name=name,
        ledger=Ledger(open_database(args.database), task.campaign),
        on_batch=counted,
    )
    with hypothesis_home(cache_dir(Path.cwd()) / "hypothesis"):
        return fuzzer.run(
            seconds=task.seconds, examples=share(args.examples, task.slot), seed_value=task.seed
        )


def merge_fuzz_reports(reports: Iterable[FuzzReport], seconds: float) -> FuzzReport:
    """One report of a campaign's processes: examples and coverage summed, each finding
    once (its owner's), and the findings another machine owns."""
    from vspec.fuzz.runner import FuzzReport

    merged = FuzzReport(seconds=seconds)
    reports = list(reports)
    for report in reports:
        merged.examples += report.examples
        merged.coverage.merge(report.coverage)
        for kind, path in report.findings.items():
            if kind not in merged.findings:
                merged.findings[kind] = path
                merged.shrinks[kind] = report.shrinks[kind]
    for report in reports:
        for kind, owner in report.replayed.items():
            if kind not in merged.findings:
                merged.replayed.setdefault(kind, owner)
    return merged


def collect(args: argparse.Namespace) -> tuple[FuzzReport, int]:
    """A sharded campaign's findings written to ``args.out``, and its summary: the
    shards' examples summed over the longest shard's time (they ran side by side)."""
    from vspec.fuzz.runner import FuzzReport

    ledger = Ledger(open_database(args.database), fuzz_campaign_name(args, args.seed, sharded=True))
    summaries = ledger.summaries()
    report = FuzzReport(
        examples=sum(int(s["examples"]) for s in summaries),
        seconds=max((float(s["seconds"]) for s in summaries), default=0.0),
    )
    for record in ledger.findings():
        if record["kind"] in report.findings:
            continue  # two processes that claimed it within their clocks' skew
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / record["file"]
        path.write_text(record["text"], encoding="utf-8")
        report.findings[record["kind"]] = path
    return report, len(summaries)


# -- vspec diff -------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffTask:
    """One process's share of a ``vspec diff`` campaign."""

    args: argparse.Namespace
    spaces: list[str]
    slot: Shard
    name: str
    seconds: float | None
    seed: int
    campaign: str


def campaign_diff(
    args: argparse.Namespace, spaces: list[str], *, seconds: float | None, seed: int
) -> DiffReport:
    """This machine's share of a ``vspec diff`` campaign in ``--workers`` processes, each
    with its own real engine; their reports merged, each space's set of aspects shrunk
    and written by the one process that claimed it first."""
    from vspec.fuzz.diff import DiffReport
    from vspec.harness.attribution import cache_dir
    from vspec.harness.runner import Shard

    if args.database is None:
        args.database = cache_dir(Path.cwd()) / DIFF_DATABASE
    machine = args.shard or Shard(1, 1)
    name = campaign_name("diff", f"{','.join(spaces)}:{seed}", sharded=args.shard is not None)
    open_database(args.database)  # a Redis server that does not answer: one error, now
    options = plain(args)
    tasks = [
        DiffTask(
            options, spaces, slot, process_label(args.shard, n, args.workers), seconds, seed, name
        )
        for n, slot in enumerate(machine.split(args.workers))
        for label in [process_label(args.shard, n, args.workers)]
    ]
    progress = Progress(sys.stderr, sys.stderr.isatty(), "specs compared")
    merged = DiffReport()
    for report in run_processes(_diff_process, tasks, progress):
        merged.merge(report)
    merged.disagreements = _with_owners_here(merged.disagreements)
    return merged


def _diff_process(task: DiffTask, queue: Queue[tuple[str, ...]]) -> DiffReport:
    from vspec.fuzz.diff import Campaign, compare_all

    args = task.args
    ledger = Ledger(open_database(args.database), task.campaign)

    def counted(report: DiffReport) -> None:
        queue.put(("count", task.name, str(report.total), str(len(report.disagreements))))

    def campaign(judge: Judge) -> Campaign:
        return Campaign(
            judge,
            args.out,
            args.shrink_seconds,
            QueueWriter(queue, task.name),  # type: ignore[arg-type]
            slot=task.slot,
            name=task.name,
            ledger=ledger,
            on_compare=counted,
        )

    return compare_all(args, task.spaces, seconds=task.seconds, seed=task.seed, campaign=campaign)


def _with_owners_here(found: list[Disagreement]) -> list[Disagreement]:
    """The disagreements another process of this machine owns, pointed at the one it
    wrote (as a single process's repeats are); those a process elsewhere owns stay so."""
    from dataclasses import replace

    written = {
        (d.subject.source, d.verdict.comparison.aspects): d for d in found if d.path is not None
    }
    out = []
    for d in found:
        here = written.get((d.subject.source, d.verdict.comparison.aspects))
        if d.owner is not None and here is not None:
            d = replace(d, path=here.path, like=here, owner=None)
        out.append(d)
    return out
