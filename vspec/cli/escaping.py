"""The text stream ``vspec`` writes its output through, which escapes control characters.
Imports :mod:`vspec.harness.terminal` when it first writes.
"""

from __future__ import annotations

import io
from typing import TextIO


class Escaping(io.TextIOBase):
    """A text stream that writes control characters as escapes (``\\x1b``): spec names,
    file names and messages come from users' files, and an ESC in one could rewrite the
    terminal (or a CI log) it is printed to."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        from vspec.harness.terminal import printable

        return self.stream.write(printable(text))

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def writable(self) -> bool:
        return True
