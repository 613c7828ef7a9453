"""``vspec diff``'s command line and written specs, without the real engine."""

from __future__ import annotations

from pathlib import Path

from vspec.cli import main
from vspec.diff.judge import Verdict
from vspec.diff.outcome import Comparison, Difference, Outcome
from vspec.fuzz.diff import _subject, write
from vspec.harness.loader import load_file

ROOT = Path(__file__).parents[2]


def test_without_specs_or_spaces_it_says_so(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["diff"]) == 2
    assert "name spec files or directories, or --space" in capsys.readouterr().err


def test_a_spec_file_s_disagreement_is_written_as_a_spec_that_runs_the_same(
    tmp_path: Path,
) -> None:
    [spec] = load_file(ROOT / "specs" / "priority" / "high-priority-job-first.yaml").specs
    subject = _subject(spec, f"{spec.location.file}::{spec.name}")
    verdict = Verdict(
        Outcome(binds={(0, "ns/a"): "n1"}),
        Outcome(),
        Comparison((Difference("binds", "ns/a (session 0): vspec n1; volcano -"),)),
        spec.seed,
    )
    path = write(tmp_path, subject, verdict)
    text = path.read_text()
    assert "#   binds: ns/a (session 0): vspec n1; volcano -" in text
    assert "#   bind ns/a -> n1 (session 0)" in text
    [again] = load_file(path).specs
    assert again.scheduler == spec.scheduler
    assert again.cluster.pods == spec.cluster.pods
    assert again.cluster.nodes == spec.cluster.nodes


def test_a_written_disagreement_keeps_the_spec_s_probes(tmp_path: Path) -> None:
    [spec] = load_file(ROOT / "specs" / "predicates" / "selectors-and-taints.yaml").specs
    assert spec.probes
    subject = _subject(spec, f"{spec.location.file}::{spec.name}")
    verdict = Verdict(
        Outcome(),
        Outcome(),
        Comparison((Difference("probes", "probes[0] predicates.n1: vspec passes; volcano x"),)),
        spec.seed,
    )
    [again] = load_file(write(tmp_path, subject, verdict)).specs
    assert again.probes == spec.probes


def test_generated_specs_draw_only_what_both_engines_have() -> None:
    """A plugins dir's Python plugins and actions are vspec's engine's only: the real
    Volcano would refuse every conf naming one, so vspec diff never draws them."""
    from vspec.framework import registry
    from vspec.fuzz.diff import generated

    with registry.isolated():
        registry.load_plugins_dir(ROOT / "examples" / "plugins")
        users = {e.name for e in registry.registered_plugins() + registry.registered_actions()}
        users -= {e.name for e in registry.registered_plugins() if e.module.startswith("vspec.")}
        users -= {e.name for e in registry.registered_actions() if e.module.startswith("vspec.")}
        assert users  # the examples' plugins dir brings some
        drawn = set()
        for spec in generated("default", seconds=None, examples=60, seed=3):
            drawn |= {p.name for tier in spec.conf.tiers for p in tier.plugins}
            drawn |= set(spec.conf.actions)
    assert drawn and not drawn & users
