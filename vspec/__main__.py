"""``python -m vspec``: the ``vspec`` command (:mod:`vspec.cli`, all it imports)."""

from vspec.cli import command

command()
