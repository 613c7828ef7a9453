"""The ``print`` action: vspec's port of the seed project's custom action.

It hands every job of the session to each enabled plugin's print function, in tier
order, so a plugin such as ``logprint`` can report what it sees at that point of the
session. It changes nothing.
"""

from __future__ import annotations

from vspec.framework.interface import Action
from vspec.framework.registry import register_action
from vspec.framework.session import Session


@register_action
class Print(Action):
    """Pass all session jobs to every plugin's print function (tier order)."""

    name = "print"

    def execute(self, ssn: Session) -> None:
        ssn.print_jobs(list(ssn.jobs.values()))
