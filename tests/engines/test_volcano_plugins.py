"""Go plugins from a plugins dir, as the seed builds its logprint: compiled into the real
engine under their file names, a compile error located in the user's file."""

from __future__ import annotations

from pathlib import Path

import pytest

from vspec.cli import main
from vspec.engines.volcano import VolcanoEngine

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "go-plugin"

SPEC = """
name: {name}
pluginsDir: plugins
scheduler:
  actions: "enqueue, allocate"
  tiers:
  - plugins: [{{name: gang}}, {{name: {plugin}}}]
cluster:
  nodes: [{{name: n1, allocatable: {{cpu: 4, memory: 4Gi}}}}]
  jobs: [{{name: j, minAvailable: 1, tasks: [{{name: t, replicas: 1, requests: {{cpu: 1}}}}]}}]
expect:
  bindCount: 1
"""

BROKEN = """package main

import "volcano.sh/volcano/pkg/scheduler/framework"

func New(arguments framework.Arguments) framework.Plugin {
	return undefinedThing
}
"""


def _project(tmp_path: Path, plugins: dict[str, str], specs: dict[str, str]) -> Path:
    (tmp_path / "plugins").mkdir()
    for name, text in plugins.items():
        (tmp_path / "plugins" / name).write_text(text)
    for name, plugin in specs.items():
        (tmp_path / f"{name}.yaml").write_text(SPEC.format(name=name, plugin=plugin))
    return tmp_path


def test_the_seed_s_logprint_runs_from_a_plugins_dir_with_go_s_lines(
    volcano: VolcanoEngine, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXAMPLE)
    assert main(["run", "specs"]) == 0, capsys.readouterr()
    assert "1 passed" in capsys.readouterr().out


def test_a_broken_go_plugin_is_its_spec_s_located_error_and_the_others_pass(
    volcano: VolcanoEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, {"broken.go": BROKEN}, {"uses-broken": "broken"})
    (project / "fine").mkdir()
    (project / "fine" / "ok.yaml").write_text(
        SPEC.format(name="needs no plugin", plugin="priority").replace("pluginsDir: plugins\n", "")
    )
    code = main(["run", "--engine", "volcano", "--volcano-version", "v1.10.0", str(project)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"{project / 'plugins' / 'broken.go'}:6:9:" in out
    assert "undefined: undefinedThing" in out
    assert "1 passed" in out


def test_python_and_go_plugins_are_refused_on_the_other_engine(
    volcano: VolcanoEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    python_plugin = (
        "from vspec.extension import Plugin, register_plugin\n\n"
        "@register_plugin\nclass Mine(Plugin):\n    name = 'mine'\n\n"
        "    def on_session_open(self, ssn):\n        pass\n"
    )
    go_plugin = (EXAMPLE / "plugins" / "logprint.go").read_text()
    project = _project(
        tmp_path, {"mine.py": python_plugin, "gologprint.go": go_plugin}, {"py": "mine"}
    )
    (project / "go.yaml").write_text(SPEC.format(name="go", plugin="gologprint"))
    assert (
        main(
            ["run", "--engine", "volcano", "--volcano-version", "v1.10.0", str(project / "py.yaml")]
        )
        == 2
    )
    assert "'mine' is a Python plugin" in capsys.readouterr().out
    assert main(["run", str(project / "go.yaml")]) == 2
    assert "'gologprint' is Go source" in capsys.readouterr().out


def test_a_built_so_is_refused_saying_what_to_give_instead(
    volcano: VolcanoEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, {"logprint2.so": "not really"}, {"so": "logprint2"})
    assert main(["run", "--engine", "volcano", "--volcano-version", "v1.10.0", str(project)]) == 2
    out = capsys.readouterr().out
    assert "logprint2.so: a built Go plugin loads only" in out
    assert "logprint2.go" in out
