"""What-if over time: jobs that arrive and finish on a cluster that changes (docs/timeline.md).

A spec's ``timeline`` (or a workload file's) lists arrivals of jobs with their run times
and node events; :func:`vspec.timeline.clock.run_timeline` runs Volcano's sessions on
that cluster at the schedule period, jumping over periods in which nothing can change,
and records per-pod and per-tick facts that :mod:`vspec.timeline.metrics` turns into
waits, shares, utilisation and makespan for ``expect.metrics`` and ``vspec compare``.

It runs a scheduler only through the Engine seam (:mod:`vspec.model.engine`) and reads
what it counts from the model: it may import the model, util's collector settings and
the leaves, never an engine, the framework, the api or the harness (the import-linter
contracts in pyproject.toml).
"""
