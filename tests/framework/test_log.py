"""Deferred log lines read exactly as the eager ones, and only what is read is formatted."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from vspec.api.resource import Resource
from vspec.api.types import Code, Status
from vspec.api.unschedule_info import FitError
from vspec.framework.log import Klog
from vspec.framework.scheduler import simulate
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
from vspec.model.result import LogLine, Severity, line_texts, lines_starting_with
from vspec.util.predicate_helper import _FailureLines


def _never(*_args: object) -> str:
    raise AssertionError("rendered a line nobody read")


def test_a_deferred_line_renders_once_on_read_and_equals_the_eager_line() -> None:
    calls: list[tuple[object, ...]] = []

    def render(*args: object) -> str:
        calls.append(args)
        return f"{args[0]} and {args[1]}\n"

    log = Klog(verbosity=3, cycle=2)
    log.lazy(3, "Predicates failed: ", render, "a", 1, source="x.go:1")
    log.lazy(4, "Above the verbosity: ", _never)
    [line] = log.lines
    assert calls == []
    assert line.text == "Predicates failed: a and 1"  # the trailing newline dropped
    assert line.text == "Predicates failed: a and 1" and len(calls) == 1
    assert line == LogLine(3, Severity.INFO, "Predicates failed: a and 1", 2, "x.go:1")
    assert line != LogLine(3, Severity.INFO, "Predicates failed: a and 2", 2, "x.go:1")


def test_startswith_reads_the_head_without_rendering() -> None:
    line = LogLine.deferred(3, Severity.INFO, "Predicates failed: ", _never, ())
    assert not line.startswith("Job ")
    assert line.startswith("Pred")
    assert line.startswith("Predicates failed: ")
    short = LogLine.deferred(3, Severity.INFO, "Jo", lambda: "b ns/x", ())
    assert short.startswith("Job ")  # the head alone cannot tell: rendered
    assert not short.startswith("Jobs")


def test_predicates_failed_lines_read_as_the_fit_errors_say() -> None:
    nodes = [Node(ObjectMeta(n), allocatable={"cpu": Fraction(1)}) for n in ("n0", "n1")]
    meta = ObjectMeta("j-p", "ns", annotations={GROUP_NAME_ANNOTATION: "j"})
    task = Pod(meta, containers=[Container(requests={"cpu": Fraction(2)})])
    group = PodGroup(ObjectMeta("j", "ns"), queue="q", min_member=1, phase="Inqueue")
    world = Cluster(nodes, [task], [group], [Queue(ObjectMeta("q"))])
    conf = load_conf(
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}, {"name": "predicates"}]}]}
    )
    texts = [line.text for line in simulate(conf, world, verbosity=3).logs]
    assert [t for t in texts if t.startswith("Predicates failed")] == [
        "Predicates failed: task ns/j-p on node n0 fit failed: Insufficient cpu",
        "Predicates failed: task ns/j-p on node n1 fit failed: Insufficient cpu",
    ]
    quiet = [line.text for line in simulate(conf, world, verbosity=2).logs]
    assert not [t for t in quiet if t.startswith("Predicates failed")]


def test_the_line_keeps_the_error_as_it_was_logged() -> None:
    """FitErrors.set_node_error renames an error after it is logged; the line does not."""
    err = FitError("ns", "p", "old", [Status(Code.Error, "no")])
    log = Klog()
    failures = _FailureLines(SimpleNamespace(log=log), SimpleNamespace(namespace="ns", name="p"))  # type: ignore[arg-type]
    failures.log(err)
    failures.extend(["n2"], [[Status(Code.Unschedulable, "Insufficient cpu")]])
    failures.log(FitError("ns", "other", "n3", [Status(Code.Error, "theirs")]))
    failures.log(ValueError("plain"))
    err.node_name = "new"
    assert [line.text for line in log.lines] == [
        "Predicates failed: task ns/p on node old fit failed: no",
        "Predicates failed: task ns/p on node n2 fit failed: Insufficient cpu",
        "Predicates failed: task ns/other on node n3 fit failed: theirs",
        "Predicates failed: plain",
    ]


def test_consecutive_failures_are_one_growing_block_that_a_line_between_ends() -> None:
    log = Klog()
    failures = _FailureLines(SimpleNamespace(log=log), SimpleNamespace(namespace="ns", name="p"))  # type: ignore[arg-type]
    short = [Status(Code.Unschedulable, "Insufficient cpu")]
    failures.extend(["n0"], [short])
    failures.extend(["n1"], [short])
    log.v(3, "a plugin's line")
    failures.extend(["n2", "n3"], [short, short])
    assert len(log.lines) == 5 and len(log.lines._records) == 3
    texts = [
        f"Predicates failed: task ns/p on node n{i} fit failed: Insufficient cpu" for i in range(4)
    ]
    texts.insert(2, "a plugin's line")
    assert [line.text for line in log.lines] == texts
    assert [log.lines[i].text for i in range(-5, 5)] == texts + texts
    assert [line.text for line in log.lines.starting_with("Predicates")] == texts[:2] + texts[3:]


def test_infof_formats_on_read_from_the_values_as_they_were_logged() -> None:
    idle = Resource(1000, 2048, {"pods": 3.0})
    log = Klog(verbosity=3)
    log.infof(3, "After allocated Task <{}/{}>: idle <{}>", "ns", "p", idle.values())
    log.infof(4, "Above the verbosity: {}", _Unprintable())
    log.infof(3, "Braces {{escaped}} as in str.format")
    log.infof(3, "No fields at all\n")
    idle.sub(Resource(500, 0))
    line, escaped, plain = log.lines
    assert line.startswith("After allocated Task <") and line._render is not None
    assert line.text == "After allocated Task <ns/p>: idle <cpu 1000.00, memory 2048.00, pods 3.00>"
    assert str(idle) == "cpu 500.00, memory 2048.00, pods 3.00"
    assert escaped.text == "Braces {escaped} as in str.format"
    assert plain.text == "No fields at all"  # a trailing newline dropped, as by Klog.v


class _Unprintable:
    def __format__(self, spec: str) -> str:
        raise AssertionError("formatted a line above the verbosity")


def test_a_scan_of_every_line_formats_no_block_line_its_head_rules_out() -> None:
    log = Klog()
    log.block(3, "Predicates failed: ", _never, 3)
    log.v(3, "After pipelined Task <ns/p> to Node <n1>: ...")
    assert [line.text for line in log.lines if line.startswith("After pipelined Task <")] == [
        "After pipelined Task <ns/p> to Node <n1>: ..."
    ]


def test_failures_taken_in_bulk_grow_the_same_block() -> None:
    log = Klog()
    failures = _FailureLines(SimpleNamespace(log=log), SimpleNamespace(namespace="ns", name="p"))  # type: ignore[arg-type]
    short = [Status(Code.Unschedulable, "Insufficient cpu")]
    failures.log(FitError("ns", "p", "n0", short))
    failures.extend(["n1", "n2"], [short, short])
    log.v(3, "a plugin's line")
    failures.extend(["n3"], [short])
    assert len(log.lines._records) == 3
    texts = [
        f"Predicates failed: task ns/p on node n{i} fit failed: Insufficient cpu" for i in range(4)
    ]
    texts.insert(3, "a plugin's line")
    assert [line.text for line in log.lines] == texts


_HEADS = ["", "J", "Jo", "Job", "Job ", "Job x", "Jobs", "X", "Job\n"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_HEADS), st.sampled_from(["", " y", "b x", "\n", "ob z"]), st.booleans()
        ),
        max_size=12,
    ),
    st.sampled_from(["Job ", "J", ""]),
)
def test_lines_starting_with_tells_what_each_line_tells(
    drawn: list[tuple[str, str, bool]], prefix: str
) -> None:
    """The C loops pick the lines :meth:`LogLine.startswith` picks, and format no
    deferred line whose head alone decides."""

    def make() -> list[LogLine]:
        return [
            LogLine.deferred(3, Severity.INFO, head, rest.__add__, ("",))
            if deferred
            else LogLine(3, Severity.INFO, (head + rest).rstrip("\n"))
            for head, rest, deferred in drawn
        ]

    lines, asked = make(), make()
    found = lines_starting_with(lines, prefix)
    expected = [i for i, line in enumerate(asked) if line.startswith(prefix)]
    assert list(map(id, found)) == [id(lines[i]) for i in expected]
    assert [line._render is None for line in lines] == [line._render is None for line in asked]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_HEADS),
            st.sampled_from(["", " y", "b x", "\n", "ob z"]),
            st.sampled_from(["eager", "deferred", "read"]),
        ),
        max_size=12,
    )
)
def test_line_texts_are_each_lines_text(drawn: list[tuple[str, str, str]]) -> None:
    """The texts read in C loops are what each line's ``text`` says, a deferred line
    formatted or not yet."""

    def make() -> list[LogLine]:
        lines = []
        for head, rest, kind in drawn:
            if kind == "eager":
                lines.append(LogLine(3, Severity.INFO, (head + rest).rstrip("\n")))
                continue
            line = LogLine.deferred(3, Severity.INFO, head, rest.__add__, ("",))
            if kind == "read":
                assert line.text is not None  # formatted before the texts are asked
            lines.append(line)
        return lines

    assert line_texts(make()) == [line.text for line in make()]


def test_each_logs_what_v_logs_line_by_line() -> None:
    lines = [("Job a/b is pending", "logprint.go:53"), ("a trailing newline\n", ""), ("x", "y")]
    one, many = Klog(verbosity=1, cycle=4), Klog(verbosity=1, cycle=4)
    for text, source in lines:
        one.v(1, text, source)
        one.v(2, text, source)
    many.each(1, iter(lines))
    many.each(2, iter(lines))
    assert list(many.lines) == list(one.lines) and len(many.lines) == 3
    assert [line.source for line in many.lines] == [source for _, source in lines]


def test_each_hands_on_the_last_calls_lines_only_at_the_same_level_and_cycle() -> None:
    log = Klog(verbosity=2)
    log.each(1, [("a", "s"), ("b", "s")])
    log.each(1, [("b", "s"), ("c", "s"), ("a", "t")])
    first, second = list(log.lines)[:2], list(log.lines)[2:]
    assert second[0] is first[1]  # the very line: equal text, source, level and cycle
    assert [line.text for line in second] == ["b", "c", "a"] and second[2].source == "t"
    log.each(2, [("b", "s")])
    assert log.lines[-1] is not first[1] and log.lines[-1].verbosity == 2
    log.cycle = 1
    log.each(2, [("b", "s")])
    assert log.lines[-1] is not log.lines[-2] and log.lines[-1].cycle == 1


def test_a_slice_is_the_lines_with_or_without_blocks() -> None:
    for with_block in (False, True):
        log = Klog(verbosity=3)
        for i in range(6):
            log.v(3, f"line {i}")
            if with_block and i == 2:
                log.block(3, "node ", str, 3)
        for cut in (slice(2, None), slice(None, -2), slice(1, 5, 2), slice(-3, None)):
            sliced = log.lines[cut]
            assert sliced == list(log.lines)[cut]
            assert all(isinstance(line, LogLine) for line in sliced)
