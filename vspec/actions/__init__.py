"""Volcano's actions (``pkg/scheduler/actions``): enqueue, allocate, backfill, preempt,
reclaim, shuffle and print, one module each, each registering itself with the framework's
registry (:mod:`vspec.framework.registry`); ``_node_choice`` and ``_pending_heaps`` hold
what several share.

May import the framework and everything below it (util, k8s, api, model, the leaves);
no action imports another or a plugin (the import-linter contracts in pyproject.toml).
"""
