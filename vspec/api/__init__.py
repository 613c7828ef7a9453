"""The scheduler's data model, laid out like Volcano's ``pkg/scheduler/api``."""
