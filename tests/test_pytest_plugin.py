"""The pytest plugin: spec files collected as items, run and reported in spec terms.

Each test runs pytest on a scratch directory whose conftest swaps the engine for a fake
that binds every unbound pod to the first node, so the plugin is tested, not the engine.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import spec

REPO = Path(__file__).resolve().parents[1]

CONFTEST = """
import vspec.framework.scheduler as scheduler
from vspec.errors import ConfError
from vspec.model.result import Bind, SimulationResult

_real = scheduler.simulate


def fake_simulate(conf, cluster, *, seed=0, now=None, cycles=1, verbosity=3, probes=()):
    first = cluster.nodes[0].meta.name
    if first == "conf-error":
        raise ConfError("the engine rejects this conf")
    binds = [Bind(p.meta.key, first) for p in cluster.pods if not p.node_name]
    return SimulationResult(binds=binds)


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("vspec"):
        from vspec.cli import pytest_plugin

        config.pluginmanager.register(pytest_plugin, "vspec")
    scheduler.simulate = fake_simulate


def pytest_unconfigure(config):
    scheduler.simulate = _real
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # for xdist's worker processes
    pytester.makeconftest(CONFTEST)
    return pytester


def test_one_item_per_spec_named_by_name_in_file_order(suite: pytest.Pytester) -> None:
    suite.makefile(".yaml", specs=spec("zeta first") + "---\n" + spec("alpha second"))
    suite.makefile(".yml", other=spec("third"))
    suite.makefile(".yaml", cluster="nodes:\n- {name: n1}\n")
    result = suite.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["other.yml::third", "specs.yaml::zeta first", "specs.yaml::alpha second", "3 tests*"]
    )
    assert result.ret == 0


def test_pass_and_fail_render_in_spec_terms(suite: pytest.Pytester) -> None:
    suite.makefile(".yaml", good=spec("good"), bad=spec("bad", bind_to="n2"))
    result = suite.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*bind default/p1: expected n2, got n1*"])
    result.stdout.no_fnmatch_line("*def runtest*")  # no Python traceback
    result.stdout.no_fnmatch_line("*SpecFailed*")


def test_tags_become_registered_markers(suite: pytest.Pytester) -> None:
    suite.makefile(
        ".yaml",
        a=spec("gang one", extra="tags: [gang, volcano-v1.11.0]\n"),
        b=spec("prio one", extra="tags: [priority]\n"),
    )
    result = suite.runpytest(
        "--strict-markers", "-m", "gang", "-W", "error::pytest.PytestUnknownMarkWarning"
    )
    result.assert_outcomes(passed=1, deselected=1)
    result = suite.runpytest("-k", "priority")
    result.assert_outcomes(passed=1, deselected=1)


def test_skip_and_xfail(suite: pytest.Pytester) -> None:
    suite.makefile(
        ".yaml",
        s=spec("skipped", bind_to="n2", extra="skip: later\n"),
        x=spec("expected to fail", bind_to="n2", extra="xfail: bug 1\n"),
        xp=spec("fixed already", extra="xfail: bug 2\n"),
    )
    result = suite.runpytest("-rsxX")
    result.assert_outcomes(skipped=1, xfailed=1, xpassed=1)
    result.stdout.fnmatch_lines(["*later*"])
    assert result.ret == 0


def test_xfail_does_not_excuse_an_invalid_spec(suite: pytest.Pytester) -> None:
    suite.makefile(".yaml", a=spec("bad conf", node="conf-error", extra="xfail: bug\n"))
    result = suite.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the engine rejects this conf*"])


def test_invalid_spec_fails_alone_with_its_location(suite: pytest.Pytester) -> None:
    suite.makefile(".yaml", good=spec("good"))
    bad = suite.makefile(".yaml", bad="name: broken\nexpect:\n  bindz: {}\n")
    result = suite.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*{bad.name}:3*bindz*"])


def test_misspelled_name_fails_as_one_item(suite: pytest.Pytester) -> None:
    suite.makefile(".yaml", a=spec("typo").replace("name: typo", "Name: typo"))
    result = suite.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*unknown key 'Name' (did you mean 'name'?)*"])


def test_k_matching_nothing_exits_5(suite: pytest.Pytester) -> None:
    suite.makefile(".yaml", a=spec("good"))
    assert suite.runpytest("-k", "nothing").ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_named_file_without_spec_is_a_collection_error(suite: pytest.Pytester) -> None:
    cluster = suite.makefile(".yaml", cluster="nodes:\n- {name: n1}\n")
    result = suite.runpytest(str(cluster))
    result.stdout.fnmatch_lines(["*cluster.yaml: holds no spec*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_junit_user_properties(suite: pytest.Pytester) -> None:
    suite.makefile(".yaml", a=spec("seeded", extra="seed: 11\n"))
    xml = suite.path / "junit.xml"
    suite.runpytest(f"--junit-xml={xml}").assert_outcomes(passed=1)
    [case] = ET.parse(xml).getroot().iter("testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["seed"] == "11"
    assert props["spec"] is not None and props["spec"].endswith("a.yaml")


def test_xdist_runs_the_same_items(suite: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    for i in range(4):
        suite.makefile(".yaml", **{f"s{i}": spec(f"spec {i}") + "---\n" + spec(f"more {i}")})
    result = suite.runpytest("-n", "2")
    result.assert_outcomes(passed=8)


PROFILE_TEST = """
from hypothesis import settings


def test_profile():
    print("profile", settings.get_current_profile_name(), settings.default.max_examples)
"""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--hypothesis-profile=fuzz"], "profile fuzz 2000"),
        # Another project's run keeps Hypothesis' own default: vspec loads no profile.
        ([], "profile default 100"),
    ],
)
def test_hypothesis_profiles_only_when_asked_for(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: list[str], expected: str
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    # Hypothesis loads its "ci" profile when it sees CI, or tox's copy of it.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("__TOX_ENVIRONMENT_VARIABLE_ORIGINAL_CI", raising=False)
    pytester.makepyfile(test_p=PROFILE_TEST)
    # A subprocess: loading a profile changes Hypothesis' settings for the whole process.
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*{expected}*"])
