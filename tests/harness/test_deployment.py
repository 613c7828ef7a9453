"""Cluster modes: what ``deployed`` adds and refuses (vspec.harness.deployment), ``bare`` as
Volcano's unit tests, and the mode chosen per spec or per project from the spec's own
pyproject, whatever the working directory; Volcano Job manifests (vspec.harness.vcjob)
and manifest files of mixed kinds (vspec.harness.kinds)."""

from __future__ import annotations

import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from vspec.cli import main
from vspec.engines import get_engine
from vspec.errors import each_error
from vspec.harness.loader import load_file
from vspec.harness.runner import execute
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
    loaded = load_file(write(tmp_path / "s.yaml", text))
    return [str(e) for error in loaded.errors for e in each_error(error)]


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
            'requestBody.metadata.annotations: Invalid value: "1/0": 0 in the 1/0 must be '
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
    # a queue that does not exist: reported where the pod group names it
    assert errors(tmp_path, text.replace("POD_GROUP", "pg")) == [
        f"{tmp_path / 's.yaml'}:3:48: cluster.podGroups[0].queue: {deny}: failed :  unable to "
        'find job queue: queues.scheduling.volcano.sh "gone" not found; (pod ns/p; queues: '
        "default, root)"
    ]
    closed = text.replace("POD_GROUP", "pg").replace(
        "cluster:\n", "cluster:\n          queues: [{name: gone, state: Closed}]\n"
    )
    assert errors(tmp_path, closed) == [
        f"{tmp_path / 's.yaml'}:7:5: cluster.pods[1]: {deny}: failed :  can only submit job to "
        "queue with state `Open`, queue `gone` status is `Closed`;"
    ]


def test_a_pod_group_without_queue_gets_the_webhooks_queue(tmp_path: Path) -> None:
    text = """\
        name: x
        MODE
        scheduler:
          actions: enqueue
          tiers: [{plugins: [{name: gang}]}]
          options: {defaultQueue: fallback}
        cluster:
          queues: [{name: team}, {name: fallback}, {name: default}]
          objects:
          - apiVersion: v1
            kind: Namespace
            metadata: {name: ns, annotations: {scheduling.volcano.sh/queue-name: team}}
          podGroups: [{name: pg, namespace: ns}, {name: other}]
          jobs: [{name: j, namespace: ns, tasks: [{name: t}]}]
        """

    def queues_of(mode: str) -> list[str]:
        spec = load(tmp_path, text.replace("MODE", mode), f"{mode or 'deployed'}.yaml")
        return [pg.queue for pg in spec.cluster.pod_groups]

    # The PodGroup webhook reads the namespace's annotation, else writes "default"; a
    # job's group gets the job webhook's "default". Bare: the scheduler's --default-queue.
    # (Deployed with --default-queue=fallback, the scheduler creates fallback, not
    # default: a group written without a queue is then refused unless default exists.)
    assert queues_of("") == ["team", "default", "default"]
    assert queues_of("clusterMode: bare") == ["fallback", "fallback", "fallback"]


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
        f"got 'cloud' (used by spec 'x' at {tmp_path / 's.yaml'}:1)"
    ]


# -- Volcano Job manifests ------------------------------------------------------------------

JOB = """\
name: x
MODE
cluster:
  queues: [{name: research}]
  priorityClasses: [{name: high, value: 10}, {name: top, value: 20}]
  jobs:
  - apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata:
      name: tf
      namespace: ml
      annotations: {volcano.sh/preemptable: "false", other: kept-on-the-group}
      labels: {team: a}
    spec:
      queue: research
      priorityClassName: high
      tasks:
      - name: ps
        replicas: 1
        template:
          metadata: {annotations: {note: x}}
          spec:
            priorityClassName: top
            containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 1Gi}}}]
      - name: worker
        replicas: 3
        minAvailable: 1
        topologyPolicy: single-numa-node
        template:
          metadata: {labels: {role: w}}
          spec:
            nodeSelector: {zone: a}
            tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
            containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]
"""


def test_the_job_controllers_pod_group(tmp_path: Path) -> None:
    [pg] = load(tmp_path, JOB.replace("MODE", "")).cluster.pod_groups
    assert (pg.meta.key, pg.queue, pg.priority_class_name, pg.phase) == (
        "ml/tf",
        "research",
        "high",
        "",
    )
    # The webhook: job minAvailable = sum of the tasks' (ps 1 + worker 1).
    assert (pg.min_member, pg.min_task_member) == (2, {"ps": 1, "worker": 1})
    # calcPGMinResources: the first two pods by task priority: ps (class top), a worker.
    assert pg.min_resources == {"cpu": 3, "memory": 2**30, "pods": 2}
    assert pg.meta.annotations == {"volcano.sh/preemptable": "false", "other": "kept-on-the-group"}
    assert pg.meta.labels == {"team": "a"}


def test_the_job_controllers_pods_are_held_until_the_group_leaves_pending(tmp_path: Path) -> None:
    cluster = load(tmp_path, JOB.replace("MODE", "")).cluster
    assert cluster.pods == []
    ps, *workers = cluster.held_pods
    assert [p.meta.key for p in cluster.held_pods] == [
        "ml/tf-ps-0",
        "ml/tf-worker-0",
        "ml/tf-worker-1",
        "ml/tf-worker-2",
    ]
    assert (ps.scheduler_name, ps.priority_class_name, ps.priority) == ("volcano", "top", 20)
    w = workers[1]
    assert (w.priority_class_name, w.priority, w.node_selector) == ("high", 10, {"zone": "a"})
    assert [t.key for t in w.tolerations] == ["k"]
    assert w.containers[0].requests == {"cpu": Fraction(2)}
    assert w.meta.labels == {
        "role": "w",
        "volcano.sh/task-index": "1",
        "volcano.sh/job-name": "tf",
        "volcano.sh/task-spec": "worker",
        "volcano.sh/job-namespace": "ml",
        "volcano.sh/queue-name": "research",
    }
    assert w.meta.annotations == {
        "volcano.sh/task-index": "1",
        "volcano.sh/task-spec": "worker",
        "scheduling.k8s.io/group-name": "tf",
        "volcano.sh/job-name": "tf",
        "volcano.sh/queue-name": "research",
        "volcano.sh/job-version": "0",
        "volcano.sh/template-uid": "tf-worker",
        "volcano.sh/job-retry-count": "0",
        "volcano.sh/numa-topology-policy": "single-numa-node",
        "volcano.sh/preemptable": "false",
    }
    assert ps.meta.annotations["note"] == "x"


def test_a_fresh_job_binds_in_its_second_cycle(tmp_path: Path) -> None:
    text = JOB.replace("MODE", "cycles: CYCLES").replace(
        "  queues: [{name: research}]\n",
        "  queues: [{name: research}]\n  nodes: [{name: n1, allocatable: {cpu: 16, memory: 16Gi}, "
        "labels: {zone: a}}]\n",
    )
    text += "expect:\n  bindCount: BINDS\n  podGroups: {ml/tf: {phase: PHASE}}\n"
    for cycles, binds, phase in (("1", "0", "Inqueue"), ("2", "4", "Running")):
        spec = text.replace("CYCLES", cycles).replace("BINDS", binds).replace("PHASE", phase)
        outcome = execute(load(tmp_path, spec, f"c{cycles}.yaml"), engine=get_engine())
        assert outcome.messages == []


def test_bare_mode_converts_the_job_as_written(tmp_path: Path) -> None:
    cluster = load(tmp_path, JOB.replace("MODE", "clusterMode: bare")).cluster
    [pg] = cluster.pod_groups
    assert (pg.min_member, pg.min_task_member) == (0, {"ps": 1, "worker": 1})
    assert cluster.held_pods[0].scheduler_name == ""


def test_a_dumped_job_adds_only_what_is_missing(tmp_path: Path) -> None:
    """kubectl output holds the Job, its PodGroup (named <job>-<uid>) and pods."""
    text = """\
        name: x
        cluster:
          podGroups:
          - apiVersion: scheduling.volcano.sh/v1beta1
            kind: PodGroup
            metadata: {name: j-u1, namespace: ns}
            spec: {minMember: 1, queue: default}
            status: {phase: Running}
          pods:
          - {name: j-t-0, namespace: ns, podGroup: j-u1, nodeName: n, phase: Running}
          jobs:
          - apiVersion: batch.volcano.sh/v1alpha1
            kind: Job
            metadata: {name: j, namespace: ns, uid: u1}
            spec:
              minAvailable: 2
              tasks: [{name: t, replicas: 2, template: {spec: {containers: [{name: c, image: i}]}}}]
        """
    cluster = load(tmp_path, text).cluster
    [pg] = cluster.pod_groups
    assert (pg.meta.name, pg.min_member, pg.phase) == ("j-u1", 2, "Running")
    # The group is out of Pending: the missing pod is created at once.
    assert [p.meta.key for p in cluster.pods] == ["ns/j-t-0", "ns/j-t-1"]
    assert cluster.held_pods == []


def test_job_webhook_refusals(tmp_path: Path) -> None:
    deny = 'admission webhook "validatejob.volcano.sh" denied the request'
    where = f"{tmp_path / 's.yaml'}:7:5: cluster.jobs[0]"
    over = JOB.replace("MODE", "").replace(
        "replicas: 3\n        minAvailable: 1", "replicas: 3\n        minAvailable: 4"
    )
    assert errors(tmp_path, over) == [  # the job's default (1 + 4) exceeds 4 replicas too
        f"{where}: {deny}: 'minAvailable' is greater than 'replicas' in task: worker, job: tf; "
        "job 'minAvailable' should not be greater than total replicas in tasks;"
    ]
    total = JOB.replace("MODE", "").replace(
        "      queue: research\n", "      queue: research\n      minAvailable: 9\n"
    )
    assert errors(tmp_path, total) == [
        f"{where}: {deny}: job 'minAvailable' should not be greater than total replicas in tasks;"
    ]
    parent = JOB.replace("MODE", "").replace(
        "[{name: research}]", "[{name: research}, {name: sub, parent: research}]"
    )
    assert errors(tmp_path, parent) == [
        f"{where}: {deny}: can only submit job to leaf queue, queue `research` has 1 child queues;"
    ]
    root = JOB.replace("MODE", "").replace(
        "queue: research\n      priority", "queue: root\n      priority"
    )
    assert errors(tmp_path, root) == [f"{where}: {deny}: can not submit job to root queue;"]
    assert not errors(tmp_path, root.replace("name: x\n", "name: x\nclusterMode: bare\n"))


# -- manifest files of mixed kinds ------------------------------------------------------------


def test_an_included_list_of_mixed_kinds(tmp_path: Path) -> None:
    write(
        tmp_path / "dump.yaml",
        """\
        apiVersion: v1
        kind: List
        metadata: {resourceVersion: ""}
        items:
        - apiVersion: v1
          kind: Node
          metadata: {name: n1, uid: x, resourceVersion: "1", managedFields: [{manager: k}]}
          status: {allocatable: {cpu: "2", pods: "10"}}
        - apiVersion: scheduling.volcano.sh/v1beta1
          kind: Queue
          metadata: {name: q}
          spec: {weight: 2}
          status: {state: Open, allocated: {cpu: "0"}}
        - apiVersion: apps/v1
          kind: Deployment
          metadata: {name: web, namespace: d}
          spec: {replicas: 1}
        - apiVersion: v1
          kind: ResourceQuota
          metadata: {name: rq, namespace: d}
          spec: {hard: {pods: "3"}}
        """,
    )
    spec = load(tmp_path, "name: x\ncluster: {include: dump.yaml}\n")
    cluster = spec.cluster
    assert [n.meta.name for n in cluster.nodes] == ["n1"]
    assert [q.meta.name for q in cluster.queues] == ["root", "default", "q"]
    assert [o.kind for o in cluster.objects] == ["ResourceQuota"]
    assert spec.warnings == [
        f"{tmp_path / 'dump.yaml'}:14:3: items[2]: ignored: Deployment d/web (apps/v1): "
        "Volcano's scheduler does not read Deployment; its controller is not modelled: "
        "declare the pods it would create"
    ]


def test_kinds_vspec_does_not_take_are_located_errors(tmp_path: Path) -> None:
    objects = (
        "name: x\ncluster:\n  objects:\n  - {apiVersion: API, kind: KIND, metadata: {name: p}}\n"
    )
    old = objects.replace("API", "scheduling.volcano.sh/v1alpha1").replace("KIND", "PodGroup")
    assert errors(tmp_path, old) == [
        f"{tmp_path / 's.yaml'}:4:5: cluster.objects[0]: PodGroup scheduling.volcano.sh/v1alpha1 "
        "is not an apiVersion vspec takes; write scheduling.volcano.sh/v1beta1"
    ]
    pvc = objects.replace("API", "v1").replace("KIND", "PersistentVolumeClaim")
    assert errors(tmp_path, pvc) == [
        f"{tmp_path / 's.yaml'}:4:5: cluster.objects[0]: PersistentVolumeClaim (v1) is read by "
        "Volcano's scheduler (volume binding) but not modelled by vspec; leave it out"
    ]
    typed = "name: x\ncluster:\n  nodes:\n  - {apiVersion: v2, kind: Node, metadata: {name: n}}\n"
    assert errors(tmp_path, typed) == [
        f"{tmp_path / 's.yaml'}:4:5: cluster.nodes[0]: Node v2 is not an apiVersion vspec "
        "takes; write v1"
    ]


def test_the_engine_setting_is_checked_and_honoured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = write(tmp_path / "pyproject.toml", '[tool.vspec]\nengine = "kube"\n')
    assert errors(tmp_path, "name: x\n") == [
        f"{pyproject}: tool.vspec.engine: engine must be one of python, volcano, got 'kube' "
        f"(used by spec 'x' at {tmp_path / 's.yaml'}:1)"
    ]
    write(pyproject, '[tool.vspec]\nengine = "python"\n')
    spec = write(tmp_path / "s.yaml", "name: x\nscheduler: {actions: enqueue}\n")
    assert main(["run", str(spec)]) == 0

    class Other:
        name = "other"

    outcome = execute(load_file(spec).specs[0], engine=Other())  # type: ignore[arg-type]
    assert outcome.invalid and outcome.messages == [
        f"{pyproject}: tool.vspec.engine: the project's specs are for engine 'python'; "
        "this run uses 'other'"
    ]
