"""The explain recorder watches and never steers: every spec of the repository and of
Volcano's conformance cases gives the same outcome, log included, with it as without."""

from __future__ import annotations

from pathlib import Path

import pytest

from vspec.explain.recorder import ExplainRecorder
from vspec.framework.scheduler import simulate
from vspec.harness.loader import discover, load_file
from vspec.harness.plugin_dirs import load_project_plugins
from vspec.harness.settings import project_settings
from vspec.model.result import SimulationResult
from vspec.model.spec import Spec

REPO = Path(__file__).resolve().parents[2]
ROOTS = [REPO / "specs", REPO / "examples" / "specs", REPO.parent / "shared" / "conformance"]


def _specs() -> list[Spec]:
    load_project_plugins(project_settings(REPO))
    specs = []
    for path in discover([root for root in ROOTS if root.exists()]):
        specs.extend(load_file(path).specs)
    return specs


def _run(spec: Spec, recorder: ExplainRecorder | None) -> SimulationResult | str:
    kwargs = {} if recorder is None else {"recorder": recorder}
    try:
        return simulate(
            spec.scheduler,
            spec.cluster,
            seed=spec.seed,
            now=spec.now,
            cycles=spec.cycles,
            verbosity=spec.verbosity,
            probes=spec.probes,
            **kwargs,
        )
    except Exception as exc:  # a finding that panics must panic the same way
        return f"{type(exc).__name__}: {exc}"


def _observed(result: SimulationResult | str) -> object:
    if isinstance(result, str):
        return result
    return (
        result.binds,
        result.evictions,
        result.pipelined,
        {k: (v.phase, v.session_phase, v.conditions) for k, v in result.pod_groups.items()},
        result.tasks,
        [(line.verbosity, line.text) for line in result.logs],
        result.events,
        result.probe_failures,
    )


SPECS = _specs()


@pytest.mark.parametrize("spec", SPECS, ids=[s.nodeid for s in SPECS])
def test_recording_everything_changes_nothing(spec: Spec) -> None:
    recorder = ExplainRecorder(clusters=True)
    recorded, plain = _run(spec, recorder), _run(spec, None)
    assert _observed(recorded) == _observed(plain)
    assert isinstance(plain, str) or len(recorder.cluster_states) == spec.cycles


def test_the_repository_has_specs_to_compare() -> None:
    assert len(SPECS) > 40
