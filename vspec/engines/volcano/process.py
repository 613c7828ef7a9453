"""The Go program as a child process: one request a line in, one response a line out.

A process serves every spec of a run, as one vc-scheduler serves many sessions. A Go
panic inside a session, or in the workers that filter and score its nodes, comes back as
that request's failure; a panic in another of Volcano's goroutines ends the process, and
then the request that was running fails with the panic from standard error and the next
one starts a new process.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from pathlib import Path
from typing import IO, Any

from vspec.errors import EngineError

# How much of a dead process's standard error a failure quotes.
_STDERR_TAIL = 4000


class EngineProcess:
    """The running program, started on the first request."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._next_id = 0

    @property
    def alive(self) -> bool:
        """Started and not ended."""
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the program now (it takes about 50 ms to initialise Kubernetes' and
        Volcano's packages), so that it is ready when the first request comes."""
        self._started()

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """The program's answer to ``message``. Raises :class:`EngineError` when the
        process died while answering (and starts afresh on the next request)."""
        proc = self._started()
        self._next_id += 1
        message = {**message, "id": str(self._next_id)}
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = b""
        except BaseException:
            # A spec's time limit or the user's interrupt, mid-session: the answer would
            # arrive as the next request's, so this process is done.
            self.kill()
            raise
        if not line:
            raise EngineError(self._died())
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is not None:
            self.close()  # ended since its last answer: its pipes and file go with it
        if self._proc is None:
            # Standard error goes to a file: a pipe nobody reads would fill and block
            # the program, and a dead program's panic is read back from it.
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close and _died)
            self._proc = subprocess.Popen(
                [str(self.binary)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
            )
        return self._proc

    def _died(self) -> str:
        proc, stderr = self._proc, self._stderr
        self._proc = None
        code = None
        if proc is not None:
            code = proc.wait()
            _close_pipes(proc)
        text = ""
        if stderr is not None:
            stderr.seek(0)
            text = stderr.read().decode(errors="replace")
            stderr.close()
        panic = text.find("panic:")
        tail = text[panic:] if panic >= 0 else text[-_STDERR_TAIL:]
        return (
            f"the Volcano engine process ended (exit {code}) during the session:\n"
            + tail[:_STDERR_TAIL].rstrip()
        )

    def kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
        self.close()

    def close(self) -> None:
        """End the program (its standard input closed, it exits) and let go of its
        pipes and standard error's file, which Popen leaves open."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                assert proc.stdin is not None
                with contextlib.suppress(OSError):
                    proc.stdin.close()
                proc.wait()
            _close_pipes(proc)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def _close_pipes(proc: subprocess.Popen[bytes]) -> None:
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):  # a dead reader's unflushed input
                pipe.close()
