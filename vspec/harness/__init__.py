"""The spec harness: spec file -> model (loader) -> engine (runner) -> verdict (expect) -> report.

Named apart from the YAML it runs: a *spec* is a test case in ``specs/``; this package is
the code that loads, runs and reports them.

May import the timeline, the invariants, the framework (the registry and plugin dirs)
and what is below them; it is handed an engine (:class:`vspec.model.engine.Engine`) and
never imports one.
"""
