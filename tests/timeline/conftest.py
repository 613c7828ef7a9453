"""Helpers for timeline tests: a spec text in, a loaded spec or its run out."""

from __future__ import annotations

import textwrap
from contextlib import suppress
from pathlib import Path

import pytest
from hypothesis.strategies import SearchStrategy

from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.fuzz.strategies import ClusterBounds, ConfSpace
from vspec.fuzz.timelines import GeneratedTimelineSpec, timeline_specs
from vspec.harness.loader import load_file
from vspec.model.conf import SchedulerConf
from vspec.model.objects import Cluster
from vspec.model.spec import Spec
from vspec.model.timeline import Timeline
from vspec.timeline.clock import run_timeline
from vspec.timeline.records import TimelineResult

CONF = """
scheduler:
  actions: "enqueue, allocate, backfill"
  tiers:
  - plugins: [{name: priority}, {name: gang}, {name: conformance}]
  - plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""


class Loader:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def errors(self, text: str) -> list[str]:
        path = self.directory / "spec.yaml"
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return [f"{e.location.line}: {e}" if e.location else str(e) for e in load_file(path).errors]

    def spec(self, text: str, *, conf: bool = True) -> Spec:
        path = self.directory / "spec.yaml"
        body = textwrap.dedent(text).lstrip("\n") + (textwrap.dedent(CONF) if conf else "")
        path.write_text(body, encoding="utf-8")
        loaded = load_file(path)
        assert not loaded.errors, "\n".join(str(e) for e in loaded.errors)
        return loaded.specs[0]

    def run(self, text: str, **kwargs: object) -> TimelineResult:
        spec = self.spec(text)
        assert spec.timeline is not None
        kwargs.setdefault("engine", get_engine())
        return run_timeline(spec.scheduler, spec.cluster, spec.timeline, now=spec.now, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def loader(tmp_path: Path) -> Loader:
    return Loader(tmp_path)


def run_case(
    conf: SchedulerConf, cluster: Cluster, timeline: Timeline, seed: int, verbosity: int = 0
) -> None:
    """Run a drawn or built timeline for what a patched pass sees along the way."""
    run_timeline(conf, cluster, timeline, seed=seed, verbosity=verbosity, engine=get_engine())


def day_shape() -> tuple[Cluster, Timeline]:
    """The day's shape (benchmarks/timeline_day.py) at a test's scale: 60 jobs over a
    quarter of an hour on 20 nodes."""
    from benchmarks.timeline_day import workload

    return workload(nodes=20, jobs=60, hours=0.25, seed=4)


# The drawn timelines' scale for the tests of kept answers: small enough that thirty
# examples run in seconds, large enough that jobs wait, finish and interleave.
DRAWN_BOUNDS = ClusterBounds(max_nodes=4, max_jobs=6)


def drawn_timelines(conf: ConfSpace) -> SearchStrategy[GeneratedTimelineSpec]:
    """Timelines of ``conf``'s space at :data:`DRAWN_BOUNDS`."""
    return timeline_specs(conf, DRAWN_BOUNDS)


def run_drawn(case: GeneratedTimelineSpec, verbosity: int) -> None:
    """Run a drawn timeline; one whose conf Volcano rejects has no session to check."""
    with suppress(VspecError):
        run_case(case.conf, case.cluster, case.timeline, case.seed, verbosity)
