"""Errors that point at the mistake: where it is written, and what was meant."""

from __future__ import annotations

from pathlib import Path

from tests.harness.test_loader import load_errors, load_one, write


def test_an_inline_configmap_is_one_error_saying_how_to_give_it(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        """
        name: inline configmap
        scheduler:
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: volcano-scheduler-configmap}
          data:
            volcano-scheduler.conf: |
              actions: "enqueue, allocate"
        """,
    )
    assert len(errors) == 1
    assert ":3:3: scheduler: a ConfigMap manifest is not taken inline" in errors[0]
    assert "`scheduler: that-file.yaml`" in errors[0]


def test_a_key_at_the_wrong_level_says_where_it_belongs(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        """
        name: requests on the job
        cluster:
          nodes: [{name: n1}]
          jobs:
          - name: j
            requests: {cpu: 1}
            tasks: [{name: w}]
        """,
    )
    assert errors == [
        f"{tmp_path / 'spec.yaml'}:6:5: cluster.jobs[0].requests: unknown key 'requests' "
        "here: it belongs in each entry of 'tasks'"
    ]


def test_a_misspelled_queue_is_located_at_its_queue_key(tmp_path: Path) -> None:
    compact = """
        name: misspelled queue
        cluster:
          queues: [{name: research}]
          nodes: [{name: n1}]
          jobs:
          - name: j
            queue: reserch
            tasks: [{name: w}]
        """
    [error] = load_errors(tmp_path, compact)
    assert error.startswith(f"{tmp_path / 'spec.yaml'}:7:12: cluster.jobs[0].queue: ")
    assert error.endswith("(pod default/j-w-0; did you mean 'research'?)")
    volcano_job = """
        name: misspelled queue of a Volcano Job
        cluster:
          queues: [{name: research}]
          jobs:
          - apiVersion: batch.volcano.sh/v1alpha1
            kind: Job
            metadata: {name: j}
            spec:
              queue: reserch
              minAvailable: 1
              tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c}]}}}]
        """
    [error] = load_errors(tmp_path, volcano_job, "job.yaml")
    assert error.startswith(f"{tmp_path / 'job.yaml'}:9:14: cluster.jobs[0].spec.queue: ")
    assert error.endswith("(did you mean 'research'?)")


def test_an_integer_too_long_names_its_key(tmp_path: Path) -> None:
    [error] = load_errors(
        tmp_path,
        """
        name: long
        cluster:
          jobs:
          - name: j
            minAvailable: 123456789012345678901234567890123
            tasks: [{name: w}]
        """,
    )
    assert error.startswith(f"{tmp_path / 'spec.yaml'}:5:19: cluster.jobs[0].minAvailable: ")
    assert error.endswith("an integer of more than 30 digits")


def test_an_include_leaving_the_project_is_reported_at_the_include(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project, "pyproject.toml", "[tool.vspec]\n")
    write(tmp_path, "outside.yaml", "nodes: [{name: n9, allocatable: {cpu: lots}}]\n")
    text = """
        name: include leaves
        cluster:
          nodes: [{name: n1}]
          include: [../outside.yaml]
        """
    [error] = load_errors(project, text)
    assert error.startswith(f"{project / 'spec.yaml'}:4:13: cluster.include[0]: invalid, in ")
    assert "outside.yaml:1, a file outside the project of spec 'include leaves'" in error
    assert "lots" not in error


def test_a_node_only_pods_name_may_be_expected(tmp_path: Path) -> None:
    spec = load_one(
        tmp_path,
        """
        name: a pod still runs on a node that left
        cluster:
          nodes: [{name: n1}]
          pods: [{name: old, nodeName: gone, phase: Running}]
        expect:
          pods:
            default/old: {node: gone}
        """,
    )
    assert spec.expect.pods["default/old"].node == "gone"
