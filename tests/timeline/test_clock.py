"""The clock's rules: completions free nodes, evicted pods come back, node events act,
and jumping over idle or stuck periods changes no outcome."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.timeline.conftest import Loader
from vspec.engines import get_engine
from vspec.model.timeline import Arrival
from vspec.timeline.clock import run_timeline
from vspec.timeline.expr import evaluate

TWO_JOBS = """
name: t
cluster:
  nodes: [{name: n1, allocatable: {cpu: 4, memory: 8Gi}}]
timeline:
  arrivals:
  - {at: 0s, runFor: 10m, jobs: [{name: a, tasks: [{name: w, replicas: 2, requests: {cpu: 2}}]}]}
  - {at: 1m, runFor: 5m, jobs: [{name: b, tasks: [{name: w, replicas: 2, requests: {cpu: 2}}]}]}
"""


def test_a_finished_job_frees_its_node_and_is_deleted(loader: Loader) -> None:
    result = loader.run(TWO_JOBS)
    a, b = result.jobs["default/a"], result.jobs["default/b"]
    assert a.started == result.start and a.completed == result.start + timedelta(minutes=10)
    assert b.started == a.completed  # waited for a's pods to succeed
    assert b.completed == result.start + timedelta(minutes=15)
    assert result.pods["default/b-w-0"].node == "n1"
    assert result.ticks[-1].running == 0 and result.ticks[-1].pending == 0


def test_jumping_changes_no_outcome(loader: Loader) -> None:
    """Every session run (skip: none) gives the same records as jumping over the idle
    and stuck periods, and far more sessions."""
    spec = loader.spec(TWO_JOBS)
    assert spec.timeline is not None
    jumped = run_timeline(
        spec.scheduler, spec.cluster, spec.timeline, now=spec.now, engine=get_engine()
    )
    spec.timeline.skip = "none"
    every = run_timeline(
        spec.scheduler, spec.cluster, spec.timeline, now=spec.now, engine=get_engine()
    )
    assert jumped.jobs == every.jobs and jumped.pods == every.pods
    assert jumped.sessions < 10 < every.sessions
    assert jumped.skipped > 800


def test_a_drained_node_evicts_and_its_pods_come_back(loader: Loader) -> None:
    result = loader.run(
        """
        name: t
        cluster:
          nodes:
          - {name: n1, allocatable: {cpu: 2}}
          - {name: n2, allocatable: {cpu: 2}}
        timeline:
          arrivals:
          - {at: 0s, runFor: 1h, jobs: [{name: p, tasks: [{name: w, requests: {cpu: 2}}]}]}
          nodes:
          - {at: 0s, cordon: n2}
          - {at: 10m, uncordon: n2}
          - {at: 10m, drain: n1}
        """
    )
    pod = result.pods["default/p-w-0"]
    assert pod.evictions == 1 and pod.binds == 2 and pod.node == "n2"
    assert pod.finished == result.start + timedelta(minutes=70)  # ran its hour again
    assert evaluate("evictions", result) == 1


# A job too big for every node until a node is added: thirty stuck minutes.
STUCK = """
name: t
cluster:
  nodes: [{name: n1, allocatable: {cpu: 1}}]
timeline:
  arrivals:
  - {at: 0s, runFor: 5m, jobs: [{name: big, tasks: [{name: w, requests: {cpu: 4}}]}]}
  nodes:
  - {at: 30m, add: {name: n2, allocatable: {cpu: 8}}}
"""


def test_an_added_node_lets_a_waiting_job_start(loader: Loader) -> None:
    result = loader.run(STUCK)
    assert result.jobs["default/big"].started == result.start + timedelta(minutes=30)
    assert result.sessions < 10  # the thirty stuck minutes were jumped over


def test_a_removed_node_takes_its_capacity(loader: Loader) -> None:
    result = loader.run(
        """
        name: t
        cluster:
          nodes:
          - {name: n1, allocatable: {cpu: 2}}
          - {name: n2, allocatable: {cpu: 2}}
        timeline:
          until: 1h
          arrivals:
          - at: 0s
            runFor: 2h
            jobs:
            - {name: p, tasks: [{name: w, requests: {cpu: 2}}]}
            - {name: q, tasks: [{name: w, requests: {cpu: 2}}]}
          nodes:
          - {at: 10m, remove: n2}
        """
    )
    assert sum(p.evictions for p in result.pods.values()) == 1
    assert result.ticks[-1].capacity["cpu"] == 2000 and result.ticks[-1].pending == 1
    assert evaluate("unfinished", result) == 2


def test_ticks_sum_scalar_requests_per_queue(loader: Loader) -> None:
    """A GPU request counts towards its queue's demand while pending, and towards the
    cluster's and its queue's use once bound."""
    result = loader.run(
        """
        name: t
        cluster:
          nodes: [{name: n1, allocatable: {cpu: 8, nvidia.com/gpu: 2}}]
          queues: [{name: a}, {name: b}]
        timeline:
          arrivals:
          - at: 0s
            runFor: 10m
            jobs:
            - {name: p, queue: a, tasks: [{name: w, requests: {cpu: 1, nvidia.com/gpu: 1}}]}
          - at: 1m
            runFor: 10m
            jobs:
            - {name: q, queue: b, tasks: [{name: w, replicas: 2, requests: {nvidia.com/gpu: 1}}]}
        """
    )
    gpu = "nvidia.com/gpu"
    waiting = next(t for t in result.ticks if t.pending == 2)  # q's gang waits for p's GPU
    assert waiting.used[gpu] == 1000 and waiting.capacity[gpu] == 2000
    assert waiting.queue_used["a"] == {"cpu": 1000, gpu: 1000}
    assert waiting.queue_used["b"] == {"cpu": 0, gpu: 0}
    assert waiting.queue_deserved["b"][gpu] == 1000  # its pending pods' demand counts
    running = next(t for t in result.ticks if t.running == 2)
    assert running.used[gpu] == 2000 and running.queue_used["b"][gpu] == 2000


def test_copies_and_drawn_run_times_follow_the_seed(loader: Loader) -> None:
    text = """
        name: t
        seed: {seed}
        cluster:
          nodes: [{{name: n1, allocatable: {{cpu: 64}}}}]
        timeline:
          arrivals:
          - at: 0s
            count: 5
            every: {{exponential: 1m}}
            runFor: {{uniform: [1m, 10m]}}
            jobs: [{{name: j, tasks: [{{name: w, requests: {{cpu: 1}}}}]}}]
        """
    first, again, other = (loader.spec(text.format(seed=s)) for s in (1, 1, 2))
    assert first.timeline and again.timeline and other.timeline
    names = [a.pod_groups[0].meta.name for a in first.timeline.arrivals]
    assert names == [f"j-{i}" for i in range(5)]
    assert first.timeline.arrivals == again.timeline.arrivals
    assert [a.at for a in first.timeline.arrivals] != [a.at for a in other.timeline.arrivals]
    for arrival in first.timeline.arrivals:
        (run,) = arrival.run_for.values()
        assert timedelta(minutes=1) <= run <= timedelta(minutes=10)


def test_run_for_each_job_draws_once_per_job_and_task(loader: Loader) -> None:
    text = """
        name: t
        cluster:
          nodes: [{{name: n1, allocatable: {{cpu: 64}}}}]
        timeline:
          arrivals:
          - at: 0s
            count: 3
            runFor: {{exponential: 30m}}
            runForTask: {{ps: {{uniform: [1m, 2m]}}}}
            {each}
            jobs:
            - name: j
              tasks: [{{name: w, replicas: 4}}, {{name: ps, replicas: 2}}, {{name: x}}]
        """

    def runs(arrival: Arrival, task: str) -> set[timedelta]:
        return {d for key, d in arrival.run_for.items() if f"-{task}-" in key}

    per_job = loader.spec(text.format(each="runForEach: job")).timeline
    per_pod = loader.spec(text.format(each="")).timeline
    assert per_job and per_pod
    for arrival in per_job.arrivals:
        (worker,), (ps,), (lone,) = runs(arrival, "w"), runs(arrival, "ps"), runs(arrival, "x")
        assert timedelta(minutes=1) <= ps <= timedelta(minutes=2)
        assert lone == worker  # runFor is one draw for the job's tasks outside runForTask
    assert len({min(runs(a, "w")) for a in per_job.arrivals}) == 3  # each copy draws anew
    assert all(len(runs(a, "w")) == 4 for a in per_pod.arrivals)
    (error,) = loader.errors(text.format(each="runForEach: task"))
    assert error.startswith("10:") and "runForEach" in error and "is not pod or job" in error


def test_until_stops_the_clock(loader: Loader) -> None:
    result = loader.run(
        """
        name: t
        cluster:
          nodes: [{name: n1, allocatable: {cpu: 1}}]
        timeline:
          until: 30m
          arrivals:
          - {at: 0s, runFor: 2h, jobs: [{name: p, tasks: [{name: w, requests: {cpu: 1}}]}]}
          - {at: 1h, jobs: [{name: late, tasks: [{name: w, requests: {cpu: 1}}]}]}
        """
    )
    assert result.end - result.start <= timedelta(minutes=30)
    assert "default/late" not in result.jobs
    assert evaluate("makespan", result) == pytest.approx(float("inf"))


def test_a_volcano_job_arrives_and_its_pods_appear_once_enqueued(loader: Loader) -> None:
    result = loader.run(
        """
        name: t
        cluster:
          nodes: [{name: n1, allocatable: {cpu: 8, memory: 16Gi}}]
        timeline:
          arrivals:
          - at: 1m
            runFor: 10m
            jobs:
            - apiVersion: batch.volcano.sh/v1alpha1
              kind: Job
              metadata: {name: train, namespace: ml}
              spec:
                schedulerName: volcano
                minAvailable: 2
                tasks:
                - name: worker
                  replicas: 2
                  template:
                    spec:
                      containers:
                      - name: w
                        image: trainer
                        resources: {requests: {cpu: "2", memory: 1Gi}}
        """
    )
    job = result.jobs["ml/train"]
    assert job.pods == 2 and job.min_available == 2
    # Enqueued in the session at 1m, its pods created for the next one, bound then.
    assert job.started == result.start + timedelta(minutes=1, seconds=1)
    assert job.completed == result.start + timedelta(minutes=11, seconds=1)
    assert {p.node for k, p in result.pods.items() if k.startswith("ml/train-")} == {"n1"}
