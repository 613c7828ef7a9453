"""``vspec fuzz``: finds a broken engine, writes a spec that reproduces it; spaces; CLI."""

from __future__ import annotations

import argparse
import io
import re
from pathlib import Path

import pytest
from hypothesis import settings

from vspec.cli.fuzz import add_cli
from vspec.engines import get_engine
from vspec.errors import SpecError
from vspec.framework.statement import Statement
from vspec.fuzz import BUILTIN_SPACES
from vspec.fuzz.runner import SEED_CONF, Fuzzer, FuzzSpace, load_space, parse_space
from vspec.fuzz.strategies import ClusterBounds, ConfSpace
from vspec.invariants import check_invariants

GANG = {
    "actions": "enqueue, allocate",
    "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]}],
}


def test_finds_a_broken_engine_and_writes_a_reproducing_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Statement, "discard", Statement.commit)  # partial gangs get bound
    space = FuzzSpace(
        ConfSpace(fixed=GANG),
        ClusterBounds(max_nodes=2, max_jobs=3),
        max_cycles=1,
        disabled=("deterministic",),
    )
    progress = io.StringIO()
    fuzzer = Fuzzer(
        space, get_engine(), tmp_path / "out", tmp_path / "db", progress, shrink_seconds=5
    )
    report = fuzzer.run(seconds=None, examples=100, seed_value=1)

    assert report.examples > 0 and report.rate > 0
    # not a terminal: the findings are said, the batches are not
    assert "gang-atomicity: " in progress.getvalue()
    assert "examples in" not in progress.getvalue()
    path = report.findings["gang-atomicity"]
    assert path.parent == tmp_path / "out" and path.name.startswith("gang-atomicity-")

    from vspec.framework.scheduler import simulate
    from vspec.harness.loader import load_file

    [spec] = load_file(path).specs
    assert spec.expect.invariants == ["gang-atomicity"]
    result = simulate(spec.scheduler, spec.cluster, seed=spec.seed, cycles=spec.cycles)
    messages = check_invariants(
        spec.scheduler,
        spec.cluster,
        result,
        engine=get_engine(),
        seed=spec.seed,
        cycles=spec.cycles,
        disabled=["deterministic"],
    )
    assert any(m.startswith("invariant gang-atomicity: ") for m in messages)
    assert list((tmp_path / "db").iterdir()), "the example database is kept"


def test_a_sound_engine_yields_no_finding(tmp_path: Path) -> None:
    space = FuzzSpace(ConfSpace(fixed=GANG), ClusterBounds(max_nodes=2, max_jobs=3), max_cycles=1)
    report = Fuzzer(space, get_engine(), tmp_path / "out", None, None).run(
        seconds=None, examples=20, seed_value=2
    )
    assert report.findings == {} and report.examples >= 20
    assert not (tmp_path / "out").exists()


def test_space_files(tmp_path: Path) -> None:
    assert BUILTIN_SPACES == (
        "default",
        "seed",
        "preempt",
        "reclaim",
        "capacity",
        "shuffle",
        "placement",
        "plugins",
        "mixed",
    )
    seed_space = load_space("seed").conf
    assert seed_space is not None and seed_space.fixed == SEED_CONF
    file = tmp_path / "space.yaml"
    file.write_text(
        "actions: [allocate]\nplugins: [gang]\nflags: default\n"
        "cluster: {maxNodes: 1}\nmaxCycles: 3\ninvariants: {disable: [deterministic]}\n"
    )
    space = load_space(str(file))
    assert space.conf.actions == ("allocate",) and space.conf.flags == "default"
    assert space.bounds.max_nodes == 1 and space.max_cycles == 3
    assert space.disabled == ("deterministic",)
    for raw, message in [
        ({"actoins": []}, "unknown key(s) ['actoins']"),
        ({"flags": "some"}, "flags must be 'random' or 'default'"),
        ({"cluster": {"nodes": 3}}, "cluster: unknown key(s) ['nodes']"),
        ({"invariants": {"disable": ["nope"]}}, "unknown ['nope']"),
    ]:
        with pytest.raises(SpecError, match=re.escape(message)):
            parse_space(raw, "space.yaml")
    with pytest.raises(SpecError, match="no such space file"):
        load_space(str(tmp_path / "missing.yaml"))


def test_cli_registers_fuzz_and_invariants(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="vspec")
    add_cli(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["fuzz", "--space", "seed", "--seconds", "5", "--seed", "3"])
    assert (args.space, args.seconds, args.seed, args.examples) == ("seed", 5.0, 3, None)
    args = parser.parse_args(["invariants", "-v"])
    assert args.handler(args) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("gang-atomicity ")
    assert "Applies to: Every configuration." in out
    args = parser.parse_args(["fuzz", "--space", "nowhere.yaml"])
    assert args.handler(args) == 2


def test_profiles_are_registered() -> None:
    assert settings.get_profile("dev").max_examples <= 25
    assert settings.get_profile("ci").max_examples <= 25
    assert settings.get_profile("ci").derandomize  # Hypothesis' own ci profile underneath
    assert settings.get_profile("fuzz").max_examples >= 1000
