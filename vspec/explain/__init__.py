"""``vspec explain``: why each task ended a cycle where it did.

:mod:`~vspec.explain.recorder` records a run (the engine's
:class:`~vspec.framework.recorder.Recorder` seam), :mod:`~vspec.explain.records` is
what it records (and the JSON contract), :mod:`~vspec.explain.text` prints it.

May import the harness (to run a spec), the framework's recorder seam and what is
below them.
"""
