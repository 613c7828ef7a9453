"""The ``print`` action: vspec's port of the seed project's custom action.

It hands every job of the session to each enabled plugin's print function, in tier
order, so a plugin such as ``logprint`` can report what it sees at that point of the
session. It changes nothing. Like the seed's ``Execute`` it logs ``Enter Print Action
...`` at V(5) and, from a ``defer``, ``Leaving Action ...`` once the plugins printed.
"""

from __future__ import annotations

from vspec.framework.interface import Action, Trace
from vspec.framework.registry import register_action
from vspec.framework.session import Session


@register_action
class Print(Action):
    """Pass all session jobs to every plugin's print function (tier order)."""

    name = "print"
    carries_jobs = True
    # Lines of print.go at the demo repository's commit 6a810e8 (the seed's full code).
    trace = Trace("Enter Print Action ...", "print.go:56", "Leaving Action ...", "print.go:63")

    def execute(self, ssn: Session) -> None:
        ssn.print_jobs(list(ssn.jobs.values()))
