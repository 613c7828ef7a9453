"""User plugins and actions: ``--plugins-dir``, ``[tool.vspec] plugins-dir``, a spec's
``pluginsDir``, and how their mistakes are reported (import failures, unknown names,
a plugin that raises). The real engine runs the specs, with each test's plugins
registered only for that test (the ``isolated_registry`` fixture, conftest.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from vspec.cli import main
from vspec.errors import SpecError
from vspec.harness.loader import load_file
from vspec.harness.settings import ProjectSettings, project_settings

pytestmark = pytest.mark.usefixtures("isolated_registry")

# Rejects node n1 for every task: a spec that binds its pod to n2 shows it was loaded.
AVOID_N1 = '''
from typing import ClassVar

from vspec.extension import Code, FitError, NodeInfo, Plugin, Session, Status, TaskInfo
from vspec.extension import register_plugin


@register_plugin
class AvoidN1(Plugin):
    """Keeps every task off n1."""

    name: ClassVar[str] = "avoid-n1"

    def on_session_open(self, ssn: Session) -> None:
        def predicate(task: TaskInfo, node: NodeInfo) -> None:
            if node.name == "n1":
                raise FitError.with_status(task, node.name, Status(Code.Unschedulable, "no n1"))

        ssn.add_predicate_fn(self.name, predicate)
'''

# Its job-order function raises: the spec's error must name it.
RAISES = '''
from typing import ClassVar

from vspec.extension import JobInfo, Plugin, Session, register_plugin


@register_plugin
class Exploding(Plugin):
    """Orders jobs by dividing by zero."""

    name: ClassVar[str] = "exploding"

    def on_session_open(self, ssn: Session) -> None:
        def order(left: JobInfo, right: JobInfo) -> int:
            return len(left.name) // 0

        ssn.add_job_order_fn(self.name, order)
'''

SPEC = """\
name: {name}
{extra}scheduler:
  actions: "enqueue, allocate"
  tiers:
  - plugins:
    - name: gang
    - name: {plugin}
    - name: predicates
cluster:
  nodes:
  - {{name: n1, allocatable: {{cpu: 4}}}}
  - {{name: n2, allocatable: {{cpu: 4}}}}
  jobs:
  - {{name: a, tasks: [{{name: t, requests: {{cpu: 1}}}}]}}
  - {{name: b, tasks: [{{name: t, requests: {{cpu: 1}}}}]}}
expect:
  binds: {{default/a-t-0: n2, default/b-t-0: n2}}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def spec(name: str = "avoids n1", plugin: str = "avoid-n1", extra: str = "") -> str:
    return SPEC.format(name=name, plugin=plugin, extra=extra)


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with plugins/avoid_n1.py and specs/a.yaml; the current directory, so
    no pyproject.toml of the repository applies."""
    write(tmp_path / "plugins" / "avoid_n1.py", AVOID_N1)
    write(tmp_path / "specs" / "a.yaml", spec())
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- --plugins-dir --------------------------------------------------------------------


def test_plugins_dir_flag_loads_the_plugin(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "run", "--plugins-dir", "plugins", "specs")
    assert (code, err) == (0, "")
    assert "1 passed" in out
    code, out, _ = run(capsys, "validate", "--plugins-dir", "plugins", "specs")
    assert code == 0 and "1 specs in 1 files are valid" in out


def test_plugins_dir_flag_is_repeatable(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "more" / "exploding.py", RAISES)
    code, out, _ = run(capsys, "plugins", "--plugins-dir", "plugins", "--plugins-dir", "more")
    assert code == 0
    assert "  avoid-n1" in out and "Keeps every task off n1." in out
    assert "  exploding" in out


def test_without_the_plugin_the_conf_is_invalid(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", "specs")
    assert code == 2
    assert (
        "specs/a.yaml:7:7: scheduler.tiers[0].plugins[1]: no plugin 'avoid-n1' is registered; "
        "is --plugins-dir missing?"
    ) in out


def test_missing_plugins_dir_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "run", "--plugins-dir", "nope", "specs")
    assert (code, out) == (2, "")
    assert err.startswith("vspec: error: --plugins-dir: plugins directory ")
    assert "nope does not exist" in err


# -- import failures ----------------------------------------------------------------------


def test_module_failing_to_import_names_its_file_and_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "broken" / "bad_plugin.py", "import os\n\nVALUE = os.nope\n")
    code, out, err = run(capsys, "run", "--plugins-dir", "broken", "specs")
    assert (code, out) == (2, "")
    assert f"{project / 'broken' / 'bad_plugin.py'}:3 failed to import: AttributeError" in err
    assert "Traceback" not in err


def test_syntax_error_names_its_file_and_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "broken" / "syntax.py", "x = 1\ndef f(:\n")
    code, _, err = run(capsys, "validate", "--plugins-dir", "broken", "specs")
    assert code == 2
    assert f"{project / 'broken' / 'syntax.py'}:2 failed to import: SyntaxError" in err


def test_spec_plugins_dir_failing_to_import_names_the_spec(project: Path) -> None:
    write(project / "broken" / "bad_plugin.py", "raise RuntimeError('no licence')\n")
    path = write(
        project / "specs" / "b.yaml", spec("needs broken", extra="pluginsDir: ../broken\n")
    )
    loaded = load_file(path, check_names=True)
    assert loaded.specs == []
    [error] = loaded.errors
    assert str(error).startswith(
        f"{path}:2:13: pluginsDir: spec 'needs broken': plugin module "
        f"{project / 'broken' / 'bad_plugin.py'}:1 failed to import: RuntimeError: no licence"
    )


# -- a spec's pluginsDir -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["../plugins", "[../plugins]"])
def test_spec_plugins_dir_is_relative_to_the_spec(project: Path, value: str) -> None:
    path = write(project / "specs" / "c.yaml", spec(extra=f"pluginsDir: {value}\n"))
    loaded = load_file(path, check_names=True)
    assert not loaded.errors, loaded.errors
    [loaded_spec] = loaded.specs
    assert loaded_spec.plugins_dirs == (project / "specs" / "../plugins",)


def test_spec_plugins_dir_runs_without_flags(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "specs" / "a.yaml", spec(extra="pluginsDir: ../plugins\n"))
    code, out, _ = run(capsys, "run", "specs")
    assert code == 0 and "1 passed" in out


def test_spec_plugins_dir_must_be_a_directory_name(project: Path) -> None:
    path = write(project / "specs" / "d.yaml", spec(extra="pluginsDir: 3\n"))
    [error] = load_file(path).errors
    assert "d.yaml:2:13: pluginsDir: expected a string or a list, got 3" in str(error)


# -- [tool.vspec] in pyproject.toml --------------------------------------------------------


@pytest.mark.parametrize("setting", ['"plugins"', '["plugins"]'])
def test_pyproject_setting_from_a_subdirectory(
    project: Path, setting: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "pyproject.toml", f"[tool.vspec]\nplugins-dir = {setting}\n")
    monkeypatch.chdir(project / "specs")
    assert project_settings() == ProjectSettings(
        (project / "plugins",), source=project / "pyproject.toml"
    )
    code, out, _ = run(capsys, "run", "a.yaml")
    assert code == 0 and "1 passed" in out


def test_nearest_pyproject_with_the_table_wins(project: Path) -> None:
    write(project / "pyproject.toml", '[tool.vspec]\nplugins-dir = "plugins"\n')
    write(project / "specs" / "pyproject.toml", "[project]\nname = 'inner'\n")
    assert project_settings(project / "specs").plugins_dirs == (project / "plugins",)
    assert project_settings(project.parent) == ProjectSettings()


def test_pyproject_mistakes_are_reported(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject = write(project / "pyproject.toml", '[tool.vspec]\nplugin-dir = "plugins"\n')
    with pytest.raises(
        SpecError, match=r"unknown setting 'plugin-dir' \(did you mean 'plugins-dir'"
    ):
        project_settings()
    write(pyproject, "[tool.vspec]\nplugins-dir = 3\n")
    code, out, _ = run(capsys, "run", "specs")
    assert code == 2
    assert (
        f"{pyproject}: tool.vspec.plugins-dir: "
        "plugins-dir must be a directory or a list of directories (used by spec "
    ) in out


def test_pytest_plugin_reads_the_pyproject_setting(
    project: Path, pytester: pytest.Pytester
) -> None:
    write(
        pytester.path / "pyproject.toml", f'[tool.vspec]\nplugins-dir = "{project / "plugins"}"\n'
    )
    write(pytester.path / "a.yaml", spec())
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_pytest_plugin_reports_a_broken_plugins_dir(pytester: pytest.Pytester) -> None:
    write(pytester.path / "pyproject.toml", '[tool.vspec]\nplugins-dir = "missing"\n')
    write(pytester.path / "a.yaml", spec())
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*pyproject.toml: tool.vspec.plugins-dir: *missing*"])


# -- unknown names and plugins that raise ---------------------------------------------------


def test_unknown_plugin_and_action_have_a_did_you_mean_at_their_line(tmp_path: Path) -> None:
    path = write(tmp_path / "s.yaml", spec(plugin="gnag"))
    [error] = load_file(path, check_names=True).errors
    assert str(error) == (
        f"{path}:7:7: scheduler.tiers[0].plugins[1]: unknown plugin 'gnag' (did you mean 'gang'?)"
    )
    write(path, spec(plugin="gang").replace("enqueue, allocate", "enqueue, alocate"))
    [error] = load_file(path, check_names=True).errors
    assert str(error) == (
        f"{path}:3:12: scheduler.actions: unknown action 'alocate' (did you mean 'allocate'?)"
    )


def test_plugin_that_raises_is_that_specs_error_with_its_name(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = write(project / "more" / "exploding_plugin.py", RAISES)
    write(project / "specs" / "b.yaml", spec("explodes", plugin="exploding"))
    code, out, _ = run(capsys, "run", "--plugins-dir", "plugins", "--plugins-dir", "more", "specs")
    assert code == 1
    assert "1 passed, 1 error" in out
    assert (
        "specs/b.yaml:1:1: plugin 'exploding_plugin': ZeroDivisionError: integer division or "
        "modulo by zero (registered as 'exploding'; "
        f"in Exploding.on_session_open.<locals>.order at {module}:15)"
    ) in out


# A bug in a predicate or a score is not Volcano's `error` return: before GoError, a
# KeyError here read "fit failed: 'typo'" and the spec failed as unschedulable (issue 14.2).
BUGGY = '''
from typing import ClassVar

from vspec.extension import GoError, NodeInfo, Plugin, Session, TaskInfo, register_plugin


class NoN1(GoError):
    """What the Go predicate would return for n1."""


@register_plugin
class Buggy(Plugin):
    name: ClassVar[str] = "buggy"

    def on_session_open(self, ssn: Session) -> None:
        def predicate(task: TaskInfo, node: NodeInfo) -> None:
            if node.name == "{reject}":
                raise {raised}  # predicate's line

        def score(task: TaskInfo, node: NodeInfo) -> float:
            return {score}  # score's line

        ssn.add_predicate_fn(self.name, predicate)
        ssn.add_node_order_fn(self.name, score)
'''


@pytest.mark.parametrize(
    ("raised", "score", "error", "callback"),
    [
        ('{}["typo"]', "0.0", "KeyError: 'typo'", "predicate"),
        ("NoN1('unused')", "node.no_such_field", "AttributeError: ", "score"),
    ],
)
def test_a_python_exception_in_a_callback_fails_the_spec_naming_plugin_callback_and_line(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    raised: str,
    score: str,
    error: str,
    callback: str,
) -> None:
    reject = "n1" if callback == "predicate" else "none"  # scores need two feasible nodes
    text = BUGGY.format(reject=reject, raised=raised, score=score)
    module = write(project / "more" / "buggy.py", text)
    lines = module.read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if f"# {callback}'s line" in t)
    write(project / "specs" / "b.yaml", spec("buggy", plugin="buggy"))
    code, out, _ = run(capsys, "run", "--plugins-dir", "more", "specs/b.yaml")
    assert code == 1
    assert "1 error" in out and "fit failed" not in out
    assert f"specs/b.yaml:1:1: plugin 'buggy': {error}" in out
    assert f"in Buggy.on_session_open.<locals>.{callback} at {module}:{line})" in out


def test_a_go_error_from_a_user_predicate_rejects_the_node(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        project / "more" / "buggy.py",
        BUGGY.format(reject="n1", raised="NoN1('n1 is taken')", score="0.0"),
    )
    write(project / "specs" / "b.yaml", spec("rejects n1", plugin="buggy"))
    code, out, _ = run(capsys, "run", "--plugins-dir", "more", "specs/b.yaml")
    assert code == 0, out
    assert "1 passed" in out


def test_a_user_plugin_of_a_built_ins_name_is_an_error_naming_both(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = write(project / "over" / "my_gang.py", AVOID_N1.replace('"avoid-n1"', '"gang"'))
    clash = write(
        project / "specs" / "a.yaml",
        spec(plugin="priority", extra="pluginsDir: ../over\n"),
    )
    code, out, _ = run(capsys, "validate", clash)
    assert code == 2
    assert (
        f"{clash}:7:7: scheduler.tiers[0].plugins[0]: plugin 'gang' is built in "
        f"(vspec.plugins.gang) and also registered by plugins dir {module.parent} "
        "(vspec_user_plugins.my_gang); to use yours, name it in the spec's replaceBuiltins"
    ) in out


def test_a_replaced_built_in_is_replaced_for_that_spec_alone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's gang keeps tasks off n1; the spec after it, in the same run, gets the
    built-in gang again (before, the replacement leaked into every later spec)."""
    write(project / "over" / "my_gang.py", AVOID_N1.replace('"avoid-n1"', '"gang"'))
    mine = spec("mine", plugin="priority", extra="pluginsDir: ../over\nreplaceBuiltins: [gang]\n")
    builtin = spec("built-in", plugin="priority").replace(
        "default/a-t-0: n2, default/b-t-0: n2", "default/a-t-0: n2, default/b-t-0: n1"
    )
    write(project / "specs" / "a.yaml", mine)
    write(project / "specs" / "b.yaml", builtin)
    code, out, _ = run(capsys, "run", "-v", "specs")
    assert code == 0, out
    assert "2 passed" in out


def test_a_specs_plugins_dir_does_not_leak_into_later_specs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "specs" / "a.yaml", spec(extra="pluginsDir: ../plugins\n"))
    write(project / "specs" / "b.yaml", spec("needs it too"))
    code, out, _ = run(capsys, "run", "specs")
    assert code == 2
    assert "1 passed, 1 error" in out
    assert "b.yaml:7:7: scheduler.tiers[0].plugins[1]: no plugin 'avoid-n1' is registered" in out


def test_two_plugins_dirs_with_one_name_are_an_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "again" / "avoid_n1_copy.py", AVOID_N1)
    write(project / "specs" / "a.yaml", spec(extra="pluginsDir: [../plugins, ../again]\n"))
    code, out, _ = run(capsys, "validate", "specs")
    assert code == 2
    assert "plugin 'avoid-n1' is registered by two plugins dirs:" in out


# -- a user's plugin that is not deterministic --------------------------------------------

# Prefers n1 in a process's odd-numbered sessions and n2 in the others: hidden state
# outliving the run, which the same spec run again must expose.
FLIP_FLOP = '''
from typing import ClassVar

from vspec.extension import NodeInfo, Plugin, Session, TaskInfo, register_plugin

SESSIONS: list[str] = []


@register_plugin
class FlipFlop(Plugin):
    """Prefers another node in every session."""

    name: ClassVar[str] = "flip-flop"

    def on_session_open(self, ssn: Session) -> None:
        SESSIONS.append(ssn.uid)
        favourite = "n1" if len(SESSIONS) % 2 else "n2"

        def order(task: TaskInfo, node: NodeInfo) -> float:
            return 10.0 if node.name == favourite else 0.0

        ssn.add_node_order_fn(self.name, order)
'''


def test_a_nondeterministic_user_plugin_fails_its_spec(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`deterministic` re-runs a spec whose run goes through a user's plugin (a spec
    run leaves vspec's own code to vspec's suite and fuzzer) and catches it."""
    write(project / "plugins" / "flip_flop.py", FLIP_FLOP)
    text = spec(plugin="flip-flop").replace(
        "expect:\n  binds: {default/a-t-0: n2, default/b-t-0: n2}\n", "expect: {bindCount: 2}\n"
    )
    write(project / "specs" / "a.yaml", text)
    code, out, _ = run(capsys, "run", "--plugins-dir", "plugins", "specs")
    assert code == 1, out
    assert "invariant deterministic: a second run with seed 0 gives different binds" in out
