"""Built-in actions; each module registers itself (see vspec.framework.registry)."""
