"""A campaign's processes split it: a machine's shard cut into its workers' shards takes
what the machine's takes, each once; vspec diff's processes compare every spec file and
example of one process's run exactly once, and shrink and write each space's set of
aspects once; vspec fuzz's processes explore distinct batch seeds."""

from __future__ import annotations

from argparse import Namespace
from collections import Counter
from pathlib import Path

from vspec.diff.judge import Case, Verdict
from vspec.diff.outcome import Comparison, Difference, Outcome
from vspec.engines import get_engine
from vspec.fuzz.campaign import Part, share
from vspec.fuzz.diff import Campaign, DiffReport
from vspec.fuzz.runner import Fuzzer, FuzzReport, FuzzSpace, merge_fuzz_reports
from vspec.harness.runner import Shard

SPECS = Path(__file__).parents[2] / "specs"


def test_a_machines_workers_take_what_the_machine_takes_each_once() -> None:
    positions = range(60)
    for machines in (1, 2, 3):
        for workers in (1, 2, 4):
            taken: Counter[int] = Counter()
            for k in range(1, machines + 1):
                machine = Shard(k, machines)
                mine = [p for p in positions if machine.takes(p)]
                parts = machine.split(workers)
                assert sorted(p for part in parts for p in positions if part.takes(p)) == mine
                taken.update(p for part in parts for p in positions if part.takes(p))
            assert taken == Counter(positions)  # every position once over the campaign


def test_examples_are_shared_out_to_the_processes_in_full() -> None:
    slots = Shard(1, 2).split(3) + Shard(2, 2).split(3)
    assert sum(share(100, slot) or 0 for slot in slots) == 100
    assert share(None, slots[0]) is None


def test_fuzz_processes_explore_distinct_batch_seeds_that_one_process_would() -> None:
    one = Fuzzer(FuzzSpace(), get_engine())
    slots = Shard(1, 2).split(2) + Shard(2, 2).split(2)
    parts = [Part(Namespace(), slot, "p", "fuzz:default:100") for slot in slots]
    seeds = [
        Fuzzer(FuzzSpace(), get_engine(), part=p)._seed(100, b) for p in parts for b in range(5)
    ]
    assert len(set(seeds)) == len(seeds)
    assert sorted(seeds) == [one._seed(100, b) for b in range(20)]


class _Judge:
    """Agrees on spec files; on generated specs, differs in binds (one set of aspects)."""

    volcano_version = "v1.11.0"

    def __init__(self) -> None:
        self.judged: list[Case] = []

    def judge(self, case: Case, *, confirm: bool = True) -> Verdict:
        self.judged.append(case)
        generated = case.now is None
        differences = (Difference("binds", "ns/a: vspec n1; volcano -"),) if generated else ()
        return Verdict(Outcome(), Outcome(), Comparison(differences), case.seed)


def _labels(report: DiffReport) -> list[str]:
    return [d.subject.label for d in report.disagreements]


def _diff(tmp_path: Path, part: Part | None) -> DiffReport:
    judge = _Judge()
    campaign = Campaign(
        judge,  # type: ignore[arg-type]
        tmp_path / "out",
        shrink_seconds=0.2,
        progress=None,
        part=part,
    )
    campaign.spec_files([SPECS / "gang", SPECS / "priority"])
    campaign.space("seed", seconds=None, examples=12, seed=5)
    return campaign.report


def test_diff_processes_compare_each_spec_once_and_write_each_set_of_aspects_once(
    tmp_path: Path,
) -> None:
    whole = _diff(tmp_path / "one", None)
    options = Namespace(database=tmp_path / "db")
    slots = Shard(1, 1).split(3)
    parts = [
        _diff(tmp_path / "many", Part(options, s, f"p{s.index}", "diff:seed:5")) for s in slots
    ]
    merged = DiffReport()
    for part in parts:
        merged.merge(part)
    assert merged.compared == whole.compared
    assert sorted(_labels(merged)) == sorted(_labels(whole))  # each example once
    written = [d for d in merged.disagreements if d.path is not None and d.like is None]
    assert len(written) == 1 == len(list((tmp_path / "many" / "out").iterdir()))
    # The others: repeats of the writer's (it owns the aspects), or another's claim.
    for found in merged.disagreements:
        assert found is written[0] or found.like is written[0] or found.owner == "p1"


def test_a_fuzz_campaigns_summary_counts_each_finding_once() -> None:
    first = FuzzReport(examples=10, findings={"conservation": Path("a.yaml")})
    first.shrinks["conservation"] = None  # type: ignore[assignment]
    second = FuzzReport(
        examples=7, replayed={"conservation": "worker 1/2", "liveness": "shard 2/2"}
    )
    merged = merge_fuzz_reports([first, second], seconds=2.0)
    assert merged.examples == 17
    assert list(merged.findings) == ["conservation"]
    assert merged.replayed == {"liveness": "shard 2/2"}  # owned by another machine
