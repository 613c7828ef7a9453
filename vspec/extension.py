"""The public API for writing plugins and actions, as Volcano users do in Go.

Import everything a plugin or action needs from here; these names are stable. A plugin
module defines a :class:`Plugin` subclass decorated with :func:`register_plugin`, and
in ``on_session_open`` registers session functions (``ssn.add_job_order_fn(self.name,
fn)``, ``ssn.add_predicate_fn(...)`` ...) exactly where a Go plugin calls
``ssn.AddJobOrderFn``. See ``docs/writing-a-plugin.md``.

Re-exports names of the api, the framework and the model; nothing in vspec imports it.
"""

from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import INFINITY, ZERO, Resource
from vspec.api.task_info import TaskInfo
from vspec.api.types import ABSTAIN, PERMIT, REJECT, Code, Status, TaskStatus, ValidateResult
from vspec.api.unschedule_info import FitError
from vspec.errors import GoError
from vspec.framework.arguments import Arguments
from vspec.framework.interface import (
    Action,
    ArgumentSpec,
    BoolArgument,
    EnqueueRoom,
    Event,
    EventHandler,
    FloatArgument,
    IntArgument,
    Plugin,
    QueueShares,
    StrArgument,
)
from vspec.framework.registry import register_action, register_plugin
from vspec.framework.session import Session
from vspec.framework.session_plugins import NodeLocalKeyFn
from vspec.framework.statement import Statement
from vspec.model.corev1 import Condition

__all__ = [
    "ABSTAIN",
    "INFINITY",
    "PERMIT",
    "REJECT",
    "ZERO",
    "Action",
    "ArgumentSpec",
    "Arguments",
    "BoolArgument",
    "Code",
    "Condition",
    "EnqueueRoom",
    "Event",
    "EventHandler",
    "FitError",
    "FloatArgument",
    "GoError",
    "IntArgument",
    "JobInfo",
    "NodeInfo",
    "NodeLocalKeyFn",
    "Plugin",
    "QueueInfo",
    "QueueShares",
    "Resource",
    "Session",
    "Statement",
    "Status",
    "StrArgument",
    "TaskInfo",
    "TaskStatus",
    "ValidateResult",
    "register_action",
    "register_plugin",
]
