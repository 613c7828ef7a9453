"""vspec's own engine, actions and plugins give the same outcome when run again, on
every example spec: a spec run leaves this re-run to vspec's suite and fuzzer, and
re-runs only what goes through a user's code (docs/invariants.md, ``deterministic``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.harness.loader import discover, load_file
from vspec.harness.plugin_dirs import spec_scope
from vspec.invariants import InvariantInputs, get
from vspec.model.spec import Spec

ROOT = Path(__file__).resolve().parent.parent
# Volcano's own cases too, where the checkout has them (as the suite's testpaths).
SPEC_DIRS = [ROOT / "specs", ROOT / "examples" / "specs", ROOT.parent / "shared" / "conformance"]
MAX_PAIRS = 2_000  # pods x nodes: the small specs, which are nearly all of them


def small_specs() -> list[Spec]:
    found = []
    for path in discover([d for d in SPEC_DIRS if d.is_dir()]):
        for spec in load_file(path).specs:
            cluster = spec.cluster
            if spec.xfail is not None:
                continue  # a documented Volcano panic (specs/findings): no run to compare
            if spec.timeline is None and len(cluster.pods) * len(cluster.nodes) <= MAX_PAIRS:
                found.append(spec)
    return found


@pytest.mark.usefixtures("isolated_registry")
def test_every_small_example_spec_runs_the_same_twice() -> None:
    invariant, engine = get("deterministic"), get_engine()
    assert invariant is not None
    specs, checked, violations = small_specs(), 0, []
    for spec in specs:
        with spec_scope(spec):
            inputs = InvariantInputs(
                spec.scheduler,
                spec.cluster,
                spec.seed,
                spec.now,
                spec.cycles,
                spec.verbosity,
                engine=engine,
                thorough=True,
            )
            try:
                result = inputs.rerun()
            except VspecError:
                continue  # a spec about an engine error: nothing to compare
            checked += 1
            violations += [f"{spec.nodeid}: {m}" for m in invariant.check(inputs, result)]
    # vspec's own examples alone are 43 small specs (a checkout without ../shared/conformance).
    assert len(specs) > 40 and checked > 0.9 * len(specs)
    assert violations == []
