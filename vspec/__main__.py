"""``python -m vspec``: the ``vspec`` command."""

from vspec.cli import entry

entry()
