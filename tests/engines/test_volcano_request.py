"""What the real engine is sent: the model written back as Kubernetes objects and as
vc-scheduler's conf, and how the build finds its Volcano. None of these needs Go."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from vspec.engines import EngineChoice, get_engine
from vspec.engines.volcano import VolcanoEngine, kube
from vspec.engines.volcano.build import (
    DEFAULT_VERSION,
    EngineBuildError,
    Target,
    _replace_block,
    build_key,
    find_go,
)
from vspec.engines.volcano.conf import conf_text
from vspec.harness.loader import load_file
from vspec.harness.settings import ProjectSettings

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Fraction(2), "2"),
        (Fraction(1, 2), "500m"),
        (Fraction(3, 2) * 2**30, "1610612736"),
        (Fraction(1, 10**6), "1000n"),
        (Fraction(1, 3), "333333334n"),  # finer than a nano: rounded up, as the API server does
    ],
)
def test_a_quantity_is_written_exactly_in_whole_units_millis_or_nanos(
    value: Fraction, text: str
) -> None:
    assert kube.quantity(value) == text


def test_the_seed_cluster_is_sent_as_the_objects_volcano_s_cache_takes() -> None:
    spec = load_file(ROOT / "specs/seed/print-enqueue-allocate-backfill.yaml").specs[0]
    sent = kube.cluster(spec.cluster, spec.scheduler.options.scheduler_names)
    json.dumps(sent)  # the request is JSON
    pods = {p["metadata"]["name"]: p for p in sent["pods"]}
    pod = pods["job1-worker-0"]
    assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "job1"
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "1",
        "memory": "1073741824",
    }
    assert pod["status"] == {"phase": "Pending"}
    groups = {pg["metadata"]["name"]: pg for pg in sent["podGroups"]}
    assert groups["job1"]["kind"] == "PodGroup"
    [job1] = [pg for pg in spec.cluster.pod_groups if pg.meta.name == "job1"]
    assert groups["job1"]["spec"]["minMember"] == job1.min_member == 2
    assert [q["metadata"]["name"] for q in sent["queues"]] == [
        q.meta.name for q in spec.cluster.queues
    ]
    assert sent["nodes"][0]["status"]["allocatable"]["pods"] == "110"


OTHER_SCHEDULER = """
name: pods of another scheduler
scheduler:
  actions: "allocate"
  tiers: [{plugins: [{name: predicates}]}]
  options: {schedulerNames: [volcano]}
cluster:
  nodes: [{name: n1, allocatable: {cpu: 4, memory: 4Gi}}]
  pods:
  - {name: ours, requests: {cpu: 1}}
  - {name: theirs, schedulerName: default-scheduler, requests: {cpu: 1}}
  - {name: theirs-bound, schedulerName: default-scheduler, nodeName: n1, phase: Running,
     requests: {cpu: 1}}
"""


def test_a_pod_another_scheduler_places_is_sent_only_once_bound(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(OTHER_SCHEDULER)
    [spec] = load_file(path).specs
    sent = kube.cluster(spec.cluster, spec.scheduler.options.scheduler_names)["pods"]
    assert [p["metadata"]["name"] for p in sent] == ["ours", "theirs-bound"]


def test_every_flag_the_model_resolved_is_written_so_volcano_defaults_none() -> None:
    spec = load_file(ROOT / "specs/seed/print-enqueue-allocate-backfill.yaml").specs[0]
    raw = yaml.safe_load(conf_text(spec.scheduler))
    assert raw["actions"] == ", ".join(spec.scheduler.actions)
    gang = next(p for t in raw["tiers"] for p in t["plugins"] if p["name"] == "gang")
    assert gang["enableJobReady"] is True and gang["enablePreemptable"] is True
    # Volcano leaves these two unset (nil: disabled) unless the conf sets them.
    assert "enableHierarchy" not in gang and "EnabledClusterOrder" not in gang


def test_a_go_unit_test_conf_writes_its_unset_flags_as_false() -> None:
    conformance = Path(__file__).parents[3] / "shared" / "conformance"
    if not conformance.is_dir():
        pytest.skip("../shared/conformance is not beside this checkout")
    path = conformance / "actions" / "allocate" / "04-one-job-with-two-pods-on-one-node.yaml"
    [spec] = load_file(path).specs
    raw = yaml.safe_load(conf_text(spec.scheduler))
    flags = [
        v
        for t in raw["tiers"]
        for p in t["plugins"]
        for k, v in p.items()
        if k.startswith("enable")
    ]
    assert False in flags


def test_a_replace_block_keeps_modules_and_makes_local_paths_absolute(tmp_path: Path) -> None:
    gomod = """module volcano.sh/volcano
require k8s.io/api v0.30.2
replace (
\tk8s.io/api => k8s.io/api v0.30.2 // pinned
\tvolcano.sh/apis => ./staging/src/volcano.sh/apis
)
replace github.com/x/y => github.com/x/y v1.0.0
"""
    assert _replace_block(gomod, tmp_path) == [
        "\tk8s.io/api => k8s.io/api v0.30.2",
        f"\tvolcano.sh/apis => {tmp_path / 'staging/src/volcano.sh/apis'}",
        "\tgithub.com/x/y => github.com/x/y v1.0.0",
    ]


def test_a_build_is_keyed_by_the_volcano_it_links(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module volcano.sh/volcano\n")
    (tmp_path / "a.go").write_text("package a\n")
    by_version = build_key(Target("v1.10.0"), "go1.26")
    assert by_version != build_key(Target("v1.11.0"), "go1.26")
    assert by_version != build_key(Target("v1.10.0"), "go1.25")
    before = build_key(Target(source=tmp_path), "go1.26")
    (tmp_path / "a_test.go").write_text("package a\n")  # tests are not built in
    assert build_key(Target(source=tmp_path), "go1.26") == before
    (tmp_path / "a.go").write_text("package a\n\nvar X = 1\n")
    assert build_key(Target(source=tmp_path), "go1.26") != before


def test_without_go_the_error_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    with pytest.raises(EngineBuildError, match=r"needs Go >= 1\.22.*no `go` is on PATH"):
        find_go()


def test_the_command_line_choice_overrides_the_project_s(tmp_path: Path) -> None:
    project = ProjectSettings(engine="volcano", volcano_version="v1.10.0")
    assert EngineChoice.of(project) == EngineChoice("volcano", "v1.10.0", None)
    assert EngineChoice.of(project, "python").name == "python"
    chosen = EngineChoice.of(project, None, None, tmp_path)
    assert (chosen.volcano_version, chosen.volcano_source) == ("v1.10.0", tmp_path)
    engine = get_engine(choice=EngineChoice("volcano"))
    assert isinstance(engine, VolcanoEngine)
    assert engine.target == Target(DEFAULT_VERSION, None)


def test_prune_removes_only_the_builds_this_vspec_cannot_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vspec.engines.volcano.build import program_digest
    from vspec.engines.volcano.listing import prune

    monkeypatch.setenv("VSPEC_CACHE_DIR", str(tmp_path))
    builds = tmp_path / "volcano"
    for name, program in (("current", program_digest()), ("older", "0" * 64)):
        (builds / name).mkdir(parents=True)
        (builds / name / "build.json").write_text(
            json.dumps({"target": "v1.10.0", "go": "go1.26", "seconds": 1, "program": program})
        )
    (builds / "unfinished" / "src").mkdir(parents=True)  # a build that stopped half-way
    assert prune().startswith("removed 2 stale build(s)")
    assert [p.name for p in builds.iterdir()] == ["current"]
