"""What a simulation returns: the observable outcome a spec's ``expect`` checks."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import chain, compress, count, repeat
from operator import attrgetter, is_not
from typing import Any, cast

from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster


class Severity(Enum):
    INFO = "I"
    WARNING = "W"
    ERROR = "E"


class LogLine:
    """One captured line. A line logged with :meth:`deferred` keeps its literal head and
    how to render the rest, and is formatted when ``text`` is first read: a session at
    verbosity 3 logs a line per failing (task, node) pair and almost none is read. Its
    arguments are kept as plain values (strings, shared lists), never the objects that
    produced them, so that the log holds as few objects as the texts would."""

    __slots__ = ("_args", "_message", "_render", "cycle", "severity", "source", "verbosity")

    def __init__(
        self,
        verbosity: int,  # the V level; warnings and errors are 0
        severity: Severity,
        text: str,
        cycle: int = 0,
        # ``file.go:line`` of the Volcano (or seed plugin) call that logs it, where vspec
        # knows it; the klog header (``--klog-header``) prints it.
        source: str = "",
    ) -> None:
        self.verbosity = verbosity
        self.severity = severity
        self._message = text
        self._render: Callable[..., str] | None = None
        self._args: tuple[Any, ...] = ()
        self.cycle = cycle
        self.source = source

    @classmethod
    def deferred(
        cls,
        verbosity: int,
        severity: Severity,
        head: str,
        render: Callable[..., str],
        args: tuple[Any, ...],
        cycle: int = 0,
        source: str = "",
    ) -> LogLine:
        """The line ``head + render(*args)`` (trailing newlines dropped), formatted on
        first read; ``args`` must not change afterwards."""
        line = cls(verbosity, severity, head, cycle, source)
        line._render, line._args = render, args
        return line

    @property
    def text(self) -> str:
        render = self._render
        if render is not None:
            self._message = (self._message + render(*self._args)).rstrip("\n")
            self._render, self._args = None, ()
        return self._message

    def startswith(self, prefix: str) -> bool:
        """``text.startswith(prefix)``, without rendering a deferred line whose literal
        head already decides it (the log invariants scan every line)."""
        if self._render is not None:
            head = self._message
            if len(head) >= len(prefix) or not prefix.startswith(head):
                return head.startswith(prefix)
        return self.text.startswith(prefix)

    def _key(self) -> tuple[int, Severity, str, int, str]:
        return (self.verbosity, self.severity, self.text, self.cycle, self.source)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LogLine) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"LogLine(verbosity={self.verbosity!r}, severity={self.severity!r}, "
            f"text={self.text!r}, cycle={self.cycle!r}, source={self.source!r})"
        )

    def __str__(self) -> str:
        return self.text


_HEAD = attrgetter("_message")  # a line's text, or a deferred line's head
_RENDER = attrgetter("_render")  # None once a line is formatted (or never deferred)


def line_texts(lines: Sequence[LogLine]) -> list[str]:
    """Each line's :attr:`~LogLine.text`, in order: the kept texts read in C loops, and
    only a deferred line not formatted yet asked for its own (formatting it). A check
    that reads every logprint line of every timeline session (about 150) otherwise
    calls the property once a line."""
    texts = list(map(_HEAD, lines))
    for i in compress(count(), map(is_not, map(_RENDER, lines), repeat(None))):
        texts[i] = lines[i].text
    return texts


def lines_starting_with(lines: Sequence[LogLine], prefix: str) -> list[LogLine]:
    """The lines of ``lines`` whose text starts with ``prefix``, in order, as
    :meth:`LogLine.startswith` tells them (no deferred line formatted that its head
    decides): tested on each line's kept text or head in C loops, and only a line
    whose head is too short to tell (a part of ``prefix``) asked itself. A timeline
    session's lines are a list, and logprint-correct reads logprint's from it."""
    heads = list(map(_HEAD, lines))
    # The method descriptor with the prefix repeated: a methodcaller looks the method up
    # on each text, making and dropping a bound method a line.
    keep = list(map(str.startswith, heads, repeat(prefix)))
    for i in compress(count(), map(prefix.startswith, heads)):
        keep[i] = lines[i].startswith(prefix)
    return list(compress(lines, keep))


class LogBlock:
    """``count`` lines logged at once with one head, kept as one record: line ``i`` is
    ``head + render(i)`` (trailing newlines dropped), formatted only when read. A task's
    predicate pass logs a line per failing node; as a block it costs one object and
    whatever compact form ``render`` reads (arrays of node rows and reason codes), which
    ``render`` must not see change."""

    __slots__ = ("count", "cycle", "head", "render", "severity", "source", "verbosity")

    def __init__(
        self,
        verbosity: int,
        severity: Severity,
        head: str,
        render: Callable[[int], str],
        count: int,
        cycle: int = 0,
        source: str = "",
    ) -> None:
        self.verbosity = verbosity
        self.severity = severity
        self.head = head
        self.render = render
        self.count = count
        self.cycle = cycle
        self.source = source

    def line(self, index: int) -> LogLine:
        """Line ``index``, itself formatted only when read (a scan of every line for a
        prefix the head rules out formats none)."""
        return LogLine.deferred(
            self.verbosity, self.severity, self.head, self.render, (index,), self.cycle, self.source
        )

    def lines(self) -> Iterator[LogLine]:
        return map(self.line, range(self.count))

    def may_start_with(self, prefix: str) -> bool:
        """False when the head alone rules out ``prefix`` for every line."""
        head = self.head
        if len(head) >= len(prefix):
            return head.startswith(prefix)
        return prefix.startswith(head)


class LogRecords(Sequence[LogLine]):
    """A session's log: a sequence of lines, stored as records (a line, or a
    :class:`LogBlock` of many). Indexing, slicing and iterating see lines; a block's
    lines are made when read and not kept. :meth:`starting_with` scans for lines with a
    prefix without making the lines of blocks whose head rules it out."""

    __slots__ = ("_block_records", "_block_starts", "_records", "_total")

    def __init__(self, lines: Iterable[LogLine] = ()) -> None:
        self._records: list[LogLine | LogBlock] = list(lines)
        self._total = len(self._records)
        # Per block: its index in _records and the line index of its first line.
        self._block_records: list[int] = []
        self._block_starts: list[int] = []

    def append(self, line: LogLine) -> None:
        self._records.append(line)
        self._total += 1

    def extend(self, lines: list[LogLine]) -> None:
        self._records.extend(lines)
        self._total += len(lines)

    def append_block(self, block: LogBlock) -> None:
        if block.count == 0:
            return
        self._block_records.append(len(self._records))
        self._block_starts.append(self._total)
        self._records.append(block)
        self._total += block.count

    def grow(self, block: LogBlock, count: int = 1) -> bool:
        """``count`` more lines of ``block`` (its ``render`` must then read them), when it
        is still the last record; False, and nothing changed, when a record came after it."""
        records = self._records
        if not records or records[-1] is not block:
            return False
        block.count += count
        self._total += count
        return True

    def clear(self) -> None:
        """Drop every line: what is logged next starts the log afresh (a timeline that
        keeps one session's lines at a time)."""
        self._records.clear()
        self._block_records.clear()
        self._block_starts.clear()
        self._total = 0

    def __len__(self) -> int:
        return self._total

    def __iter__(self) -> Iterator[LogLine]:
        if not self._block_records:  # lines alone (a session below V(3), most specs):
            return iter(cast(list[LogLine], self._records))  # walked in C
        return chain.from_iterable(self._runs())

    def _runs(self) -> Iterator[Iterable[LogLine]]:
        """The lines as runs: the lines between blocks (walked in C), each block's own.
        A session at V(3) logs some two hundred lines in a few blocks (allocate's turns)."""
        records, start = self._records, 0
        for at in self._block_records:
            yield cast(list[LogLine], records[start:at])
            yield cast(LogBlock, records[at]).lines()
            start = at + 1
        yield cast(list[LogLine], records[start:])

    def _line(self, index: int) -> LogLine:
        if index < 0:
            index += self._total
        if not 0 <= index < self._total:
            raise IndexError("log line index out of range")
        k = bisect_right(self._block_starts, index) - 1
        if k < 0:
            record = self._records[index]
        else:
            start = self._block_starts[k]
            block = self._records[self._block_records[k]]
            assert isinstance(block, LogBlock)
            if index < start + block.count:
                return block.line(index - start)
            record = self._records[self._block_records[k] + 1 + index - start - block.count]
        assert isinstance(record, LogLine)
        return record

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            if not self._block_records:  # every record is a line (a timeline's session)
                return self._records[index]
            return [self._line(i) for i in range(*index.indices(self._total))]
        return self._line(index)

    def starting_with(self, prefix: str) -> Iterator[LogLine]:
        """The lines whose text starts with ``prefix``, in order. A line already
        formatted is tested in place, without a call (a session of 50,000 pods logs
        hundreds of thousands of lines, and logprint-correct scans them all)."""
        for record in self._records:
            if isinstance(record, LogBlock):
                if record.may_start_with(prefix):
                    yield from (line for line in record.lines() if line.startswith(prefix))
            elif record._render is None:
                if record._message.startswith(prefix):
                    yield record
            elif record.startswith(prefix):
                yield record

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LogRecords({list(self)!r})"


@dataclass(frozen=True)
class Bind:
    """A pod bound to ``node`` in session ``cycle``: what Go's tests read from their fake binder."""

    task: str  # namespace/name
    node: str
    cycle: int = 0


@dataclass(frozen=True)
class Eviction:
    """A pod evicted in session ``cycle``, with the reason given: what Go's tests read
    from their fake evictor."""

    task: str  # namespace/name
    reason: str
    cycle: int = 0


@dataclass(frozen=True)
class RecordedEvent:
    """A Kubernetes event the scheduler recorded on a pod group."""

    object: str  # the job, namespace/name
    type: str  # Normal | Warning
    reason: str
    message: str
    cycle: int = 0


@dataclass
class PodGroupResult:
    """A job's pod group after the last session: close-time and in-session phases."""

    phase: str  # written by the job updater at close
    session_phase: str  # held in the session after the last action, before close
    conditions: list[Condition] = field(default_factory=list)


@dataclass
class TaskResult:
    """A task as the last session held it before closing: what Go's unit tests read."""

    node: str | None
    status: str  # TaskStatus name, in-session after the last action


@dataclass
class QueueResult:
    """A queue as the last session's queue-sharing plugin (proportion, capacity, or a user's
    that reports :meth:`~vspec.framework.interface.Plugin.queue_shares`) held it after the
    last action, in the units a spec writes (cores, bytes, devices)."""

    plugin: str
    deserved: dict[str, float]
    allocated: dict[str, float]
    request: dict[str, float]
    guarantee: dict[str, float]
    # Only the dimensions with a limit: a dimension missing is unlimited (MaxFloat64).
    capability: dict[str, float]
    real_capability: dict[str, float]
    share: float


@dataclass
class ProbeFailure:
    """One probe key whose value differs from what the engine computed."""

    probe: int  # index in the spec's probes list
    key: str
    message: str


@dataclass
class ProbeAnswer:
    """One probe's raw answers; only the keys the probe sets are filled."""

    # Set instead of the rest when the probe names a pod, pod group, node or queue the
    # engine cannot find.
    missing: str | None = None
    # PredicateFn's error text per node, None when it passes.
    predicates: dict[str, str | None] = field(default_factory=dict)
    # None stands for a score that is not a finite number.
    scores: dict[str, float | None] = field(default_factory=dict)
    plugin_scores: dict[str, dict[str, float | None]] = field(default_factory=dict)
    # The nodes allocate would choose among: one, or those tied for the best score
    # (the real Volcano draws among them at random).
    best: list[str] | None = None
    votes: dict[str, bool] = field(default_factory=dict)
    # JobValid: whether it passes, and "reason: message" when it does not.
    valid: tuple[bool, str] | None = None
    victims: list[str] | None = None
    order: list[str] | None = None


@dataclass
class SimulationResult:
    """What a run did, for the spec's expectations and the invariants to check: every
    session's binds, evictions and events, the last session's tasks and pod groups, and
    the cluster it left."""

    binds: list[Bind] = field(default_factory=list)
    evictions: list[Eviction] = field(default_factory=list)
    pipelined: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # job -> (task, node)
    pod_groups: dict[str, PodGroupResult] = field(default_factory=dict)
    tasks: dict[str, TaskResult] = field(default_factory=dict)
    logs: Sequence[LogLine] = field(default_factory=LogRecords)
    events: list[RecordedEvent] = field(default_factory=list)
    probe_failures: list[ProbeFailure] = field(default_factory=list)
    # What the engine answered to each probe (vspec diff compares them), and the keys
    # its answers cannot decide (a best node among ties on the real Volcano).
    probe_answers: list[ProbeAnswer] = field(default_factory=list)
    probe_undecided: list[str] = field(default_factory=list)
    cluster: Cluster | None = None  # the cluster after the last cycle
    # held pods (a Volcano Job's) that a controller created: ns/name -> the cycle at whose
    # start they first exist
    created: dict[str, int] = field(default_factory=dict)
    # queue name -> its shares in the last session, for the queues a plugin keeps shares
    # of; None: the engine does not report them (the real Volcano's)
    queues: dict[str, QueueResult] | None = None

    def bind_map(self) -> dict[str, str]:
        return {b.task: b.node for b in self.binds}
