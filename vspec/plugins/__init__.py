"""Volcano's plugins (``pkg/scheduler/plugins``), one module each, each registering
itself with the framework's registry; ``_job_accounting`` and ``_process_state`` hold
what several share.

May import the framework and everything below it; no plugin imports another or an
action (the import-linter contracts in pyproject.toml).
"""
