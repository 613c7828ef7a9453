"""``python -m vspec``: the ``vspec`` command."""

from vspec.cli import command

command()
