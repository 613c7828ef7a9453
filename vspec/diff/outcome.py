"""What two runs of one spec must agree on, and how they differ.

Compared: binds (by session and task), evictions (by session, task and reason, as a
multiset: Volcano dispatches them from goroutines), pipelined tasks, pod group phases
(written at close and in-session) and conditions (type, status, reason, message: the
transition ids and times are the session's random uid and the wall clock; the task a
message names as the origin, and its fit errors, are Go's map order, :data:`ORIGIN`), and the
``print``/``logprint`` lines as a multiset per session (Go's map order decides their
order), with what neither engine fixes in them masked (:data:`UNFIXED`), and a spec's
probes' answers, key by key (a best node as the set of nodes tied for it). Not compared:
other klog lines (their wording follows the code path, not the
decision), Kubernetes events (their messages repeat the conditions').

A node is compared exactly unless vspec's engine scored the task's node as tied with
others for the best score: Volcano's ``SelectBestNode`` then draws among them at random,
so any of the tied nodes agrees.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from vspec.explain.records import TaskExplanation
from vspec.model.quantity import within_tolerance
from vspec.model.result import ProbeAnswer, SimulationResult

# The files that log the seed's print action and logprint plugin; the real engine's
# program carries its own copy of both in seed.go when the Volcano tree has none.
PRINT_SOURCES = frozenset({"logprint.go", "print.go", "seed.go"})
# What a printed job holds that neither engine fixes, masked in both engines' lines: a
# condition's transition id (the session's random uid), the fraction of a second of its
# time (Volcano's wall clock; vspec's clock has none), a creation time (the real engine
# moves creation times from the spec's `now` to today so that ages are the spec's:
# docs/engines.md, "The clock") and a pointer (`MinResources:0xc000...`).
UNFIXED = (
    (re.compile(r"TransitionID:[0-9a-f-]{36}"), "TransitionID:*"),
    (re.compile(r"(\d\d:\d\d:\d\d)\.\d+ "), r"\1 "),
    (re.compile(r"CreationTimestamp:[^A-Z]* UTC"), "CreationTimestamp:*"),
    (re.compile(r"0x[0-9a-f]+"), "0x*"),
    (re.compile(r"Origin reason is .*", re.S), "Origin reason is *"),  # as ORIGIN
)
# A task's request as Resource.String prints it: its scalar resources in Go's map order.
RESREQ = re.compile(r"resreq (.*?), preemptable")
TASK_LINE = "\n\t "
# JobInfo.FitError's "Origin reason is <task>: <its fit errors>": the first task with a
# fit error in the map order of the job's tasks, so its name and, when the job's tasks
# differ, its fit errors too (measured: one generated spec gave "1 Insufficient cpu, 2
# Insufficient pods" or "3 Insufficient pods" from run to run of Volcano v1.10.0 and
# v1.11.0). Both are masked in pod group conditions.
ORIGIN = re.compile(r"Origin reason is .*", re.S)
ORIGIN_MASK = "Origin reason is *"

# (session, task) -> the nodes tied for the best score when vspec's engine chose one
Ties = Mapping[tuple[int, str], frozenset[str]]
_Item = TypeVar("_Item", tuple[int, str], tuple[int, str, str])
PodGroupState = tuple[str, str, tuple[tuple[str, str, str, str], ...]]


@dataclass(frozen=True)
class Outcome:
    """One run, reduced to what the engines must agree on; ``error`` when it raised."""

    binds: dict[tuple[int, str], str] = field(default_factory=dict)
    evictions: Counter[tuple[int, str, str]] = field(default_factory=Counter)
    pipelined: dict[str, str] = field(default_factory=dict)  # task -> node, last session
    pod_groups: dict[str, PodGroupState] = field(default_factory=dict)
    printed: Counter[tuple[int, str]] = field(default_factory=Counter)
    probes: tuple[ProbeAnswer, ...] = ()
    # Each task's node as the last session held it, a bind that failed at dispatch
    # included: not compared (binds are), but where a replay finds the engine's draws.
    placed: dict[str, str] = field(default_factory=dict, compare=False)
    error: str | None = None

    @classmethod
    def of(cls, result: SimulationResult) -> Outcome:
        return cls(
            binds={(b.cycle, b.task): b.node for b in result.binds},
            evictions=Counter((e.cycle, e.task, e.reason) for e in result.evictions),
            pipelined={task: node for pairs in result.pipelined.values() for task, node in pairs},
            pod_groups={
                job: (
                    pg.phase,
                    pg.session_phase,
                    tuple(
                        sorted(
                            (c.type, c.status, c.reason, ORIGIN.sub(ORIGIN_MASK, c.message))
                            for c in pg.conditions
                        )
                    ),
                )
                for job, pg in result.pod_groups.items()
            },
            printed=Counter(
                (line.cycle, _fixed(line.text))
                for line in result.logs
                if line.source.partition(":")[0] in PRINT_SOURCES
            ),
            probes=tuple(result.probe_answers),
            placed={task: t.node for task, t in result.tasks.items() if t.node},
        )

    @classmethod
    def failed(cls, error: str) -> Outcome:
        return cls(error=error)

    def describe(self) -> list[str]:
        """The outcome as comment lines of a written disagreement."""
        if self.error is not None:
            return [f"error: {self.error}"]
        lines = [
            f"bind {task} -> {node} (session {c})" for (c, task), node in sorted(self.binds.items())
        ]
        lines += [
            f"evict {task} ({why}, session {c})"
            for c, task, why in sorted(self.evictions.elements())
        ]
        lines += [f"pipeline {task} -> {node}" for task, node in sorted(self.pipelined.items())]
        for job, (phase, in_session, conditions) in sorted(self.pod_groups.items()):
            conds = "; ".join(f"{t}={s} {r} {m}".rstrip() for t, s, r, m in conditions)
            lines.append(f"pod group {job}: {phase} (in session {in_session}) {conds}".rstrip())
        lines += [f"print (session {c}): {text}" for c, text in sorted(self.printed.elements())]
        lines += [f"probes[{i}]: {_answered(answer)}" for i, answer in enumerate(self.probes)]
        return lines or ["nothing bound, evicted or pipelined"]


def _fixed(text: str) -> str:
    """``text`` with :data:`UNFIXED` masked, each request's resources sorted, and a
    job's task lines sorted and unnumbered: what is left is what both engines fix."""
    for pattern, mask in UNFIXED:
        text = pattern.sub(mask, text)
    text = RESREQ.sub(lambda m: f"resreq {', '.join(sorted(m[1].split(', ')))}, preemptable", text)
    head, *tasks = text.split(TASK_LINE)
    return TASK_LINE.join([head, *sorted(task.partition(": ")[2] for task in tasks)])


def ties_of(explanations: Iterable[TaskExplanation]) -> dict[tuple[int, str], frozenset[str]]:
    """The tied nodes of each choice the explain recorder saw; the last attempt of a
    task in a session is the one its bind or pipeline came from."""
    ties: dict[tuple[int, str], frozenset[str]] = {}
    for task in explanations:
        for attempt in task.attempts:
            if attempt.chosen is not None:
                ties[(attempt.cycle, task.task)] = frozenset(attempt.tied)
    return ties


@dataclass(frozen=True)
class Difference:
    """One thing the engines decided differently; ``aspect`` groups them (the shrinker
    keeps a spec while a difference of the same aspect shows)."""

    aspect: str  # error | binds | evictions | pipelined | pod groups | print
    text: str
    placed: bool = False  # the task was placed by both, on different nodes


@dataclass(frozen=True)
class Comparison:
    differences: tuple[Difference, ...]
    # Choices where Volcano took another node among those tied for the best score.
    other_ties: tuple[str, ...] = ()

    @property
    def aspects(self) -> frozenset[str]:
        return frozenset(d.aspect for d in self.differences)


def compare(model: Outcome, real: Outcome, ties: Ties) -> Comparison:
    """How ``real`` (Volcano) differs from ``model`` (vspec's engine, whose ``ties``
    these are)."""
    if model.error is not None or real.error is not None:
        if (model.error is None) == (real.error is None):
            return Comparison(())  # both raised: the messages are each engine's own
        return Comparison((Difference("error", f"vspec: {model.error}; volcano: {real.error}"),))
    out: list[Difference] = []
    other_ties: list[str] = []
    last = max((c for c, _ in ties), default=0)
    pipelined_ties = {task: nodes for (c, task), nodes in ties.items() if c == last}
    for key in sorted(model.binds.keys() | real.binds.keys()):
        _node(
            "binds",
            f"{key[1]} (session {key[0]})",
            model.binds.get(key),
            real.binds.get(key),
            ties.get(key, frozenset()),
            out,
            other_ties,
        )
    for task in sorted(model.pipelined.keys() | real.pipelined.keys()):
        _node(
            "pipelined",
            task,
            model.pipelined.get(task),
            real.pipelined.get(task),
            pipelined_ties.get(task, frozenset()),
            out,
            other_ties,
        )
    out += _multiset("evictions", model.evictions, real.evictions)
    for job in sorted(model.pod_groups.keys() | real.pod_groups.keys()):
        mine, theirs = model.pod_groups.get(job), real.pod_groups.get(job)
        if mine != theirs:
            out.append(Difference("pod groups", f"{job}: vspec {mine}; volcano {theirs}"))
    out += _multiset("print", model.printed, real.printed)
    out += _probes(model.probes, real.probes)
    if other_ties and all(d.placed for d in out):
        # Every difference is where a task went, after Volcano broke a tie otherwise: the
        # next tasks saw other free room, so their scores differ too. The same tasks were
        # placed and nothing else differs: the ties explain it.
        other_ties += [f"{d.text} (after a tie)" for d in out]
        out = []
    return Comparison(tuple(out), tuple(other_ties))


def _node(
    aspect: str,
    what: str,
    mine: str | None,
    theirs: str | None,
    tied: frozenset[str],
    out: list[Difference],
    other_ties: list[str],
) -> None:
    if mine == theirs:
        return
    if mine is not None and theirs is not None and mine in tied and theirs in tied:
        other_ties.append(f"{what}: {theirs}, vspec {mine}, tied {sorted(tied)}")
        return
    text = f"{what}: vspec {mine or '-'}; volcano {theirs or '-'}"
    out.append(Difference(aspect, text, placed=mine is not None and theirs is not None))


def _multiset(aspect: str, mine: Counter[_Item], theirs: Counter[_Item]) -> list[Difference]:
    only_mine, only_theirs = sorted((mine - theirs).elements()), sorted((theirs - mine).elements())
    return [Difference(aspect, f"vspec only: {item}") for item in only_mine] + [
        Difference(aspect, f"volcano only: {item}") for item in only_theirs
    ]


def _probes(mine: Sequence[ProbeAnswer], theirs: Sequence[ProbeAnswer]) -> list[Difference]:
    """Each probe's answers, key by key: a predicate's verdict and error text, scores
    (the spec's float rule), the best nodes as a set (Volcano draws among them), votes,
    JobValid, victims as a set, an order as it stands."""
    out = []
    for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        for key, x, y in _answer_differences(a, b):
            out.append(Difference("probes", f"probes[{index}] {key}: vspec {x}; volcano {y}"))
    return out


def _answer_differences(a: ProbeAnswer, b: ProbeAnswer) -> Iterator[tuple[str, object, object]]:
    if a.missing is not None or b.missing is not None:
        if (a.missing is None) != (b.missing is None):  # each engine words its own
            yield "probe", a.missing or "answered", b.missing or "answered"
        return
    for node in sorted(a.predicates.keys() | b.predicates.keys()):
        x, y = a.predicates.get(node, _NONE), b.predicates.get(node, _NONE)
        if x != y:
            yield f"predicates.{node}", x or "passes", y or "passes"
    yield from _scores("scores", a.scores, b.scores)
    for plugin in sorted(a.plugin_scores.keys() | b.plugin_scores.keys()):
        mine, theirs = a.plugin_scores.get(plugin, {}), b.plugin_scores.get(plugin, {})
        yield from _scores(f"pluginScores.{plugin}", mine, theirs)
    if set(a.best or ()) != set(b.best or ()):
        yield "bestNode", sorted(a.best or ()), sorted(b.best or ())
    for key in sorted(a.votes.keys() | b.votes.keys()):
        if a.votes.get(key) != b.votes.get(key):
            yield key, a.votes.get(key), b.votes.get(key)
    if a.valid != b.valid:
        yield "valid", a.valid, b.valid
    if _sorted(a.victims) != _sorted(b.victims):
        yield "victims", _sorted(a.victims), _sorted(b.victims)
    if a.order != b.order:
        yield "order", a.order, b.order


_NONE = "no answer"


def _scores(
    key: str, mine: Mapping[str, float | None], theirs: Mapping[str, float | None]
) -> Iterator[tuple[str, object, object]]:
    for node in sorted(mine.keys() | theirs.keys()):
        x, y = mine.get(node, _NONE), theirs.get(node, _NONE)
        close = isinstance(x, float) and isinstance(y, float) and within_tolerance(x, y, None)
        if x != y and not close:
            yield f"{key}.{node}", x, y


def _sorted(items: list[str] | None) -> list[str] | None:
    return None if items is None else sorted(items)


def _answered(answer: ProbeAnswer) -> str:
    """A probe's answers, the keys it has, on one line."""
    if answer.missing is not None:
        return f"missing: {answer.missing}"
    keys = {
        "predicates": answer.predicates,
        "scores": answer.scores,
        "pluginScores": answer.plugin_scores,
        "best": answer.best,
        "votes": answer.votes,
        "valid": answer.valid,
        "victims": answer.victims,
        "order": answer.order,
    }
    return ", ".join(f"{key} {value}" for key, value in keys.items() if value) or "nothing"
