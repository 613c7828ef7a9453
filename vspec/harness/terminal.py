"""Text from users' files, made safe to print."""

from __future__ import annotations

import re

# C0 controls but newline and tab, DEL and C1 controls: an ESC in a spec name could
# rewrite the terminal (colours, cursor moves, a fake "passed" line).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    r"""``text`` safe for a terminal: control characters shown as escapes (``\x1b``)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
