"""The cyclic collector's thresholds while vspec runs a command or a timeline."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

# Python's (700, 10, 10) suit small heaps; a spec of thousands of pods keeps millions of
# objects alive and allocates as many per session, so the default ran the collector
# about 1,100 times in a 1,000-node `vspec run` (0.77 of its 6.4 CPU-s; 14 times, 0.16 s,
# with a first threshold of 50,000). The objects that outlive one young pass are the
# cluster's and the session's, alive until the run ends: each middle-generation pass
# walked a million of them to free nothing (W2: one pass, 0.24 CPU-s; W3: three, 1.0 of
# about 17). With 1,000 it runs once per some 50 million allocations, so a long fuzz
# campaign still has its cyclic garbage collected; peak RSS was the same for W3, 1,500
# fuzz examples and a 1,436-session timeline.
COLLECTOR_THRESHOLDS = (50_000, 1_000, 100)


@contextmanager
def tuned_collector() -> Iterator[None]:
    """Run with :data:`COLLECTOR_THRESHOLDS`, then put the caller's thresholds back."""
    thresholds = gc.get_threshold()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def exit_process(code: int) -> NoReturn:
    """End the ``vspec`` process with ``code``, the heap frozen out of the collector's way.

    At exit CPython's finalisation passes the cyclic collector over every object still
    alive, more than once, only to free memory the kernel takes back anyway: after a
    5,000-node ``vspec run`` that was 7 of 26 CPU-s, after a 1,000-node one 1.2 of 4.3.
    Frozen objects are not walked; the rest of a normal exit (atexit handlers, flushing
    the streams) still happens. Only for the process itself: a caller that goes on
    (a test calling :func:`vspec.cli.main`) must never freeze its heap.
    """
    gc.freeze()
    sys.exit(code)
