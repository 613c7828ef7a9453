"""The cyclic collector's thresholds while vspec runs a command or a timeline."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
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
    out of the collector's passes until the block ends, or until a simulation in it ends
    (:func:`long_lived_frozen` lets everything frozen go); a timeline keeps it."""
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


@contextmanager
def long_lived_frozen() -> Iterator[Callable[[], None]]:
    """A block whose long-lived objects stay out of the collector's passes.

    What is alive on entry is frozen (``gc.freeze``), and so is what is alive at each
    call of the function yielded, which the block makes once more of what it keeps has
    been built: for a simulation, the cluster on entry, then each session's cache and
    snapshot, which live until the session closes. A young pass then walks only what
    the block made since; W1's simulation had two at 50,000 objects (12 ms each) that
    freed nothing, and now none.
    On exit everything frozen joins the oldest generation (``gc.unfreeze``), which a
    full pass walks, so cyclic garbage among it is still collected in time; that
    includes what a caller froze (the fuzzer, which freezes again at each example's
    simulation this way). Both calls are O(1); ``gc.get_freeze_count`` is not (it walks
    the frozen objects), so the block does not ask whether a caller froze any.
    """
    gc.freeze()
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()
