"""`vspec validate` reports everything wrong with a spec in one pass: schema errors and
the conf's own (an unknown plugin) together."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from vspec.cli import main

THREE_TYPOS = """
name: three typos
scheduler:
  actions: "enqueue, allocate"
  tiers:
  - plugins: [{name: gang}, {name: proportoin}]
cluster:
  nodez: [{name: n1}]
  nodes: [{name: n1, allocatable: {cpu: 2}}]
  pods: [{name: p1, podGroup: pg1, requests: {cpu: 1}}]
  podGroups: [{name: pg1, minMember: 1}]
expect:
  bindz: {default/p1: n1}
"""


def test_three_typos_are_reported_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "typos.yaml"
    path.write_text(textwrap.dedent(THREE_TYPOS).lstrip())
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().out
    assert f"{path}:7:3: cluster.nodez: unknown key 'nodez'" in err
    assert f"{path}:12:3: expect.bindz: unknown key 'bindz'" in err
    assert f"{path}:5:29: scheduler.tiers[0].plugins[1]: unknown plugin 'proportoin'" in err


def test_a_conf_the_schema_already_faults_is_not_read_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "typos.yaml"
    text = textwrap.dedent(THREE_TYPOS).lstrip().replace("{name: gang}", "{name: gang, x: 1}")
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().out
    assert "unknown key 'x'" in err and "unknown key 'nodez'" in err
    assert "proportoin" not in err  # the conf is not read while its own keys are wrong
