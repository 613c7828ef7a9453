"""vspec: a declarative policy testing harness for the Volcano batch scheduler."""

from vspec.framework.scheduler import simulate

__all__ = ["simulate"]
__version__ = "0.1.0"
