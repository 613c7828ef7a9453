"""Invariants and a user's plugin (issue 32, item 7): an invariant that restates Volcano's
built-in rules stands aside for a plugin of the user's whose verdicts it does not restate
(a custom predicate that refuses every node), whatever the plugin is named, and ``-v``
says which invariants stood aside for which code. No false alarm on an outcome Volcano
would produce; the built-in conf is still checked in full."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import tests.harness.test_plugin_dirs as plugin_dirs
from vspec.cli import main

pytestmark = pytest.mark.usefixtures("isolated_registry")

# A custom predicate that refuses n1 (the only node below): Volcano binds nothing.
REFUSE = plugin_dirs.AVOID_N1


SPEC = """\
name: {title}
{extra}scheduler:
  actions: "enqueue, allocate, backfill"
  tiers:
  - plugins: [{{name: priority}}, {{name: gang}}, {{name: conformance}}]
  - plugins: [{{name: drf}}, {{name: predicates}}, {{name: proportion}}, {{name: nodeorder}}{more}]
cluster:
  nodes:
  - {{name: n1, allocatable: {{cpu: 4, memory: 8Gi}}}}
  jobs:
  - {{name: j, tasks: [{{name: w, replicas: 2, requests: {{cpu: 1, memory: 1Gi}}}}]}}
expect:
  binds: {{}}
"""


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugin: str, spec: str) -> None:
    (tmp_path / "plugins").mkdir()
    source = REFUSE.replace('"avoid-n1"', f"{plugin!r}")
    (tmp_path / "plugins" / "refuse.py").write_text(textwrap.dedent(source))
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(spec)
    monkeypatch.chdir(tmp_path)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["run", "-v", *argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize(
    ("plugin", "extra", "more"),
    [
        ("predicates", "replaceBuiltins: [predicates]\n", ""),  # yours under a built-in's name
        ("freeze", "", ", {name: freeze}"),  # yours under a name of its own
    ],
)
def test_a_plugin_that_refuses_every_node_is_no_liveness_failure(
    plugin: str,
    extra: str,
    more: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _project(tmp_path, monkeypatch, plugin, SPEC.format(title="frozen", extra=extra, more=more))
    code, out = _run(capsys, "--plugins-dir", "plugins", "specs")
    assert "nothing was bound" not in out
    assert code == 0, out
    assert (
        f"invariants that stood aside for your code ({plugin}), whose verdicts they do "
        "not restate: liveness, allocate-order"
    ) in out


def test_the_built_in_conf_is_checked_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no code of the user's in the conf nothing stands aside (and the built-in
    predicates bind the job, so the spec's empty binds fail)."""
    _project(tmp_path, monkeypatch, "freeze", SPEC.format(title="fits", extra="", more=""))
    code, out = _run(capsys, "specs")
    assert code == 1
    assert "stood aside" not in out
    assert "unexpected bind default/j-w-0 -> n1" in out
