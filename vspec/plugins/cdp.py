"""cdp (cooldown protection): a pod that started running recently cannot be preempted
(``plugins/cdp/cdp.go``).

Elastic jobs' pods can be preempted and restarted repeatedly; a pod labelled or
annotated ``volcano.sh/cooldown-time: <duration>`` is protected for that long after its
PodScheduled condition became true. Volcano compares with the wall clock; vspec with
the session clock (``ssn.now``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, ClassVar

from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT
from vspec.framework.interface import ArgumentSpec, Plugin
from vspec.framework.log import Klog
from vspec.framework.registry import register_plugin
from vspec.golang import parse_duration
from vspec.model.objects import Pod
from vspec.plugins._job_accounting import format_tasks

if TYPE_CHECKING:
    from datetime import datetime

    from vspec.framework.session import Session

COOLDOWN_TIME = "volcano.sh/cooldown-time"


def pod_cooldown_time(pod: Pod, log: Klog) -> timedelta | None:
    """The pod's cooldown (label first, then annotation); None when unset or invalid."""
    raw = pod.meta.labels.get(COOLDOWN_TIME)
    if raw is None:
        raw = pod.meta.annotations.get(COOLDOWN_TIME)
        if raw is None:
            return None
    try:
        return parse_duration(raw)
    except ValueError:
        log.warning(f"invalid time duration {COOLDOWN_TIME}={raw}")
        return None


def cooling_down(pod: Pod, cooldown: timedelta, now: datetime) -> bool:
    """Only a Running pod is protected, from its first true PodScheduled condition on."""
    if pod.phase != "Running":
        return False
    for cond in pod.conditions:
        if cond.type == "PodScheduled" and cond.status == "True":
            since = cond.last_transition_time
            # A condition without a time is Go's zero time: long past.
            return since is not None and since + cooldown > now
    return False


@register_plugin
class CdpPlugin(Plugin):
    """Preemptable: pods within their cooldown time are not victims."""

    name: ClassVar[str] = "cdp"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = ()

    def on_session_open(self, ssn: Session) -> None:
        log = ssn.log

        def preemptable(
            preemptor: TaskInfo, preemptees: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            victims: list[TaskInfo] = []
            for preemptee in preemptees:
                cooldown = pod_cooldown_time(preemptee.pod, log)
                if cooldown is None or not cooling_down(preemptee.pod, cooldown, ssn.now):
                    victims.append(preemptee)
            log.v(4, f"Victims from cdp plugins are {format_tasks(victims)}")
            return victims, PERMIT

        log.v(4, "plugin cdp session open")
        ssn.add_preemptable_fn(self.name, preemptable)
