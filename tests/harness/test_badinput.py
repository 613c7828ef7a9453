"""Every file of the bad-input corpus is refused with a located error, in little memory
(its CPU budget is benchmarks/test_bench.py's).

Each ``tests/badinput/*.yaml`` starts with ``# error: [FILE:]LINE: TEXT``: loading it must
give a SpecError at that line (of FILE, relative to the corpus, when the error is in a file
it includes) whose message contains TEXT. Inputs too big to commit are generated here.
"""

from __future__ import annotations

import re
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pytest

from vspec.errors import VspecError, each_error
from vspec.harness.loader import load_file

CORPUS = Path(__file__).parents[1] / "badinput"
HEADER = re.compile(r"^# error: (?:(?P<file>[^:]+):)?(?P<line>\d+): (?P<text>.+)$")
MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Expected:
    file: Path
    line: int
    text: str


def expected(path: Path) -> Expected:
    first = path.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    match = HEADER.match(first)
    assert match, f"{path.name}: first line must be '# error: [FILE:]LINE: TEXT'"
    file = CORPUS / match["file"] if match["file"] else path
    return Expected(file.resolve(), int(match["line"]), match["text"])


def corpus() -> list[Path]:
    return sorted(CORPUS.glob("*.yaml"))


@dataclass
class Measured:
    errors: list[VspecError]
    peak_bytes: int


def measure_load(path: Path, *, memory: bool = True) -> Measured:
    """Load, then load again under tracemalloc for the peak (its own errors are not kept)."""
    loaded = load_file(path)
    assert loaded.is_spec_file, f"{path.name}: a bad spec file must not be passed over"
    if not memory:
        return Measured(loaded.errors, 0)
    tracemalloc.start()
    try:
        load_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return Measured(loaded.errors, peak)


def assert_refused(path: Path, want: Expected, *, memory: bool = True) -> None:
    measured = measure_load(path, memory=memory)
    assert measured.errors, f"{path.name}: no error"
    measured.errors = [e for error in measured.errors for e in each_error(error)]
    for error in measured.errors:
        assert error.location is not None and error.location.line > 0, f"unlocated: {error}"
    hits = [
        e
        for e in measured.errors
        if e.location is not None
        and Path(e.location.file).resolve() == want.file
        and e.location.line == want.line
        and want.text in e.message
    ]
    assert hits, f"{path.name}: want line {want.line} {want.text!r}, got:\n" + "\n".join(
        str(e) for e in measured.errors
    )
    assert measured.peak_bytes < MAX_BYTES, f"{path.name}: peak {measured.peak_bytes} bytes"


def test_corpus_is_not_empty() -> None:
    assert len(corpus()) >= 25


@pytest.mark.parametrize("path", corpus(), ids=lambda p: p.stem)
def test_bad_input_is_refused_with_location(path: Path) -> None:
    assert_refused(path, expected(path))


def test_million_item_list_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "million.yaml"
    path.write_text("name: a million tags\ntags:\n" + "- t\n" * 1_000_000, encoding="utf-8")
    assert_refused(path, Expected(path.resolve(), 100_003, "a list of more than 100000 items"))


def test_million_item_flow_list_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "million-flow.yaml"
    path.write_text("name: flow\ntags: [" + "t," * 1_000_000 + "t]\n", encoding="utf-8")
    assert_refused(path, Expected(path.resolve(), 2, "a list of more than 100000 items"))


def test_huge_mapping_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.yaml"
    labels = "".join(f"      k{i}: v\n" for i in range(200_000))
    path.write_text(f"name: labels\ncluster:\n  nodes:\n  - name: n1\n    labels:\n{labels}")
    want = Expected(path.resolve(), 100_006, "a mapping of more than 100000 keys")
    assert_refused(path, want, memory=False)  # memory: as the list tests, only slower


def test_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: ok\ndescription: caf\xe9\n")
    assert_refused(path, Expected(path.resolve(), 2, "not UTF-8"))


def test_huge_integer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "digits.yaml"
    path.write_text("name: digits\nseed: " + "9" * 100_000 + "\n")
    assert_refused(path, Expected(path.resolve(), 2, "is not an integer"))


def test_millions_of_empty_documents_are_refused_quickly(tmp_path: Path) -> None:
    # Each empty document cost a Document: 3 million of them took 20 s and a gigabyte.
    path = tmp_path / "empty-documents.yaml"
    path.write_text("name: x\n" + "---\n" * 3_000_000, encoding="utf-8")
    assert_refused(path, Expected(path.resolve(), 10_001, "more than 10000 YAML documents"))


def test_deep_include_chain_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    # 2,000 files each including the next ended in Python's RecursionError.
    for i in range(2000):
        (tmp_path / f"c{i}.yaml").write_text(f"include: [c{i + 1}.yaml]\n")
    (tmp_path / "c2000.yaml").write_text("nodes: []\n")
    path = tmp_path / "deep.yaml"
    path.write_text("name: deep\ncluster: {include: [c0.yaml]}\n")
    want = Expected((tmp_path / "c31.yaml").resolve(), 1, "includes nested more than 32 files")
    assert_refused(path, want, memory=False)
