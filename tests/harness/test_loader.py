"""The spec loader: every key and default of spec-format.md, manifests, includes, errors."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path

import pytest

from vspec.errors import SpecError, each_error
from vspec.harness.loader import (
    InvalidFile,
    discover,
    load_cluster_file,
    load_file,
    load_scheduler_conf,
)
from vspec.harness.yamlload import parse_documents
from vspec.model.conf import DEFAULT_SCHEDULER_CONF, SchedulerOptions
from vspec.model.objects import DEFAULT_NOW, GROUP_NAME_ANNOTATION, TASK_SPEC_KEY, ZERO_TIME
from vspec.model.probes import JobProbe, OrderProbe, TaskProbe, VictimProbe, VictimTasksProbe
from vspec.model.spec import Spec

CONFORMANCE = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load_one(tmp_path: Path, text: str, name: str = "spec.yaml") -> Spec:
    loaded = load_file(write(tmp_path, name, text))
    assert not loaded.errors, "\n".join(str(e) for e in loaded.errors)
    assert len(loaded.specs) == 1
    return loaded.specs[0]


def load_errors(tmp_path: Path, text: str, name: str = "spec.yaml") -> list[str]:
    loaded = load_file(write(tmp_path, name, text))
    assert loaded.errors, "expected errors"
    return [str(e) for error in loaded.errors for e in each_error(error)]


Q = Fraction


# -- discovery and files -----------------------------------------------------------------


def test_discover_is_recursive_sorted_and_skips_hidden(tmp_path: Path) -> None:
    for name in ["b/z.yaml", "b/a.yml", "a.yaml", "c.txt", ".hidden/x.yaml", "b/.x.yaml"]:
        write(tmp_path, name, "name: x\n")
    found = discover([tmp_path])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a.yaml", "b/a.yml", "b/z.yaml"]


def test_discover_keeps_given_files_once_in_order(tmp_path: Path) -> None:
    one = write(tmp_path, "d/one.yaml", "name: x\n")
    two = write(tmp_path, "two.yaml", "name: x\n")
    assert discover([two, tmp_path / "d", one]) == [two, one]


def test_discover_refuses_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such file"):
        discover([tmp_path / "nope"])


def test_files_without_a_named_document_are_not_spec_files(tmp_path: Path) -> None:
    cluster = write(tmp_path, "cluster.yaml", "nodes: [{name: n1}]\n")
    manifest = write(tmp_path, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    empty = write(tmp_path, "empty.yaml", "")
    for path in (cluster, manifest, empty):
        loaded = load_file(path)
        assert not loaded.is_spec_file and not loaded.specs and not loaded.errors


def test_syntax_error_is_one_error_for_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "name: a\n---\nname: [b\n---\nname: c\n")
    loaded = load_file(path)
    assert loaded.is_spec_file and not loaded.specs
    assert len(loaded.errors) == 1
    assert loaded.errors[0].location is not None and loaded.errors[0].location.line == 4


def test_one_bad_document_does_not_stop_the_others(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "multi.yaml",
        """
        name: first
        ---
        name: second
        cycles: many
        ---
        name: third
        ---
        """,
    )
    loaded = load_file(path)
    assert [s.name for s in loaded.specs] == ["first", "third"]
    assert len(loaded.errors) == 1
    error = loaded.errors[0]
    assert error.location is not None
    assert (error.location.line, error.location.key) == (4, "cycles")


def test_spec_location_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "s.yaml", "# comment\nname: a\n---\nname: b\n")
    specs = load_file(path).specs
    assert [(s.location.file, s.location.line) for s in specs] == [(str(path), 2), (str(path), 4)]
    assert specs[1].nodeid == f"{path}::b"


# -- top-level keys --------------------------------------------------------------------


def test_top_level_keys(tmp_path: Path) -> None:
    spec = load_one(
        tmp_path,
        """
        name: all keys
        description: free text
        tags: [preempt, priority]
        skip: not today
        xfail: known bug
        seed: 7
        now: 2025-06-01T12:30:00+02:00
        cycles: 3
        verbosity: 5
        """,
    )
    assert spec.name == "all keys" and spec.description == "free text"
    assert spec.tags == ["preempt", "priority"]
    assert (spec.skip, spec.xfail) == ("not today", "known bug")
    assert (spec.seed, spec.cycles, spec.verbosity) == (7, 3, 5)
    assert spec.now == datetime(2025, 6, 1, 10, 30, tzinfo=UTC)


def test_top_level_defaults(tmp_path: Path) -> None:
    spec = load_one(tmp_path, "name: minimal\n")
    assert (spec.seed, spec.cycles, spec.verbosity, spec.now) == (0, 1, 3, DEFAULT_NOW)
    assert (spec.skip, spec.xfail, spec.description, spec.tags) == (None, None, "", [])
    assert spec.probes == []
    assert spec.expect.binds is None and spec.expect.locations == {}


# -- scheduler -------------------------------------------------------------------------


def test_scheduler_omitted_is_volcanos_default_conf(tmp_path: Path) -> None:
    conf = load_one(tmp_path, "name: x\n").scheduler
    assert conf.actions == ["enqueue", "allocate", "backfill"]
    names = [p["name"] for t in DEFAULT_SCHEDULER_CONF["tiers"] for p in t["plugins"]]
    assert conf.plugin_names() == names
    gang = conf.tiers[0].plugins[1]
    assert gang.enabled("job_ready") and not gang.enabled("hierarchy")


def test_scheduler_mapping_with_vspec_extensions(tmp_path: Path) -> None:
    conf = load_one(
        tmp_path,
        """
        name: x
        scheduler:
          actions: "enqueue,  allocate"
          tiers:
          - plugins:
            - name: gang
              enablePreemptable: true
              arguments: {a: 1}
          configurations:
          - name: allocate
            arguments: {predicateErrorCacheEnable: false}
          defaultPluginFlags: false
          options:
            minNodesToFind: 10
            minPercentageOfNodesToFind: 20
            percentageOfNodesToFind: 50
            schedulerNames: [volcano, other]
            defaultQueue: q0
        """,
    ).scheduler
    assert conf.actions == ["enqueue", "allocate"]
    gang = conf.tiers[0].plugins[0]
    assert gang.enabled("preemptable") and not gang.enabled("job_ready")
    assert gang.arguments == {"a": 1}
    assert conf.action_arguments("allocate") == {"predicateErrorCacheEnable": False}
    assert conf.options == SchedulerOptions(10, 20, 50, ("volcano", "other"), "q0")
    assert gang.location is not None and gang.location.line == 6


def test_scheduler_conf_file_plain_and_configmap(tmp_path: Path) -> None:
    write(tmp_path, "conf/plain.conf", 'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n')
    write(
        tmp_path,
        "conf/cm.yaml",
        """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
        data:
          volcano-scheduler.conf: |
            actions: "enqueue, reclaim"
            tiers:
            - plugins:
              - name: priority
              - name: drf
        """,
    )
    plain = load_one(tmp_path, "name: x\nscheduler: conf/plain.conf\n", "a.yaml").scheduler
    assert plain.actions == ["allocate"] and plain.plugin_names() == ["gang"]
    cm = load_one(tmp_path, "name: x\nscheduler: conf/cm.yaml\n", "b.yaml").scheduler
    assert cm.actions == ["enqueue", "reclaim"] and cm.plugin_names() == ["priority", "drf"]
    drf = cm.tiers[0].plugins[1]
    assert drf.location is not None
    assert (Path(drf.location.file).name, drf.location.line) == ("cm.yaml", 10)


def test_load_scheduler_conf_helpers(tmp_path: Path) -> None:
    conf = load_scheduler_conf({"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}]}]})
    assert conf.plugin_names() == ["gang"] and conf.tiers[0].plugins[0].enabled("job_ready")
    with pytest.raises(InvalidFile, match="unknown key 'tierz'"):
        load_scheduler_conf({"tierz": []})
    path = write(tmp_path, "c.conf", 'actions: "allocate, nope"\n')
    with pytest.raises(SpecError, match="failed to find Action") as raised:
        load_scheduler_conf(path, known_actions={"allocate"})
    assert raised.value.location is not None and raised.value.location.line == 1


def test_conf_errors_are_located(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        """
        name: x
        scheduler:
          actions: allocate
          tiers:
          - plugins:
            - name: drf
              enableHierarchy: true
            - name: proportion
        """,
    )
    assert errors == [
        f"{tmp_path / 'spec.yaml'}:5:5: scheduler.tiers[0]: "
        "proportion and drf with hierarchy enabled conflicts"
    ]


# -- cluster: compact forms and defaults -------------------------------------------------


def test_pod_defaults_mirror_volcanos_builders(tmp_path: Path) -> None:
    pod = load_one(tmp_path, "name: x\ncluster:\n  pods: [{name: p1}]\n").cluster.pods[0]
    assert (pod.meta.namespace, pod.meta.uid, pod.phase, pod.node_name) == (
        "default",
        "default-p1",
        "Pending",
        "",
    )
    assert pod.meta.creation_timestamp == ZERO_TIME and pod.meta.deletion_timestamp is None
    assert pod.priority is None and pod.group_name == "" and pod.job_id == ""
    assert len(pod.containers) == 1 and pod.containers[0].requests == {}
    assert pod.scheduler_name == ""  # unset: placed by vspec


def test_pod_keys(tmp_path: Path) -> None:
    cluster = load_one(
        tmp_path,
        """
        name: x
        cluster:
          pods:
          - name: p1
            namespace: c1
            podGroup: pg1
            phase: Running
            nodeName: n1
            requests: {cpu: 500m, memory: 1Gi, nvidia.com/gpu: 1}
            priority: 100
            preemptionPolicy: Never
            taskSpec: worker
            labels: {app: a}
            annotations: {note: n}
            nodeSelector: {nodeRole: worker}
            tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
            affinity:
              nodeAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions: [{key: zone, operator: In, values: [a]}]
            deletionTimestamp: 2025-01-01T00:00:00Z
            creationTimestamp: 2024-01-01T00:00:00Z
            schedulerName: other
            uid: custom
          - {name: p2, priorityClassName: high}
        """,
    ).cluster
    p1, p2 = cluster.pods
    assert p1.meta.key == "c1/p1" and p1.meta.uid == "custom" and p1.job_id == "c1/pg1"
    assert p1.meta.annotations == {"note": "n", GROUP_NAME_ANNOTATION: "pg1"}
    assert p1.meta.labels == {"app": "a", TASK_SPEC_KEY: "worker"}
    assert p1.containers[0].requests == {"cpu": Q(1, 2), "memory": Q(2**30), "nvidia.com/gpu": 1}
    assert (p1.phase, p1.node_name, p1.priority, p1.preemption_policy) == (
        "Running",
        "n1",
        100,
        "Never",
    )
    assert p1.node_selector == {"nodeRole": "worker"}
    assert p1.tolerations[0].operator == "Exists" and p1.tolerations[0].key == "k"
    assert p1.affinity is not None and p1.affinity.node_affinity is not None
    required = p1.affinity.node_affinity.required
    assert required is not None and required[0].match_expressions[0].values == ("a",)
    assert p1.meta.deletion_timestamp == datetime(2025, 1, 1, tzinfo=UTC)
    assert p1.meta.creation_timestamp == datetime(2024, 1, 1, tzinfo=UTC)
    assert p1.scheduler_name == "other"
    assert p2.priority is None and p2.priority_class_name == "high"  # undeclared: unresolved


def test_pod_priority_comes_from_a_declared_class(tmp_path: Path) -> None:
    pods = load_one(
        tmp_path,
        """
        name: x
        cluster:
          priorityClasses: [{name: high, value: 1000}]
          pods:
          - {name: p1, priorityClassName: high}
          - {name: p2, priorityClassName: high, priority: 5}
        """,
    ).cluster.pods
    assert [p.priority for p in pods] == [1000, 5]


def test_pod_shorthand_contradicting_annotation_is_an_error(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        """
        name: x
        cluster:
          pods:
          - name: p1
            podGroup: pg1
            annotations: {scheduling.k8s.io/group-name: pg2}
        """,
    )
    assert errors[0].endswith(
        "cluster.pods[0].podGroup: contradicts "
        "scheduling.k8s.io/group-name='pg2' given in the same entry"
    )


def test_node_defaults_and_keys(tmp_path: Path) -> None:
    nodes = load_one(
        tmp_path,
        """
        name: x
        cluster:
          nodes:
          - name: n1
            allocatable: {cpu: 2, memory: 4Gi}
          - name: n2
            allocatable: {cpu: 2, pods: 10}
            capacity: {cpu: 4, pods: 20}
            labels: {nodeRole: worker}
            annotations: {a: b}
            taints: [{key: k, value: v, effect: NoExecute}, {key: k2}]
            unschedulable: true
            usage:
              cpu: {5m: 30.5}
              memory: {5m: 42}
              time: 2025-01-01T00:00:00Z
          - name: n3
            capacity: {cpu: 8}
        """,
    ).cluster.nodes
    n1, n2, n3 = nodes
    assert n1.allocatable == {"cpu": 2, "memory": Q(4 * 2**30), "pods": 110}
    assert n1.capacity == n1.allocatable and n1.capacity is not n1.allocatable
    assert n1.meta.namespace == "" and n1.meta.key == "n1" and n1.usage is None
    assert n2.allocatable == {"cpu": 2, "pods": 10} and n2.capacity == {"cpu": 4, "pods": 20}
    assert [(t.key, t.value, t.effect) for t in n2.taints] == [
        ("k", "v", "NoExecute"),
        ("k2", "", "NoSchedule"),
    ]
    assert n2.unschedulable and n2.meta.labels == {"nodeRole": "worker"}
    assert n2.usage is not None
    assert (n2.usage.cpu, n2.usage.memory) == ({"5m": 30.5}, {"5m": 42.0})
    assert n2.usage.time == datetime(2025, 1, 1, tzinfo=UTC)
    assert n3.allocatable == {"cpu": 8, "pods": 110} and n3.capacity == {"cpu": 8}


def test_pod_group_defaults_and_keys(tmp_path: Path) -> None:
    groups = load_one(
        tmp_path,
        """
        name: x
        cluster:
          podGroups:
          - name: pg0
          - name: pg1
            namespace: c1
            queue: q1
            minMember: 3
            minTaskMember: {master: 1, worker: 2}
            minResources: {cpu: 3}
            priorityClassName: high-priority
            phase: Inqueue
            labels: {l: v}
            annotations: {a: v}
          - {name: pg2, phase: ""}
        """,
    ).cluster.pod_groups
    pg0, pg1, pg2 = groups
    assert (pg0.meta.namespace, pg0.meta.uid, pg0.queue, pg0.min_member, pg0.phase) == (
        "default",
        "",
        "default",
        0,
        "Pending",
    )
    assert pg0.min_resources is None and pg0.meta.creation_timestamp == ZERO_TIME
    assert (pg1.meta.key, pg1.queue, pg1.min_member) == ("c1/pg1", "q1", 3)
    assert pg1.min_task_member == {"master": 1, "worker": 2}
    assert pg1.min_resources == {"cpu": 3} and pg1.priority_class_name == "high-priority"
    assert (pg1.phase, pg1.meta.labels, pg1.meta.annotations) == ("Inqueue", {"l": "v"}, {"a": "v"})
    assert pg2.phase == ""


def test_pod_group_without_queue_uses_the_default_queue_option(tmp_path: Path) -> None:
    # Bare: on a deployed cluster the PodGroup webhook writes "default" first.
    text = """
        name: x
        clusterMode: bare
        scheduler: {actions: "", options: {defaultQueue: q0}}
        cluster:
          podGroups: [{name: g}]
        """
    spec = load_one(tmp_path, textwrap.dedent(text))
    assert spec.cluster.pod_groups[0].queue == "q0"


def test_queue_and_priority_class_keys(tmp_path: Path) -> None:
    cluster = load_one(
        tmp_path,
        """
        name: x
        clusterMode: bare
        cluster:
          priorityClasses:
          - {name: high-priority, value: 100000, preemptionPolicy: Never, globalDefault: true}
          - {name: low, value: -5}
          queues:
          - name: q1
            weight: 2
            capability: {cpu: 4, memory: 4G}
            deserved: {cpu: 2}
            guarantee: {cpu: 1}
            priority: 3
            parent: root
            state: Closed
            annotations: {a: b}
            reclaimable: false
          - {name: q2}
        """,
    ).cluster
    high, low = cluster.priority_classes
    assert (high.value, high.global_default, high.preemption_policy) == (100000, True, "Never")
    assert (low.value, low.global_default, low.preemption_policy) == (
        -5,
        False,
        "PreemptLowerPriority",
    )
    q1, q2 = cluster.queues
    assert (q1.weight, q1.priority, q1.parent, q1.state, q1.reclaimable) == (
        2,
        3,
        "root",
        "Closed",
        False,
    )
    assert q1.capability == {"cpu": 4, "memory": 4 * 10**9}
    assert (q1.deserved, q1.guarantee) == ({"cpu": 2}, {"cpu": 1})
    assert (q2.weight, q2.state, q2.reclaimable, q2.capability) == (1, "Open", None, {})


def test_default_queue_only_when_no_queues_key_anywhere(tmp_path: Path) -> None:
    bare = "name: x\nclusterMode: bare\n"
    implicit = load_one(tmp_path, bare, "a.yaml").cluster.queues
    assert [(q.meta.name, q.weight, q.state) for q in implicit] == [("default", 1, "Open")]
    assert load_one(tmp_path, bare + "cluster: {queues: []}\n", "b.yaml").cluster.queues == []
    write(tmp_path, "c/none.yaml", "queues: []\n")
    spec = load_one(tmp_path, bare + "cluster: {include: [c/none.yaml]}\n", "c.yaml")
    assert spec.cluster.queues == []
    explicit = load_one(tmp_path, bare + "cluster: {queues: [{name: q1}]}\n", "d.yaml")
    assert [q.meta.name for q in explicit.cluster.queues] == ["q1"]


def test_jobs_shorthand(tmp_path: Path) -> None:
    cluster = load_one(
        tmp_path,
        """
        name: x
        clusterMode: bare
        cluster:
          priorityClasses: [{name: high, value: 10}]
          jobs:
          - name: job1
            namespace: c1
            queue: q1
            minAvailable: 2
            priorityClassName: high
            phase: Inqueue
            minTaskMember: {worker: 2}
            tasks:
            - {name: worker, replicas: 3, requests: {cpu: 1}, labels: {role: w}}
            - {name: ps, nodeName: n1, phase: Running, priority: 1}
          - name: job2
            tasks: [{name: t, replicas: 2}, {name: u}]
        """,
    ).cluster
    pg1, pg2 = cluster.pod_groups
    assert (pg1.meta.key, pg1.queue, pg1.min_member, pg1.phase) == ("c1/job1", "q1", 2, "Inqueue")
    assert pg1.priority_class_name == "high" and pg1.min_task_member == {"worker": 2}
    assert pg1.meta.uid == ""
    assert pg2.min_member == 3  # Volcano's admission default: the sum of replicas
    names = [p.meta.key for p in cluster.pods]
    assert names == [
        "c1/job1-worker-0",
        "c1/job1-worker-1",
        "c1/job1-worker-2",
        "c1/job1-ps-0",
        "default/job2-t-0",
        "default/job2-t-1",
        "default/job2-u-0",
    ]
    worker = cluster.pods[0]
    assert worker.meta.labels == {"role": "w", TASK_SPEC_KEY: "worker"}
    assert worker.job_id == "c1/job1" and worker.meta.uid == "c1-job1-worker-0"
    assert worker.containers[0].requests == {"cpu": 1}
    assert worker.priority_class_name == "high" and worker.priority == 10
    ps = cluster.pods[3]
    assert (ps.node_name, ps.phase, ps.priority) == ("n1", "Running", 1)


def test_job_task_may_repeat_its_jobs_namespace(tmp_path: Path) -> None:
    spec = load_one(
        tmp_path,
        "name: x\ncluster:\n  jobs: [{name: j, namespace: c1, tasks: "
        "[{name: t, namespace: c1, podGroup: j, taskSpec: t}]}]\n",
    )
    assert [p.meta.key for p in spec.cluster.pods] == ["c1/j-t-0"]


def test_objects_and_list_manifests(tmp_path: Path) -> None:
    cluster = load_one(
        tmp_path,
        """
        name: x
        cluster:
          objects:
          - apiVersion: v1
            kind: ResourceQuota
            metadata: {name: q, namespace: c1}
            spec: {hard: {cpu: "2"}}
          - apiVersion: v1
            kind: List
            items:
            - apiVersion: policy/v1
              kind: PodDisruptionBudget
              metadata: {name: pdb, namespace: c1}
              spec: {minAvailable: 1}
          pods:
          - apiVersion: v1
            kind: List
            metadata: {resourceVersion: ""}
            items:
            - apiVersion: v1
              kind: Pod
              metadata: {name: a}
            - apiVersion: v1
              kind: Pod
              metadata: {name: b}
        """,
    ).cluster
    assert [(o.kind, o.meta.key) for o in cluster.objects] == [
        ("ResourceQuota", "c1/q"),
        ("PodDisruptionBudget", "c1/pdb"),
    ]
    assert cluster.objects_of_kind("ResourceQuota")[0].body["spec"] == {"hard": {"cpu": "2"}}
    assert [p.meta.key for p in cluster.pods] == ["default/a", "default/b"]
    location = cluster.pods[1].meta.location
    assert location is not None and location.key == "cluster.pods[0].items[1]"


# -- cluster.generate --------------------------------------------------------------------

GENERATED = """
name: x
clusterMode: bare
seed: SEED
cluster:
  generate:
    queues: [{count: 3, weight: {range: [1, 1000]}}]
    nodes: [{count: 2, allocatable: {cpu: 4}}]
    jobs: [{count: 2, tasks: [{name: w, replicas: 2, requests: {cpu: 1}}]}]
  nodes: [{name: extra}]
  jobs: [{name: mine, queue: q2, tasks: [{name: w}]}]
"""


def test_generate_merges_its_objects_with_the_declared_ones(tmp_path: Path) -> None:
    spec = load_one(tmp_path, GENERATED.replace("SEED", "4"))
    cluster = spec.cluster
    assert [n.meta.name for n in cluster.nodes] == ["n0", "n1", "extra"]
    assert cluster.nodes[0].allocatable == {"cpu": Q(4), "pods": Q(110)}
    # Generated queues count as declared: no implicit "default" queue.
    assert [q.meta.name for q in cluster.queues] == ["q0", "q1", "q2"]
    assert [(pg.meta.key, pg.queue) for pg in cluster.pod_groups] == [
        ("default/job0", "q0"),
        ("default/job1", "q1"),
        ("default/mine", "q2"),
    ]
    assert [p.meta.key for p in cluster.pods] == [
        "default/job0-w-0",
        "default/job0-w-1",
        "default/job1-w-0",
        "default/job1-w-1",
        "default/mine-w-0",
    ]


def test_generate_uses_the_spec_seed(tmp_path: Path) -> None:
    def weights(seed: int) -> list[int]:
        spec = load_one(tmp_path, GENERATED.replace("SEED", str(seed)), f"s{seed}.yaml")
        return [q.weight for q in spec.cluster.queues]

    assert weights(1) == weights(1)
    assert weights(1) != weights(2)
    # `vspec run --seed N` generates with N, as it runs with N.
    path = tmp_path / "s1.yaml"
    [spec] = load_file(path, seed=2).specs
    assert spec.seed == 1 and [q.weight for q in spec.cluster.queues] == weights(2)


def test_generate_without_queues_keeps_the_implicit_default_queue(tmp_path: Path) -> None:
    text = "name: x\nclusterMode: bare\ncluster:\n  generate: {jobs: [{count: 1}]}\n"
    spec = load_one(tmp_path, text)
    assert [q.meta.name for q in spec.cluster.queues] == ["default"]
    assert [pg.queue for pg in spec.cluster.pod_groups] == ["default"]


def test_generate_in_an_included_file(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", "generate: {nodes: [{count: 2, name: gen}]}\n")
    spec = load_one(tmp_path, "name: x\ncluster: {include: [c.yaml]}\n")
    assert [n.meta.name for n in spec.cluster.nodes] == ["gen0", "gen1"]
    assert [n.meta.name for n in load_cluster_file(tmp_path / "c.yaml").nodes] == ["gen0", "gen1"]


def test_generated_name_clashing_with_a_declared_one(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        """
        name: x
        cluster:
          generate: {nodes: [{count: 2}]}
          nodes: [{name: n1}]
        """,
    )
    assert errors == [
        f"{tmp_path / 'spec.yaml'}:4:11: cluster.nodes[0]: node 'n1' is defined twice; "
        f"first at {tmp_path / 'spec.yaml'}:3 (cluster.generate)"
    ]


def test_generate_twice_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", "generate: {nodes: [{count: 1}]}\n")
    errors = load_errors(
        tmp_path, "name: x\ncluster:\n  include: [c.yaml]\n  generate: {nodes: [{count: 1}]}\n"
    )
    assert len(errors) == 1
    assert "spec.yaml:4:13: cluster.generate: cluster.generate is given twice" in errors[0]


def test_generate_keys_are_checked_by_the_schema(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, "name: x\ncluster:\n  generate:\n    nodes: [{cont: 3}]\n")
    assert f"{tmp_path / 'spec.yaml'}:4:14: cluster.generate.nodes[0].cont: unknown key " in (
        "\n".join(errors)
    )
    assert "did you mean 'count'?" in errors[-1]


def test_generate_error_found_while_expanding_is_located(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        "name: x\ncluster:\n  generate:\n    nodes: [{count: 1, allocatable: {cpu: lots}}]\n",
    )
    assert len(errors) == 1
    assert errors[0].startswith(f"{tmp_path / 'spec.yaml'}:4:5: cluster.generate: ")
    assert "cluster.generate.nodes[0].allocatable" in errors[0]


# -- manifests -------------------------------------------------------------------------


POD_MANIFEST = """
name: x
cluster:
  priorityClasses:
  - apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: high}
    value: 1000
    globalDefault: true
    preemptionPolicy: Never
    description: from kubectl
  pods:
  - apiVersion: v1
    kind: Pod
    metadata:
      name: web
      namespace: prod
      uid: 5f1c
      labels: {app: web}
      annotations: {scheduling.k8s.io/group-name: pg}
      creationTimestamp: "2024-05-01T10:00:00Z"
      deletionTimestamp: "2024-05-02T10:00:00.123456789Z"
      resourceVersion: "123"
      managedFields: [{manager: kubectl}]
    spec:
      schedulerName: volcano
      nodeName: n1
      priority: 7
      priorityClassName: high
      preemptionPolicy: PreemptLowerPriority
      nodeSelector: {disk: ssd}
      tolerations: [{key: k, operator: Equal, value: v, effect: NoExecute, tolerationSeconds: 30}]
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 10
            podAffinityTerm: {topologyKey: zone, labelSelector: {matchLabels: {app: web}}}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
      schedulingGates: [{name: wait}]
      overhead: {cpu: 100m}
      initContainers:
      - {name: init, resources: {requests: {cpu: "1"}}, restartPolicy: Always}
      containers:
      - name: c
        image: nginx
        resources: {requests: {cpu: 250m, memory: 64Mi}, limits: {cpu: "1"}}
        ports: [{containerPort: 80, hostPort: 8080}]
        volumeMounts: [{name: v, mountPath: /v}]
      volumes: [{name: v, emptyDir: {}}]
      restartPolicy: Always
    status:
      phase: Running
      nominatedNodeName: n2
      conditions: [{type: PodScheduled, status: "True", lastTransitionTime: "2024-05-01T10:00:01Z"}]
      containerStatuses: [{name: c, ready: true}]
      qosClass: Burstable
"""


def test_pod_manifest(tmp_path: Path) -> None:
    cluster = load_one(tmp_path, POD_MANIFEST).cluster
    pod = cluster.pods[0]
    assert (pod.meta.key, pod.meta.uid, pod.meta.labels) == ("prod/web", "5f1c", {"app": "web"})
    assert pod.job_id == "prod/pg"
    assert pod.meta.creation_timestamp == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert pod.meta.deletion_timestamp == datetime(2024, 5, 2, 10, 0, 0, 123456, UTC)
    assert (pod.scheduler_name, pod.node_name, pod.priority, pod.priority_class_name) == (
        "volcano",
        "n1",
        7,
        "high",
    )
    assert pod.preemption_policy == "PreemptLowerPriority" and pod.node_selector == {"disk": "ssd"}
    assert pod.tolerations[0].toleration_seconds == 30
    assert pod.affinity is not None and pod.affinity.pod_anti_affinity is not None
    assert pod.affinity.pod_anti_affinity.preferred[0].term.topology_key == "zone"
    assert pod.topology_spread_constraints[0].max_skew == 1
    assert pod.scheduling_gates == ["wait"] and pod.overhead == {"cpu": Q(1, 10)}
    assert pod.init_containers[0].restart_policy == "Always"
    container = pod.containers[0]
    assert container.requests == {"cpu": Q(1, 4), "memory": 64 * 2**20}
    assert container.limits == {"cpu": 1} and container.ports[0].host_port == 8080
    assert (pod.phase, pod.nominated_node_name) == ("Running", "n2")
    assert pod.conditions[0].type == "PodScheduled"
    assert pod.conditions[0].last_transition_time == datetime(2024, 5, 1, 10, 0, 1, tzinfo=UTC)
    pc = cluster.priority_classes[0]
    assert (pc.meta.name, pc.value, pc.global_default, pc.preemption_policy) == (
        "high",
        1000,
        True,
        "Never",
    )


def test_pod_manifest_defaults(tmp_path: Path) -> None:
    spec = load_one(
        tmp_path,
        "name: x\ncluster:\n  pods:\n  - {apiVersion: v1, kind: Pod, metadata: {name: p}}\n",
    )
    pod = spec.cluster.pods[0]
    assert (pod.meta.namespace, pod.meta.uid, pod.phase, pod.containers) == (
        "default",
        "default-p",
        "Pending",
        [],
    )
    assert pod.scheduler_name == ""  # unset: placed by vspec and pod.priority is None


def test_node_manifest_is_taken_exactly_as_written(tmp_path: Path) -> None:
    node = load_one(
        tmp_path,
        """
        name: x
        cluster:
          nodes:
          - apiVersion: v1
            kind: Node
            metadata: {name: n1, labels: {kubernetes.io/hostname: n1}, creationTimestamp: null}
            spec:
              taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
              unschedulable: true
              podCIDR: 10.0.0.0/24
            status:
              allocatable: {cpu: 3900m, memory: 15Gi}
              capacity: {cpu: "4", memory: 16Gi, pods: "110"}
              images: [{names: [nginx, "nginx:1"], sizeBytes: 1000}]
              conditions: [{type: Ready, status: "True"}]
              nodeInfo: {kubeletVersion: v1.31.0}
        """,
    ).cluster.nodes[0]
    assert node.allocatable == {"cpu": Q(39, 10), "memory": 15 * 2**30}  # no pods default
    assert node.capacity == {"cpu": 4, "memory": 16 * 2**30, "pods": 110}
    assert node.taints[0].key == "dedicated" and node.unschedulable
    assert node.images[0].names == ("nginx", "nginx:1") and node.images[0].size_bytes == 1000
    assert node.meta.creation_timestamp == ZERO_TIME and node.meta.namespace == ""


def test_pod_group_and_queue_manifests(tmp_path: Path) -> None:
    cluster = load_one(
        tmp_path,
        """
        name: x
        clusterMode: bare
        cluster:
          podGroups:
          - apiVersion: scheduling.volcano.sh/v1beta1
            kind: PodGroup
            metadata: {name: pg1, namespace: c1}
            spec: {queue: q1, minMember: 0}
          - apiVersion: scheduling.volcano.sh/v1beta1
            kind: PodGroup
            metadata: {name: pg2}
            spec:
              minMember: 2
              minTaskMember: {a: 1}
              minResources: {cpu: 2}
              priorityClassName: high
            status:
              phase: Running
              running: 2
              succeeded: 1
              failed: 3
              conditions: [{type: Unschedulable, status: "True", transitionID: t1,
                            message: "0/1 nodes"}]
          queues:
          - apiVersion: scheduling.volcano.sh/v1beta1
            kind: Queue
            metadata: {name: q1, annotations: {volcano.sh/hierarchy: root/a}}
            spec:
              weight: 4
              capability: {cpu: 8}
              deserved: {cpu: 4}
              guarantee: {resource: {cpu: 2}}
              priority: 9
              parent: root
              reclaimable: false
              affinity: {nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [g]}}
            status: {state: Closing}
          - apiVersion: scheduling.volcano.sh/v1beta1
            kind: Queue
            metadata: {name: q2}
        """,
    ).cluster
    pg1, pg2 = cluster.pod_groups
    assert (pg1.meta.key, pg1.queue, pg1.min_member, pg1.phase, pg1.meta.uid) == (
        "c1/pg1",
        "q1",
        0,
        "",
        "",
    )
    assert (pg2.meta.key, pg2.queue, pg2.min_member, pg2.min_task_member) == (
        "default/pg2",
        "default",
        2,
        {"a": 1},
    )
    assert pg2.min_resources == {"cpu": 2} and pg2.priority_class_name == "high"
    assert (pg2.phase, pg2.running, pg2.succeeded, pg2.failed) == ("Running", 2, 1, 3)
    assert pg2.conditions[0].transition_id == "t1" and pg2.conditions[0].message == "0/1 nodes"
    q1, q2 = cluster.queues
    assert (q1.weight, q1.capability, q1.deserved, q1.guarantee) == (
        4,
        {"cpu": 8},
        {"cpu": 4},
        {"cpu": 2},
    )
    assert (q1.priority, q1.parent, q1.reclaimable, q1.state) == (9, "root", False, "Closing")
    assert q1.affinity == {
        "nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["g"]}
    }
    assert q1.meta.annotations == {"volcano.sh/hierarchy": "root/a"}
    assert (q2.weight, q2.state) == (1, "Open")


# -- includes --------------------------------------------------------------------------


def test_includes_merge_in_order_relative_to_each_file(tmp_path: Path) -> None:
    write(tmp_path, "fx/base.yaml", "include: [more/extra.yaml]\nnodes: [{name: n1}]\n")
    write(tmp_path, "fx/more/extra.yaml", "nodes: [{name: n0}]\nqueues: [{name: q}]\n")
    write(tmp_path, "fx/other.yaml", "include: [base.yaml]\npods: [{name: p0}]\n")
    spec = load_one(
        tmp_path,
        """
        name: x
        clusterMode: bare
        cluster:
          include: [../fx/base.yaml, ../fx/other.yaml]
          nodes: [{name: n2}]
        """,
        "specs/s.yaml",
    )
    assert [n.meta.name for n in spec.cluster.nodes] == ["n0", "n1", "n2"]
    assert [q.meta.name for q in spec.cluster.queues] == ["q"]
    assert [p.meta.key for p in spec.cluster.pods] == ["default/p0"]
    location = spec.cluster.nodes[0].meta.location
    assert location is not None and location.file.endswith("extra.yaml")
    assert (location.line, location.key) == (1, "nodes[0]")


def test_include_accepts_a_single_string(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", "nodes: [{name: n1}]\n")
    spec = load_one(tmp_path, "name: x\ncluster: {include: c.yaml}\n")
    assert [n.meta.name for n in spec.cluster.nodes] == ["n1"]


def test_object_defined_twice_names_both_places(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", "pods:\n- {name: p, namespace: c1}\n")
    errors = load_errors(
        tmp_path, "name: x\ncluster:\n  include: [c.yaml]\n  pods: [{name: p, namespace: c1}]\n"
    )
    assert errors == [
        f"{tmp_path / 'spec.yaml'}:4:10: cluster.pods[0]: pod 'c1/p' is defined "
        f"twice; first at {tmp_path / 'c.yaml'}:2 (pods[0])"
    ]


def test_invalid_included_file_reports_its_own_errors(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", "nodes:\n- {name: n1, alocatable: {cpu: 1}}\n- {name: 3}\n")
    loaded = load_file(write(tmp_path, "s.yaml", "name: x\ncluster: {include: [c.yaml]}\n"))
    used_by = f" (used by spec 'x' at {tmp_path / 's.yaml'}:1)"
    assert [str(e) for error in loaded.errors for e in each_error(error)] == [
        f"{tmp_path / 'c.yaml'}:2:14: nodes[0].alocatable: unknown key 'alocatable' "
        "(did you mean 'allocatable'?)" + used_by,
        f"{tmp_path / 'c.yaml'}:3:10: nodes[1].name: 3 is not a name (non-empty, without '/' "
        "or spaces)" + used_by,
    ]
    [error] = loaded.errors  # one spec, one error, listed at the spec
    assert error.location is not None and error.location.file == str(tmp_path / "s.yaml")


def test_an_include_outside_the_project_is_named_not_quoted(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project, "pyproject.toml", "")
    write(tmp_path, "secrets.yaml", "api_token_value: 1\n")
    spec_text = "name: x\ncluster: {include: [../secrets.yaml]}\n"
    loaded = load_file(write(project, "s.yaml", spec_text))
    [message] = [str(e) for error in loaded.errors for e in each_error(error)]
    # reported where the spec names the file, which is named, its content not quoted
    assert message.startswith(f"{project / 's.yaml'}:2:21: cluster.include[0]: invalid, in ")
    assert f"{project / '..' / 'secrets.yaml'}:1, a file outside the project" in message
    assert "api_token_value" not in message


def test_load_cluster_file(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "nodes: [{name: n1}]\n")
    path = write(
        tmp_path,
        "c.yaml",
        "include: [base.yaml]\npods: [{name: p, priorityClassName: "
        "h}]\npriorityClasses: [{name: h, value: 3}]\n",
    )
    cluster = load_cluster_file(path, cluster_mode="bare")
    assert [n.meta.name for n in cluster.nodes] == ["n1"]
    assert cluster.pods[0].priority == 3 and [q.meta.name for q in cluster.queues] == ["default"]
    with pytest.raises(InvalidFile, match="unknown key 'pod'"):
        load_cluster_file(write(tmp_path, "bad.yaml", "pod: []\n"))


# -- expect and probes -----------------------------------------------------------------


def test_expect_keys_and_locations(tmp_path: Path) -> None:
    expect = load_one(
        tmp_path,
        """
        name: x
        cluster:
          nodes: [{name: n1}, {name: n2}]
          podGroups: [{name: pg1, namespace: c1}, {name: pg2, namespace: c1},
                      {name: pg3, namespace: c1}]
          pods: [{name: p1, namespace: c1}, {name: p2, namespace: c1}, {name: p3, namespace: c1},
                 {name: p4, namespace: c1}, {name: p5, namespace: c1},
                 {name: preemptee1, namespace: c1}]
        expect:
          binds: {c1/p1: n1, c1/p2: n2}
          bindsInclude: {c1/p1: n1}
          bindCount: 2
          evictions: [c1/preemptee1]
          evictCount: 1
          pipelined: {c1/pg2: [n1, n2], c1/pg3: []}
          podGroups:
            c1/pg1: {phase: Running, sessionPhase: Inqueue, unschedulable: "Insufficient cpu"}
          pods:
            c1/p3: {node: n2, status: Pending}
            c1/p4: {node: null}
            c1/p5: {status: Bound}
          logs:
            contains: ["Job c1/pg1 is pending"]
            matches: ['Job c1/pg\\d is ready']
            absent: ["%!"]
          invariants: [gang-atomicity, no-overcommit]
        """,
    ).expect
    assert expect.binds == {"c1/p1": "n1", "c1/p2": "n2"}
    assert expect.binds_include == {"c1/p1": "n1"}
    assert (expect.bind_count, expect.evictions, expect.evict_count) == (2, ["c1/preemptee1"], 1)
    assert expect.pipelined == {"c1/pg2": ["n1", "n2"], "c1/pg3": []}
    pg = expect.pod_groups["c1/pg1"]
    assert (pg.phase, pg.session_phase, pg.unschedulable) == (
        "Running",
        "Inqueue",
        "Insufficient cpu",
    )
    p3, p4, p5 = (expect.pods[k] for k in ("c1/p3", "c1/p4", "c1/p5"))
    assert (p3.node, p3.node_given, p3.status) == ("n2", True, "Pending")
    assert (p4.node, p4.node_given, p4.status) == (None, True, None)
    assert (p5.node, p5.node_given, p5.status) == (None, False, "Bound")
    assert expect.logs is not None
    assert expect.logs.matches == ["Job c1/pg\\d is ready"] and expect.logs.absent == ["%!"]
    assert expect.invariants == ["gang-atomicity", "no-overcommit"]
    assert expect.disabled_invariants == []
    lines = {key: loc.line for key, loc in expect.locations.items()}
    assert lines["binds"] == 10 and lines["binds.c1/p2"] == 10 and lines["bindCount"] == 12
    assert lines["podGroups.c1/pg1.phase"] == 17 and lines["pods.c1/p4.node"] == 20
    assert lines["logs.contains[0]"] == 23 and lines["invariants[1]"] == 26
    assert expect.locations["binds.c1/p2"].key == 'expect.binds["c1/p2"]'


def test_expect_disables_invariants(tmp_path: Path) -> None:
    text = "name: x\nexpect:\n  invariants: {disable: [deterministic]}\n"
    expect = load_one(tmp_path, text).expect
    assert expect.invariants == [] and expect.disabled_invariants == ["deterministic"]


def test_expect_omitted_keys_are_not_checked(tmp_path: Path) -> None:
    expect = load_one(tmp_path, "name: x\nexpect: {evictions: []}\n").expect
    assert expect.evictions == [] and expect.binds is None and expect.bind_count is None
    assert expect.logs is None and expect.pipelined is None


def test_probes(tmp_path: Path) -> None:
    probes = load_one(
        tmp_path,
        """
        name: x
        cluster:
          nodes: [{name: n1}, {name: n2}, {name: n3}]
          podGroups: [{name: pg1, namespace: c1}, {name: pg2, namespace: c1}]
          pods: [{name: p1, namespace: c1}, {name: p2, namespace: c1}, {name: p3, namespace: c1},
                 {name: p9, namespace: c1}]
        probes:
        - task: c1/p1
          predicates: {n1: true, n2: "node(s) didn't match", n3: false}
          scores: {n1: 30, n2: 10.5}
          pluginScores: {binpack: {n1: 20, n2: 0}}
          bestNode: n1
          tolerance: 0.01
        - job: c1/pg1
          enqueueable: true
          ready: false
          pipelined: false
          starving: true
          valid: "not enough"
        - {preemptor: c1/p9, candidates: [c1/p1, c1/p2], victims: [c1/p1]}
        - {reclaimer: c1/p9, candidates: [c1/p3], victims: []}
        - {victimTasks: [c1/p1, c1/p2], victims: [c1/p2]}
        - {order: jobs, items: [c1/pg2, c1/pg1], expect: [c1/pg1, c1/pg2]}
        """,
    ).probes
    task, job, preempt, reclaim, victims, order = probes
    assert task == TaskProbe(
        "c1/p1",
        {"n1": True, "n2": "node(s) didn't match", "n3": False},
        {"n1": 30.0, "n2": 10.5},
        {"binpack": {"n1": 20.0, "n2": 0.0}},
        "n1",
        0.01,
    )
    assert isinstance(task.scores and task.scores["n1"], float)
    assert task.location is not None and task.location.line == 8
    assert job == JobProbe("c1/pg1", True, False, False, True, "not enough")
    assert preempt == VictimProbe("preemptor", "c1/p9", ["c1/p1", "c1/p2"], ["c1/p1"])
    assert reclaim == VictimProbe("reclaimer", "c1/p9", ["c1/p3"], [])
    assert victims == VictimTasksProbe(["c1/p1", "c1/p2"], ["c1/p2"])
    assert order == OrderProbe("jobs", ["c1/pg2", "c1/pg1"], ["c1/pg1", "c1/pg2"])
    assert order.location is not None and order.location.key == "probes[5]"


# -- YAML --------------------------------------------------------------------------------


def test_anchors_aliases_and_merge_keys(tmp_path: Path) -> None:
    pods = load_one(
        tmp_path,
        """
        name: x
        cluster:
          pods:
          - &base {name: p1, namespace: c1, requests: &small {cpu: 1}}
          - <<: *base
            name: p2
          - {name: p3, requests: *small}
        """,
    ).cluster.pods
    assert [(p.meta.key, p.containers[0].requests) for p in pods] == [
        ("c1/p1", {"cpu": 1}),
        ("c1/p2", {"cpu": 1}),
        ("default/p3", {"cpu": 1}),
    ]


def test_yaml_scalars_are_read_as_yaml_1_1() -> None:
    doc = parse_documents("a: [0x10, 1_000, .5, ~, yes, '1', 2025-01-01T00:00:00Z]\n7: x\n", "f")[0]
    assert doc.data == {"a": [16, 1000, 0.5, None, True, "1", "2025-01-01T00:00:00Z"], "7": "x"}


def test_error_positions_name_line_column_and_key(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        """
        name: x
        cluster:
          pods:
          - {name: p0}
          - {name: p1}
          - name: p2
            requests:
              cpu: abc
        """,
        "specs/a.yaml",
    )
    assert errors == [
        f"{tmp_path / 'specs/a.yaml'}:8:12: cluster.pods[2].requests.cpu: "
        "'abc' is not a Kubernetes quantity (e.g. 2, 500m, 1Gi)"
    ]


# -- the conformance cases and speed ---------------------------------------------------


@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="../shared/conformance is not present")
def test_every_conformance_file_loads() -> None:
    files = discover([CONFORMANCE])
    assert len(files) > 40
    for path in files:
        loaded = load_file(path)
        assert loaded.is_spec_file, path
        assert not loaded.errors, "\n".join(str(e) for e in loaded.errors)
        assert loaded.specs, path


def big_spec(pods: int) -> str:
    lines = ["name: big", "cluster:", "  nodes:"]
    node = "  - {{name: n{}, allocatable: {{cpu: 8, memory: 32Gi}}, labels: {{zone: z{}}}}}"
    lines += [node.format(i, i % 3) for i in range(pods // 10)]
    lines.append("  pods:")
    for i in range(pods):
        lines += [
            f"  - name: p{i}",
            "    namespace: c1",
            f"    podGroup: pg{i // 10}",
            "    phase: Pending",
            "    requests: {cpu: 500m, memory: 1Gi}",
            f"    labels: {{app: a{i % 7}}}",
        ]
    return "\n".join(lines) + "\n"


def test_ten_thousand_pods_load(tmp_path: Path) -> None:
    """Its CPU budget is benchmarks/test_bench.py's."""
    # Bare: its pods name pod groups it never declares, which a deployed webhook refuses.
    bare = big_spec(10_000).replace("name: big", "name: big\nclusterMode: bare")
    path = write(tmp_path, "big.yaml", bare)
    loaded = load_file(path)
    assert not loaded.errors and len(loaded.specs[0].cluster.pods) == 10_000


def test_a_task_uid_with_replicas_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        'name: x\nscheduler: {actions: ""}\ncluster:\n  jobs:\n  - name: j\n'
        "    tasks: [{name: w, replicas: 2, uid: x}]\n"
    )
    [error] = load_file(path).errors
    assert "uid" in str(error) and "replicas: 1" in str(error)


def test_a_conf_without_actions_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: x\nscheduler: {tiers: [{plugins: [{name: gang}]}]}\n")
    [error] = load_file(path).errors
    assert "actions is required" in str(error) and error.location is not None
