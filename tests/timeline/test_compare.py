"""``vspec compare``: one workload under two confs, the table, plots and CSV records."""

from __future__ import annotations

import csv
import re
import subprocess
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


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    """A third conf: no node scoring at all, pods go where allocate first finds room."""
    path = tmp_path / "fifo.conf"
    path.write_text(
        'actions: "enqueue, allocate"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
    )
    return path


def _columns(out: str) -> dict[str, list[str]]:
    """The table's cells by metric, cut at the columns the dashes under the header mark."""
    lines = out.splitlines()
    spans = [m.span() for m in re.finditer(r"-+", lines[1])]
    rows = {}
    for line in [lines[0], *lines[2 : lines.index("")]]:
        cells = [line[a:b].strip() for a, b in spans]
        rows[cells[0]] = cells[1:]
    return rows


def test_n_confs_give_the_columns_of_separate_two_conf_runs(
    files: list[Path], fifo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spread, pack, workload = files
    tail = ["--workload", str(workload), "--no-progress"]

    def table(*confs: Path) -> dict[str, list[str]]:
        assert main(["compare", *map(str, confs), *tail]) == 0
        return _columns(capsys.readouterr().out)

    three = table(spread, pack, fifo)
    assert three["metric"] == ["spread", "pack", "fifo", "pack - spread", "fifo - spread"]
    with_pack, with_fifo = table(spread, pack), table(spread, fifo)
    assert with_pack["metric"] == ["spread", "pack", "pack - spread"]
    assert len(three) > 20
    for metric, cells in three.items():
        spread_cell, pack_cell, fifo_cell, pack_diff, fifo_diff = cells
        if metric in with_pack:
            assert with_pack[metric] == [spread_cell, pack_cell, pack_diff]
        if metric in with_fifo:
            assert with_fifo[metric] == [spread_cell, fifo_cell, fifo_diff]
    # Where the three differ, the table says so per column.
    assert three["wait p50 (tag big)"][3].endswith("better")


def test_workers_give_what_one_process_gives(
    files: list[Path], fifo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spread, pack, workload = files
    outputs = []
    for workers in ("1", "2"):
        records = tmp_path / f"csv{workers}"
        argv = [str(spread), str(pack), str(fifo), "--workload", str(workload)]
        assert main(["compare", *argv, "--workers", workers, "--csv", str(records)]) == 0
        captured = capsys.readouterr()
        # What each run cost in CPU differs from run to run; the rest is the results.
        outputs.append(re.sub(r"[\d.]+ CPU-s", "CPU-s", captured.out))
        assert "fifo: done" in captured.err
    assert outputs[0] == outputs[1]
    for name in sorted(p.name for p in (tmp_path / "csv1").iterdir()):
        assert (tmp_path / "csv1" / name).read_text() == (tmp_path / "csv2" / name).read_text()


def test_bad_confs_are_reported_and_the_others_compared(
    files: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spread, pack, workload = files
    missing = tmp_path / "gone.conf"
    unknown = tmp_path / "unknown.conf"
    unknown.write_text('actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - {name: nosuch}\n')
    argv = [str(spread), str(missing), str(unknown), str(pack), "--workload", str(workload)]
    assert main(["compare", *argv]) == 2
    captured = capsys.readouterr()
    assert f"{missing}: scheduler conf file not found" in captured.err
    assert f"{unknown}:4:5: tiers[0].plugins[0]: no plugin 'nosuch' is registered" in captured.err
    assert "Traceback" not in captured.err
    assert _columns(captured.out)["metric"] == ["spread", "pack", "pack - spread"]


def test_a_workload_error_stops_the_comparison(
    files: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spread, pack, workload = files
    bad = tmp_path / "bad.yaml"
    bad.write_text(workload.read_text().replace("runFor: 10m", "runFor: ten minutes"))
    assert main(["compare", str(spread), str(pack), "--workload", str(bad), "--workers", "2"]) == 2
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("vspec: error")]
    assert len(errors) == 1 and f"{bad}:9:" in errors[0] and "runFor" in errors[0]
    assert captured.out == ""


def test_one_conf_is_not_a_comparison(
    files: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    spread, _, workload = files
    assert main(["compare", str(spread), "--workload", str(workload)]) == 2
    assert "compare needs two confs or more" in capsys.readouterr().err


def test_repeated_stems_are_told_apart_and_until_slices(
    files: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spread, _, workload = files
    other = tmp_path / "other"
    other.mkdir()
    (other / "spread.conf").write_text(spread.read_text())
    argv = [str(spread), str(other / "spread.conf"), "--workload", str(workload)]
    assert main(["compare", *argv, "--csv", str(tmp_path / "csv"), "--until", "30s"]) == 0
    rows = _columns(capsys.readouterr().out)
    assert rows["metric"] == ["spread", "spread-2", "spread-2 - spread"]
    assert rows["jobs"] == ["4", "4", "same"]  # the small jobs of 0s-30s; the big one (1m) cut
    assert (tmp_path / "csv" / "spread-2-jobs.csv").is_file()


def test_a_run_that_fails_leaves_the_others_columns(files: list[Path], tmp_path: Path) -> None:
    """A plugin that raises fails its conf's run (exit status 1); the others compare."""
    spread, pack, workload = files
    crashing = tmp_path / "crashing.conf"
    crashing.write_text('actions: "enqueue, allocate"\ntiers:\n- plugins: [{name: crashes}]\n')
    plugins = Path(__file__).parents[1] / "isolation"
    argv = [sys.executable, "-m", "vspec", "compare", str(spread), str(crashing), str(pack)]
    argv += ["--workload", str(workload), "--plugins-dir", str(plugins), "--workers", "2"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    error = next(line for line in proc.stderr.splitlines() if line.startswith("vspec: error"))
    assert str(crashing) in error and "crashes" in error and "KeyError" in error
    assert _columns(proc.stdout)["metric"] == ["spread", "pack", "pack - spread"]


def test_the_week_is_seven_days_of_the_day() -> None:
    """fixtures/workloads/week.yaml has the day benchmark's streams (jobs, gaps, run times,
    queues), each seven times as long, on the same 1,000 nodes."""
    import yaml

    root = Path(__file__).parents[2]
    day = yaml.safe_load((root / "benchmarks/workloads/day.yaml").read_text())
    week = yaml.safe_load((root / "fixtures/workloads/week.yaml").read_text())
    assert week["cluster"]["generate"]["nodes"] == day["cluster"]["generate"]["nodes"]
    assert [q["name"] for q in week["cluster"]["queues"]] == ["q0", "q1", "q2", "q3"]
    assert [a["count"] for a in week["timeline"]["arrivals"]] == [7 * 1250] * 8
    for streams in (day, week):
        for arrival in streams["timeline"]["arrivals"]:
            del arrival["count"]
    assert week["timeline"]["arrivals"] == day["timeline"]["arrivals"]
    assert "until" not in week["timeline"]
