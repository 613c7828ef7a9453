"""The scheduling session (``pkg/scheduler/framework``): cache, session, statement, scheduler."""
