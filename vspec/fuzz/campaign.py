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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar, cast
from urllib.parse import urlsplit

from vspec.errors import VspecError

if TYPE_CHECKING:
    from queue import Queue

    from hypothesis.database import ExampleDatabase

    from vspec.harness.runner import Shard

REDIS_PORT = 6379
T = TypeVar("T")


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
        self.db.save(self._key("kinds"), kind.encode())
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

    def end(self, who: str, summary: dict[str, Any], *, sharded: bool) -> None:
        """A machine's share is done: a shard's summary is kept for ``--collect``; one
        machine's campaign, whose merged report was its only use, is forgotten."""
        if sharded:
            self.summarise(who, summary)
            return
        for kind in list(self.db.fetch(self._key("kinds"))):
            self._forget(f"claim:{kind.decode()}")
        for what in ("kinds", "findings", "summaries"):
            self._forget(what)

    def _forget(self, what: str) -> None:
        key = self._key(what)
        for value in list(self.db.fetch(key)):
            self.db.delete(key, value)

    def summaries(self) -> list[dict[str, Any]]:
        records = [json.loads(value) for value in self.db.fetch(self._key("summaries"))]
        return sorted(records, key=lambda r: str(r["by"]))


def write_findings(ledger: Ledger, out: Path) -> dict[str, Path]:
    """The files the campaign's processes published, written to ``out``: kind -> file
    (one per kind, should two processes have claimed one within their clocks' skew)."""
    written: dict[str, Path] = {}
    for record in ledger.findings():
        if record["kind"] not in written:
            out.mkdir(parents=True, exist_ok=True)
            path = out / record["file"]
            path.write_text(record["text"], encoding="utf-8")
            written[record["kind"]] = path
    return written


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
    started: float = field(default_factory=time.perf_counter)
    _counts: dict[str, tuple[int, int]] = field(default_factory=dict, init=False)

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


@dataclass
class Part:
    """One process of a campaign: the command line's options as the command resolved
    them, its shard of the campaign's whole, its name, the campaign's name, and the
    queue to the parent (None: it prints to stderr itself)."""

    args: argparse.Namespace
    slot: Shard
    name: str
    campaign: str
    queue: Queue[tuple[str, ...]] | None = None
    _ledger: Ledger | None = field(default=None, init=False, repr=False)

    def ledger(self) -> Ledger:
        """The campaign's ledger, opened in the process on first use."""
        if self._ledger is None:
            self._ledger = Ledger(open_database(self.args.database), self.campaign)
        return self._ledger

    def output(self) -> TextIO:
        """Where the process prints: the parent, line by line, with its name."""
        if self.queue is None:
            return sys.stderr
        return cast("TextIO", QueueWriter(self.queue, self.name))

    def count(self, done: int, found: int) -> None:
        """Tell the parent's progress line this process's counts so far."""
        if self.queue is not None:
            self.queue.put(("count", self.name, str(done), str(found)))


def run_parts(
    work: Callable[[Part], T],
    args: argparse.Namespace,
    campaign: str,
    noun: str,
    **resolved: Any,
) -> tuple[list[T], float]:
    """``work`` in each process of this machine's share of a campaign (``--shard`` cut
    in ``--workers``), given the options with ``resolved`` over them (the handler is
    left out: it cannot be sent); their results in order, and the wall time they took.
    Their lines and counts come back through one queue and are shown by a
    :class:`Progress`.

    The processes are forked, so that the plugins and actions the command imported (its
    plugins dirs) are the workers' too."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from vspec.harness.runner import Shard

    options = {k: v for k, v in vars(args).items() if k != "handler"}
    resolved_args = argparse.Namespace(**{**options, **resolved})
    machine = args.shard or Shard(1, 1)
    progress = Progress(sys.stderr, sys.stderr.isatty(), noun)
    context = multiprocessing.get_context("fork")
    with context.Manager() as manager:
        queue = manager.Queue()
        parts = [
            Part(resolved_args, slot, process_label(args.shard, n, args.workers), campaign, queue)
            for n, slot in enumerate(machine.split(args.workers))
        ]
        with (
            _listening(queue, progress),
            ProcessPoolExecutor(len(parts), mp_context=context) as pool,
        ):
            futures = [pool.submit(work, part) for part in parts]
            results = [future.result() for future in futures]
    return results, time.perf_counter() - progress.started
