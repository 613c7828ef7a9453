"""A fuzz space pins its conf in any form a spec takes: a ConfigMap manifest or a plain
conf file (relative to the space file), or a mapping; a bad one is a located error,
never a traceback or a silent run of no examples."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from vspec.cli import main
from vspec.errors import SpecError
from vspec.fuzz.runner import load_space, parse_space

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "schedulers"


def space_file(directory: Path, scheduler: str) -> Path:
    path = directory / "space.yaml"
    path.write_text(f"scheduler: {scheduler}\ncluster: {{maxNodes: 2}}\n")
    return path


def test_a_configmap_path_is_read_relative_to_the_space_file(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    shutil.copy(FIXTURES / "seed-configmap.yaml", tmp_path / "conf" / "cm.yaml")
    space = load_space(str(space_file(tmp_path, "conf/cm.yaml")))
    assert space.conf.fixed is not None
    assert space.conf.fixed["actions"] == "print, enqueue, allocate, backfill"
    assert space.conf.fixed["tiers"][0]["plugins"][3] == {"name": "logprint"}


def test_a_plain_conf_file_too(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "volcano-default.yaml", tmp_path / "default.yaml")
    space = load_space(str(space_file(tmp_path, "default.yaml")))
    assert space.conf.fixed is not None
    assert space.conf.fixed["actions"] == "enqueue, allocate, backfill"


def test_an_inline_conf_reads_as_volcano_reads_it_in_a_mix_part_too(tmp_path: Path) -> None:
    conf = (
        "{actions: allocate, tiers: [{plugins: [{name: predicates, "
        "arguments: {predicate.NodeAffinityEnable: n, predicate.PodAffinityEnable: 'n'}}]}]}"
    )
    path = tmp_path / "space.yaml"
    path.write_text(f"scheduler: {conf}\n")
    fixed = load_space(str(path)).conf.fixed
    assert fixed is not None
    arguments = fixed["tiers"][0]["plugins"][0]["arguments"]
    assert arguments == {"predicate.NodeAffinityEnable": False, "predicate.PodAffinityEnable": "n"}
    path.write_text(f"mix:\n- scheduler: {conf}\n")
    [part] = load_space(str(path)).mix
    assert part.conf.fixed is not None
    assert part.conf.fixed["tiers"][0]["plugins"][0]["arguments"] == arguments


def test_a_missing_file_or_a_bad_conf_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(
        SpecError, match=re.escape("space.yaml: scheduler: nope.yaml: no such file")
    ):
        load_space(str(space_file(tmp_path, "nope.yaml")))
    (tmp_path / "bad.yaml").write_text('actions: "enqueue, alocate"\ntiers: []\n')
    with pytest.raises(SpecError) as bad_file:
        load_space(str(space_file(tmp_path, "bad.yaml")))
    assert "bad.yaml:1" in str(bad_file.value) and "'alocate'" in str(bad_file.value)
    with pytest.raises(SpecError, match=re.escape("space.yaml: scheduler: unknown plugin 'gnag'")):
        parse_space(
            {"scheduler": {"actions": "allocate", "tiers": [{"plugins": [{"name": "gnag"}]}]}},
            "space.yaml",
        )
    with pytest.raises(SpecError, match="a conf mapping or the path of a conf file"):
        parse_space({"scheduler": 3}, "space.yaml")


def test_fuzz_runs_on_a_pinned_configmap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(FIXTURES / "seed-configmap.yaml", tmp_path / "volcano-scheduler-configmap.yaml")
    space = space_file(tmp_path, "volcano-scheduler-configmap.yaml")
    argv = ["fuzz", "--space", str(space), "--examples", "5", "--seed", "1"]
    code = main([*argv, "--out", str(tmp_path / "out"), "--database", str(tmp_path / "db")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Traceback" not in err
    assert re.search(r"\b[1-9]\d* examples", out)
    assert main(["fuzz", "--space", str(space_file(tmp_path, "nope.yaml"))]) == 2
