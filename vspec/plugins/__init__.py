"""Built-in plugins; each module registers itself (see vspec.framework.registry)."""
