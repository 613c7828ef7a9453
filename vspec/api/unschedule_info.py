"""Fit errors and the messages users see for them (``api/unschedule_info.go``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol, cast

from vspec.api.types import Code, Status
from vspec.errors import GoError

NODE_POD_NUMBER_EXCEEDED = "node(s) pod number exceeded"
NODE_RESOURCE_FIT_FAILED = "node(s) resource fit failed"
ALL_NODE_UNAVAILABLE_MSG = "all nodes are unavailable"
POD_REASON_UNSCHEDULABLE = "Unschedulable"
POD_REASON_SCHEDULABLE = "Schedulable"


def histogram(reasons: Iterable[str]) -> list[str]:
    """``"<count> <reason>"`` entries sorted as strings, as Volcano sorts them."""
    return sorted(f"{n} {reason}" for reason, n in Counter(reasons).items())


class FitError(GoError):
    """Why one task does not fit one node: a set of statuses."""

    def __init__(
        self, task_namespace: str, task_name: str, node_name: str, statuses: list[Status]
    ) -> None:
        super().__init__()
        self.task_namespace = task_namespace
        self.task_name = task_name
        self.node_name = node_name
        self.statuses = statuses

    @classmethod
    def of(cls, task: _Named, node_name: str, *messages: str) -> FitError:
        """``NewFitError``: every message becomes a status with code Error."""
        return cls(task.namespace, task.name, node_name, [Status(Code.Error, m) for m in messages])

    @classmethod
    def with_status(cls, task: _Named, node_name: str, *statuses: Status) -> FitError:
        return cls(task.namespace, task.name, node_name, list(statuses))

    def reasons(self) -> list[str]:
        return [s.reason for s in self.statuses if s.reason]

    def has_code(self, *codes: Code) -> bool:
        for status in self.statuses:  # noqa: SIM110 - a loop is faster here
            if status.code in codes:
                return True
        return False

    def __str__(self) -> str:
        return fit_error_text(self.task_namespace, self.task_name, self.node_name, self.statuses)


def fit_error_text(namespace: str, name: str, node_name: str, statuses: list[Status]) -> str:
    """``FitError.Error()``, from the error's parts (a deferred log line keeps only these)."""
    reasons = ", ".join([s.reason for s in statuses if s.reason])
    return f"task {namespace}/{name} on node {node_name} fit failed: {reasons}"


class _Named(Protocol):
    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...


class _Ints(Protocol):
    """A list of ints or a numpy integer array."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Any]: ...


class FitErrors:
    """All nodes' fit errors for one task (``FitErrors``).

    Filled node by node (:meth:`set_node_error`), or at once from reason codes
    (:meth:`of_codes`). A node's error may be given as the statuses of this task's
    FitError there: a task that fails on most nodes then builds no FitError until
    ``nodes`` is read (almost never: the message and the unresolvable nodes are computed
    from the statuses)."""

    def __init__(self, task: _Named | None = None) -> None:
        # Per node: its FitError, or the statuses of ``task``'s FitError there.
        self._entries: dict[str, FitError | list[Status]] = {}
        self._task = ("", "") if task is None else (task.namespace, task.name)
        self._unbuilt = False  # some entry is statuses
        self._coded: _CodedErrors | None = None
        self.err = ""

    @classmethod
    def of_codes(
        cls,
        task: _Named,
        names: Sequence[str],
        rows: _Ints,
        codes: _Ints,
        statuses: Sequence[list[Status]],
    ) -> FitErrors:
        """Node ``names[rows[i]]`` failed with ``statuses[codes[i] - 1]``, in that order
        (the sequences must not change afterwards)."""
        fe = cls()
        fe._coded = _CodedErrors(task.namespace, task.name, names, rows, codes, statuses)
        return fe

    @property
    def nodes(self) -> dict[str, FitError]:
        coded = self._coded
        if coded is not None:
            self._entries = dict(coded.materialise())
            self._coded = None
        entries = self._entries
        if self._unbuilt:
            namespace, name = self._task
            for node, entry in entries.items():
                if isinstance(entry, list):
                    entries[node] = FitError(namespace, name, node, entry)
            self._unbuilt = False
        return cast(dict[str, FitError], entries)  # every entry is a FitError now

    def set_node_error(self, node_name: str, err: Exception | list[Status]) -> None:
        """``SetNodeError``; ``err`` may be the statuses of this task's FitError on the
        node. Quirk kept: a FitError set on several nodes is renamed to the last one
        (Go's FitErrors keeps the pointer)."""
        if self._coded is not None:
            self.nodes  # noqa: B018 - the coded errors become entries first
        if isinstance(err, list):
            self._entries[node_name] = err
            self._unbuilt = True
        else:
            self._entries[node_name] = node_fit_error(node_name, err)

    def entries(self) -> dict[str, FitError | list[Status]]:
        """The node -> error dict, for a caller that fills it in place as
        :meth:`set_node_error` would (a FitError as :func:`node_fit_error` makes it,
        or the statuses of this task's FitError)."""
        if self._coded is not None:
            self.nodes  # noqa: B018 - the coded errors become entries first
        self._unbuilt = True
        return self._entries

    def unschedulable_and_unresolvable_nodes(self) -> set[str]:
        coded = self._coded
        if coded is not None:
            return coded.names_with_code(Code.UnschedulableAndUnresolvable)
        wanted = Code.UnschedulableAndUnresolvable
        return {
            name
            for name, entry in self._entries.items()
            if any(s.code is wanted for s in _statuses(entry))
        }

    def __str__(self) -> str:
        coded = self._coded
        count = len(coded.rows) if coded is not None else len(self._entries)
        if not self.err:
            # Quirk: N counts the nodes that have an error, not the cluster size.
            self.err = f"0/{count} nodes are unavailable"
        if not count:
            return self.err
        if coded is not None:
            entries = coded.histogram()
        else:
            entries = histogram(
                s.reason for e in self._entries.values() for s in _statuses(e) if s.reason
            )
        return f"{self.err}: {', '.join(entries)}."


def node_fit_error(node_name: str, err: Exception) -> FitError:
    """``err`` as the FitError of ``node_name``: a FitError renamed, another error
    wrapped."""
    if isinstance(err, FitError):
        err.node_name = node_name
        return err
    return FitError("", "", node_name, [Status(Code.Error, str(err))])


def _statuses(entry: FitError | list[Status]) -> list[Status]:
    return entry if isinstance(entry, list) else entry.statuses


class _CodedErrors:
    """Fit errors as reason codes per node row (see :meth:`FitErrors.of_codes`)."""

    __slots__ = ("codes", "name", "names", "namespace", "rows", "statuses")

    def __init__(
        self,
        namespace: str,
        name: str,
        names: Sequence[str],
        rows: _Ints,
        codes: _Ints,
        statuses: Sequence[list[Status]],
    ) -> None:
        self.namespace, self.name = namespace, name
        self.names, self.rows, self.codes, self.statuses = names, rows, codes, statuses

    def materialise(self) -> dict[str, FitError]:
        names, statuses = self.names, self.statuses
        out = {}
        for row, code in zip(self.rows, self.codes, strict=True):
            node = names[row]
            out[node] = FitError(self.namespace, self.name, node, statuses[code - 1])
        return out

    def names_with_code(self, code: Code) -> set[str]:
        wanted = {k + 1 for k, sts in enumerate(self.statuses) if any(s.code is code for s in sts)}
        return {self.names[r] for r, c in zip(self.rows, self.codes, strict=True) if c in wanted}

    def histogram(self) -> list[str]:
        """``histogram`` of every node's reasons, counted per code."""
        reasons: Counter[str] = Counter()
        # A numpy array's codes as Python ints in one call (a task that fits nowhere
        # has a code per node: 5,000 in W3); the sums do not depend on their order.
        tolist = getattr(self.codes, "tolist", None)
        codes = tolist() if tolist is not None else [int(c) for c in self.codes]
        for code, n in Counter(codes).items():
            for status in self.statuses[code - 1]:
                if status.reason:
                    reasons[status.reason] += n
        return sorted(f"{n} {reason}" for reason, n in reasons.items())


def insufficient_resource_reason(resources: list[str]) -> str:
    """``WrapInsufficientResourceReason``: only the first short dimension is named."""
    return f"Insufficient {resources[0]}" if resources else ""
