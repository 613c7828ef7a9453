"""What an action and a plugin are (``framework/interface.go``, ``framework/event.go``).

This is the extension API: built-in and user plugins implement the same classes and
register themselves with :mod:`vspec.framework.registry`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from vspec.api.task_info import TaskInfo
from vspec.framework.arguments import Arguments

if TYPE_CHECKING:
    from vspec.framework.session import Session


@dataclass(frozen=True)
class ArgumentSpec:
    """One documented argument, listed by ``vspec plugins``."""

    name: str
    type: str
    default: str
    help: str = ""


@dataclass
class Event:
    task: TaskInfo
    err: Exception | None = None


EventFn = Callable[[Event], None]


@dataclass
class EventHandler:
    """Called on allocate/pipeline/un-evict and on evict/un-pipeline/un-allocate."""

    allocate_func: EventFn | None = None
    deallocate_func: EventFn | None = None


class Plugin(ABC):
    """A scheduler plugin: built from its arguments once per session.

    ``on_session_open`` registers session functions (``ssn.add_job_order_fn(self.name, fn)``
    ...) and event handlers; ``on_session_close`` may write statuses.
    """

    name: ClassVar[str]
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments

    @abstractmethod
    def on_session_open(self, ssn: Session) -> None: ...

    def on_session_close(self, ssn: Session) -> None:  # noqa: B027 - optional hook
        """Most plugins have nothing to do at close."""


class Action(ABC):
    """A scheduler action. One instance lives for a whole simulation, as Volcano's
    actions are process-wide singletons whose parsed arguments persist across sessions."""

    name: ClassVar[str]
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def initialize(self) -> None:  # noqa: B027 - optional hook
        """Called before every session's execute."""

    @abstractmethod
    def execute(self, ssn: Session) -> None: ...

    def uninitialize(self) -> None:  # noqa: B027 - optional hook
        """Called after every session's execute."""
