"""User plugins that misbehave as real ones have: each must fail only the spec using it.

Loaded as a plugins dir by tests/test_isolation.py; not a module of the test suite.
"""

from __future__ import annotations

import sys
import time
from typing import ClassVar

from vspec.extension import Plugin, Session, register_plugin


@register_plugin
class Crashes(Plugin):
    """A bug in the plugin: a KeyError at session open."""

    name: ClassVar[str] = "crashes"

    def on_session_open(self, ssn: Session) -> None:
        raise KeyError("no-such-key")


@register_plugin
class Exits(Plugin):
    """Library code that calls sys.exit(0), which would end the run "successfully"."""

    name: ClassVar[str] = "exits"

    def on_session_open(self, ssn: Session) -> None:
        sys.exit(0)


@register_plugin
class Hangs(Plugin):
    """A retry loop that swallows every Exception, so a timeout raised as one is lost."""

    name: ClassVar[str] = "hangs"

    def on_session_open(self, ssn: Session) -> None:
        while True:
            try:
                time.sleep(0.05)
            except Exception:
                continue


@register_plugin
class Interrupts(Plugin):
    """Plugin code raising KeyboardInterrupt itself: not the user's interrupt."""

    name: ClassVar[str] = "interrupts"

    def on_session_open(self, ssn: Session) -> None:
        raise KeyboardInterrupt
