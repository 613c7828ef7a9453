"""The real engine's overhead: what vspec adds to Volcano's own session time.

    python benchmarks/volcano_overhead.py                         # W1, W2, 600 small, 600 tiny
    python benchmarks/volcano_overhead.py --only tiny --small 100
    python benchmarks/volcano_overhead.py --volcano-source ~/src/volcano-v1.11.0
    python benchmarks/volcano_overhead.py --only W3 --verbosity 0   # minutes, 4 GB

W3 is measured only when asked for (``--only W3``): its session runs for many minutes.
At verbosity 3 its log, a line per failing task and node, outgrows a 23 GB machine;
``--verbosity`` runs the workloads at another klog level than their files say.

Each spec runs as `vspec run --engine volcano` runs it: a fresh program per spec (one
started ahead), the cluster as JSON over a pipe, the answer read back. The program
reports the CPU of each request by phase (decode, prepare: conf and cache, session:
Volcano's OpenSession, actions, CloseSession and dispatch; answer); this process adds
its own CPU and that of the programs it reaped. Overhead is everything but the session.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import resource
import time
from pathlib import Path

from vspec.engines.volcano import VolcanoEngine
from vspec.engines.volcano.build import Target
from vspec.errors import VspecError
from vspec.harness.loader import load_file
from vspec.harness.runner import simulate_spec
from vspec.model.spec import Spec

ROOT = Path(__file__).resolve().parents[1]
# One queue, two jobs, one node: a session of a few milliseconds.
TINY = ROOT / "specs" / "priority" / "high-priority-job-first.yaml"
WORKLOADS = {
    name: ROOT / "benchmarks" / "workloads" / f"{name.lower()}.yaml" for name in ("W1", "W2", "W3")
}


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def measure(engine: VolcanoEngine, label: str, specs: list[Spec]) -> None:
    engine.close()  # no spare left from before: each measurement starts its own
    (own0, kids0), wall0 = _cpu(), time.perf_counter()
    engine.program_cpu.clear()
    for spec in specs:
        simulate_spec(spec, engine, spec.seed)
    engine.close()  # the spare is reaped too: its start-up is part of the cost
    phases = engine.program_cpu
    (own1, kids1), wall = _cpu(), time.perf_counter() - wall0
    vspec, program = own1 - own0, kids1 - kids0
    session = phases["session"]
    total = vspec + program
    overhead = total - session
    print(
        f"{label}: {len(specs)} spec(s), {wall:.2f} s wall, {total:.2f} CPU-s in all "
        f"({len(specs) / total:.0f} specs per CPU-second): Volcano's sessions {session:.3f}, "
        f"overhead {overhead:.3f} ({overhead / session:.0%} of the sessions') = vspec "
        f"{vspec:.3f} + the program's start-up and protocol {program - session:.3f} "
        f"(decode {phases['decode']:.3f}, prepare {phases['prepare']:.3f}, "
        f"answer {phases['answer']:.3f})"
    )


def small_specs(engine: VolcanoEngine, count: int) -> list[Spec]:
    """specs/' one-session specs that the real engine runs, over and over: small
    clusters, every kind of conf."""
    files = sorted((ROOT / "specs").rglob("*.yaml"))
    pool = []
    for spec in (spec for path in files for spec in load_file(path).specs):
        if spec.timeline is not None or spec.skip is not None or spec.xfail is not None:
            continue
        try:
            simulate_spec(spec, engine, spec.seed)
        except VspecError:
            continue  # a Python plugin, or a release the spec does not describe
        pool.append(spec)
    return list(itertools.islice(itertools.cycle(pool), count))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volcano-version", default="v1.10.0")
    parser.add_argument("--volcano-source", type=Path)
    parser.add_argument("--small", type=int, default=600, help="small/tiny specs (default 600)")
    parser.add_argument("--only", choices=("W1", "W2", "W3", "small", "tiny"))
    parser.add_argument("--verbosity", type=int, help="the workloads' klog level (default theirs)")
    args = parser.parse_args()
    engine = VolcanoEngine(Target(args.volcano_version, args.volcano_source))
    engine.binary()  # built before anything is measured
    for name, path in WORKLOADS.items():
        if args.only == name or (args.only is None and name != "W3"):
            specs = load_file(path).specs
            if args.verbosity is not None:
                specs = [dataclasses.replace(s, verbosity=args.verbosity) for s in specs]
            measure(engine, name, specs)
    if args.only in (None, "small"):
        measure(engine, "small", small_specs(engine, args.small))
    if args.only in (None, "tiny"):
        measure(engine, "tiny", load_file(TINY).specs * args.small)


if __name__ == "__main__":
    main()
