"""Every module imports on its own (no hidden import-order dependency, no cycle that only
a lucky order hides), and the front-ends keep their lazy-import promise: starting the CLI
or loading the pytest plugin imports no engine, harness, YAML or Hypothesis code.

Each module is imported in a child forked from an interpreter that has imported nothing
of vspec, which costs a fork, not a fresh interpreter, per module.
"""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import vspec

PACKAGE = Path(vspec.__file__).parent
HEAVY = ("vspec.framework", "vspec.harness", "vspec.plugins", "vspec.actions", "yaml", "hypothesis")


def all_modules() -> list[str]:
    found = ["vspec"]
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="vspec."):
        if info.name != "vspec.__main__":  # runs the CLI when imported, by design
            found.append(info.name)
    return sorted(found)


CHILD = textwrap.dedent(
    """
    import importlib, os, sys
    modules, lazy = sys.argv[1].split(","), set(sys.argv[2].split(","))
    heavy = tuple(sys.argv[3].split(","))
    if not lazy - {""}:
        # Third-party libraries first, once: each child then pays only for vspec's code.
        import hypothesis, jsonschema, pytest, yaml  # noqa: F401
    failed = []
    for name in modules:
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                importlib.import_module(name)
                if name in lazy:
                    loaded = sorted(m for m in sys.modules if m.startswith(heavy))
                    if loaded:
                        print(f"{name} imports {loaded[0]} at start", flush=True)
                        code = 2
            except BaseException as exc:
                print(f"{name}: {type(exc).__name__}: {exc}", flush=True)
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        if status:
            failed.append(name)
    sys.exit(1 if failed else 0)
    """
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a child per module (POSIX only)")
def test_every_module_imports_alone_and_the_front_ends_import_lazily() -> None:
    modules = all_modules()
    assert "vspec.framework.session" in modules and "vspec.harness.runner" in modules
    lazy = ["vspec", "vspec.cli", "vspec.cli.pytest_plugin"]
    for names, lazy_ones in ((modules, []), (lazy, lazy)):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, ",".join(names), ",".join(lazy_ones), ",".join(HEAVY)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr


# What a run of a plain spec (no probes, no Volcano Job, no error, outside any project)
# never needs: each was a millisecond or more of every `vspec run`'s start-up.
NOT_FOR_A_PLAIN_SPEC = (
    "vspec.cli.fuzz",
    "vspec.cli.compare",
    "vspec.model.probes",
    "vspec.harness.vcjob",
    "vspec.gofmt",
    "jsonschema",
    "tomllib",
    "difflib",
    "traceback",
)
RUN_AND_LIST = textwrap.dedent(
    """
    import sys
    from vspec.cli import main
    code = main(["run", sys.argv[1]])
    print(code, ",".join(m for m in sys.argv[2].split(",") if m in sys.modules))
    """
)


def test_a_plain_spec_run_imports_only_what_it_uses(tmp_path: Path) -> None:
    spec = tmp_path / "plain.yaml"
    spec.write_text((PACKAGE.parent / "specs/priority/high-priority-job-first.yaml").read_text())
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST, str(spec), ",".join(NOT_FOR_A_PLAIN_SPEC)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.stdout.splitlines()[-1] == "0 ", done.stdout + done.stderr
