"""The HTML report: one self-contained page, checked as written and as headless
Chromium renders it (Debian's ``chromium``; .ci/run installs it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from vspec.cli import main

PASSING = """
name: two cycles of a gang
cycles: 2
scheduler:
  actions: "enqueue, allocate"
  tiers:
  - plugins: [{name: priority}, {name: gang}]
  - plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}]
cluster:
  nodes:
  - {name: n1, allocatable: {cpu: 4, memory: 8Gi}}
  - {name: n2, allocatable: {cpu: 2, memory: 8Gi}}
  jobs:
  - name: alpha
    minAvailable: 2
    tasks: [{name: w, replicas: 2, requests: {cpu: 2, memory: 1Gi}}]
  - name: beta
    minAvailable: 2
    tasks: [{name: w, replicas: 2, requests: {cpu: 2, memory: 1Gi}}]
expect:
  bindCount: 2
"""

FAILING = PASSING.replace("name: two cycles of a gang", "name: a wrong guess").replace(
    "bindCount: 2", "bindsInclude: {default/beta-w-1: n2}"
)


def _in_ci() -> bool:
    """CI=true, as CI sets it; tox hands the original value on under its own name."""
    values = (os.environ.get("CI"), os.environ.get("__TOX_ENVIRONMENT_VARIABLE_ORIGINAL_CI"))
    return any(v and v.lower() not in ("0", "false") for v in values)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    specs = tmp_path_factory.mktemp("specs")
    (specs / "passing.yaml").write_text(textwrap.dedent(PASSING))
    (specs / "failing.yaml").write_text(textwrap.dedent(FAILING))
    path = specs.parent / "report" / "report.html"
    assert main(["run", str(specs), "--html", str(path)]) == 1
    return path


def test_the_page_stands_alone(report: Path) -> None:
    html = report.read_text()
    assert "<script src" not in html and "<link" not in html and "<img" not in html
    urls = set(re.findall(r"https?://[^\"' <>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls


def test_the_page_says_what_failed_and_why(report: Path) -> None:
    html = report.read_text()
    # Failing specs come first, with their mismatch and the explain command.
    assert html.index("a wrong guess") < html.index("two cycles of a gang")
    assert re.findall(r'<section id="spec-\d" class="spec (\w+)">', html) == ["failed", "passed"]
    assert "missing bind default/beta-w-1 -&gt; n2" in html
    assert "--task default/beta-w-1` for why" in html
    # The explain table of the task the expectation names.
    explain = re.search(r'<pre class="explain">(.*?)</pre>', html, re.DOTALL)
    assert explain is not None and "default/beta-w-1" in explain.group(1)
    # Two cycles, each with a node picture and a queue picture, for both specs.
    assert html.count('<div class="cycle">') == 4
    assert html.count("<svg") == 8
    assert "after cycle 1: % of each node&#x27;s allocatable" in html or (
        "after cycle 1: % of each node's allocatable" in html
    )


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        if _in_ci():
            pytest.fail("chromium is not installed, and CI must render the report")
        pytest.skip("chromium is not installed (apt-get install chromium); CI installs it")
    return found


def _render(report: Path, tmp_path: Path, *args: str, fragment: str = "") -> str:
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        *args,
        report.as_uri() + fragment,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def test_chromium_renders_the_pictures_and_runs_the_log_filter(
    report: Path, tmp_path: Path
) -> None:
    dom = _render(report, tmp_path, "--dump-dom", fragment="#v=3&q=Binding")
    assert dom.count("<svg") == 8
    assert "pygal-chart" in dom
    # The filter ran: only V<=3 lines containing "Binding" are shown, and it says so.
    lines = re.findall(r'<li data-v="(\d+)"( class="hidden")?>(.*?)</li>', dom, re.DOTALL)
    shown = [text for _, hidden, text in lines if not hidden]
    assert shown and all("binding" in text.lower() for text in shown)
    assert any(hidden for _, hidden, _ in lines)
    counts = re.findall(r'<span class="count">(\d+) of (\d+) lines</span>', dom)
    assert counts and all(int(n) <= int(total) for n, total in counts)
    assert sum(int(n) for n, _ in counts) == len(shown)
    # By verbosity alone: exactly the lines above V2 are hidden.
    dom = _render(report, tmp_path, "--dump-dom", fragment="#v=2")
    lines = re.findall(r'<li data-v="(\d+)"( class="hidden")?>', dom)
    assert any(int(v) > 2 for v, _ in lines)
    assert all(bool(hidden) == (int(v) > 2) for v, hidden in lines)


def test_chromium_takes_a_screenshot(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    _render(report, tmp_path, f"--screenshot={shot}", "--window-size=1000,1400")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1000, 1400)
    assert len(data) > 20_000  # text and charts, not a blank page
