"""Running one spec: statuses, skip/xfail, crashes; and ``-k`` selection."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from math import isqrt
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeEngine
from vspec.errors import ConfError, EngineError, Location, PluginError, UserInterrupt
from vspec.harness.keyword import KeywordError, compile_keyword
from vspec.harness.report import failure_text, headline, summary
from vspec.harness.runner import (
    LOG_TAIL,
    RunReport,
    SpecOutcome,
    Verdict,
    execute,
    interrupts,
    run_spec,
)
from vspec.invariants import catalogue
from vspec.invariants.checks import DETERMINISTIC_MAX_PAIRS
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster, Node, ObjectMeta, Pod
from vspec.model.result import Bind, LogLine, Severity, SimulationResult
from vspec.model.spec import Expect, Spec

# The fake results name no real pod or node, which the invariants rightly reject; tests of
# the runner's own behaviour turn them off.
NO_INVARIANTS = [inv.name for inv in catalogue()]


def make_spec(**kwargs: Any) -> Spec:
    kwargs.setdefault("expect", Expect(binds={"c1/p1": "n1"}, disabled_invariants=NO_INVARIANTS))
    return Spec(
        name=kwargs.pop("name", "two jobs"),
        location=Location("specs/a.yaml", 4, key="name"),
        scheduler=SchedulerConf([], []),
        cluster=Cluster(),
        **kwargs,
    )


PASSING = SimulationResult(binds=[Bind("c1/p1", "n1")])
FAILING = SimulationResult(
    binds=[Bind("c1/p1", "n2")],
    logs=[LogLine(3, Severity.INFO, f"line {i}") for i in range(30)],
)


class TestExecute:
    def test_pass_passes_the_spec_settings_to_the_engine(self) -> None:
        engine = FakeEngine(PASSING)
        spec = make_spec(seed=5, cycles=2, verbosity=4)
        outcome = execute(spec, engine=engine)
        assert outcome.status is Verdict.PASSED
        assert outcome.messages == []
        assert outcome.seed == 5
        assert engine.calls == [{"seed": 5, "cycles": 2, "verbosity": 4, "now": spec.now}]

    def test_seed_override(self) -> None:
        engine = FakeEngine(PASSING)
        assert execute(make_spec(seed=5), seed=9, engine=engine).seed == 9
        assert engine.calls[0]["seed"] == 9

    def test_failure_keeps_messages_and_the_last_log_lines(self) -> None:
        outcome = execute(make_spec(), engine=FakeEngine(FAILING))
        assert outcome.status is Verdict.FAILED
        assert outcome.messages == ["bind c1/p1: expected n1, got n2"]
        assert outcome.log_tail == [f"line {i}" for i in range(30 - LOG_TAIL, 30)]
        assert outcome.log_total == 30
        assert not outcome.invalid

    def test_engine_crash_is_the_spec_error_with_its_location(self) -> None:
        outcome = execute(make_spec(), engine=FakeEngine(error=ZeroDivisionError("oops")))
        assert outcome.status is Verdict.ERROR
        assert not outcome.invalid
        [message] = outcome.messages
        assert message.startswith("specs/a.yaml:4: name: ZeroDivisionError: oops (at ")
        assert "ZeroDivisionError" in outcome.traceback

    def test_plugin_error_is_an_error_not_invalid(self) -> None:
        engine = FakeEngine(error=PluginError("gang", "raised"))
        outcome = execute(make_spec(), engine=engine)
        assert outcome.status is Verdict.ERROR
        assert outcome.messages == ["specs/a.yaml:4: name: plugin 'gang': raised"]
        assert not outcome.invalid

    def test_conf_error_from_the_engine_marks_the_spec_invalid(self) -> None:
        where = Location("specs/a.yaml", 9, key="scheduler.actions")
        engine = FakeEngine(error=ConfError("failed to find Action 'x'", where))
        outcome = execute(make_spec(), engine=engine)
        assert outcome.invalid
        assert outcome.messages == ["specs/a.yaml:9: scheduler.actions: failed to find Action 'x'"]


class Misbehaving:
    """An engine whose plugin code does what real plugin code has done."""

    name = "misbehaving"
    reproducible = True

    def __init__(self, act: Callable[[], None]) -> None:
        self.act = act

    def simulate(self, *_args: Any, **_kwargs: Any) -> SimulationResult:
        self.act()
        return PASSING


def swallow_exceptions() -> None:
    while True:
        try:
            time.sleep(0.01)
        except Exception:
            continue


def swallow_one_timeout() -> None:
    try:
        swallow_exceptions()
    except BaseException:  # a bare except, once: the next alarm gets through
        swallow_exceptions()


def panic_on_anything() -> None:
    try:
        swallow_exceptions()
    except BaseException as exc:
        raise EngineError("runtime error: invalid memory address or nil pointer") from exc


class TestGuard:
    @pytest.mark.parametrize(
        "act",
        [swallow_exceptions, swallow_one_timeout, panic_on_anything],
        ids=lambda f: f.__name__,
    )
    def test_over_time_is_timed_out_and_nothing_else(self, act: Callable[[], None]) -> None:
        outcome = execute(make_spec(), engine=Misbehaving(act), timeout=0.05)
        assert outcome.status is Verdict.ERROR and not outcome.invalid
        assert outcome.messages == ["timed out after 0.05 s"]
        assert outcome.traceback == ""

    def test_the_alarm_is_gone_after_the_spec(self) -> None:
        before = signal.getsignal(signal.SIGALRM)
        execute(make_spec(), engine=Misbehaving(swallow_one_timeout), timeout=0.05)
        assert signal.getsignal(signal.SIGALRM) is before
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)

    def test_sys_exit_is_the_spec_error(self) -> None:
        outcome = execute(make_spec(), engine=Misbehaving(lambda: sys.exit(0)))
        assert outcome.status is Verdict.ERROR
        assert "SystemExit: 0" in outcome.messages[0]

    def test_a_plugins_own_keyboard_interrupt_is_the_spec_error_under_interrupts(self) -> None:
        def interrupt() -> None:
            raise KeyboardInterrupt

        with interrupts():
            outcome = execute(make_spec(), engine=Misbehaving(interrupt))
        assert outcome.status is Verdict.ERROR
        assert "KeyboardInterrupt" in outcome.messages[0]
        with pytest.raises(KeyboardInterrupt):  # outside vspec run, it is the user's
            execute(make_spec(), engine=Misbehaving(interrupt))

    def test_the_users_interrupt_goes_through(self) -> None:
        def press_ctrl_c() -> None:
            signal.raise_signal(signal.SIGINT)

        with interrupts(), pytest.raises(UserInterrupt):
            execute(make_spec(), engine=Misbehaving(press_ctrl_c))


class TestInvariants:
    def test_violations_and_unknown_names_fail_the_spec(self) -> None:
        expect = Expect(bind_count=0, invariants=["no-such"], disabled_invariants=["nope"])
        outcome = execute(make_spec(expect=expect), engine=FakeEngine(SimulationResult()))
        assert outcome.status is Verdict.FAILED
        assert [m.split(" (known")[0] for m in outcome.messages] == [
            "invariants: unknown invariant 'no-such'",
            "invariants: unknown invariant 'nope'",
        ]

    def test_deterministic_reruns_the_same_engine_with_the_same_inputs(self) -> None:
        engine = FakeEngine(SimulationResult())
        others = [n for n in NO_INVARIANTS if n != "deterministic"]
        spec = make_spec(seed=4, expect=Expect(disabled_invariants=others))
        outcome = execute(spec, engine=engine)
        assert outcome.status is Verdict.PASSED
        assert len(engine.calls) == 2  # the run and the `deterministic` invariant's re-run
        assert engine.calls[0] == engine.calls[1]

    def test_deterministic_skips_the_rerun_above_its_size_unless_requested(self) -> None:
        others = [n for n in NO_INVARIANTS if n != "deterministic"]
        side = isqrt(DETERMINISTIC_MAX_PAIRS) + 1  # pods x nodes just over the threshold
        big = Cluster(
            nodes=[Node(ObjectMeta(f"n{i}")) for i in range(side)],
            pods=[Pod(ObjectMeta(f"p{i}")) for i in range(side)],
        )
        engine = FakeEngine(SimulationResult())
        spec = make_spec(expect=Expect(disabled_invariants=others))
        assert execute(replace(spec, cluster=big), engine=engine).status is Verdict.PASSED
        assert len(engine.calls) == 1
        asked = Expect(invariants=["deterministic"], disabled_invariants=others)
        assert execute(replace(spec, cluster=big, expect=asked), engine=engine).status is (
            Verdict.PASSED
        )
        assert len(engine.calls) == 3  # requested: run and re-run

    def test_a_disabled_invariant_is_not_checked(self) -> None:
        engine = FakeEngine(SimulationResult())
        spec = make_spec(expect=Expect(disabled_invariants=["deterministic"]))
        assert execute(spec, engine=engine).status is Verdict.PASSED
        assert len(engine.calls) == 1


class TestSkipAndXfail:
    def test_skip_does_not_run(self) -> None:
        engine = FakeEngine(FAILING)
        outcome = run_spec(make_spec(skip="not yet"), engine=engine)
        assert outcome.status is Verdict.SKIPPED
        assert outcome.reason == "not yet"
        assert engine.calls == []

    def test_xfail_that_fails_is_xfailed(self) -> None:
        outcome = run_spec(make_spec(xfail="bug 1"), engine=FakeEngine(FAILING))
        assert outcome.status is Verdict.XFAILED
        assert outcome.reason == "bug 1"
        assert not outcome.failing

    def test_xfail_that_crashes_is_xfailed(self) -> None:
        engine = FakeEngine(error=RuntimeError("x"))
        assert run_spec(make_spec(xfail="bug"), engine=engine).status is Verdict.XFAILED

    def test_xfail_that_passes_is_xpassed(self) -> None:
        outcome = run_spec(make_spec(xfail="bug 1"), engine=FakeEngine(PASSING))
        assert outcome.status is Verdict.XPASSED
        assert not outcome.failing

    def test_xfail_never_excuses_an_invalid_spec(self) -> None:
        engine = FakeEngine(error=ConfError("bad"))
        outcome = run_spec(make_spec(xfail="bug"), engine=engine)
        assert outcome.status is Verdict.ERROR
        assert outcome.invalid


class TestExitCode:
    def outcome(self, status: Verdict, invalid: bool = False) -> SpecOutcome:
        return SpecOutcome("s", Location("a.yaml"), status, invalid=invalid)

    @pytest.mark.parametrize(
        ("statuses", "code"),
        [
            ([Verdict.PASSED, Verdict.SKIPPED, Verdict.XFAILED, Verdict.XPASSED], 0),
            ([Verdict.PASSED, Verdict.FAILED], 1),
            ([Verdict.ERROR], 1),
            ([], 0),
        ],
    )
    def test_codes(self, statuses: list[Verdict], code: int) -> None:
        assert RunReport([self.outcome(s) for s in statuses]).exit_code == code

    def test_invalid_or_problem_wins(self) -> None:
        report = RunReport([self.outcome(Verdict.FAILED), self.outcome(Verdict.ERROR, True)])
        assert report.exit_code == 2
        assert RunReport([self.outcome(Verdict.PASSED)], problems=["x"]).exit_code == 2


class TestReport:
    def test_failure_text_lists_mismatches_then_log_tail(self) -> None:
        outcome = execute(make_spec(), engine=FakeEngine(FAILING))
        text = failure_text(outcome)
        lines = text.splitlines()
        assert lines[0] == "bind c1/p1: expected n1, got n2"
        assert f"last {LOG_TAIL} of 30 captured log lines:" in lines
        assert lines[-1] == "  line 29"

    def test_headline_and_summary(self) -> None:
        outcome = execute(make_spec(seed=3), engine=FakeEngine(FAILING))
        assert headline(outcome) == "FAILED specs/a.yaml:4 two jobs [seed 3]"
        counts = RunReport([outcome, outcome]).counts()
        assert summary(counts, 0.5) == "2 failed in 0.50s"
        assert summary(RunReport().counts(), 0) == "no specs ran in 0.00s"


class TestKeyword:
    @pytest.mark.parametrize(
        ("expr", "selected"),
        [
            ("", True),
            ("gang", True),
            ("GANG", True),
            ("preempt", False),
            ("gang and not preempt", True),
            ("not gang", False),
            ("preempt or jobs", True),
            ("(preempt or two) and allocate", True),
            ("volcano-v1.11.0", True),
            ("not (gang or preempt)", False),
        ],
    )
    def test_selection(self, expr: str, selected: bool) -> None:
        keywords = ["two jobs on one node", "gang", "allocate", "volcano-v1.11.0-ut"]
        assert compile_keyword(expr)(keywords) is selected

    @pytest.mark.parametrize("expr", ["gang and", "(gang", "and gang", "gang)", "not"])
    def test_malformed_expressions(self, expr: str) -> None:
        with pytest.raises(KeywordError, match="-k"):
            compile_keyword(expr)

    def test_a_long_chain_matches_without_deep_recursion(self) -> None:
        # 1,000 terms nested 1,000 calls deep: a RecursionError at match time.
        expr = " or ".join(f"w{i}" for i in range(999)) + " or gang"
        assert compile_keyword(expr)(["gang"]) is True

    @pytest.mark.parametrize(
        ("expr", "problem"),
        [
            (" or ".join(f"w{i}" for i in range(5000)), "at most 2000 are read"),
            ("(" * 60 + "x" + ")" * 60, "nested deeper than 50 levels"),
            ("not " * 60 + "x", "nested deeper than 50 levels"),
        ],
        ids=["terms", "parentheses", "nots"],
    )
    def test_huge_expressions_are_refused_before_work(self, expr: str, problem: str) -> None:
        with pytest.raises(KeywordError, match=problem) as error:
            compile_keyword(expr)
        assert len(str(error.value)) < 200  # the expression is not echoed whole


def test_shards_cover_every_spec_file_exactly_once(tmp_path: Path) -> None:
    from vspec.framework.engine import PythonEngine
    from vspec.harness.runner import Shard, run_paths

    for i in range(7):
        (tmp_path / f"s{i}.yaml").write_text(
            f"name: spec {i}\nscheduler: {{actions: enqueue}}\n"
            "cluster: {nodes: [{name: n1, allocatable: {cpu: 1}}]}\n"
        )
    everything = {o.name for o in run_paths([tmp_path], engine=PythonEngine()).outcomes}
    shares = [
        {o.name for o in run_paths([tmp_path], engine=PythonEngine(), shard=Shard(k, 3)).outcomes}
        for k in (1, 2, 3)
    ]
    assert len(everything) == 7
    assert set().union(*shares) == everything
    assert sum(len(share) for share in shares) == 7
    assert [len(share) for share in shares] == [3, 2, 2]


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0"])
def test_a_shard_that_is_not_k_of_n_is_refused(text: str) -> None:
    from vspec.harness.runner import Shard

    with pytest.raises(ValueError, match="is not K/N"):
        Shard.parse(text)
