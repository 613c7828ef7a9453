"""``vspec init [DIR] [--scheduler FILE]``: a first project that passes at once.

A new user's first hour goes to learning the spec format, not to setting up a project;
``init`` writes the project files and one commented spec of the user's own scheduler
configuration (else Volcano's default one). The spec's ``expect`` is what that
configuration does today, found by running the spec once, so the project passes before
it is edited and every later edit is a deliberate change of expectation.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vspec import __version__
from vspec.cli.plugin_dirs import load_plugins, plugins_dir_option
from vspec.cli.status import EXIT_OK, EXIT_USAGE
from vspec.errors import SpecError, VspecError

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]

SPEC_FILE = Path("specs") / "first.yaml"
JOB = "default/hello"

_DEFAULT_CONF = """\
scheduler:
  # Volcano v1.11.0's default configuration (what vc-scheduler runs without a
  # ConfigMap). Give your own: `scheduler: path/to/volcano-scheduler-configmap.yaml`
  # (a ConfigMap manifest or a plain volcano-scheduler.conf), or run
  # `vspec init --scheduler FILE` in a new directory.
  actions: "enqueue, allocate, backfill"
  tiers:
  - plugins:
    - name: priority
    - name: gang
    - name: conformance
  - plugins:
    - name: overcommit
    - name: drf
    - name: predicates
    - name: proportion
    - name: nodeorder
"""

_FILE_CONF = """\
# Your scheduler configuration, copied here by `vspec init` (a ConfigMap manifest or a
# plain volcano-scheduler.conf; a path is relative to this file).
scheduler: ../{name}
"""

_SPEC = """\
# Your first vspec spec: a scheduler configuration, a cluster, and what the scheduler
# must do with it. vspec runs Volcano v1.11.0's scheduler on the cluster (one session,
# unless `cycles: N` asks for more) and checks `expect`, reporting every mismatch at once.
#
#   vspec run specs                  run every spec (so do `pytest` and `tox`)
#   vspec explain {spec}   why each pod ended where it did
#   vspec validate specs             check the files without running them
#   vspec schema > spec.schema.json  the JSON Schema, for your editor
#
# Each key is described in vspec's docs/spec-format.md.
name: a two-pod gang is placed
{conf}cluster:
  # Two empty nodes; `allocatable` is what the kubelet reports.
  nodes:
  - {{name: n1, allocatable: {{cpu: 4, memory: 8Gi}}}}
  - {{name: n2, allocatable: {{cpu: 4, memory: 8Gi}}}}
  # One job in the compact `jobs` form: a PodGroup (a gang of `minAvailable` pods)
  # and its pods, named <job>-<task>-<index>, there from the first session. A Volcano
  # Job manifest (batch.volcano.sh/v1alpha1) may be pasted here instead: its pods are
  # created by the job controller once its PodGroup leaves Pending, so give `cycles: 2`
  # to see them placed.
  jobs:
  - name: hello
    namespace: default
    queue: default
    minAvailable: 2
    tasks:
    - {{name: worker, replicas: 2, requests: {{cpu: 1, memory: 1Gi}}}}
"""

_EXPECT = """\
expect:
  # What this configuration does with the cluster above, recorded by `vspec init`.
  # Change the cluster or the expectations to state the policy you want kept.
"""

_PYPROJECT = """\
# A vspec project: policy tests for a Volcano scheduler configuration.
# `vspec run specs`, `pytest` and `tox` run the specs under specs/.

[tool.vspec]
# The cluster as a deployed Volcano v1.11.0 sees it (a `default` and a `root` queue,
# the admission webhooks); "bare" hands the scheduler only the declared objects.
cluster-mode = "deployed"
{plugins}
[tool.pytest.ini_options]
testpaths = ["specs"]
"""

_PLUGINS_HINT = """\
# Your own plugins and actions, written in Python (vspec's docs/writing-a-plugin.md):
# plugins-dir = "plugins"
"""

_TOX = """\
[tox]
env_list = specs
min_version = 4.0

[testenv:specs]
description = the policy specs, by `vspec run` and by pytest
skip_install = true
# vspec as this project was made with it; another source: VSPEC="vspec @ URL" tox
deps = {{env:VSPEC:{requirement}}}
commands =
    vspec run specs
    pytest {{posargs}}
"""

_GITIGNORE = """\
# vspec's cache (fuzzing's example database, findings) and the tools' caches
.vspec/
fuzz-findings/
.hypothesis/
.pytest_cache/
.tox/
__pycache__/
"""


def add_cli(commands: Commands) -> None:
    init_parser = commands.add_parser(
        "init", help="start a project: pyproject.toml, tox.ini and a first spec that passes"
    )
    init_parser.add_argument(
        "directory", nargs="?", type=Path, default=Path("."), metavar="DIR", help="default: ."
    )
    init_parser.add_argument(
        "--scheduler",
        type=Path,
        metavar="FILE",
        help="your volcano-scheduler-configmap (a ConfigMap manifest or a plain "
        "volcano-scheduler.conf), copied into the project; default: Volcano's default conf",
    )
    plugins_dir_option(init_parser)
    init_parser.set_defaults(handler=_init)


def _init(args: argparse.Namespace) -> int:
    if not load_plugins(args):
        return EXIT_USAGE
    try:
        written = init(args.directory, args.scheduler, args.plugins_dirs)
    except VspecError as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for name in written.files:
        print(f"wrote {written.directory / name}")
    cd = "" if written.directory == Path(".") else f"cd {written.directory} && "
    print(f"next: {cd}vspec run specs  (then edit {SPEC_FILE})")
    return EXIT_OK


@dataclass(frozen=True)
class Written:
    """The files ``init`` wrote, relative to the project directory."""

    directory: Path
    files: list[Path]


def init(directory: Path, scheduler: Path | None, plugins_dirs: list[Path]) -> Written:
    """Write the project into ``directory`` (made if missing); a :class:`VspecError`,
    before anything is written, when a file it would write exists or the configuration
    cannot be read."""
    files = {
        Path("pyproject.toml"): _PYPROJECT.format(plugins=_plugins(directory, plugins_dirs)),
        Path("tox.ini"): _TOX.format(requirement=_requirement()),
        Path(".gitignore"): _GITIGNORE,
    }
    conf = _DEFAULT_CONF
    if scheduler is not None:
        _check_conf(scheduler)
        files[Path(scheduler.name)] = scheduler.read_text(encoding="utf-8")
        conf = _FILE_CONF.format(name=scheduler.name)
    present = [str(directory / f) for f in (*files, SPEC_FILE) if (directory / f).exists()]
    if present:
        raise VspecError(f"not overwriting {', '.join(present)}: init a new directory")
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    spec_path = directory / SPEC_FILE
    spec_path.parent.mkdir(exist_ok=True)
    text = _SPEC.format(conf=conf, spec=SPEC_FILE.as_posix())
    spec_path.write_text(text, encoding="utf-8")
    spec_path.write_text(text + _recorded(spec_path), encoding="utf-8")
    return Written(directory, [*files, SPEC_FILE])


def _plugins(directory: Path, plugins_dirs: list[Path]) -> str:
    if not plugins_dirs:
        return _PLUGINS_HINT
    entries = ", ".join(
        f'"{Path(os.path.relpath(d.resolve(), directory.resolve())).as_posix()}"'
        for d in plugins_dirs
    )
    return (
        "# Your own plugins and actions (vspec's docs/writing-a-plugin.md).\n"
        f"plugins-dir = [{entries}]\n"
    )


def _requirement() -> str:
    """Where vspec came from, for tox to install it from the same place: the directory or
    URL of a direct install, else this version. (The name ``vspec`` on PyPI is another
    project, so a bare name would install the wrong package.)"""
    import json
    from importlib import metadata

    try:
        direct = metadata.distribution("vspec").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        direct = None
    url = json.loads(direct).get("url") if direct else None
    return f"vspec @ {url}" if url else f"vspec=={__version__}"


def _check_conf(path: Path) -> None:
    from vspec.framework.registry import action_names
    from vspec.framework.scheduler import check_conf
    from vspec.harness.loader import load_scheduler_conf

    if not path.is_file():
        raise VspecError(f"--scheduler {path}: no such file")
    check_conf(load_scheduler_conf(path, known_actions=action_names()))


def _recorded(spec_path: Path) -> str:
    """The ``expect`` entries of what the spec's run did: its binds and the job's phase."""
    from vspec.engines import get_engine
    from vspec.harness.loader import load_file
    from vspec.harness.runner import simulate_spec

    loaded = load_file(spec_path, check_names=True)
    if loaded.errors:
        raise loaded.errors[0]
    if not loaded.specs:
        raise SpecError(f"{spec_path}: no spec was written")
    spec = loaded.specs[0]
    result = simulate_spec(spec, get_engine(), spec.seed)
    binds = ", ".join(f"{task}: {node}" for task, node in sorted(result.bind_map().items()))
    group = result.pod_groups.get(JOB)
    phase = group.phase if group is not None else "Pending"
    lines = [_EXPECT + f"  binds: {{{binds}}}" + ("" if binds else "   # nothing was bound")]
    lines += ["  podGroups:", f"    {JOB}: {{phase: {phase}}}"]
    return "\n".join(lines) + "\n"
