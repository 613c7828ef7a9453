"""One spec on both engines: do they agree, and if not, is it Volcano's own doing?

vspec's engine runs with the explain recorder, whose scores tell which nodes tied for a
task. When Volcano took another tied node, what follows may differ too (the next task
sees other free room), so before calling that a disagreement vspec's engine is run
again replaying Volcano's draws (wherever the same nodes tie for a task, it takes the
node Volcano took), at its seed and a few others (its other tie-breaks are its seed's
draws): one that agrees shows the outcome is one of those Volcano's ties allow.

A disagreement left is checked against Volcano itself: the real engine runs the spec
again (:attr:`Judge.reruns` more times, same input and seed). Should one of those runs
agree with vspec's engine, the spec is Volcano's own nondeterminism (Go's map order,
goroutines), shown with the runs that differ, and not a disagreement; should the runs
differ among themselves but none agree, it stays a disagreement, with that evidence.
On a cluster big enough that Volcano's predicate pass stops before it looked at every
node, its runs are as many as for an outcome seen to vary, even when all agreed so far:
which nodes its 16 workers found first changes from run to run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from vspec.diff.outcome import Comparison, Outcome, Ties, compare, ties_of
from vspec.engines.volcano.build import EngineBuildError
from vspec.errors import VspecError
from vspec.explain.recorder import ExplainRecorder
from vspec.framework.engine import PythonEngine
from vspec.model.conf import SchedulerConf
from vspec.model.engine import Engine, Prefer
from vspec.model.objects import Cluster
from vspec.model.probes import Probe
from vspec.model.versions import DEFAULT_VERSION
from vspec.util.scheduler_helper import num_feasible_nodes_to_find


@dataclass(frozen=True)
class Case:
    """A spec as both engines run it."""

    conf: SchedulerConf
    cluster: Cluster
    seed: int = 0
    now: datetime | None = None
    cycles: int = 1
    verbosity: int = 3
    probes: tuple[Probe, ...] = ()


class Drawn(Protocol):
    """A generated spec as the fuzzer draws it (:class:`vspec.fuzz.strategies.GeneratedSpec`)."""

    @property
    def conf(self) -> SchedulerConf: ...
    @property
    def cluster(self) -> Cluster: ...
    @property
    def seed(self) -> int: ...
    @property
    def cycles(self) -> int: ...
    @property
    def verbosity(self) -> int: ...


@dataclass(frozen=True)
class Verdict:
    model: Outcome  # vspec's engine, at ``model_seed``
    real: Outcome  # Volcano's first run
    comparison: Comparison  # real against model
    model_seed: int
    reruns: tuple[Outcome, ...] = ()  # Volcano's further runs, when the first disagreed
    agreeing_run: int | None = None  # 1-based run of Volcano's that agrees, if a later one
    # Why Volcano's nondeterminism explains the differences, when no run agrees.
    explained: str | None = None

    @property
    def disagrees(self) -> bool:
        return (
            bool(self.comparison.differences)
            and self.agreeing_run is None
            and self.explained is None
        )

    @property
    def nondeterministic(self) -> bool:
        """Volcano's runs of the same input differed."""
        return any(rerun != self.real for rerun in self.reruns)

    def evidence(self) -> list[str]:
        """What shows Volcano's nondeterminism: how its later runs differ from its first."""
        lines = []
        for n, rerun in enumerate(self.reruns, start=2):
            if rerun != self.real:
                differences = compare(self.real, rerun, {}).differences
                lines.append(f"Volcano run {n} differs from run 1:")
                lines += [f"  {d.aspect}: {d.text}" for d in differences[:10]]
        return lines


# How many times more Volcano is rerun when only the victims within jobs differ, and
# when its runs differ among themselves but none agrees yet.
VICTIM_RUNS = 5
VARYING_RUNS = 9


@dataclass
class Judge:
    """Runs cases on vspec's engine and on ``real``."""

    real: Engine
    volcano_version: str | None = None  # the release vspec's engine models (None: its default)
    reruns: int = 7  # further runs of Volcano when it disagrees
    seeds: int = 16  # other seeds of vspec's engine tried when Volcano broke a tie otherwise

    def judge(self, case: Case, *, confirm: bool = True) -> Verdict:
        """The verdict on ``case``; ``confirm``: rerun Volcano on a disagreement (the
        shrinker, which judges many candidates, leaves that to the final one)."""
        real = self.run_real(case)
        model, seed, comparison = self._closest(case, real)
        verdict = Verdict(model, real, comparison, seed)
        if not (confirm and verdict.disagrees):
            return verdict
        jobs = {pod.meta.key: f"{pod.meta.namespace}/{pod.group_name}" for pod in case.cluster.pods}
        ties = self.run_model(case, seed)[1]
        # Which tasks of a job preempt and reclaim take is Go's map order (the node's
        # tasks, in the order the plugins' victim votes count them down): when only that
        # differs, Volcano is given more runs to show it.
        victims_only = not compare(_by_job(model, jobs), _by_job(real, jobs), ties).differences
        runs = self.reruns * (VICTIM_RUNS if victims_only else 1)
        if _sampled(case):
            # Volcano's predicate pass stops once its 16 workers found enough feasible
            # nodes, and which they found first is their interleaving's (more varied as
            # the machine gets busier): its node may differ from run to run though
            # every run so far agreed, so it is given the runs of a varying outcome.
            runs = max(runs, self.reruns * VARYING_RUNS)
        reruns: list[Outcome] = []
        seen: list[Outcome] = [real]  # each outcome is compared with vspec's once
        n = 1
        while n <= runs:
            n += 1
            rerun = self.run_real(case)
            reruns.append(rerun)
            if rerun in seen:
                continue
            seen.append(rerun)
            other_model, other_seed, other = self._closest(case, rerun)
            if not other.differences:
                return Verdict(other_model, rerun, comparison, other_seed, tuple(reruns), n)
            if victims_only:
                why = "Volcano evicts other tasks of the same jobs from run to run"
                return Verdict(model, real, comparison, seed, tuple(reruns), explained=why)
            # Volcano's outcome varies: vspec's may be one of its rarer ones (measured:
            # one generated spec took vspec's path in 12 of 150 runs of v1.10.0).
            runs = max(runs, self.reruns * VARYING_RUNS)
        return Verdict(model, real, comparison, seed, tuple(reruns))

    def _closest(self, case: Case, real: Outcome) -> tuple[Outcome, int, Comparison]:
        """vspec's outcome at the case's seed compared with ``real``, or at the first
        other seed that agrees when a choice was among tied nodes."""
        model, ties = self.run_model(case, case.seed)
        comparison = compare(model, real, ties)
        # A tie anywhere may explain a difference elsewhere: the node Volcano drew can
        # fail at dispatch, or leave other room for the next task.
        if not (comparison.differences and any(len(nodes) > 1 for nodes in ties.values())):
            return model, case.seed, comparison
        # Volcano's draws replayed where its outcome shows them; where it does not (a
        # node whose bind failed at dispatch), vspec's engine draws from other seeds.
        draws = _draws_of(real, case.cycles - 1)
        for seed in range(case.seed, case.seed + 1 + self.seeds):
            other, other_ties = self.run_model(case, seed, prefer=draws)
            if not compare(other, real, other_ties).differences:
                return other, seed, Comparison((), comparison.other_ties)
        return model, case.seed, comparison

    def run_model(
        self, case: Case, seed: int, *, prefer: Prefer | None = None
    ) -> tuple[Outcome, Ties]:
        """vspec's engine on ``case``, and the nodes that tied for each task it placed;
        ``prefer``: tie-breaks to replay."""
        recorder = ExplainRecorder()
        version = self.volcano_version or DEFAULT_VERSION
        engine = PythonEngine(recorder=recorder, volcano_version=version, prefer=prefer)
        return _outcome(engine, case, seed), ties_of(recorder.explanations)

    def run_real(self, case: Case) -> Outcome:
        return _outcome(self.real, case, case.seed)


def _sampled(case: Case) -> bool:
    """Volcano's predicate pass may stop before it looked at every node
    (``CalculateNumOfFeasibleNodesToFind`` below the cluster's nodes)."""
    nodes = len(case.cluster.nodes)
    return num_feasible_nodes_to_find(nodes, case.conf.options) < nodes


def oracle(judge: Judge) -> Callable[[Drawn], dict[str, list[str]]]:
    """``vspec fuzz --diff``'s second judge: a disagreement is a finding of kind
    ``diff-<aspect>`` (the fuzzer hands it no timeline)."""

    def disagreements(spec: Drawn) -> dict[str, list[str]]:
        case = Case(spec.conf, spec.cluster, spec.seed, None, spec.cycles, spec.verbosity)
        verdict = judge.judge(case)
        if not verdict.disagrees:
            return {}
        differences = verdict.comparison.differences
        kind = "diff-" + differences[0].aspect.replace(" ", "-")
        return {kind: [f"{d.aspect}: {d.text}" for d in differences]}

    return disagreements


def _draws_of(real: Outcome, last: int) -> Prefer:
    """Volcano's node for each task it bound, or in its ``last`` session pipelined or
    held on (a bind that failed at dispatch), as a replay prefers it."""

    def prefer(session: int, task: str) -> str | None:
        bound = real.binds.get((session, task))
        if bound is not None or session != last:
            return bound
        return real.pipelined.get(task) or real.placed.get(task)

    return prefer


def _by_job(outcome: Outcome, jobs: dict[str, str]) -> Outcome:
    """``outcome`` with each eviction named by its task's job."""
    evictions: Counter[tuple[int, str, str]] = Counter()
    for (cycle, task, reason), n in outcome.evictions.items():
        evictions[(cycle, jobs.get(task, task), reason)] += n
    return replace(outcome, evictions=evictions)


def _outcome(engine: Engine, case: Case, seed: int) -> Outcome:
    try:
        result = engine.simulate(
            case.conf,
            case.cluster,
            seed=seed,
            now=case.now,
            cycles=case.cycles,
            verbosity=case.verbosity,
            probes=case.probes,
        )
    except EngineBuildError:
        raise  # no engine to compare with: the run stops
    except VspecError as exc:
        return Outcome.failed(
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        )
    return Outcome.of(result)
