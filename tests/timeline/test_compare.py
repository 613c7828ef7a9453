"""``vspec compare``: one workload under two confs, the table, plots and CSV records."""

from __future__ import annotations

import csv
import sys
import textwrap
from pathlib import Path

import pytest

from vspec.cli import main

WORKLOAD = """
cluster:
  nodes:
  - {name: n1, allocatable: {cpu: 4}}
  - {name: n2, allocatable: {cpu: 4}}
timeline:
  arrivals:
  - {at: 0s, count: 4, every: 10s, runFor: 30m, tags: [small],
     jobs: [{name: s, tasks: [{name: w, requests: {cpu: 1}}]}]}
  - {at: 1m, runFor: 10m, tags: [big],
     jobs: [{name: big, tasks: [{name: w, requests: {cpu: 4}}]}]}
"""


def _conf(order: str) -> str:
    weights = (
        "leastrequested.weight: 10\n          mostrequested.weight: 0"
        if order == "spread"
        else "leastrequested.weight: 0\n          mostrequested.weight: 10"
    )
    return f"""
actions: "enqueue, allocate"
tiers:
- plugins: [{{name: priority}}, {{name: gang}}]
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
    arguments:
      {weights}
"""


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    paths = []
    for name, text in (
        ("spread.conf", _conf("spread")),
        ("pack.conf", _conf("pack")),
        ("workload.yaml", WORKLOAD),
    ):
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n").replace("\n          ", "\n      "))
        paths.append(path)
    return paths


def test_compare_says_which_conf_makes_big_jobs_wait_less(
    files: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spread, pack, workload = files
    plots, records = tmp_path / "plots", tmp_path / "csv"
    argv = ["compare", str(spread), str(pack), "--workload", str(workload)]
    code = main([*argv, "--plots", str(plots), "--csv", str(records), "--metric", "jobs * 2"])
    out = capsys.readouterr().out
    assert code == 0
    # Spreading the four small pods over both nodes leaves no node free for the big one
    # until they finish (30m); packing them leaves n2 free at once.
    assert "jobs tagged big wait less under pack: 1 of 1 started, median wait 0s" in out
    assert "against 1 of 1 started, median wait 29m" in out
    row = next(line for line in out.splitlines() if line.startswith("wait p50 (tag big)"))
    assert "better" in row
    assert next(line for line in out.splitlines() if line.startswith("jobs * 2")).split()[3:5] == [
        "10",
        "10",
    ]
    svgs = sorted(p.name for p in plots.iterdir())
    assert "wait-distribution-big.svg" in svgs and "utilisation-cpu.svg" in svgs
    for svg in plots.iterdir():
        assert "<svg" in svg.read_text() and "<script" not in svg.read_text()
    with (records / "pack-pods.csv").open() as f:
        pods = list(csv.DictReader(f))
    assert len(pods) == 5 and {p["node"] for p in pods} == {"n1", "n2"}
    with (records / "spread-ticks.csv").open() as f:
        ticks = list(csv.DictReader(f))
    assert ticks[0]["capacity:cpu"] == "8000"


def test_bad_input_is_a_usage_error(
    files: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spread, pack, _ = files
    missing = tmp_path / "nope.yaml"
    assert main(["compare", str(spread), str(pack), "--workload", str(missing)]) == 2
    assert "workload file not found" in capsys.readouterr().err
    args = ["compare", str(spread), str(pack), "--workload", str(files[2]), "--metric", "p9(x)"]
    assert main(args) == 2
    assert "--metric 'p9(x)'" in capsys.readouterr().err


def test_parquet_records_or_the_extra_to_install(
    files: list[Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spread, pack, workload = files
    argv = ["compare", str(spread), str(pack), "--workload", str(workload)]
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # installed without the extra
    assert main([*argv, "--parquet", str(tmp_path / "pq")]) == 1
    assert "Parquet export needs pyarrow: pip install 'vspec[parquet]'" in capsys.readouterr().err
    monkeypatch.undo()
    pq = pytest.importorskip(
        "pyarrow.parquet", reason="pyarrow is the optional 'parquet' extra, not installed here"
    )
    assert main([*argv, "--parquet", str(tmp_path / "pq")]) == 0
    pods = pq.read_table(tmp_path / "pq" / "pack-pods.parquet").to_pylist()
    assert len(pods) == 5 and {p["node"] for p in pods} == {"n1", "n2"}
