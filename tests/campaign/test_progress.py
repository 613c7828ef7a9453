"""What a campaign's processes print stays readable: each line whole and prefixed with
its process, and on a terminal one progress line of the campaign's totals redrawn below
them (none in a log)."""

from __future__ import annotations

import io
import queue

from vspec.fuzz.campaign import Progress, QueueWriter


def _shown(live: bool) -> str:
    out = io.StringIO()
    progress = Progress(out, live, "examples")
    lines: queue.Queue[tuple[str, ...]] = queue.Queue()
    first, second = QueueWriter(lines, "worker 1/2"), QueueWriter(lines, "worker 2/2")
    first.write("  conservation: a node ")  # a line in pieces stays one line
    second.write("  liveness: fails here too\n")
    first.write("overcommitted\n")
    lines.put(("count", "worker 1/2", "30", "1"))
    lines.put(("count", "worker 2/2", "20", "0"))
    lines.put(("count", "worker 1/2", "40", "1"))  # the latest count of each process
    while not lines.empty():
        progress.handle(lines.get())
    progress.end()
    return out.getvalue()


def test_a_log_gets_each_processs_lines_whole_and_prefixed() -> None:
    assert _shown(live=False) == (
        "[worker 2/2]   liveness: fails here too\n"
        "[worker 1/2]   conservation: a node overcommitted\n"
    )


def test_a_terminal_gets_one_progress_line_of_the_campaigns_totals() -> None:
    text = _shown(live=True)
    assert "[worker 1/2]   conservation: a node overcommitted\n" in text
    last = text.rsplit("\r\x1b[K", 2)[-2]  # the last line drawn before it was cleared
    assert last.startswith("2 process(es): 60 examples in ")
    assert last.endswith(", 1 finding(s)")
    assert text.endswith("\r\x1b[K")
