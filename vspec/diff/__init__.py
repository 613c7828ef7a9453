"""``vspec diff``'s comparison: one spec on vspec's engine and on the real Volcano, and
every decision on which they disagree.

:mod:`~vspec.diff.outcome` reduces a run to what the two engines must agree on (binds,
evictions, pipelined tasks, pod group phases and conditions, the print and logprint
lines) and tells the differences, accepting any node vspec's engine scored as tied for
the best; :mod:`~vspec.diff.judge` runs both engines and, when they disagree, runs the
real one again to tell Volcano's own nondeterminism from a disagreement.

Sits above the engines (it makes vspec's engine with the explain recorder, to read the
ties) and below the fuzzer, whose campaign (:mod:`vspec.fuzz.diff`) generates, shrinks
and writes the disagreements.
"""
