"""Engine benchmark: one session of the seed configuration on W1 or W2.

W1: 100 nodes, 1,000 pods in 100 jobs (half of them gangs), 4 weighted queues,
2 priorities, some nodes tainted or labelled, 20% of capacity already running.
W2: the same x10 (1,000 nodes, 10,000 pods).

    python benchmarks/bench.py            # W1 and W2
    python benchmarks/bench.py W1 --profile

Prints time per action, pods bound per CPU-second and predicate calls per task.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time
from collections import defaultdict
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from vspec.framework import registry
from vspec.framework.scheduler import simulate
from vspec.framework.session import Session
from vspec.model.conf import load_conf
from vspec.model.corev1 import Container, Taint, Toleration
from vspec.model.objects import (
    GROUP_NAME_ANNOTATION,
    Cluster,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)

SEED_CONF: dict[str, Any] = {
    "actions": "print, enqueue, allocate, backfill",
    "tiers": [
        {"plugins": [{"name": n} for n in ("priority", "gang", "conformance", "logprint")]},
        {
            "plugins": [
                {"name": n} for n in ("drf", "predicates", "proportion", "nodeorder", "binpack")
            ]
        },
    ],
}


def workload(scale: int, seed: int = 1) -> Cluster:
    rng = random.Random(seed)
    nodes_n, jobs_n, pods_per_job = 100 * scale, 100 * scale, 10
    nodes = []
    for i in range(nodes_n):
        labels = {"zone": f"z{i % 4}"}
        taints = [Taint("dedicated", "gpu", "NoSchedule")] if i % 10 == 0 else []
        nodes.append(
            Node(
                ObjectMeta(f"n{i}", labels=labels),
                allocatable={
                    "cpu": Fraction(16),
                    "memory": Fraction(64 * 2**30),
                    "pods": Fraction(110),
                },
                taints=taints,
            )
        )
    queues = [Queue(ObjectMeta(f"q{i}"), weight=i + 1) for i in range(4)]
    classes = [PriorityClass(ObjectMeta("high"), 1000), PriorityClass(ObjectMeta("low"), 10)]
    pod_groups, pods = [], []
    running_budget = int(0.2 * nodes_n * 16)  # cores already in use
    node_cursor = 0
    for j in range(jobs_n):
        gang = j % 2 == 0
        ns, name = f"ns{j % 10}", f"job{j}"
        cpu = rng.choice((1, 2))
        running = running_budget > 0 and j % 5 == 0
        pod_groups.append(
            PodGroup(
                ObjectMeta(name, ns),
                queue=f"q{j % 4}",
                min_member=pods_per_job if gang else 1,
                priority_class_name="high" if j % 3 == 0 else "low",
                phase="Running" if running else "Pending",
            )
        )
        for t in range(pods_per_job):
            node_name = ""
            if running:
                node_name = f"n{node_cursor % nodes_n}"
                node_cursor += 1
                running_budget -= cpu
            selector = {"zone": f"z{j % 4}"} if j % 7 == 0 else {}
            tolerations = (
                [Toleration("dedicated", "Equal", "gpu", "NoSchedule")] if j % 9 == 0 else []
            )
            pods.append(
                Pod(
                    ObjectMeta(
                        f"{name}-w-{t}",
                        ns,
                        uid=f"{ns}-{name}-w-{t}",
                        annotations={GROUP_NAME_ANNOTATION: name},
                    ),
                    phase="Running" if node_name else "Pending",
                    node_name=node_name,
                    node_selector=selector,
                    tolerations=tolerations,
                    containers=[
                        Container(requests={"cpu": Fraction(cpu), "memory": Fraction(2**30)})
                    ],
                )
            )
    return Cluster(nodes, pods, pod_groups, queues, classes)


def instrument() -> tuple[dict[str, float], list[int]]:
    """Time each action's execute and count predicate calls (monkeypatched for the run)."""
    times: dict[str, float] = defaultdict(float)
    calls = [0]
    registry.load_builtins()
    for entry in registry.registered_actions():
        cls = registry.get_action(entry.name)
        assert cls is not None
        original = cls.execute

        def timed(
            self: Any, ssn: Session, _orig: Callable[..., None] = original, _n: str = entry.name
        ) -> None:
            start = time.process_time()
            _orig(self, ssn)
            times[_n] += time.process_time() - start

        cls.execute = timed  # type: ignore[method-assign]
    original_predicate = Session.predicate_for_allocate_action

    def counted(self: Session, task: Any, node: Any) -> Any:
        calls[0] += 1
        return original_predicate(self, task, node)

    Session.predicate_for_allocate_action = counted  # type: ignore[method-assign]
    return times, calls


def run(name: str, scale: int, profile: bool) -> None:
    cluster = workload(scale)
    conf = load_conf(SEED_CONF)
    times, calls = instrument()
    pending = sum(1 for p in cluster.pods if not p.node_name)
    start = time.process_time()
    wall = time.perf_counter()
    if profile:
        prof = cProfile.Profile()
        result = prof.runcall(simulate, conf, cluster, verbosity=0)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    else:
        result = simulate(conf, cluster, verbosity=0)
    cpu = time.process_time() - start
    wall = time.perf_counter() - wall
    print(f"{name}: {len(cluster.nodes)} nodes, {len(cluster.pods)} pods ({pending} pending)")
    print(f"  session: {cpu:.2f} s CPU, {wall:.2f} s wall; binds {len(result.binds)}")
    for action, seconds in times.items():
        if seconds:
            print(f"  {action:10s} {seconds:.3f} s")
    print(f"  pods bound per CPU-second: {len(result.binds) / cpu:.0f}")
    print(f"  predicate calls per pending task: {calls[0] / max(pending, 1):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("workloads", nargs="*", default=["W1", "W2"], help="W1 and/or W2")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--scale", type=int, help="run W<scale> instead (W1 x scale)")
    args = parser.parse_args()
    if args.scale:
        run(f"W1x{args.scale}", args.scale, args.profile)
        return
    for name in args.workloads:
        run(name, 1 if name == "W1" else 10, args.profile)


if __name__ == "__main__":
    main()
