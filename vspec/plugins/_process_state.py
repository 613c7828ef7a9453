"""What a plugin keeps in Go package-level variables (tdm's lastEvictAt, rescheduling's
lastRescheduleTime): in Volcano it lives as long as the scheduler process, so here it
lives in the :class:`~vspec.framework.session.SchedulerState` that outlives sessions.

Not a plugin: the leading underscore keeps the registry from importing it as one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vspec.framework.session import Session


def process_memory(ssn: Session) -> dict[str, object]:
    """The scheduler-lifetime dict plugins share, keyed by ``<plugin>.<variable>``."""
    return ssn.state.plugin_memory
