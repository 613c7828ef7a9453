"""Expectations are checked in spec terms, every mismatch at once."""

from __future__ import annotations

from typing import ClassVar

from vspec.errors import Location
from vspec.harness.expect import check, check_expect
from vspec.model.conf import SchedulerConf
from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster, ObjectMeta, Pod, PodGroup
from vspec.model.probes import JobProbe, TaskProbe
from vspec.model.result import (
    Bind,
    Eviction,
    LogLine,
    PodGroupResult,
    ProbeFailure,
    Severity,
    SimulationResult,
    TaskResult,
)
from vspec.model.spec import Expect, LogsExpect, PodExpect, PodGroupExpect, Spec


def binds(**pairs: str) -> list[Bind]:
    return [Bind(task.replace("__", "/"), node) for task, node in pairs.items()]


def result_with(**kwargs: object) -> SimulationResult:
    return SimulationResult(**kwargs)  # type: ignore[arg-type]


def spec_with(expect: Expect, **kwargs: object) -> Spec:
    return Spec(
        name="s",
        location=Location("s.yaml", 1),
        scheduler=SchedulerConf([], []),
        cluster=Cluster(),
        expect=expect,
        **kwargs,  # type: ignore[arg-type]
    )


class TestBinds:
    def test_exact_binds_report_wrong_unexpected_and_missing_at_once(self) -> None:
        expect = Expect(binds={"ns1/p1": "n1", "ns1/p2": "n1"})
        result = result_with(binds=[Bind("ns1/p1", "n2"), Bind("ns1/p3", "n1")])
        assert check_expect(expect, result) == [
            "bind ns1/p1: expected n1, got n2",
            "missing bind ns1/p2 -> n1",
            "unexpected bind ns1/p3 -> n1",
        ]

    def test_exact_binds_pass_when_equal(self) -> None:
        expect = Expect(binds={"ns1/p1": "n1"})
        assert check_expect(expect, result_with(binds=[Bind("ns1/p1", "n1")])) == []

    def test_empty_binds_means_none_happened(self) -> None:
        result = result_with(binds=[Bind("ns1/p1", "n1")])
        assert check_expect(Expect(binds={}), result) == ["unexpected bind ns1/p1 -> n1"]

    def test_binds_include_ignores_other_binds(self) -> None:
        expect = Expect(binds_include={"ns1/p1": "n1", "ns1/p2": "n2"})
        result = result_with(binds=[Bind("ns1/p1", "n1"), Bind("ns1/p3", "n1")])
        assert check_expect(expect, result) == ["missing bind ns1/p2 -> n2"]

    def test_bind_count_counts_operations(self) -> None:
        result = result_with(binds=[Bind("a/p", "n1"), Bind("a/q", "n1", cycle=1)])
        assert check_expect(Expect(bind_count=1), result) == ["bindCount: expected 1, got 2"]
        assert check_expect(Expect(bind_count=2), result) == []

    def test_omitted_keys_are_not_checked(self) -> None:
        result = result_with(binds=[Bind("a/p", "n1")], evictions=[Eviction("a/q", "preempt")])
        assert check_expect(Expect(), result) == []


class TestEvictions:
    def test_evictions_are_a_multiset(self) -> None:
        result = result_with(evictions=[Eviction("c1/b", "preempt"), Eviction("c1/a", "preempt")])
        assert check_expect(Expect(evictions=["c1/a", "c1/b"]), result) == []

    def test_evictions_mismatch_shows_both_sides_sorted(self) -> None:
        result = result_with(evictions=[Eviction("c1/b", "x"), Eviction("c1/a", "x")])
        assert check_expect(Expect(evictions=["c1/a", "c1/a"]), result) == [
            "evictions: expected [c1/a, c1/a], got [c1/a, c1/b]"
        ]

    def test_evict_count(self) -> None:
        result = result_with(evictions=[Eviction("c1/a", "x")])
        assert check_expect(Expect(evict_count=0), result) == ["evictCount: expected 0, got 1"]


class TestPipelined:
    def test_listed_nodes_accept_each_pipelined_task(self) -> None:
        result = result_with(pipelined={"c1/pg2": [("c1/p1", "n1"), ("c1/p2", "n2")]})
        assert check_expect(Expect(pipelined={"c1/pg2": ["n1", "n2"]}), result) == []

    def test_a_task_on_an_unlisted_node_fails(self) -> None:
        result = result_with(pipelined={"c1/pg2": [("c1/p1", "n3")]})
        assert check_expect(Expect(pipelined={"c1/pg2": ["n1", "n2"]}), result) == [
            "pipelined c1/pg2: task c1/p1 on n3, expected one of [n1, n2]"
        ]

    def test_listed_nodes_require_at_least_one_pipelined_task(self) -> None:
        assert check_expect(Expect(pipelined={"c1/pg2": ["n1"]}), result_with()) == [
            "pipelined c1/pg2: expected tasks on [n1], got none"
        ]

    def test_empty_list_means_nothing_pipelined(self) -> None:
        result = result_with(pipelined={"c1/pg2": [("c1/p1", "n1")]})
        assert check_expect(Expect(pipelined={"c1/pg2": []}), result) == [
            "pipelined c1/pg2: expected none, got c1/p1 -> n1"
        ]
        assert check_expect(Expect(pipelined={"c1/pg1": []}), result) == []


class TestPodGroups:
    def test_phase_and_session_phase(self) -> None:
        result = result_with(pod_groups={"ns1/pg1": PodGroupResult("Inqueue", "Inqueue")})
        expect = Expect(pod_groups={"ns1/pg1": PodGroupExpect(phase="Running")})
        assert check_expect(expect, result) == [
            "podGroup ns1/pg1 phase: expected Running, got Inqueue"
        ]
        expect = Expect(pod_groups={"ns1/pg1": PodGroupExpect(session_phase="Pending")})
        assert check_expect(expect, result) == [
            "podGroup ns1/pg1 sessionPhase: expected Pending, got Inqueue"
        ]

    def test_unschedulable_is_a_substring_of_the_true_condition(self) -> None:
        conditions = [
            Condition("Scheduled", "True", message="old"),
            Condition("Unschedulable", "True", message="1/2 tasks: 1 Insufficient cpu"),
        ]
        result = result_with(pod_groups={"c1/pg": PodGroupResult("Pending", "Pending", conditions)})
        ok = Expect(pod_groups={"c1/pg": PodGroupExpect(unschedulable="Insufficient cpu")})
        assert check_expect(ok, result) == []
        bad = Expect(pod_groups={"c1/pg": PodGroupExpect(unschedulable="Insufficient memory")})
        assert check_expect(bad, result) == [
            "podGroup c1/pg unschedulable: expected a condition containing "
            "'Insufficient memory', got '1/2 tasks: 1 Insufficient cpu'"
        ]

    def test_unschedulable_without_condition(self) -> None:
        result = result_with(pod_groups={"c1/pg": PodGroupResult("Running", "Running")})
        expect = Expect(pod_groups={"c1/pg": PodGroupExpect(unschedulable="cpu")})
        assert check_expect(expect, result) == [
            "podGroup c1/pg unschedulable: expected a condition containing 'cpu', "
            "got no Unschedulable condition"
        ]

    def test_a_job_out_of_the_session_keeps_its_declared_phase(self) -> None:
        cluster = Cluster(pod_groups=[PodGroup(ObjectMeta("pg", "c1"), phase="Pending")])
        result = result_with(cluster=cluster)
        ok = Expect(pod_groups={"c1/pg": PodGroupExpect(phase="Pending")})
        assert check_expect(ok, result) == []
        bad = Expect(pod_groups={"c1/pg": PodGroupExpect(phase="Running", session_phase="X")})
        assert check_expect(bad, result) == [
            "podGroup c1/pg phase: expected Running, got Pending",
            "podGroup c1/pg: its job was not in the session",
        ]
        missing = Expect(pod_groups={"c1/nope": PodGroupExpect(phase="Running")})
        assert check_expect(missing, result) == [
            "podGroup c1/nope phase: expected Running, got no such pod group"
        ]


class TestPods:
    def test_node_and_status(self) -> None:
        result = result_with(tasks={"c1/p3": TaskResult("n1", "Binding")})
        expect = Expect(pods={"c1/p3": PodExpect(node="n2", node_given=True, status="Pending")})
        assert check_expect(expect, result) == [
            "pod c1/p3 node: expected n2, got n1",
            "pod c1/p3 status: expected Pending, got Binding",
        ]

    def test_node_null_means_not_bound(self) -> None:
        unbound = Expect(pods={"c1/p": PodExpect(node=None, node_given=True)})
        assert check_expect(unbound, result_with(tasks={"c1/p": TaskResult(None, "Pending")})) == []
        assert check_expect(unbound, result_with(tasks={"c1/p": TaskResult("n1", "Bound")})) == [
            "pod c1/p node: expected not bound, got n1"
        ]

    def test_status_only_does_not_check_the_node(self) -> None:
        expect = Expect(pods={"c1/p": PodExpect(status="Bound")})
        assert check_expect(expect, result_with(tasks={"c1/p": TaskResult("n9", "Bound")})) == []

    def test_pod_outside_every_job_is_where_it_was_declared(self) -> None:
        cluster = Cluster(pods=[Pod(ObjectMeta("lone", "c1"), phase="Running", node_name="n1")])
        result = result_with(cluster=cluster)
        expect = Expect(pods={"c1/lone": PodExpect(node="n1", node_given=True, status="Running")})
        assert check_expect(expect, result) == [
            "pod c1/lone status: expected Running, got no task in the session"
        ]


class TestLogs:
    LINES: ClassVar[list[LogLine]] = [
        LogLine(1, Severity.INFO, "Job c1/pg1 is pending, 0 ready"),
        LogLine(1, Severity.INFO, "Job c1/pg2 is ready"),
    ]

    def test_contains_matches_absent_all_pass(self) -> None:
        logs = LogsExpect(
            contains=["Job c1/pg1 is pending"], matches=[r"Job c1/pg\d is ready"], absent=["%!"]
        )
        assert check_expect(Expect(logs=logs), result_with(logs=self.LINES)) == []

    def test_each_log_mismatch_is_reported(self) -> None:
        logs = LogsExpect(contains=["Job c1/pg3"], matches=[r"^ready"], absent=["is ready"])
        assert check_expect(Expect(logs=logs), result_with(logs=self.LINES)) == [
            "logs.contains: no captured line contains 'Job c1/pg3'",
            "logs.matches: no captured line matches '^ready'",
            "logs.absent: 'is ready' found in line 'Job c1/pg2 is ready'",
        ]

    def test_a_bad_regex_is_a_mismatch_not_a_crash(self) -> None:
        logs = LogsExpect(matches=["("])
        [message] = check_expect(Expect(logs=logs), result_with(logs=self.LINES))
        assert message.startswith("logs.matches: '(' is not a regular expression")


class TestProbes:
    def test_probe_failures_name_the_probe_and_its_subject(self) -> None:
        spec = spec_with(Expect(), probes=[TaskProbe("c1/p1"), JobProbe("c1/pg1")])
        result = result_with(
            probe_failures=[
                ProbeFailure(0, "scores", "n1: expected 30, got 20"),
                ProbeFailure(1, "ready", "expected false, got true"),
            ]
        )
        assert check(spec, result) == [
            "probes[0] (task c1/p1) scores: n1: expected 30, got 20",
            "probes[1] (job c1/pg1) ready: expected false, got true",
        ]

    def test_check_puts_expect_before_probes(self) -> None:
        spec = spec_with(Expect(bind_count=1), probes=[JobProbe("c1/pg1")])
        result = result_with(probe_failures=[ProbeFailure(0, "valid", "no")])
        assert check(spec, result) == [
            "bindCount: expected 1, got 0",
            "probes[0] (job c1/pg1) valid: no",
        ]
