"""pytest's ``--vspec-html``: the same page, also when xdist workers run the specs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.report.test_html import FAILING, PASSING

REPO = Path(__file__).resolve().parents[2]

CONFTEST = """
def pytest_configure(config):
    if not config.pluginmanager.has_plugin("vspec"):
        from vspec.cli import pytest_plugin

        config.pluginmanager.register(pytest_plugin, "vspec")
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_vspec_html_writes_one_page(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    if workers:
        pytest.importorskip("xdist")
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # for xdist's worker processes
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", passing=textwrap.dedent(PASSING), failing=textwrap.dedent(FAILING))
    page = pytester.path / "out" / "report.html"
    result = pytester.runpytest(f"--vspec-html={page}", *workers)
    result.assert_outcomes(passed=1, failed=1)
    html = page.read_text()
    assert "1 failed, 1 passed (pytest)" in html
    assert html.count('<section id="spec-') == 2
    assert html.index("a wrong guess") < html.index("two cycles of a gang")
    assert html.count("<svg") == 8
