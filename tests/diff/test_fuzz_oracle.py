"""``vspec fuzz --diff``: the fuzzer takes a second judge's disagreements as findings,
shrinks them as it shrinks the invariants' and writes a spec that loads."""

from __future__ import annotations

from pathlib import Path

from vspec.engines import get_engine
from vspec.fuzz.runner import Fuzzer, builtin_space
from vspec.fuzz.strategies import GeneratedSpec
from vspec.harness.loader import load_file


def test_a_disagreement_of_the_oracle_is_a_finding_shrunk_and_written(tmp_path: Path) -> None:
    def oracle(case: GeneratedSpec) -> dict[str, list[str]]:
        """Disagrees wherever a pod is bound to the second node (a decision no invariant
        judges)."""
        binds = get_engine().simulate(case.conf, case.cluster, seed=case.seed).binds
        if any(b.node == case.cluster.nodes[-1].meta.name for b in binds[1:]):
            return {"diff-binds": ["binds: a second node"]}
        return {}

    fuzzer = Fuzzer(
        builtin_space("placement"), get_engine(), tmp_path, None, None, shrink_seconds=5,
        first=True, oracle=oracle,
    )  # fmt: skip
    report = fuzzer.run(seconds=20, examples=None, seed_value=3)
    assert set(report.findings) == {"diff-binds"}
    [spec] = load_file(report.findings["diff-binds"]).specs
    assert "binds: a second node" in spec.description
    assert not spec.expect.invariants
    assert report.shrinks["diff-binds"].after <= report.shrinks["diff-binds"].before
