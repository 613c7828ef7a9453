"""The per-pod, per-job and per-tick records as CSV and Parquet."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from tests.timeline.conftest import Loader
from vspec.errors import VspecError
from vspec.timeline.export import write_csv, write_parquet
from vspec.timeline.records import TimelineResult

SPEC = """
name: export
cluster:
  nodes:
  - {name: n1, allocatable: {cpu: 2}}
timeline:
  arrivals:
  - {at: 0s, count: 3, every: 10s, runFor: 1m,
     jobs: [{name: j, tasks: [{name: w, requests: {cpu: 1}}]}]}
"""


@pytest.fixture
def result(loader: Loader) -> TimelineResult:
    return loader.run(SPEC)


def test_parquet_holds_the_csv_records_with_typed_columns(
    result: TimelineResult, tmp_path: Path
) -> None:
    pq = pytest.importorskip(
        "pyarrow.parquet", reason="pyarrow is the optional 'parquet' extra, not installed here"
    )
    written = write_parquet(result, tmp_path, prefix="run-")
    assert sorted(p.name for p in written) == [
        "run-jobs.parquet",
        "run-pods.parquet",
        "run-ticks.parquet",
    ]
    write_csv(result, tmp_path, prefix="run-")
    for name in ("pods", "jobs", "ticks"):
        table = pq.read_table(tmp_path / f"run-{name}.parquet").to_pylist()
        with (tmp_path / f"run-{name}.csv").open() as f:
            rows = list(csv.DictReader(f))
        assert len(table) == len(rows) > 0
        for typed, text in zip(table, rows, strict=True):
            assert list(typed) == list(text)
            for column, value in typed.items():
                shown = "" if value is None else f"{value:g}" if isinstance(value, float) else value
                assert str(shown) == text[column], (name, column)
    pods = pq.read_table(tmp_path / "run-pods.parquet")
    # Two pods fit at once: the third waits for the first to finish, a minute later.
    assert pods.column("bound").to_pylist() == [0.0, 10.0, 60.0]
    assert str(pods.schema.field("binds").type) == "int64"
    jobs = pq.read_table(tmp_path / "run-jobs.parquet").to_pylist()
    assert [j["completed"] for j in jobs] == [60.0, 70.0, 120.0]


def test_parquet_without_pyarrow_names_the_extra(
    result: TimelineResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry makes `import pyarrow` fail, as on an install without the extra.
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(VspecError, match=r"pip install 'vspec\[parquet\]'"):
        write_parquet(result, tmp_path)
    assert not list(tmp_path.glob("*.parquet"))
