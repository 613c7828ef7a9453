"""Timeline benchmark: a day of jobs on a large cluster under the seed configuration.

    python benchmarks/timeline_day.py                       # 10,000 jobs on 1,000 nodes, 24h
    python benchmarks/timeline_day.py --jobs 500 --hours 1.2 --profile
    python benchmarks/timeline_day.py --jobs 300 --hours 0.72 --records out/  # CSVs to diff

1,000 nodes of 16 cores and 64 GiB, 4 weighted queues; jobs arrive as a Poisson stream
over the day, each 1 to 8 pods of 1 or 2 cores (half of them gangs), running an
exponentially drawn 30 minutes on average (``--run-minutes``). Prints sessions run,
periods jumped, CPU seconds, and the CPU time per session; ``--records`` writes the
per-pod, per-job and per-tick records as CSV, so that two versions of the engine can be
compared exactly.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time
from datetime import timedelta
from fractions import Fraction
from pathlib import Path

from vspec.engines import EngineChoice, get_engine
from vspec.engines.volcano import VolcanoEngine
from vspec.fuzz.runner import SEED_CONF
from vspec.model.conf import load_conf
from vspec.model.corev1 import Container
from vspec.model.objects import (
    GROUP_NAME_ANNOTATION,
    Cluster,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    Queue,
)
from vspec.model.timeline import Arrival, Timeline
from vspec.timeline.clock import run_timeline
from vspec.timeline.export import write_csv
from vspec.timeline.expr import evaluate


def workload(
    nodes: int, jobs: int, hours: float, seed: int, run_minutes: float = 30
) -> tuple[Cluster, Timeline]:
    rng = random.Random(seed)
    cluster = Cluster(
        nodes=[
            Node(
                ObjectMeta(f"n{i}"),
                allocatable={
                    "cpu": Fraction(16),
                    "memory": Fraction(64 * 2**30),
                    "pods": Fraction(110),
                },
            )
            for i in range(nodes)
        ],
        queues=[Queue(ObjectMeta(f"q{i}"), weight=i + 1) for i in range(4)],
    )
    timeline = Timeline()
    at = 0.0
    mean_gap = hours * 3600 / jobs
    for j in range(jobs):
        at += rng.expovariate(1 / mean_gap)
        size, cpu = rng.randint(1, 8), rng.choice((1, 2))
        name = f"job{j}"
        group = PodGroup(
            ObjectMeta(name, "day"),
            queue=f"q{j % 4}",
            min_member=size if j % 2 == 0 else 1,
        )
        pods = [
            Pod(
                ObjectMeta(
                    f"{name}-w-{i}",
                    "day",
                    uid=f"day-{name}-w-{i}",
                    annotations={GROUP_NAME_ANNOTATION: name},
                ),
                containers=[Container(requests={"cpu": Fraction(cpu), "memory": Fraction(2**30)})],
            )
            for i in range(size)
        ]
        run = timedelta(seconds=rng.expovariate(1 / (60 * run_minutes)))
        timeline.arrivals.append(
            Arrival(timedelta(seconds=at), [group], pods, {p.meta.key: run for p in pods})
        )
    return cluster, timeline


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--run-minutes", type=float, default=30, help="mean run time")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--records", type=Path, help="write pods.csv, jobs.csv, ticks.csv here")
    parser.add_argument(
        "--engine", choices=("python", "volcano"), default="python", help="the real Volcano too"
    )
    parser.add_argument("--volcano-version", default="v1.10.0", help="with --engine volcano")
    args = parser.parse_args()
    conf = load_conf(SEED_CONF)
    cluster, timeline = workload(args.nodes, args.jobs, args.hours, args.seed, args.run_minutes)
    engine = get_engine(choice=EngineChoice(args.engine, args.volcano_version))
    started = time.process_time()
    if args.profile:
        profiler = cProfile.Profile()
        result = profiler.runcall(
            run_timeline, conf, cluster, timeline, seed=args.seed, engine=engine
        )
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    else:
        result = run_timeline(conf, cluster, timeline, seed=args.seed, engine=engine)
    cpu = time.process_time() - started
    if isinstance(engine, VolcanoEngine):  # its Go program reports its own CPU
        cpu += sum(engine.program_cpu.values())
    if args.records is not None:
        write_csv(result, args.records)
    print(
        f"{args.jobs} jobs on {args.nodes} nodes over {args.hours:g}h: "
        f"{result.sessions} sessions, {result.skipped} periods jumped, {cpu:.1f} CPU-s "
        f"({1000 * cpu / max(result.sessions, 1):.0f} ms per session); "
        f"wait p95 {evaluate('p95(wait)', result):.0f}s, "
        f"mean cpu utilisation {evaluate('mean(util(cpu))', result):.2f}, "
        f"{len(result.ticks)} ticks"
    )


if __name__ == "__main__":
    main()
