"""The scheduler's data model, laid out like Volcano's ``pkg/scheduler/api``: job, task,
node and queue infos, ``Resource`` and its arithmetic, devices, and the status types the
framework and plugins share.

May import the model and the leaves (errors, golang, gofmt, registries) only.
"""
