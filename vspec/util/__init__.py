"""Helpers shared by actions, as in Volcano's ``pkg/scheduler/util``."""
