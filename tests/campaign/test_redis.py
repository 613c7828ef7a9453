"""Three processes of one ``vspec fuzz`` campaign share a Redis server (Hypothesis' own
RedisExampleDatabase): the first finds a planted failure, the other two replay it from
the database and do not report it again, and ``--collect`` merges the three shards'
summaries into one finding."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# A bug planted in a user action: it raises on a session of three nodes or more and two
# jobs or more, which a shard of one example does not draw (the control run below).
PLANTED = """
from vspec.extension import Action, Session, register_action


@register_action
class Planted(Action):
    name = "planted"

    def execute(self, ssn: Session) -> None:
        if len(ssn.nodes) >= 3 and len(ssn.jobs) >= 2:
            raise RuntimeError("planted failure")
"""

SPACE = """
scheduler:
  actions: "enqueue, allocate, planted"
  tiers:
  - plugins: [{name: priority}, {name: gang}]
cluster: {maxNodes: 4, maxJobs: 3, maxReplicas: 2}
maxCycles: 1
"""


def _fuzz(work: Path, *options: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "vspec", "fuzz", "--plugins-dir", "plugins"]
    argv += ["--space", "space.yaml", "--seed", "7", *options]
    return subprocess.Popen(
        argv, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _done(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def test_three_processes_share_a_planted_failure_through_redis(
    tmp_path: Path, redis_url: str
) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "planted.py").write_text(PLANTED)
    (tmp_path / "space.yaml").write_text(SPACE)

    # Control: the other two shards' one example each, on a database of their own (the
    # server's database 1), do not meet the failure themselves.
    for k in (2, 3):
        code, out, _ = _done(
            _fuzz(tmp_path, "--shard", f"{k}/3", "--examples", "3", "--database", f"{redis_url}/1")
        )
        assert code == 0 and out.splitlines()[0].endswith("; 0 finding(s)"), out

    code, out, err = _done(
        _fuzz(
            tmp_path,
            "--shard",
            "1/3",
            "--examples",
            "300",
            "--first",
            "--database",
            redis_url,
            "--out",
            "a",
        )
    )
    assert code == 1, err
    assert out.splitlines()[0].endswith("; 1 finding(s)")
    written = sorted((tmp_path / "a").glob("crash-planted-*.yaml"))
    assert len(written) == 1
    assert "[shard 1/3]   crash-planted: plugin 'planted': RuntimeError: planted failure" in err

    others = [
        _fuzz(
            tmp_path,
            "--shard",
            f"{k}/3",
            "--examples",
            "3",
            "--database",
            redis_url,
            "--out",
            f"out{k}",
        )
        for k in (2, 3)
    ]
    for k, process in zip((2, 3), others, strict=True):
        code, out, err = _done(process)
        assert code == 1, err  # the failure is there: replayed from the database
        lines = out.splitlines()
        assert lines[0].endswith("; 0 finding(s)")  # and not reported again
        assert "  crash-planted: fails here too; found by shard 1/3" in lines
        assert f"[shard {k}/3]   crash-planted: fails here too; found by shard 1/3" in err
        assert not (tmp_path / f"out{k}").exists()  # not shrunk, nor written

    argv = ["--collect", "--database", redis_url, "--out", "collected"]
    code, out, err = _done(_fuzz(tmp_path, *argv))
    assert code == 1, err
    lines = out.splitlines()
    examples = int(lines[0].split()[0])
    assert examples >= 3 and lines[0].endswith("; 1 finding(s)")
    assert "collected 3 shard summaries" in err
    collected = sorted((tmp_path / "collected").iterdir())
    assert [p.name for p in collected] == [written[0].name]
    assert collected[0].read_text() == written[0].read_text()
