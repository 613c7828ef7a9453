"""What an action and a plugin are (``framework/interface.go``, ``framework/event.go``).

This is the extension API: built-in and user plugins implement the same classes and
register themselves with :mod:`vspec.framework.registry`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Generic, Protocol, TypeVar

from vspec.api.resource import Resource, amounts
from vspec.api.task_info import TaskInfo
from vspec.framework.arguments import Arguments
from vspec.model.result import QueueResult

if TYPE_CHECKING:
    from vspec.api.job_info import JobInfo
    from vspec.framework.session import Session


@dataclass(frozen=True)
class ArgumentSpec:
    """One documented argument, listed by ``vspec plugins``."""

    name: str
    type: str
    default: str
    help: str = ""


T = TypeVar("T", int, float, bool, str)


class Argument(ArgumentSpec, Generic[T]):
    """An argument declared once, with its typed default: listed in ``arguments_spec``
    (what ``vspec plugins`` shows) and read with :meth:`read`, so the default is written
    in one place. Reading follows Go's type rules (:class:`Arguments`)."""

    type_name: ClassVar[str]
    value: T

    def __init__(self, name: str, default: T, help: str = "") -> None:
        if isinstance(default, bool):
            shown = str(default).lower()
        elif isinstance(default, str):
            shown = default
        else:
            shown = f"{default:g}"
        super().__init__(name, self.type_name, shown, help)
        object.__setattr__(self, "value", default)


class IntArgument(Argument[int]):
    """``read(arguments)`` is ``GetInt`` with the declared default; ``default`` stands in
    for it where a value persists across sessions (Volcano's singleton actions)."""

    type_name = "int"

    def read(self, arguments: Arguments, default: int | None = None) -> int:
        return arguments.get_int(self.name, self.value if default is None else default)


class FloatArgument(Argument[float]):
    type_name = "float"

    def read(self, arguments: Arguments, default: float | None = None) -> float:
        return arguments.get_float(self.name, self.value if default is None else default)


class BoolArgument(Argument[bool]):
    type_name = "bool"

    def read(self, arguments: Arguments, default: bool | None = None) -> bool:
        return arguments.get_bool(self.name, self.value if default is None else default)


class StrArgument(Argument[str]):
    type_name = "string"

    def read(self, arguments: Arguments, default: str | None = None) -> str:
        return arguments.get_str(self.name, self.value if default is None else default)


@dataclass
class Event:
    """``framework.Event``: the task an event handler is told was (de)allocated."""

    task: TaskInfo
    err: Exception | None = None


EventFn = Callable[[Event], None]


@dataclass
class EventHandler:
    """Called on allocate/pipeline/un-evict and on evict/un-pipeline/un-allocate."""

    allocate_func: EventFn | None = None
    deallocate_func: EventFn | None = None


@dataclass(frozen=True)
class QueueShares:
    """How a plugin that divides the cluster between queues sees one queue in this
    session (what ``vspec explain`` shows as the queue's state). None: unlimited."""

    deserved: Resource
    allocated: Resource
    capability: Resource | None
    real_capability: Resource | None  # capability cut by the other queues' guarantees
    guarantee: Resource
    request: Resource
    share: float

    @classmethod
    def of(cls, attr: _QueueAttr) -> QueueShares:
        """A copy of a plugin's per-queue attributes (``queueAttr``)."""
        return cls(
            deserved=attr.deserved.clone(),
            allocated=attr.allocated.clone(),
            capability=None if attr.capability is None else attr.capability.clone(),
            real_capability=None if attr.real_capability is None else attr.real_capability.clone(),
            guarantee=attr.guarantee.clone(),
            request=attr.request.clone(),
            share=attr.share,
        )

    def result(self, plugin: str) -> QueueResult:
        """What ``expect.queues`` checks, in the units a spec writes."""
        return QueueResult(
            plugin=plugin,
            deserved=amounts(self.deserved, keep_zero=True),
            allocated=amounts(self.allocated, keep_zero=True),
            request=amounts(self.request, keep_zero=True),
            guarantee=amounts(self.guarantee, keep_zero=True),
            capability={} if self.capability is None else amounts(self.capability, keep_zero=True),
            real_capability={}
            if self.real_capability is None
            else amounts(self.real_capability, keep_zero=True),
            share=self.share,
        )


@dataclass(frozen=True)
class EnqueueRoom:
    """What a plugin that votes on enqueue compares for a job with minResources, as it
    stands when asked: ``held`` (what is already allocated or promised) plus the job's
    minResources must fit within ``room`` in the dimensions the job asks for. ``where``
    says whose room it is (a queue's real capability, the cluster's overcommitted idle)."""

    where: str
    room: Resource
    held: Resource


class _QueueAttr(Protocol):
    @property
    def deserved(self) -> Resource: ...

    @property
    def allocated(self) -> Resource: ...

    @property
    def capability(self) -> Resource | None: ...

    @property
    def real_capability(self) -> Resource | None: ...

    @property
    def guarantee(self) -> Resource: ...

    @property
    def request(self) -> Resource: ...

    @property
    def share(self) -> float: ...


class Plugin(ABC):
    """A scheduler plugin: built from its arguments once per session.

    ``on_session_open`` registers session functions (``ssn.add_job_order_fn(self.name, fn)``
    ...) and event handlers; ``on_session_close`` may write statuses.
    """

    name: ClassVar[str]
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()
    # The job contract: True when this class changes a session's jobs only through
    # JobInfo's task methods (``add_task_info``, ``delete_task_info``,
    # ``update_task_status``, which the session's and statements' operations call), the
    # per-session fields a fresh clone resets (``nodes_fit_errors``, ``priority``,
    # ``schedule_start_timestamp``) and the pod group's status (phase, conditions,
    # counts; never its spec; the phase before the close through ``set_phase``), none
    # of it at session open (a session's first action sees its jobs as the snapshot
    # handed them: JobFeed), and holds no job past its session (but to know the same
    # object again, never read nor changed: SchedulerState.memo). When every action and
    # plugin of a conf says so, a job whose session touched none of its tasks is handed
    # to the next session instead of a fresh clone (vspec.framework.cache, "Carried
    # jobs"). Declared by each class itself, never inherited: a subclass may break what
    # its base kept.
    carries_jobs: ClassVar[bool] = False

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments

    @abstractmethod
    def on_session_open(self, ssn: Session) -> None: ...

    def on_session_close(self, ssn: Session) -> None:  # noqa: B027 - optional hook
        """Most plugins have nothing to do at close."""

    def queue_shares(self, queue_uid: str) -> QueueShares | None:
        """A plugin that keeps per-queue quotas says how it sees ``queue_uid``, so that a
        user can read why a queue is overused; the others keep none."""
        return None

    def enqueue_room(self, job: JobInfo) -> EnqueueRoom | None:
        """A plugin whose JobEnqueueable compares minResources with some room says which
        (for ``vspec explain`` on a job enqueue keeps Pending); the others none."""
        return None


@dataclass(frozen=True)
class Trace:
    """The V(5) lines an action's ``Execute`` logs on entry and, from a ``defer``, on
    leaving, with the Go ``file.go:line`` of each (a deferred call logs with the line of
    the function's closing brace)."""

    enter: str
    enter_at: str
    leaving: str
    leaving_at: str


class Action(ABC):
    """A scheduler action. One instance lives for a whole simulation, as Volcano's
    actions are process-wide singletons whose parsed arguments persist across sessions."""

    name: ClassVar[str]
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()
    trace: ClassVar[Trace | None] = None  # None: its Execute logs no such lines
    carries_jobs: ClassVar[bool] = False  # the job contract, as Plugin.carries_jobs says

    def initialize(self) -> None:  # noqa: B027 - optional hook
        """Called before every session's execute."""

    @abstractmethod
    def execute(self, ssn: Session) -> None: ...

    def uninitialize(self) -> None:  # noqa: B027 - optional hook
        """Called after every session's execute."""
