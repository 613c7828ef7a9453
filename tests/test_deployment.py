"""Cluster modes: what ``deployed`` adds and refuses (vspec.harness.deployment), ``bare`` as
Volcano's unit tests, and the mode chosen per spec or per project from the spec's own
pyproject, whatever the working directory."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from vspec.cli import main
from vspec.harness.loader import load_file
from vspec.model.spec import Spec


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(tmp_path: Path, text: str, name: str = "s.yaml") -> Spec:
    loaded = load_file(write(tmp_path / name, text))
    assert not loaded.errors, [str(e) for e in loaded.errors]
    [spec] = loaded.specs
    return spec


def errors(tmp_path: Path, text: str) -> list[str]:
    return [str(e) for e in load_file(write(tmp_path / "s.yaml", text)).errors]


def queues(spec: Spec) -> list[tuple[str, int, bool | None, str]]:
    return [(q.meta.name, q.weight, q.reclaimable, q.parent) for q in spec.cluster.queues]


def test_deployed_adds_root_and_default_and_parents_every_queue(tmp_path: Path) -> None:
    spec = load(tmp_path, "name: x\ncluster: {queues: [{name: q1, weight: 3}]}\n")
    assert spec.cluster_mode == "deployed"
    assert queues(spec) == [
        ("root", 1, False, ""),
        ("default", 1, True, "root"),
        ("q1", 3, True, "root"),
    ]


def test_declared_root_and_default_are_kept_as_written(tmp_path: Path) -> None:
    text = """\
        name: x
        cluster:
          queues:
          - {name: root, weight: 4, reclaimable: true}
          - {name: default, weight: 2, reclaimable: false}
          - {name: child, parent: default}
        """
    assert queues(load(tmp_path, text)) == [
        ("root", 4, True, ""),
        ("default", 2, False, "root"),
        ("child", 1, True, "default"),
    ]


def test_bare_is_the_unit_tests_cache(tmp_path: Path) -> None:
    spec = load(tmp_path, "name: x\nclusterMode: bare\ncluster: {queues: [{name: q1}]}\n")
    assert queues(spec) == [("q1", 1, None, "")]
    assert queues(load(tmp_path, "name: x\nclusterMode: bare\n", "b.yaml")) == [
        ("default", 1, None, "")
    ]


def test_queue_webhook_defaults_weight_zero_and_prefixes_the_hierarchy(tmp_path: Path) -> None:
    text = """\
        name: x
        cluster:
          queues:
          - name: q1
            weight: 0
            annotations: {volcano.sh/hierarchy: a/b, volcano.sh/hierarchy-weights: 2/3}
        """
    [q1] = load(tmp_path, text).cluster.queues[2:]
    assert q1.weight == 1  # Go's zero value: the mutating webhook cannot tell it from unset
    assert q1.meta.annotations == {
        "volcano.sh/hierarchy": "root/a/b",
        "volcano.sh/hierarchy-weights": "1/2/3",
    }


@pytest.mark.parametrize(
    ("queue", "message"),
    [
        (
            "{name: q1, parent: nowhere}",
            'admission webhook "validatequeue.volcano.sh" denied the request: failed to get '
            'parent queue of queue q1: queue.scheduling.volcano.sh "nowhere" not found',
        ),
        (
            "{name: q1, annotations: {volcano.sh/hierarchy: root/a, "
            "volcano.sh/hierarchy-weights: '1/0'}}",
            'admission webhook "validatequeue.volcano.sh" denied the request: '
            "requestBody.metadata.annotations: Invalid value: '1/0': 0 in the 1/0 must be "
            "larger than 0",
        ),
    ],
)
def test_queue_webhook_refusals_are_located(tmp_path: Path, queue: str, message: str) -> None:
    text = f"name: x\ncluster:\n  queues:\n  - {queue}\n"
    assert errors(tmp_path, text) == [f"{tmp_path / 's.yaml'}:4:5: cluster.queues[0]: {message}"]
    assert not errors(tmp_path, text.replace("name: x", "name: x\nclusterMode: bare"))


def test_pod_webhook_refuses_a_pending_pod_of_a_missing_group_or_queue(tmp_path: Path) -> None:
    text = """\
        name: x
        cluster:
          podGroups: [{name: pg, namespace: ns, queue: gone}]
          pods:
          - {name: bound, namespace: ns, podGroup: other, nodeName: n1, phase: Running}
          - {name: p, namespace: ns, podGroup: POD_GROUP}
        """
    where = f"{tmp_path / 's.yaml'}:6:5: cluster.pods[1]"
    deny = 'admission webhook "validatepod.volcano.sh" denied the request'
    assert errors(tmp_path, text.replace("POD_GROUP", "typo")) == [
        f"{where}: {deny}: failed to get PodGroup for pod <ns/p>: "
        'podgroups.scheduling.volcano.sh "typo" not found'
    ]
    assert errors(tmp_path, text.replace("POD_GROUP", "pg")) == [
        f'{where}: {deny}: failed :  unable to find job queue: queues.scheduling.volcano.sh "gone"'
        " not found;"
    ]
    closed = text.replace("POD_GROUP", "pg").replace(
        "cluster:\n", "cluster:\n          queues: [{name: gone, state: Closed}]\n"
    )
    assert errors(tmp_path, closed) == [
        f"{tmp_path / 's.yaml'}:7:5: cluster.pods[1]: {deny}: failed :  can only submit job to "
        "queue with state `Open`, queue `gone` status is `Closed`;"
    ]


def test_a_pod_of_another_scheduler_is_not_checked(tmp_path: Path) -> None:
    text = "name: x\ncluster:\n  pods: [{name: p, podGroup: none, schedulerName: other}]\n"
    assert errors(tmp_path, text) == []


# -- where the mode comes from --------------------------------------------------------------


def test_project_setting_applies_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The conformance layout: a pyproject next to the specs says bare; the spec relies on
    it (no root queue: capacity's hierarchy gives every queue an empty allocation)."""
    project = tmp_path / "cases"
    write(project / "pyproject.toml", '[tool.vspec]\ncluster-mode = "bare"\n')
    spec = write(
        project / "deep" / "s.yaml",
        """\
        name: bare by project
        scheduler: {actions: "enqueue"}
        expect:
          podGroups: {default/pg: {phase: Pending}}
        cluster:
          podGroups: [{name: pg, queue: missing}]
        """,
    )
    assert load_file(spec).specs[0].cluster_mode == "bare"
    for where in (tmp_path, project / "deep", Path("/")):
        monkeypatch.chdir(where)
        assert main(["run", str(spec)]) == 0, capsys.readouterr().out
    # The spec's own key wins over its project.
    write(spec, spec.read_text().replace("name: bare", "clusterMode: deployed\nname: bare"))
    assert load_file(spec).specs[0].cluster_mode == "deployed"


def test_pytest_reads_the_spec_projects_mode(tmp_path: Path, pytester: pytest.Pytester) -> None:
    project = tmp_path / "p"
    write(project / "pyproject.toml", '[tool.vspec]\ncluster-mode = "bare"\n')
    write(
        project / "s.yaml",
        "name: only the declared queue\nscheduler: {actions: enqueue}\n"
        "cluster: {queues: [{name: q}], podGroups: [{name: pg, queue: q}]}\n"
        "expect: {podGroups: {default/pg: {sessionPhase: Inqueue}}}\n",
    )
    result = pytester.runpytest("-p", "no:cacheprovider", str(project))
    result.assert_outcomes(passed=1)


def test_bad_cluster_mode_setting_is_located(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", '[tool.vspec]\ncluster-mode = "cloud"\n')
    assert errors(tmp_path, "name: x\n") == [
        f"{pyproject}: tool.vspec.cluster-mode: cluster-mode must be one of deployed, bare, "
        "got 'cloud'"
    ]
