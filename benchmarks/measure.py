"""Figures of `vspec` as a user runs it: one child process per measurement.

The child is the real command line (``vspec run``, ``vspec fuzz``); its CPU seconds and
peak RSS come from the kernel's accounting of that process (``os.wait4``), so imports,
loading, every session and every invariant are counted. CPU seconds are the figure to
compare: the machine is shared, and wall time there swings by 1.5-3x with the load of
the other users (both are reported).

Children run with bytecode caching on, as an installed vspec does, even when the caller's
environment turns it off (``PYTHONDONTWRITEBYTECODE``): compiling every module on each
start-up would otherwise be most of a small spec's cost.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = {
    name: ROOT / "benchmarks" / "workloads" / f"w{name[1]}.yaml" for name in ("W1", "W2", "W3")
}
TINY_SPEC = ROOT / "specs" / "priority" / "high-priority-job-first.yaml"


def interpreter() -> str:
    """The Python the measured ``vspec`` runs on: this one, or ``VSPEC_BENCH_PYTHON`` (a
    Python with vspec installed). Builds differ: this machine's pyenv Python is built
    without profile-guided optimisation, Debian's ``/usr/bin/python3.11`` with it, and
    the same ``vspec run`` takes 15-20% fewer CPU seconds on the latter."""
    return os.environ.get("VSPEC_BENCH_PYTHON") or sys.executable


def cpu_seconds() -> float:
    """This process's CPU and that of the children it has waited for (the ``vspec``
    processes measured): pytest-benchmark's timer here, which a busy machine skews less
    than the wall clock."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class Process:
    """What the kernel accounted to one finished child."""

    code: int
    cpu: float  # user + system seconds
    wall: float
    max_rss_mb: float
    stdout: str


def run(args: list[str]) -> Process:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        child = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        text = out.read()
    cpu = usage.ru_utime + usage.ru_stime
    return Process(child.returncode, cpu, wall, usage.ru_maxrss / 1024, text)


@dataclass
class WholeRun:
    """One ``vspec run`` of a workload spec file."""

    process: Process
    pods: int
    binds: int
    simulations: int  # the run's own and the invariants' re-runs
    actions: dict[str, float] = field(default_factory=dict)  # CPU-s, over all sessions

    @property
    def pods_per_cpu_second(self) -> float:
        return self.binds / self.process.cpu

    def row(self) -> dict[str, Any]:
        return {
            "cpu_s": round(self.process.cpu, 3),
            "wall_s": round(self.process.wall, 3),
            "max_rss_mb": round(self.process.max_rss_mb, 1),
            "pods": self.pods,
            "binds": self.binds,
            "simulations": self.simulations,
            "pods_bound_per_cpu_s": round(self.pods_per_cpu_second),
            "actions_cpu_s": {k: round(v, 3) for k, v in self.actions.items()},
        }


def whole_run(spec: Path) -> WholeRun:
    """``vspec run SPEC`` through :mod:`benchmarks.instrumented` (the CLI itself, with each
    action's execute timed and each simulation's binds counted)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        process = run([interpreter(), "-m", "benchmarks.instrumented", str(report), str(spec)])
        if process.code != 0:
            raise AssertionError(f"vspec run {spec} exited {process.code}:\n{process.stdout}")
        data = json.loads(report.read_text())
    first = data["simulations"][0]  # later ones are invariants' re-runs
    return WholeRun(
        process, first["pods"], first["binds"], len(data["simulations"]), data["actions"]
    )


def vspec(*args: str) -> Process:
    return run([interpreter(), "-m", "vspec", *args])


_PASSED = re.compile(r"(\d+) passed")
_FUZZED = re.compile(r"(\d+) examples in")


def specs_passed(process: Process) -> int:
    match = _PASSED.search(process.stdout)
    if process.code != 0 or match is None:
        raise AssertionError(f"vspec run failed ({process.code}):\n{process.stdout[-2000:]}")
    return int(match[1])


def fuzz_examples(process: Process) -> int:
    found = _FUZZED.findall(process.stdout)
    if process.code != 0 or not found:
        raise AssertionError(f"vspec fuzz failed ({process.code}):\n{process.stdout[-2000:]}")
    return int(found[-1])


_WORKER_CPU = re.compile(r"^\[[^\]]*worker [^\]]*\] done: .* ([0-9.]+) CPU-s$", re.M)


def critical_path(process: Process) -> float:
    """A ``vspec fuzz --workers`` run's CPU on free cores: the parent's own (its CPU
    less its workers', as each printed it) and its slowest worker's."""
    workers = [float(cpu) for cpu in _WORKER_CPU.findall(process.stdout)]
    if not workers:
        raise AssertionError(f"no worker's CPU in:\n{process.stdout[-2000:]}")
    return process.cpu - sum(workers) + max(workers)


def small_spec_dir(target: Path, count: int) -> int:
    """``count`` files copied round-robin from the example specs of specs/ that stand alone
    (no include, no project plugin) and are small (no timeline, at most 20 nodes and 100
    pods); the number of specs in them."""
    from vspec.harness.loader import load_file

    sources = []
    for path in sorted((ROOT / "specs").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if "timeline" in path.parts or "include" in text or "../" in text:
            continue
        copy = target / f"probe-{path.name}"
        copy.write_text(text, encoding="utf-8")
        loaded = load_file(copy)
        copy.unlink()
        if not loaded.errors and all(_small(s) for s in loaded.specs):
            sources.append((path.name, text, len(loaded.specs)))
    specs = 0
    for i in range(count):
        name, text, n = sources[i % len(sources)]
        (target / f"{i:04d}-{name}").write_text(text, encoding="utf-8")
        specs += n
    return specs


def _small(spec: Any) -> bool:
    cluster = spec.cluster
    return spec.timeline is None and len(cluster.nodes) <= 20 and len(cluster.pods) <= 100
