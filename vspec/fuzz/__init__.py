"""Generated specs and fuzzing: ``vspec fuzz`` (:mod:`vspec.fuzz.runner`), the Hypothesis
strategies that draw clusters, configurations and timelines (:mod:`vspec.fuzz.strategies`,
:mod:`vspec.fuzz.timelines`), the shrinker of findings (:mod:`vspec.fuzz.shrink`), the fake
extender the ``plugins`` space asks (:mod:`vspec.fuzz.extender`) and what a run reached
(:mod:`vspec.fuzz.reach`, ``--coverage``).

This module holds only the fuzzer's defaults, so that ``vspec``'s parser can name them
without importing the fuzzer, Hypothesis or the invariants. The package may import the
engines, the report, the harness and everything below them; only the front ends
(:mod:`vspec.cli`) import it.
"""

from __future__ import annotations

from pathlib import Path

BUILTIN_SPACES = (
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
# The example database, below the project's cache directory, which is CACHE_DIR in the
# project's root (vspec.harness.attribution.cache_dir; named here too, for --help).
FUZZ_DATABASE = Path("hypothesis") / "vspec-fuzz"
# vspec diff's, where only a campaign (--workers, --shard) keeps its ledger.
DIFF_DATABASE = Path("hypothesis") / "vspec-diff"
CACHE_DIR = ".vspec"
DEFAULT_OUT = Path("fuzz-findings")
