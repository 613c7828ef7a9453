"""The cyclic collector's thresholds while vspec runs a command or a timeline."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

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
def tuned_collector(
    thresholds: tuple[int, int, int] = COLLECTOR_THRESHOLDS, *, freeze_first: bool = False
) -> Iterator[None]:
    """Run with ``thresholds``, then put the caller's back. ``freeze_first``: what is
    alive on entry outlives the block (the modules, a fuzzer's strategies), so it is kept
    out of the collector's passes until the block ends."""
    before = gc.get_threshold()
    gc.set_threshold(*thresholds)
    if freeze_first:
        gc.freeze()
    try:
        yield
    finally:
        if freeze_first:
            gc.unfreeze()
        gc.set_threshold(*before)
