"""The engine seam: front-ends pick an engine by name; the harness only sees the Protocol."""

from __future__ import annotations

from pathlib import Path

import pytest

from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.harness.loader import load_file

GANG = Path(__file__).parents[1] / "specs" / "gang" / "all-or-nothing.yaml"


def test_the_python_engine_is_the_default_and_runs_a_spec_model() -> None:
    [spec] = load_file(GANG).specs
    engine = get_engine()
    assert engine.name == "python"
    result = engine.simulate(spec.scheduler, spec.cluster, seed=spec.seed)
    assert result.bind_map() == spec.expect.binds


def test_an_unknown_engine_is_an_error_naming_the_known_ones() -> None:
    with pytest.raises(VspecError, match=r"unknown engine 'kube' \(known: python, volcano\)"):
        get_engine("kube")
