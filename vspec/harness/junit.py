"""A JUnit XML report of a run, in the dialect CI servers and pytest's ``--junit-xml`` share.

A testcase's ``classname`` is the spec file's path below the common root of the paths that
were run, without its suffix (``actions/allocate/05-two-jobs-on-one-node``), so a suite's
directory layout survives into the report; ``file`` and ``line`` locate the spec; its
properties name the spec file and the seed that reproduces the run.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from vspec.errors import Location, SpecError
from vspec.harness.report import failure_text
from vspec.harness.runner import RunReport, SpecOutcome, Verdict, relative_path

# Characters XML 1.0 cannot carry, even escaped; a log line may hold any of them.
_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def check_writable(path: Path) -> None:
    """Raise :class:`SpecError` unless a report can be written at ``path``: checked before
    any spec runs, so a typo in the path does not cost a whole run."""
    try:
        if path.is_dir():
            raise SpecError("is a directory", _where(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}."):
            pass
    except OSError as exc:
        raise SpecError(f"cannot write there: {exc.strerror or exc}", _where(path)) from None


def write_junit(report: RunReport, path: Path) -> None:
    """Write the report beside ``path`` and rename it into place, so a reader (or the
    next run) sees the previous file or the whole new one, never a partial one."""
    tree = ET.ElementTree(junit_tree(report))
    ET.indent(tree)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would hide it from readers
            with os.fdopen(fd, "wb") as out:
                tree.write(out, encoding="utf-8", xml_declaration=True)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        raise SpecError(f"cannot write: {exc.strerror or exc}", _where(path)) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _where(path: Path) -> Location:
    return Location(str(path), key="--junit-xml")


def junit_tree(report: RunReport) -> ET.Element:
    counts = report.counts()
    skipped = counts[Verdict.SKIPPED] + counts[Verdict.XFAILED]
    errors = counts[Verdict.ERROR] + len(report.problems)
    totals = {
        "tests": str(len(report.outcomes) + len(report.problems)),
        "failures": str(counts[Verdict.FAILED]),
        "errors": str(errors),
        "skipped": str(skipped),
        "time": f"{report.duration:.3f}",
    }
    suites = ET.Element("testsuites", {"name": "vspec", **totals})
    suite = ET.SubElement(
        suites,
        "testsuite",
        {
            "name": "vspec",
            **totals,
            "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
            "hostname": socket.gethostname(),
        },
    )
    if report.warnings:
        # Warnings fail no test case: they ride as suite properties, which CI servers and
        # pytest's record_testsuite_property both show.
        props = ET.SubElement(suite, "properties")
        for warning in report.warnings:
            ET.SubElement(props, "property", {"name": "warning", "value": _clean(warning)})
    for outcome in report.outcomes:
        suite.append(_testcase(outcome, report.root))
    for problem in report.problems:
        case = ET.SubElement(suite, "testcase", {"classname": "vspec", "name": "command line"})
        ET.SubElement(case, "error", {"message": _clean(problem)})
    return suites


def classname(outcome: SpecOutcome, root: Path) -> str:
    return relative_path(outcome.location.file, root).with_suffix("").as_posix()


def _testcase(outcome: SpecOutcome, root: Path) -> ET.Element:
    loc = outcome.location
    case = ET.Element(
        "testcase",
        {
            "classname": classname(outcome, root),
            "name": _clean(outcome.name),
            "file": loc.file,
            "line": str(loc.line),
            "time": f"{outcome.duration:.3f}",
        },
    )
    props = ET.SubElement(case, "properties")
    ET.SubElement(props, "property", {"name": "spec", "value": loc.file})
    ET.SubElement(props, "property", {"name": "seed", "value": str(outcome.seed)})
    first = _clean(outcome.messages[0]) if outcome.messages else ""
    if outcome.status is Verdict.FAILED:
        failure = ET.SubElement(case, "failure", {"message": first})
        failure.text = _clean(failure_text(outcome))
    elif outcome.status is Verdict.ERROR:
        error = ET.SubElement(case, "error", {"message": first})
        error.text = _clean(failure_text(outcome, tracebacks=True))
    elif outcome.status is Verdict.SKIPPED:
        ET.SubElement(case, "skipped", {"type": "skip", "message": _clean(outcome.reason)})
    elif outcome.status is Verdict.XFAILED:
        skipped = ET.SubElement(
            case, "skipped", {"type": "xfail", "message": _clean(outcome.reason)}
        )
        skipped.text = _clean(failure_text(outcome))
    return case


def _clean(text: str) -> str:
    return _ILLEGAL_XML.sub("\ufffd", text)
