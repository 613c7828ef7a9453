"""Running a spec on the Python engine with the explain recorder (``vspec explain``)."""

from __future__ import annotations

from dataclasses import dataclass

from vspec.errors import SpecError, VspecError
from vspec.explain.recorder import ExplainRecorder
from vspec.explain.records import Explanation
from vspec.framework.engine import PythonEngine
from vspec.harness.plugin_dirs import spec_scope
from vspec.harness.runner import simulate_spec
from vspec.model.spec import Spec


@dataclass(frozen=True)
class Selection:
    """Which tasks to explain: a task, a job's tasks, or (neither) every task that was
    pending at the start of a cycle; ``cycle`` keeps one cycle (0-based)."""

    task: str | None = None
    job: str | None = None
    cycle: int | None = None

    def recorder(self, *, clusters: bool = False) -> ExplainRecorder:
        if self.task is None and self.job is None:
            return ExplainRecorder(clusters=clusters)
        return ExplainRecorder(
            tasks=[self.task] if self.task else [],
            jobs=[self.job] if self.job else [],
            clusters=clusters,
        )


def explain_spec(spec: Spec, selection: Selection, *, seed: int | None = None) -> Explanation:
    """Run ``spec`` once, recording why, and say what the selection asks about. A run
    that raises (a plugin's error, a Volcano panic) is explained up to where it stopped,
    with the error."""
    recorder = selection.recorder()
    used_seed = spec.seed if seed is None else seed
    error = None
    try:
        with spec_scope(spec):  # the spec's own plugins dirs
            simulate_spec(spec, PythonEngine(recorder=recorder), used_seed)
    except SpecError:
        raise  # the spec itself is wrong: nothing ran worth explaining
    except VspecError as exc:
        error = str(exc)  # the recorder explained the session as it stood
    tasks = [
        te for te in recorder.explanations if selection.cycle is None or te.cycle == selection.cycle
    ]
    jobs = [
        je
        for je in recorder.job_explanations
        if selection.cycle is None or je.cycle == selection.cycle
    ]
    return Explanation(
        spec=spec.name,
        file=spec.location.file,
        line=spec.location.line,
        seed=used_seed,
        cycles=spec.cycles,
        tasks=tasks,
        jobs=jobs,
        error=error,
    )
