"""Hypothesis stateful testing over timelines: jobs submitted, nodes cordoned, drained
and added, the clock advanced, in any order; after every session the invariants that
apply hold, and after every step the cluster is consistent by its own rules."""

from __future__ import annotations

import tempfile
from datetime import timedelta
from fractions import Fraction
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from vspec.engines import get_engine
from vspec.fuzz.runner import SEED_CONF
from vspec.fuzz.strategies import ClusterBounds, ConfSpace, clusters, conf_from_document
from vspec.fuzz.timelines import HORIZON, GeneratedTimelineSpec, timeline_specs
from vspec.harness.loader import load_file
from vspec.harness.timeline_check import PER_SESSION_DISABLED
from vspec.harness.yamlwrite import dump
from vspec.invariants import InvariantInputs, run_checks
from vspec.model.objects import DEFAULT_NOW, GROUP_NAME_ANNOTATION, Node, ObjectMeta, Pod, PodGroup
from vspec.model.timeline import Arrival, NodeEvent, Timeline
from vspec.timeline.clock import Clock, run_timeline

BOUNDS = ClusterBounds(max_nodes=4, max_jobs=3)
CONF = conf_from_document(SEED_CONF)
ENGINE = get_engine()


def _requests(pod: Pod) -> dict[str, Fraction]:
    total: dict[str, Fraction] = {}
    for container in pod.containers:
        for name, q in container.requests.items():
            total[name] = total.get(name, Fraction(0)) + q
    return total


class TimelineMachine(RuleBasedStateMachine):
    """The seed configuration's clock, driven by the rules below."""

    @initialize(cluster=clusters(BOUNDS), seed=st.integers(0, 1000))
    def start(self, cluster: object, seed: int) -> None:
        self.violations: list[str] = []
        self.jobs = 0
        self.added = 0
        self.clock = Clock(
            CONF,
            cluster,
            Timeline(period=timedelta(seconds=5)),
            seed,
            _START,
            0,
            self._check,
            ENGINE,
        )

    def _check(self, now: object, before: object, session: object) -> None:
        inputs = InvariantInputs(CONF, before, 0, now, 1, 0, engine=ENGINE)  # type: ignore[arg-type]
        found = run_checks(inputs, session, disabled=PER_SESSION_DISABLED)  # type: ignore[arg-type]
        self.violations.extend(f"{name}: {m}" for name, ms in found.items() for m in ms)

    @rule(
        pods=st.integers(1, 3),
        cpu=st.sampled_from(["500m", "1", "2"]),
        gang=st.booleans(),
        run=st.integers(1, 1200),
        delay=st.integers(0, 120),
    )
    def submit(self, pods: int, cpu: str, gang: bool, run: int, delay: int) -> None:
        name = f"tl{self.jobs}"
        self.jobs += 1
        queue = self.clock.cluster.queues[0].meta.name
        group = PodGroup(ObjectMeta(name, "tl"), queue=queue, min_member=pods if gang else 1)
        members = [
            Pod(
                ObjectMeta(
                    f"{name}-w-{i}",
                    "tl",
                    uid=f"tl-{name}-w-{i}",
                    annotations={GROUP_NAME_ANNOTATION: name},
                ),
                containers=[_container(cpu)],
            )
            for i in range(pods)
        ]
        at = self.clock.now - self.clock.start + timedelta(seconds=delay)
        run_for = {p.meta.key: timedelta(seconds=run) for p in members}
        self.clock.submit(Arrival(at, [group], members, run_for))

    @rule(kind=st.sampled_from(["cordon", "uncordon", "drain"]), index=st.integers(0, 3))
    def node_event(self, kind: str, index: int) -> None:
        nodes = self.clock.cluster.nodes
        if nodes:
            node = nodes[index % len(nodes)].meta.name
            at = self.clock.now - self.clock.start
            self.clock.add_node_event(NodeEvent(at, kind, node))  # type: ignore[arg-type]

    @rule(cpu=st.integers(1, 8))
    def add_node(self, cpu: int) -> None:
        # Named by a counter: an add event is applied only when the clock reaches it, so the
        # cluster's node count would give two nodes added in one step the same name.
        name = f"added{self.added}"
        self.added += 1
        node = Node(ObjectMeta(name), allocatable={"cpu": Fraction(cpu), "pods": Fraction(110)})
        self.clock.add_node_event(NodeEvent(self.clock.now - self.clock.start, "add", name, node))

    @rule(minutes=st.integers(0, 30))
    def advance(self, minutes: int) -> None:
        self.clock.run(limit=self.clock.now + timedelta(minutes=minutes))

    @invariant()
    def sessions_keep_the_invariants(self) -> None:
        assert not self.violations, self.violations[:5]

    @invariant()
    def the_cluster_matches_the_records(self) -> None:
        """A pod on a node was bound there, a succeeded pod has finished, a finished job
        is gone, and no pod is on a node the cluster no longer has."""
        cluster, records = self.clock.cluster, self.clock.result
        nodes = {n.meta.name for n in cluster.nodes}
        for pod in cluster.pods:
            record = records.pods[pod.meta.key]
            if pod.meta.namespace != "tl":
                continue  # a drawn starting pod may name a node the cluster lacks
            if pod.node_name:
                assert record.node == pod.node_name and record.bound is not None
                assert pod.node_name in nodes
            if pod.phase == "Succeeded":
                assert record.finished is not None
            assert records.jobs[record.job].completed is None

    @invariant()
    def records_agree(self) -> None:
        for job in self.clock.result.jobs.values():
            if job.started is not None:
                assert job.started >= job.submitted
            if job.completed is not None:
                assert job.started is not None and job.completed >= job.started
        for pod in self.clock.result.pods.values():
            assert pod.binds >= pod.evictions


def _container(cpu: str) -> object:
    from vspec.model.corev1 import Container
    from vspec.model.quantity import parse_quantity

    return Container(requests={"cpu": parse_quantity(cpu)})


_START = DEFAULT_NOW

TestTimelineMachine = TimelineMachine.TestCase
TestTimelineMachine.settings = settings(max_examples=15, stateful_step_count=12, deadline=None)


@settings(max_examples=10, deadline=None)
@given(timeline_specs(ConfSpace(fixed=SEED_CONF), BOUNDS))
def test_a_drawn_timeline_is_deterministic_and_writes_back(case: GeneratedTimelineSpec) -> None:
    """Run twice, the same records; written as a spec (a fuzz finding) and loaded
    again, the same timeline."""
    first = run_timeline(case.conf, case.cluster, case.timeline, seed=case.seed, engine=ENGINE)
    again = run_timeline(case.conf, case.cluster, case.timeline, seed=case.seed, engine=ENGINE)
    assert first.jobs == again.jobs and first.pods == again.pods
    assert first.ticks == again.ticks
    text = dump(case.document())
    loaded = load_file(_write(text)).specs[0]
    assert loaded.timeline is not None
    assert loaded.timeline.period == case.timeline.period
    assert loaded.timeline.until == case.timeline.until == HORIZON
    assert [a.at for a in loaded.timeline.arrivals] == [a.at for a in case.timeline.arrivals]
    assert [sorted(a.run_for.items()) for a in loaded.timeline.arrivals] == [
        sorted(a.run_for.items()) for a in case.timeline.arrivals
    ]


def _write(text: str) -> Path:
    path = Path(tempfile.mkdtemp()) / "finding.yaml"
    path.write_text(text, encoding="utf-8")
    return path
