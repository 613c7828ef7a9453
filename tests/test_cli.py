"""The ``vspec`` command: exit codes, messages, selection, reports.

The engine is replaced by a fake that binds every unbound pod to the first node (and
crashes on a cluster whose first node is named ``boom``), so these tests pin the CLI's
behaviour, not the engine's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeEngine, spec
from vspec.cli import main

REPO = Path(__file__).resolve().parents[1]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


class TestRunExitCodes:
    def test_all_passed_is_0(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("first") + "---\n" + spec("second"))
        code, out, _ = run(capsys, "run", tmp_path)
        assert code == 0
        assert "2 passed" in out

    def test_a_failure_is_1_and_reads_in_spec_terms(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("good"))
        write(tmp_path / "b.yaml", spec("bad", bind_to="n2"))
        code, out, _ = run(capsys, "run", tmp_path)
        assert code == 1
        assert "bind default/p1: expected n2, got n1" in out
        assert "FAILED" in out and "bad" in out
        assert "1 failed, 1 passed" in out

    def test_skips_and_xfails_are_0(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("skipped", bind_to="n2", extra="skip: later\n"))
        write(tmp_path / "b.yaml", spec("known bug", bind_to="n2", extra="xfail: bug 1\n"))
        code, out, _ = run(capsys, "run", tmp_path)
        assert code == 0
        assert "1 skipped" in out and "1 xfailed" in out

    def test_invalid_spec_is_2_located_and_the_others_still_run(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("good"))
        bad = write(tmp_path / "b.yaml", "name: broken\nexpect:\n  bindz: {}\n")
        code, out, err = run(capsys, "run", tmp_path)
        assert code == 2
        assert f"{bad}:3" in out  # file:line of the bad key
        assert "bindz" in out
        assert "1 passed" in out
        assert "Traceback" not in out + err

    def test_malformed_yaml_is_2_without_traceback(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad = write(tmp_path / "bad.yaml", "name: x\ncluster: [unclosed\n")
        code, out, err = run(capsys, "run", bad)
        assert code == 2
        assert str(bad) in out + err
        assert "Traceback" not in out + err

    def test_missing_path_is_2(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("good"))
        code, _, err = run(capsys, "run", tmp_path / "a.yaml", tmp_path / "nope.yaml")
        assert code == 2
        assert "nope.yaml: no such file or directory" in err

    def test_named_file_without_spec_is_2_but_passed_over_in_a_directory(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("good"))
        cluster = write(tmp_path / "cluster.yaml", "nodes:\n- {name: n1}\n")
        code, out, _ = run(capsys, "run", tmp_path)
        assert code == 0
        assert "1 passed" in out
        code, _, err = run(capsys, "run", cluster)
        assert code == 2
        assert "cluster.yaml: holds no spec" in err

    def test_engine_crash_is_that_spec_error_and_the_others_run(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("crashes", node="boom"))
        write(tmp_path / "b.yaml", spec("fine"))
        code, out, _ = run(capsys, "run", tmp_path)
        assert code == 1
        assert "RuntimeError: engine exploded" in out
        assert str(tmp_path / "a.yaml") in out
        assert "1 passed, 1 error" in out
        assert "Traceback" not in out
        code, out, _ = run(capsys, "run", "-v", tmp_path)
        assert "Traceback" in out  # -v shows where the engine broke

    def test_bad_command_lines_are_2(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main([]) == 2
        with pytest.raises(SystemExit) as exc:
            main(["run"])
        assert exc.value.code == 2
        with pytest.raises(SystemExit) as exc:
            main(["run", "--seed", "x", "specs"])
        assert exc.value.code == 2
        capsys.readouterr()


class TestRunOptions:
    def test_k_selects_by_name_and_tags(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("gang waits", extra="tags: [gang]\n"))
        write(tmp_path / "b.yaml", spec("priority first", bind_to="n2", extra="tags: [prio]\n"))
        code, out, _ = run(capsys, "run", "-k", "gang", tmp_path)
        assert (code, "1 passed" in out, "failed" in out) == (0, True, False)
        code, out, _ = run(capsys, "run", "-k", "waits or prio", tmp_path)
        assert code == 1
        assert "1 failed, 1 passed" in out

    def test_k_matching_nothing_is_2_naming_the_expression(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("gang waits", extra="tags: [gang]\n"))
        code, out, err = run(capsys, "run", "-k", "not gang", tmp_path)
        assert code == 2
        assert "no specs ran" in out
        assert "-k 'not gang' matches none of the 1 specs" in err

    def test_misspelled_name_is_one_invalid_spec_not_a_file_passed_over(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("fine").replace("name: fine", "nmae: fine"))
        code, out, _ = run(capsys, "run", tmp_path)
        assert code == 2
        assert "unknown key 'nmae' (did you mean 'name'?)" in out
        assert "1 error in" in out  # one spec, one item, however many keys are wrong

    def test_bad_k_expression_is_2(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("good"))
        code, _, err = run(capsys, "run", "-k", "gang and", tmp_path)
        assert code == 2
        assert "-k 'gang and'" in err
        assert engine.seeds == []

    def test_seed_overrides_the_specs_seed(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("seeded", extra="seed: 7\n"))
        run(capsys, "run", tmp_path)
        run(capsys, "run", "--seed", "42", tmp_path)
        # Once each: the built-in conf's determinism is not re-checked by a spec run.
        assert engine.seeds == [7, 42]

    def test_verbose_prints_a_line_per_spec(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("first") + "---\n" + spec("second"))
        _, out, _ = run(capsys, "run", "-v", tmp_path)
        lines = [line for line in out.splitlines() if line.startswith("PASSED")]
        assert len(lines) == 2
        assert "first" in lines[0] and "second" in lines[1]

    def test_junit_xml(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "suite" / "actions" / "allocate" / "01-x.yaml", spec("one"))
        write(tmp_path / "suite" / "plugins" / "gang" / "01-y.yaml", spec("two", bind_to="n2"))
        report = tmp_path / "out" / "junit.xml"
        code, _, _ = run(capsys, "run", tmp_path / "suite", "--junit-xml", report)
        assert code == 1
        cases = {c.get("name"): c for c in ET.parse(report).getroot().iter("testcase")}
        assert cases["one"].get("classname") == "actions/allocate/01-x"
        assert cases["two"].get("classname") == "plugins/gang/01-y"
        assert cases["two"].find("failure") is not None
        props = {p.get("name"): p.get("value") for p in cases["one"].iter("property")}
        assert props["seed"] == "0"
        assert props["spec"] is not None and props["spec"].endswith("01-x.yaml")


class TestHangs:
    def test_timeout_fails_the_spec_that_hangs_and_the_others_run(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("hangs", node="hang"))
        write(tmp_path / "b.yaml", spec("fine"))
        code, out, _ = run(capsys, "run", "--timeout", "0.2", tmp_path)
        assert code == 1
        assert "\n  timed out after 0.2 s\n" in out  # and nothing else: no culprit, no panic
        assert "1 passed, 1 error" in out

    @pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "-inf", "soon"])
    def test_timeout_must_be_a_positive_finite_number(
        self, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("fine"))
        with pytest.raises(SystemExit) as exit_:
            main(["run", f"--timeout={value}", str(tmp_path)])
        assert exit_.value.code == 2
        assert "is not a positive number of seconds" in capsys.readouterr().err

    def test_sigterm_still_writes_the_junit_report(self, tmp_path: Path) -> None:
        write(tmp_path / "a.yaml", spec("fine"))
        write(tmp_path / "b.yaml", spec("hangs", node="hang", extra="seed: 7\n"))
        report = tmp_path / "r.xml"
        script = textwrap.dedent(
            f"""
            import sys, time
            import vspec.framework.scheduler as scheduler
            from tests.conftest import FakeEngine
            scheduler.simulate = FakeEngine()
            from vspec.cli import main
            sys.exit(main(["run", {str(tmp_path)!r}, "--junit-xml", {str(report)!r}]))
            """
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None
        seen = ""
        while not seen.endswith("."):  # a.yaml passed; b.yaml comes next and hangs
            char = proc.stdout.read(1)
            assert char, seen
            seen += char
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 130
        cases = {c.get("name"): c for c in ET.parse(report).getroot().iter("testcase")}
        assert list(cases["fine"]) == [cases["fine"].find("properties")]  # it passed
        assert cases["hangs"].find("error") is not None  # it was running
        props = {p.get("name"): p.get("value") for p in cases["hangs"].iter("property")}
        assert props["seed"] == "7"  # its own seed, to reproduce it


class TestAttribution:
    def test_control_characters_in_names_are_escaped(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        # An ESC in a spec name reached the terminal raw: it could erase and rewrite lines.
        write(tmp_path / "a.yaml", spec("evil").replace("name: evil", 'name: "ev\\e[2Kil"'))
        code, out, _ = run(capsys, "run", "-v", tmp_path)
        assert code == 0
        assert "ev\\x1b[2Kil" in out and "\x1b" not in out

    def test_an_error_in_an_included_file_names_the_spec(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "shared.yaml", "nodes:\n- {name: n1, alocatable: {cpu: 1}}\n")
        text = spec("uses it").replace("cluster:\n", "cluster:\n  include: [shared.yaml]\n")
        write(tmp_path / "a.yaml", text)
        code, out, _ = run(capsys, "run", tmp_path)
        assert code == 2
        assert f"(used by spec 'uses it' at {tmp_path / 'a.yaml'}:1)" in out
        assert f"{tmp_path / 'a.yaml'} E" in out  # listed with the spec, not the shared file


class TestDiscovery:
    def test_fifos_devices_and_symlink_loops_are_skipped_and_said(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        # Reading a FIFO named *.yaml blocked for ever; a symlink loop was a traceback.
        write(tmp_path / "a.yaml", spec("fine"))
        os.mkfifo(tmp_path / "fifo.yaml")
        (tmp_path / "zero.yaml").symlink_to("/dev/zero")
        (tmp_path / "loop1.yaml").symlink_to(tmp_path / "loop2.yaml")
        (tmp_path / "loop2.yaml").symlink_to(tmp_path / "loop1.yaml")
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "up").symlink_to(tmp_path)  # a directory loop: not followed
        code, out, err = run(capsys, "run", tmp_path, tmp_path / "fifo.yaml")
        assert code == 2
        assert "1 passed" in out
        assert f"{tmp_path / 'fifo.yaml'}: skipped: not a regular file (a FIFO)" in err
        assert f"{tmp_path / 'zero.yaml'}: skipped: not a regular file (a device)" in err
        assert f"{tmp_path / 'loop1.yaml'}: skipped: a symlink loop" in err
        assert "Traceback" not in err


class TestReports:
    def test_unwritable_junit_path_is_an_error_before_any_spec_runs(
        self, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
    ) -> None:
        write(tmp_path / "a.yaml", spec("fine"))
        (tmp_path / "file").write_text("")
        for target in (tmp_path / "file" / "r.xml", tmp_path):
            code, out, err = run(capsys, "run", tmp_path / "a.yaml", "--junit-xml", target)
            assert code == 2
            assert f"{target}: --junit-xml: " in err and "Traceback" not in err
            assert engine.seeds == [] and out == ""

    def test_report_replaces_the_old_file_whole_or_not_at_all(
        self,
        tmp_path: Path,
        engine: FakeEngine,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        write(tmp_path / "specs" / "a.yaml", spec("fine"))
        report = tmp_path / "out" / "r.xml"
        assert run(capsys, "run", tmp_path / "specs", "--junit-xml", report)[0] == 0
        old = report.read_bytes()

        def half_written(self: ET.ElementTree, out: Any, **_: Any) -> None:
            out.write(b"<?xml")
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(ET.ElementTree, "write", half_written)
        code, _, err = run(capsys, "run", tmp_path / "specs", "--junit-xml", report)
        assert code == 2
        assert "cannot write: No space left on device" in err
        assert report.read_bytes() == old
        assert [p.name for p in report.parent.iterdir()] == ["r.xml"]  # no temporary left


class TestOtherCommands:
    def test_validate(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        write(tmp_path / "a.yaml", spec("first") + "---\n" + spec("second"))
        write(tmp_path / "cluster.yaml", "nodes: []\n")
        code, out, _ = run(capsys, "validate", tmp_path)
        assert code == 0
        assert "2 specs in 1 files are valid" in out
        bad = write(tmp_path / "b.yaml", "name: broken\nexpect:\n  bindz: {}\n")
        code, out, _ = run(capsys, "validate", tmp_path)
        assert code == 2
        assert f"{bad}:3" in out

    def test_schema_is_json(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "schema")
        assert code == 0
        schema = json.loads(out)
        assert "$schema" in schema
        assert '"name"' in out

    @pytest.mark.parametrize(
        ("kind", "title"),
        [("cluster", "vspec cluster file"), ("scheduler", "vspec scheduler conf file")],
    )
    def test_schema_of_other_files(
        self, capsys: pytest.CaptureFixture[str], kind: str, title: str
    ) -> None:
        code, out, _ = run(capsys, "schema", kind)
        assert code == 0
        schema = json.loads(out)
        assert schema["title"] == title and "then" in schema and "$defs" in schema

    def test_plugins_lists_actions_and_plugins(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "plugins")
        assert code == 0
        assert out.startswith("Actions:")
        assert "\n  allocate" in out
        assert "\nPlugins:" in out
        assert "\n  gang" in out
        assert "binpack.weight (" in out

    def test_invariants_are_listed(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "invariants")
        assert code == 0
        assert "gang-atomicity" in out and "deterministic" in out


def test_python_m_vspec_reports_bad_input_without_traceback(tmp_path: Path) -> None:
    args: list[Any] = [sys.executable, "-m", "vspec", "run", str(tmp_path / "missing")]
    proc = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 2
    assert "missing: no such file or directory" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_vspec_process_ends_with_its_status_its_atexit_handlers_run_and_its_heap_frozen(
    tmp_path: Path,
) -> None:
    """``cli.end`` keeps what a normal exit does (the status, atexit handlers, the
    streams flushed) and only hides the heap from the collector's exit passes."""
    program = (
        "import atexit, gc, sys\n"
        "from vspec.cli import end\n"
        "atexit.register(lambda: print('atexit saw', gc.get_freeze_count() > 0))\n"
        "end(lambda: sys.stdout.write('buffered, not yet flushed') and 3)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert proc.returncode == 3
    assert proc.stdout == "buffered, not yet flushedatexit saw True\n"


def test_python_m_vspec_keeps_the_exit_status_of_a_failing_spec(tmp_path: Path) -> None:
    spec = tmp_path / "failing.yaml"
    spec.write_text(
        "name: nothing fits\n"
        "scheduler: {actions: 'enqueue, allocate', tiers: [{plugins: [{name: gang}]}]}\n"
        "cluster:\n"
        "  nodes: [{name: n1, allocatable: {cpu: 1, memory: 1Gi}}]\n"
        "  queues: [{name: default}]\n"
        "  podGroups: [{name: pg, queue: default, minMember: 1}]\n"
        "  pods: [{name: p1, podGroup: pg, requests: {cpu: 2}}]\n"
        "expect:\n"
        "  binds: {default/p1: n1}\n",
        encoding="utf-8",
    )
    args: list[Any] = [sys.executable, "-m", "vspec", "run", str(spec)]
    proc = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed" in proc.stdout
