"""The JUnit report: one testcase per spec, classnames that keep the suite's layout."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from vspec.errors import Location
from vspec.harness.junit import junit_tree, write_junit
from vspec.harness.runner import RunReport, SpecOutcome, Verdict


def outcome(file: Path, status: Verdict, **kwargs: object) -> SpecOutcome:
    return SpecOutcome(
        kwargs.pop("name", "a spec"),  # type: ignore[arg-type]
        Location(str(file), 3),
        status,
        **kwargs,  # type: ignore[arg-type]
    )


def test_classname_is_the_path_below_the_root_and_properties_hold_spec_and_seed(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "actions" / "allocate" / "05-two-jobs-on-one-node.yaml"
    report = RunReport([outcome(spec, Verdict.PASSED, seed=7, duration=0.25)], root=tmp_path)
    [case] = junit_tree(report).iter("testcase")
    assert case.get("classname") == "actions/allocate/05-two-jobs-on-one-node"
    assert case.get("name") == "a spec"
    assert case.get("file") == str(spec)
    assert case.get("line") == "3"
    assert case.get("time") == "0.250"
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props == {"spec": str(spec), "seed": "7"}
    assert list(case) == [case.find("properties")]  # passed: no failure element


def test_statuses_map_to_junit_elements_and_totals(tmp_path: Path) -> None:
    f = tmp_path / "plugins" / "gang" / "x.yaml"
    report = RunReport(
        [
            outcome(f, Verdict.PASSED, name="p"),
            outcome(f, Verdict.FAILED, name="f", messages=["bind a/p: expected n1, got n2"]),
            outcome(f, Verdict.ERROR, name="e", messages=["x.yaml:3: boom"], invalid=True),
            outcome(f, Verdict.SKIPPED, name="s", reason="later"),
            outcome(f, Verdict.XFAILED, name="xf", reason="known bug"),
            outcome(f, Verdict.XPASSED, name="xp", reason="known bug"),
        ],
        problems=["missing.yaml: no such file or directory"],
        root=tmp_path,
    )
    root = junit_tree(report)
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "7"
    assert suite.get("failures") == "1"
    assert suite.get("errors") == "2"
    assert suite.get("skipped") == "2"
    kinds = {
        c.get("name"): [ch.tag for ch in c if ch.tag != "properties"] for c in root.iter("testcase")
    }
    assert kinds == {
        "p": [],
        "f": ["failure"],
        "e": ["error"],
        "s": ["skipped"],
        "xf": ["skipped"],
        "xp": [],
        "command line": ["error"],
    }
    failure = root.find(".//testcase[@name='f']/failure")
    assert failure is not None
    assert failure.get("message") == "bind a/p: expected n1, got n2"
    assert "bind a/p: expected n1, got n2" in (failure.text or "")


def test_log_lines_with_control_characters_still_make_valid_xml(tmp_path: Path) -> None:
    f = tmp_path / "x.yaml"
    bad = outcome(
        f, Verdict.FAILED, messages=["m"], log_tail=["line with \x00 and \x1b"], log_total=1
    )
    out = tmp_path / "out" / "r.xml"
    write_junit(RunReport([bad], root=tmp_path), out)
    failure = ET.parse(out).getroot().find(".//failure")
    assert failure is not None
    assert "line with" in (failure.text or "")


def test_the_before_stop_hook_finds_the_areas(tmp_path: Path) -> None:
    """The project's before-stop hook reads areas such as ``actions/allocate`` from the
    classname (or the file attribute); reproduce its parsing on our report."""
    report = RunReport(
        [
            outcome(tmp_path / "actions" / "allocate" / "05-two.yaml", Verdict.PASSED),
            outcome(tmp_path / "plugins" / "binpack" / "01-x.yaml", Verdict.FAILED, messages=["m"]),
        ],
        root=tmp_path,
    )
    areas = []
    for case in junit_tree(report).iter("testcase"):
        key = case.get("classname") or case.get("file") or ""
        for part in ("actions/", "plugins/"):
            if part in key:
                areas.append(part + key.split(part, 1)[1].replace(".", "/").split("/")[0])
    assert areas == ["actions/allocate", "plugins/binpack"]
