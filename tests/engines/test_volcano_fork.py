"""A plugin author's fork: a Volcano tree with one more plugin registered in its factory,
run from a spec through ``--volcano-source``, as plugin authors work."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from vspec.cli import main
from vspec.engines.volcano import VolcanoEngine

from .conftest import BUILT_VERSION

PLUGIN = """package nodeveto

import (
	"fmt"

	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

// PluginName is the name the conf gives.
const PluginName = "nodeveto"

type plugin struct{}

// New builds the plugin.
func New(framework.Arguments) framework.Plugin { return &plugin{} }

func (p *plugin) Name() string { return PluginName }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddPredicateFn(PluginName, func(task *api.TaskInfo, node *api.NodeInfo) error {
		if node.Node.Labels["veto"] == "true" {
			return fmt.Errorf("node %s is vetoed by nodeveto", node.Name)
		}
		return nil
	})
}

func (p *plugin) OnSessionClose(*framework.Session) {}
"""

SPEC = """
name: the fork's own plugin keeps the pod off the vetoed node
scheduler:
  actions: "enqueue, allocate"
  tiers:
  - plugins: [{name: gang}, {name: nodeveto}]
cluster:
  nodes:
  - {name: n1, allocatable: {cpu: 4, memory: 4Gi}, labels: {veto: "true"}}
  - {name: n2, allocatable: {cpu: 4, memory: 4Gi}}
  jobs:
  - {name: j, minAvailable: 1, tasks: [{name: t, replicas: 1, requests: {cpu: 1}}]}
expect:
  binds: {default/j-t-0: n2}
  logs:
    contains: ["node n1 is vetoed by nodeveto"]
"""


def _fork(tmp_path: Path) -> Path:
    """Volcano's released module tree (from the module cache) plus the plugin."""
    modcache = subprocess.run(
        ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True
    ).stdout.strip()
    release = Path(modcache) / f"volcano.sh/volcano@{BUILT_VERSION}"
    tree = tmp_path / "volcano"
    shutil.copytree(release, tree)
    for path in [tree, *tree.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    plugin = tree / "pkg/scheduler/plugins/nodeveto/nodeveto.go"
    plugin.parent.mkdir()
    plugin.write_text(PLUGIN)
    factory = tree / "pkg/scheduler/plugins/factory.go"
    text = factory.read_text()
    text = text.replace(
        "import (",
        'import (\n\t"volcano.sh/volcano/pkg/scheduler/plugins/nodeveto"',
        1,
    ).replace(
        "func init() {",
        "func init() {\n\tframework.RegisterPluginBuilder(nodeveto.PluginName, nodeveto.New)",
        1,
    )
    factory.write_text(text)
    return tree


def test_a_fork_s_own_plugin_runs_from_a_spec(
    volcano: VolcanoEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``volcano`` is built first: the module cache then holds the release to copy."""
    tree = _fork(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    code = main(["run", "--engine", "volcano", "--volcano-source", str(tree), str(spec)])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert "1 passed" in out.out
    # vspec's own engine has no such plugin, and says so.
    assert main(["run", str(spec)]) == 2  # an invalid spec for it
    assert "no plugin 'nodeveto' is registered" in capsys.readouterr().out
