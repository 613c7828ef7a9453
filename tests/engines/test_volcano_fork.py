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


# The seed's fork (../shared/seed/): a print-function slot on the session, the print
# action that calls it, and the logprint plugin that fills it, each written from the
# seed's description.
SEED_PRINT_ACTION = """package print

import (
	"k8s.io/klog/v2"

	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

type Action struct{}

func New() *Action { return &Action{} }

func (print *Action) Name() string { return "print" }

func (print *Action) Initialize() {}

func (print *Action) Execute(ssn *framework.Session) {
	klog.V(5).Infof("Enter Print Action ...")
	defer klog.V(5).Infof("Leaving Action ...")
	jobs := make([]*api.JobInfo, 0)
	for _, job := range ssn.Jobs {
		jobs = append(jobs, job)
	}
	ssn.PrintJobInfo(jobs)
}

func (print *Action) UnInitialize() {}
"""

SEED_LOGPRINT = """package logprint

import (
	"k8s.io/klog/v2"

	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

const PluginName = "logprint"

var pendingFormat = "Job %s/%s is pending, try to schedule it on node %s"

type logPrint struct{ pluginArguments framework.Arguments }

func New(arguments framework.Arguments) framework.Plugin {
	return &logPrint{pluginArguments: arguments}
}

func (lp *logPrint) Name() string { return PluginName }

func (lp *logPrint) OnSessionOpen(ssn *framework.Session) {
	ssn.AddPrintFn(PluginName, func(jobs []*api.JobInfo) {
		for _, job := range jobs {
			if job.IsPending() {
				klog.V(1).Infof(pendingFormat, job.Namespace, job.Name)
			}
		}
	})
}

func (lp *logPrint) OnSessionClose(*framework.Session) {}
"""

SEED_SESSION_PLUGINS = """
// AddPrintFn adds a plugin's print function (the seed's fork).
func (ssn *Session) AddPrintFn(name string, fn api.PrintFn) {
	ssn.printFns[name] = fn
}

// PrintJobInfo calls every plugin's print function, tier by tier (the seed's fork).
func (ssn *Session) PrintJobInfo(jobs []*api.JobInfo) {
	for _, tier := range ssn.Tiers {
		for _, plugin := range tier.Plugins {
			if fn, found := ssn.printFns[plugin.Name]; found {
				fn(jobs)
			}
		}
	}
}
"""

SEED_SPEC = """
name: the seed's fork prints through its own print action
scheduler:
  actions: "print, enqueue, allocate"
  tiers:
  - plugins: [{name: gang}, {name: logprint}]
verbosity: 1
cluster:
  nodes: [{name: n1, allocatable: {cpu: 1, memory: 1Gi}}]
  jobs:
  - {name: waits, minAvailable: 2, tasks: [{name: t, replicas: 2, requests: {cpu: 1}}]}
expect:
  logs:
    contains: ["Job default/waits is pending, try to schedule it on node %!s(MISSING)"]
"""


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _seed_fork(tmp_path: Path) -> Path:
    """The seed's changes to Volcano, made to a copy of the released tree."""
    tree = _fork(tmp_path)
    scheduler = tree / "pkg/scheduler"
    _edit(
        scheduler / "api/types.go",
        "type CompareFn func(",
        "// PrintFn prints jobs (the seed's fork).\ntype PrintFn func([]*JobInfo)\n\n"
        "// CompareFn is the func declaration used by sort or priority queue.\n"
        "type CompareFn func(",
    )
    session = scheduler / "framework/session.go"
    _edit(
        session,
        "\tjobOrderFns       map[string]api.CompareFn",
        ("\tprintFns map[string]api.PrintFn\n\tjobOrderFns       map[string]api.CompareFn"),
    )
    _edit(
        session,
        "\t\tjobOrderFns:       map[string]api.CompareFn{},",
        "\t\tprintFns: map[string]api.PrintFn{},\n"
        "\t\tjobOrderFns:       map[string]api.CompareFn{},",
    )
    with (scheduler / "framework/session_plugins.go").open("a") as out:
        out.write(SEED_SESSION_PLUGINS)
    (scheduler / "actions/print").mkdir()
    (scheduler / "actions/print/print.go").write_text(SEED_PRINT_ACTION)
    _edit(
        scheduler / "actions/factory.go",
        "import (",
        'import (\n\t"volcano.sh/volcano/pkg/scheduler/actions/print"',
    )
    _edit(
        scheduler / "actions/factory.go",
        "func init() {",
        "func init() {\n\tframework.RegisterAction(print.New())",
    )
    (scheduler / "plugins/logprint").mkdir()
    (scheduler / "plugins/logprint/logprint.go").write_text(SEED_LOGPRINT)
    _edit(
        scheduler / "plugins/factory.go",
        "import (",
        'import (\n\t"volcano.sh/volcano/pkg/scheduler/plugins/logprint"',
    )
    _edit(
        scheduler / "plugins/factory.go",
        "func init() {",
        "func init() {\n\tframework.RegisterPluginBuilder(logprint.PluginName, logprint.New)",
    )
    return tree


def test_the_seed_s_print_action_runs_from_its_fork(volcano: VolcanoEngine, tmp_path: Path) -> None:
    """The fork registers print and logprint itself: the program's own copies of the
    seed's code stand aside, and the lines come from the fork's files."""
    from vspec.engines import EngineChoice, get_engine
    from vspec.harness.loader import load_file

    tree = _seed_fork(tmp_path)
    spec_file = tmp_path / "seed.yaml"
    spec_file.write_text(SEED_SPEC)
    [spec] = load_file(spec_file).specs
    engine = get_engine(choice=EngineChoice("volcano", None, tree))
    assert isinstance(engine, VolcanoEngine)
    try:
        result = engine.simulate(spec.scheduler, spec.cluster, verbosity=1)
    finally:
        engine.close()
    pending = [
        line
        for line in result.logs
        if line.text == "Job default/waits is pending, try to schedule it on node %!s(MISSING)"
    ]
    assert [line.source.split(":")[0] for line in pending] == ["logprint.go"]


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
