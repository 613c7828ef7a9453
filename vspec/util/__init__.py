"""Helpers shared by actions, as in Volcano's ``pkg/scheduler/util``, and the collector
settings vspec runs under."""
