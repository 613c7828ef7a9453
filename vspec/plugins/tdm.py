"""tdm (time division multiplexing): revocable nodes lend their capacity to preemptable
workloads during daily time windows (``plugins/tdm/tdm.go``).

A node joins zone ``rz`` with the label ``volcano.sh/revocable-zone: rz``; the window of
each zone is the argument ``tdm.revocable-zone.<rz>: "HH:MM-HH:MM"``. Inside the window
only tasks that may use revocable nodes (annotation ``volcano.sh/revocable-zone: "*"``,
or a preemptable pod) are placed there; outside it, VictimTasks evicts them, at most
once per ``tdm.evict.period``. Volcano reads the wall clock in the scheduler's time
zone; vspec reads the session clock (``ssn.now``, in its own zone, UTC by default).
"""

from __future__ import annotations

import contextlib
import math
import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, ClassVar

from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT, REJECT, Code, Status, TaskStatus
from vspec.api.unschedule_info import FitError
from vspec.errors import GoError
from vspec.framework.arguments import Arguments
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.registry import register_plugin
from vspec.golang import parse_duration
from vspec.plugins._job_accounting import format_tasks
from vspec.plugins._process_state import process_memory

if TYPE_CHECKING:
    from vspec.framework.session import Session

REVOCABLE_ZONE_PREFIX = "tdm.revocable-zone."
EVICT_PERIOD = "tdm.evict.period"
DEFAULT_EVICT_PERIOD = timedelta(minutes=1)
DEFAULT_POD_EVICT_NUM = 1
MAX_NODE_SCORE = 100.0
LAST_EVICT_AT = "tdm.lastEvictAt"  # key in the scheduler state that outlives sessions
_INT = re.compile(r"^[+-]?\d+$")


class RevocableZoneError(GoError):
    """A zone is unknown, malformed or outside its window."""


def parse_clock(text: str) -> tuple[int, int]:
    """``time.Parse("15:04", text)``: hour and minute, or Go's error message (its hour
    one or two digits, then ``:``, then exactly two digits of minute, then nothing)."""
    hour, rest = _go_number(text, fixed=False)
    if hour is None:
        raise RevocableZoneError(_cannot_parse(text, rest, "15"))
    if hour > 23:
        raise RevocableZoneError(f'parsing time "{text}": hour out of range')
    if not rest.startswith(":"):
        raise RevocableZoneError(_cannot_parse(text, rest, ":"))
    minute, tail = _go_number(rest[1:], fixed=True)
    if minute is None:
        raise RevocableZoneError(_cannot_parse(text, rest[1:], "04"))
    if minute > 59:
        raise RevocableZoneError(f'parsing time "{text}": minute out of range')
    if tail:
        raise RevocableZoneError(f'parsing time "{text}": extra text: "{tail}"')
    return hour, minute


def _go_number(text: str, *, fixed: bool) -> tuple[int | None, str]:
    """Go's ``getnum``: two digits, or one when not ``fixed``; None (and ``text``) when
    there are too few."""
    digits = 0
    while digits < 2 and digits < len(text) and text[digits] in "0123456789":
        digits += 1
    if digits == 0 or (fixed and digits < 2):
        return None, text
    return int(text[:digits]), text[digits:]


def _cannot_parse(text: str, element: str, layout: str) -> str:
    """Go's ``ParseError`` without a message."""
    return f'parsing time "{text}" as "15:04": cannot parse "{element}" as "{layout}"'


def zone_window(raw: str, now: datetime) -> tuple[datetime, datetime]:
    """``parseRevocableZone``: today's window; an end not after the start is tomorrow.

    Quirk kept: the window always starts today, so in an overnight window such as
    22:00-06:00 the early-morning part (00:00-06:00) is outside it.
    """
    parts = raw.strip().split("-")
    if len(parts) != 2:
        raise RevocableZoneError(f"revocable zone {raw} format error")
    (h1, m1), (h2, m2) = parse_clock(parts[0]), parse_clock(parts[1])
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    start = day + timedelta(hours=h1, minutes=m1)
    end = day + timedelta(hours=h2, minutes=m2)
    if (h1, m1) >= (h2, m2):
        end += timedelta(days=1)
    return start, end


def parse_int_or_percent(text: str, total: int) -> int | str:
    """``intstr.Parse`` then ``GetValueFromIntOrPercent`` (rounding up): the value, or
    the error message."""
    if _INT.match(text):
        return int(text)
    if not text.endswith("%"):
        return "invalid value for IntOrString: invalid type: string is not a percentage"
    number = text[:-1]
    if not _INT.match(number):
        return (
            f'invalid value for IntOrString: invalid value "{text}": '
            f'strconv.Atoi: parsing "{number}": invalid syntax'
        )
    return math.ceil(int(number) * total / 100)


@register_plugin
class TdmPlugin(Plugin):
    """Revocable nodes usable by preemptable tasks inside daily time windows."""

    name: ClassVar[str] = "tdm"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (
        ArgumentSpec(
            "tdm.revocable-zone.<zone>",
            "string",
            "none",
            'the daily window of revocable zone <zone>, "HH:MM-HH:MM"',
        ),
        ArgumentSpec(
            EVICT_PERIOD,
            "duration",
            "1m",
            "least time between two evictions of tasks left on closed revocable zones",
        ),
    )

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)
        self.revocable_zone: dict[str, str] = {}
        for key, value in arguments.items():
            if REVOCABLE_ZONE_PREFIX in key:
                # Volcano asserts the value is a string (a panic otherwise).
                self.revocable_zone[key.replace(REVOCABLE_ZONE_PREFIX, "", 1)] = str(value)
        self.evict_period = DEFAULT_EVICT_PERIOD
        period = arguments.get(EVICT_PERIOD)
        if period is not None:
            with contextlib.suppress(ValueError):  # an unparsable period keeps the default
                self.evict_period = parse_duration(str(period))

    def available_revocable_zone(self, zone: str, now: datetime) -> None:
        """Raise unless ``zone`` is configured and ``now`` is inside its window."""
        raw = self.revocable_zone.get(zone)
        if raw is None:
            raise RevocableZoneError(f"revocable zone {zone} not support")
        start, end = zone_window(raw, now)
        # Volcano compares whole seconds (Unix()).
        if int(now.timestamp()) < int(start.timestamp()) or int(now.timestamp()) > int(
            end.timestamp()
        ):
            raise RevocableZoneError(f"current time beyond revocable zone {zone}:{raw}")

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log
        log.v(5, "Enter tdm plugin ...")
        now = ssn.now

        def predicate(task: TaskInfo, node: NodeInfo) -> None:
            if not node.revocable_zone:
                return
            try:
                self.available_revocable_zone(node.revocable_zone, now)
            except RevocableZoneError as err:
                raise self._fit_error(task, node, str(err)) from None
            log.v(
                4,
                f"TDM node {node.name} revocable zone {node.revocable_zone}:"
                f"{self.revocable_zone[node.revocable_zone]} is active",
            )
            if not task.revocable_zone:
                raise self._fit_error(task, node, "not allow to dispatch to revocable node")
            log.v(4, f"TDM filter for Task {task.namespace}/{task.name} on node {node.name} pass.")

        def node_order(task: TaskInfo, node: NodeInfo) -> float:
            if not node.revocable_zone:
                return 0.0
            try:
                self.available_revocable_zone(node.revocable_zone, now)
            except RevocableZoneError as err:
                log.v(4, f"TDM not available {err}")
                raise
            if not task.revocable_zone:
                log.v(
                    4,
                    f"TDM task {task.namespace}/{task.name} is not allow to dispatch to "
                    f"revocable node {node.name}",
                )
                return 0.0
            log.v(
                4,
                f"TDM score for Task {task.namespace}/{task.name} on node {node.name} is: "
                f"{int(MAX_NODE_SCORE)}",
            )
            return MAX_NODE_SCORE

        def preemptable(
            preemptor: TaskInfo, preemptees: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            # Workloads that may themselves be revoked never preempt others.
            if preemptor.preemptable or preemptor.revocable_zone:
                log.v(
                    4,
                    f"TDM task {preemptor.namespace}/{preemptor.name} is preemptable, "
                    "do nothing skip",
                )
                return [], REJECT
            by_job: dict[str, list[TaskInfo]] = {}
            for task in preemptees:
                if not task.preemptable or task.status is not TaskStatus.Running:
                    continue
                node = ssn.nodes.get(task.node_name)
                if node is None or node.revocable_zone:
                    continue
                by_job.setdefault(task.job, []).append(task)
            victims = self._job_victims(ssn, by_job)
            log.v(4, f"TDM victims are {format_tasks(victims)}")
            return victims, PERMIT

        def victim_tasks(_: list[TaskInfo]) -> list[TaskInfo]:
            # lastEvictAt is a process-wide variable in Volcano: it outlives the session.
            memory = process_memory(ssn)
            last = memory.get(LAST_EVICT_AT)
            if isinstance(last, datetime) and last + self.evict_period > now:
                log.v(4, f"TDM next evict time at {last}")
                return []
            log.v(4, "TDM start to find victims")
            victims: list[TaskInfo] = []
            for zone in self.revocable_zone:
                try:
                    self.available_revocable_zone(zone, now)
                except RevocableZoneError as err:
                    log.v(4, f"TDM revocable zone {zone} disactive, {err}")
                    victims.extend(self._job_victims(ssn, self._zone_tasks(ssn, zone)))
            memory[LAST_EVICT_AT] = now
            log.v(4, f"TDM got {len(victims)} victims")
            return victims

        def job_order(left: JobInfo, right: JobInfo) -> int:
            if left.preemptable == right.preemptable:
                return 0
            return 1 if left.preemptable else -1

        def job_pipelined(job: JobInfo) -> int:
            return PERMIT if job.is_pipelined() else REJECT

        def job_starving(job: JobInfo) -> bool:
            # A non-preemptable elastic job (e.g. a deployment) may preempt for its pending tasks.
            return not job.preemptable and job.count(TaskStatus.Pending) > 0

        ssn.add_predicate_fn(self.name, predicate)
        ssn.add_node_order_fn(self.name, node_order)
        ssn.add_preemptable_fn(self.name, preemptable)
        ssn.add_victim_tasks_fns(self.name, [victim_tasks])
        ssn.add_job_order_fn(self.name, job_order)
        ssn.add_job_pipelined_fn(self.name, job_pipelined)
        ssn.add_job_starving_fns(self.name, job_starving)
        log.v(5, "Leaving tdm plugin.")

    @staticmethod
    def _fit_error(task: TaskInfo, node: NodeInfo, reason: str) -> FitError:
        return FitError.with_status(
            task, node.name, Status(Code.UnschedulableAndUnresolvable, reason, "tdm")
        )

    @staticmethod
    def _zone_tasks(ssn: Session, zone: str) -> dict[str, list[TaskInfo]]:
        """Running preemptable tasks on the zone's nodes, by job."""
        by_job: dict[str, list[TaskInfo]] = {}
        for node in ssn.revocable_nodes.values():
            if node.revocable_zone != zone:
                continue
            for task in node.tasks.values():
                if task.preemptable and task.status is TaskStatus.Running:
                    by_job.setdefault(task.job, []).append(task)
        return by_job

    def _job_victims(self, ssn: Session, by_job: dict[str, list[TaskInfo]]) -> list[TaskInfo]:
        victims: list[TaskInfo] = []
        for job_id, tasks in by_job.items():
            job = ssn.jobs.get(job_id)
            if job is not None:
                victims.extend(self.max_victims(ssn, job, tasks))
        return victims

    def max_victims(self, ssn: Session, job: JobInfo, victims: list[TaskInfo]) -> list[TaskInfo]:
        """At most as many victims as the job's disruption budget allows."""
        max_evict = self.max_pod_evict_num(ssn, job)
        target = min(max_evict, len(victims))
        ssn.log.v(
            3,
            f"Job <{job.namespace}/{job.name}> max evict:{max_evict}, potential victims "
            f"number:{len(victims)}, max victims number:{target}",
        )
        return victims[:target]

    def max_pod_evict_num(self, ssn: Session, job: JobInfo) -> int:
        """From the job's budget annotations (``volcano.sh/jdb-*``); 1 without one."""
        running = job.count(TaskStatus.Running)
        min_available, max_unavailable = job.budget
        total = len(job.tasks)
        if max_unavailable:
            allowed = self._int_or_percent(ssn, max_unavailable, total)
            finished = job.count(TaskStatus.Succeeded) + job.count(TaskStatus.Failed)
            unavailable = total - finished - running
            return 0 if unavailable >= allowed else allowed - unavailable
        if min_available:
            minimum = self._int_or_percent(ssn, min_available, total)
            if running >= minimum:
                return running - minimum
        return DEFAULT_POD_EVICT_NUM

    @staticmethod
    def _int_or_percent(ssn: Session, text: str, total: int) -> int:
        value = parse_int_or_percent(text, total)
        if isinstance(value, str):
            ssn.log.warning(f"TDM get percent value err: {value}")
            return 0
        return value
