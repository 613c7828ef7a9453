"""Cluster files as ``kubectl apply -f`` takes them (vspec.harness.loader, kinds,
manifests): several documents, list kinds, any mix, each object located by file,
document and line; ``metadata.generateName``; kinds the scheduler does not read, one
warning per kind; kinds and apiVersions a Volcano v1.11.0 cluster does not serve."""

from __future__ import annotations

import textwrap
from pathlib import Path

from vspec.errors import each_error
from vspec.harness.loader import load_cluster_file, load_file
from vspec.model.spec import Spec

SPEC = "name: x\ncluster: {include: stream.yaml}\n"
QUEUE = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team}
spec: {weight: 2}
"""
JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  queue: team
  minAvailable: 2
  tasks:
  - name: w
    replicas: 2
    template:
      spec:
        containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(tmp_path: Path, stream: str, spec: str = SPEC) -> Spec:
    write(tmp_path / "stream.yaml", stream)
    loaded = load_file(write(tmp_path / "s.yaml", spec))
    assert not loaded.errors, [str(e) for e in loaded.errors]
    [only] = loaded.specs
    return only


def errors(tmp_path: Path, stream: str, spec: str = SPEC) -> list[str]:
    write(tmp_path / "stream.yaml", stream)
    loaded = load_file(write(tmp_path / "s.yaml", spec))
    return [str(e) for error in loaded.errors for e in each_error(error)]


def test_a_queue_and_its_job_in_two_documents(tmp_path: Path) -> None:
    spec = load(tmp_path, f"{QUEUE}---\n{JOB}")
    assert [q.meta.name for q in spec.cluster.queues] == ["root", "default", "team"]
    [group] = spec.cluster.pod_groups
    assert (group.meta.key, group.queue, group.min_member) == ("ml/train", "team", 2)


def test_documents_lists_and_cluster_mappings_mix(tmp_path: Path) -> None:
    stream = f"""\
---
nodes: [{{name: n1, allocatable: {{cpu: 4}}}}]
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: NodeList
  items:
  - {{apiVersion: v1, kind: Node, metadata: {{name: n2}}, status: {{allocatable: {{cpu: "2"}}}}}}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: QueueList
  items:
  - {{apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {{name: team}}}}
---
{JOB}
"""
    spec = load(tmp_path, stream)
    assert [n.meta.name for n in spec.cluster.nodes] == ["n1", "n2"]
    assert "team" in [q.meta.name for q in spec.cluster.queues]
    assert [g.meta.key for g in spec.cluster.pod_groups] == ["ml/train"]


def test_an_error_names_file_document_and_line(tmp_path: Path) -> None:
    bad = JOB.replace("replicas: 2", "replicas: two")
    assert errors(tmp_path, f"{QUEUE}---\n{bad}") == [
        f"{tmp_path / 'stream.yaml'}:14:15: document 2, spec.tasks[0].replicas: expected an "
        "integer, got 'two' (a string) (used by spec 'x' at "
        f"{tmp_path / 's.yaml'}:1)"
    ]


def test_a_refused_object_is_located_in_its_document(tmp_path: Path) -> None:
    gone = JOB.replace("queue: team", "queue: elsewhere")
    [message] = errors(tmp_path, f"{QUEUE}---\n{gone}")
    # at the queue the Job names, which does not exist
    assert message.startswith(
        f"{tmp_path / 'stream.yaml'}:10:10: document 2, spec.queue: admission webhook "
        '"validatejob.volcano.sh" denied the request: unable to find job queue'
    )


def test_every_error_of_a_stream_at_once(tmp_path: Path) -> None:
    queue = QUEUE.replace("weight: 2", "weight: x")
    stream = f"{queue}---\n{JOB.replace('minAvailable: 2', 'minAvailable: y')}"
    found = errors(tmp_path, stream)
    assert [m.split(": ", 2)[1] for m in found] == [
        "document 1, spec.weight",
        "document 2, spec.minAvailable",
    ]


def test_load_cluster_file_reads_a_stream(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", f"{QUEUE}---\n{JOB}")
    cluster = load_cluster_file(path)
    assert [g.meta.key for g in cluster.pod_groups] == ["ml/train"]


def test_a_spec_file_of_several_specs_is_unchanged(tmp_path: Path) -> None:
    path = write(tmp_path / "two.yaml", "name: a\n---\nname: b\n---\n")
    assert [s.name for s in load_file(path).specs] == ["a", "b"]


# -- generateName ------------------------------------------------------------------------------

WORKFLOWS = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: nightly-}
spec: {entrypoint: main, templates: [{name: main, container: {image: x}}]}
---
apiVersion: v1
kind: Pod
metadata: {generateName: PREFIX, namespace: ns}
spec:
  containers: [{name: c, image: i}]
"""


def test_generate_name_is_drawn_from_the_seed(tmp_path: Path) -> None:
    stream = WORKFLOWS.replace("PREFIX", "worker-")
    first = load(tmp_path, stream)
    again = load(tmp_path, stream)
    other = load(tmp_path, stream, SPEC + "seed: 7\n")
    [pod] = first.cluster.pods
    assert pod.meta.name.startswith("worker-") and len(pod.meta.name) == len("worker-") + 5
    assert set(pod.meta.name[len("worker-") :]) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert pod.meta.name == again.cluster.pods[0].meta.name
    assert pod.meta.name != other.cluster.pods[0].meta.name
    [warning] = first.warnings
    assert "ignored: Workflow nightly-" in warning


def test_generate_name_is_cut_to_58_characters(tmp_path: Path) -> None:
    spec = load(tmp_path, WORKFLOWS.replace("PREFIX", "p" * 70))
    [pod] = spec.cluster.pods
    assert pod.meta.name[:58] == "p" * 58 and len(pod.meta.name) == 63


def test_a_manifest_needs_a_name_or_a_generate_name(tmp_path: Path) -> None:
    stream = WORKFLOWS.replace("{generateName: nightly-}", "{labels: {a: b}}")
    [message] = errors(tmp_path, stream.replace("PREFIX", "w-"))
    assert (
        ":3:11: document 1, metadata: {'labels': {'a': 'b'}} has neither a name nor a " in message
    )


# -- kinds ---------------------------------------------------------------------------------


def test_one_warning_per_ignored_kind_names_its_objects(tmp_path: Path) -> None:
    stream = "".join(
        f"---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: rs{i}, namespace: web}}\n"
        "spec: {replicas: 1, template: {spec: {schedulerName: volcano}}}\n"
        for i in range(5)
    )
    stream += (
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec: {ports: [{port: 80}]}\n"
    )
    stream += (
        "---\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: t}\n"
        "spec: {anything: [1]}\n"
    )
    spec = load(tmp_path, stream)
    where = tmp_path / "stream.yaml"
    assert spec.warnings == [
        f"{where}:2:1: document 1: ignored: 5 ReplicaSets web/rs0, web/rs1, web/rs2 and 2 more "
        "(apps/v1): Volcano's scheduler reads ReplicaSet only for podtopologyspread's default "
        "constraints, which vspec does not model; its controller is not modelled: declare the "
        "pods it would create",
        f"{where}:27:1: document 6: ignored: Service svc (v1): Volcano's scheduler reads "
        "Service only for podtopologyspread's default constraints, which vspec does not model",
        f"{where}:32:1: document 7: ignored: JobTemplate t (flow.volcano.sh/v1alpha1): "
        "Volcano's scheduler does not read JobTemplate; a template only: the jobflow "
        "controller that makes Jobs of it is not modelled; declare those Jobs",
    ]


def test_a_retired_volcano_group_is_refused_as_the_api_server_refuses_it(tmp_path: Path) -> None:
    stream = (
        "apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
        "metadata: {name: pg}\nspec: {minMember: 1}\n"
    )
    assert errors(tmp_path, stream) == [
        f"{tmp_path / 'stream.yaml'}:1:1: PodGroup scheduling.incubator.k8s.io/v1alpha1 is not "
        "served by a Volcano v1.11.0 cluster (the API server answers: no matches for kind "
        '"PodGroup" in version "scheduling.incubator.k8s.io/v1alpha1"); write the '
        f"scheduling.volcano.sh/v1beta1 kinds (used by spec 'x' at {tmp_path / 's.yaml'}:1)"
    ]


def test_a_removed_priority_class_version_gets_the_api_servers_answer(tmp_path: Path) -> None:
    stream = (
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: PriorityClass\nmetadata: {name: hi}\n"
        "value: 9\n"
    )
    [message] = errors(tmp_path, stream)
    assert (
        "PriorityClass scheduling.k8s.io/v1beta1 is no longer served (removed in Kubernetes 1.22; "
        'the API server answers: no matches for kind "PriorityClass" in version '
        '"scheduling.k8s.io/v1beta1"); write scheduling.k8s.io/v1'
    ) in message


def test_the_schedulers_configmap_in_a_cluster_is_pointed_to_scheduler(tmp_path: Path) -> None:
    stream = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: volcano-scheduler-configmap}\n"
        "data: {volcano-scheduler.conf: 'actions: allocate'}\n"
    )
    [message] = errors(tmp_path, stream)
    assert "this ConfigMap holds the scheduler's conf (volcano-scheduler.conf)" in message
    other = stream.replace("volcano-scheduler.conf:", "app.conf:")
    assert load(tmp_path, other).warnings[0].endswith("Volcano's scheduler does not read ConfigMap")


def test_objects_take_list_kinds_and_check_each_item(tmp_path: Path) -> None:
    spec = """\
        name: x
        cluster:
          objects:
          - apiVersion: v1
            kind: PodList
            items:
            - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: []}}
            - {apiVersion: v1, kind: Pod, metadata: {name: q}, spec: {containers: 3}}
        """
    write(tmp_path / "s.yaml", spec)
    found = [str(e) for err in load_file(tmp_path / "s.yaml").errors for e in each_error(err)]
    assert found == [
        f"{tmp_path / 's.yaml'}:8:75: cluster.objects[0].items[1].spec.containers: expected a "
        "list, got 3 (an integer)"
    ]
