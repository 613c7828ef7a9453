"""What the report keeps of one spec's run: its log, the cluster after each cycle,
and why the tasks its expectations name ended where they did."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from vspec.explain.recorder import ExplainRecorder
from vspec.explain.records import ClusterState, JobExplanation, TaskExplanation
from vspec.framework.engine import PythonEngine
from vspec.harness.expect import named_jobs, named_tasks
from vspec.model.conf import SchedulerConf
from vspec.model.engine import SchedulerProcess
from vspec.model.objects import Cluster
from vspec.model.probes import Probe
from vspec.model.result import LogLine, SimulationResult
from vspec.model.spec import Spec
from vspec.model.versions import DEFAULT_VERSION

EXPLAINED_TASKS = 20  # explain tables per spec, at most


@dataclass
class Capture:
    spec: Spec
    logs: Sequence[LogLine] = field(default_factory=list)
    clusters: list[ClusterState] = field(default_factory=list)
    explained: list[TaskExplanation] = field(default_factory=list)
    jobs: list[JobExplanation] = field(default_factory=list)  # the last cycle's


def _worth_showing(explanations: list[TaskExplanation]) -> list[TaskExplanation]:
    """Each task's last cycle, and before it the cycles in which it preempted or
    reclaimed (a preemptor is bound a cycle after it evicted: the eviction's why is in
    the earlier one)."""
    last = {te.task: te for te in explanations}
    return [te for te in explanations if te is last[te.task] or any(a.victims for a in te.attempts)]


class RecordingEngine:
    """The Python engine, recording the first run after :meth:`arm` (the spec's own;
    the ``deterministic`` invariant's re-runs are not recorded)."""

    name = "python"
    reproducible = True

    def __init__(self) -> None:
        self.volcano_version = DEFAULT_VERSION  # the release modelled (``--volcano-version``)
        self._spec: Spec | None = None
        self._recorder: ExplainRecorder | None = None
        self.capture: Capture | None = None

    def arm(self, spec: Spec) -> None:
        self._spec, self.capture = spec, None
        self._recorder = ExplainRecorder(
            tasks=named_tasks(spec.expect), jobs=named_jobs(spec.expect), clusters=True
        )

    def take(self) -> Capture | None:
        capture, self.capture, self._spec, self._recorder = self.capture, None, None, None
        return capture

    def scheduler(
        self, conf: SchedulerConf, *, seed: int = 0, verbosity: int = 3
    ) -> SchedulerProcess:
        """A timeline's scheduler, not recorded: the report shows a timeline's records."""
        engine = PythonEngine(volcano_version=self.volcano_version)
        return engine.scheduler(conf, seed=seed, verbosity=verbosity)

    def simulate(
        self,
        conf: SchedulerConf,
        cluster: Cluster,
        *,
        seed: int = 0,
        now: datetime | None = None,
        cycles: int = 1,
        verbosity: int = 3,
        probes: Sequence[Probe] = (),
    ) -> SimulationResult:
        recorder, spec = self._recorder, self._spec
        self._recorder = None
        engine = PythonEngine(volcano_version=self.volcano_version)
        if recorder is not None:
            engine = PythonEngine(recorder=recorder, volcano_version=self.volcano_version)
        try:  # a panic is explained as the session stood (Recorder.session_failed)
            return engine.simulate(
                conf, cluster, seed=seed, now=now, cycles=cycles, verbosity=verbosity, probes=probes
            )
        finally:
            if recorder is not None and spec is not None:
                explained = _worth_showing(recorder.explanations)[:EXPLAINED_TASKS]
                jobs = list({je.job: je for je in recorder.job_explanations}.values())
                self.capture = Capture(
                    spec,
                    recorder.log_lines,
                    recorder.cluster_states,
                    explained,
                    jobs[:EXPLAINED_TASKS],
                )
