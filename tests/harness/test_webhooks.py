"""Volcano v1.11.0's admission webhooks in a ``deployed`` cluster, one rule per case, each
with the message ``kubectl`` would print: the job webhook (vspec.harness.jobwebhook), the
pod and queue webhooks (vspec.harness.deployment). Every manifest here is written for the
test; each refused case is accepted in ``bare`` mode, where no webhook runs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from vspec.errors import each_error
from vspec.harness.loader import load_file

DENY_JOB = 'admission webhook "validatejob.volcano.sh" denied the request: '
DENY_POD = 'admission webhook "validatepod.volcano.sh" denied the request: '
DENY_QUEUE = 'admission webhook "validatequeue.volcano.sh" denied the request: '
VALID_EVENTS = "[* PodFailed PodEvicted PodPending Unknown TaskCompleted TaskFailed JobUpdated]"
VALID_ACTIONS = "[AbortJob RestartJob RestartTask RestartPod TerminateJob CompleteJob ResumeJob]"
VALID = f" valid events are {VALID_EVENTS}, valid actions are {VALID_ACTIONS};"
CLAIM = (
    "Volcano's scheduler reads PersistentVolumeClaims (volume binding) and vspec does not "
    "model them; leave the claim out"
)
VOLUMES = "the job controller makes PersistentVolumeClaims of a Job's volumes: " + CLAIM
CONTAINER = {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}


def task(name: str = "work", replicas: int = 2, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "replicas": replicas,
        "template": {"spec": {"containers": [copy.deepcopy(CONTAINER)]}},
        **extra,
    }


def job(name: str = "j", **spec: Any) -> dict[str, Any]:
    spec.setdefault("tasks", [task()])
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"queue": "q", **spec},
    }


def refusals(tmp_path: Path, cluster: dict[str, Any], mode: str = "deployed") -> list[str]:
    spec = {"name": "x", "clusterMode": mode, "cluster": cluster}
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return [e.message for error in load_file(path).errors for e in each_error(error)]


def job_refusal(tmp_path: Path, manifest: dict[str, Any], queues: list[Any] | None = None) -> str:
    """The job webhook's answer to ``manifest`` ("" when admitted), checked to be
    admitted in bare mode."""
    cluster = {"queues": queues if queues is not None else [{"name": "q"}], "jobs": [manifest]}
    bare = refusals(tmp_path, cluster, "bare")
    assert bare == [] or (manifest["spec"].get("volumes") and bare == [VOLUMES]), bare
    found = refusals(tmp_path, cluster)
    assert len(found) <= 1, found
    return found[0].removeprefix(DENY_JOB) if found else ""


def with_task(**fields: Any) -> dict[str, Any]:
    return job(tasks=[task(**fields)])


def with_container(**fields: Any) -> dict[str, Any]:
    """A job whose container has ``fields`` (None: without that key)."""
    manifest = job()
    container = manifest["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    container.update(fields)
    for key in [k for k, v in fields.items() if v is None]:
        del container[key]
    return manifest


LONG = "a" * 60

JOB_RULES: list[tuple[str, dict[str, Any], str]] = [
    ("minAvailable below 0", job(minAvailable=-1), "job 'minAvailable' must be >= 0."),
    ("maxRetry below 0", job(maxRetry=-1), "'maxRetry' cannot be less than zero."),
    (
        "ttlSecondsAfterFinished below 0",
        job(ttlSecondsAfterFinished=-5),
        "'ttlSecondsAfterFinished' cannot be less than zero.",
    ),
    ("no task", job(tasks=[]), "No task specified in job spec"),
    (
        "mpi without its master task",
        job(plugins={"mpi": []}, tasks=[task("worker")]),
        "The specified mpi master task was not found",
    ),
    (
        "mpi without its worker task, names from the plugin's arguments",
        job(plugins={"mpi": ["--master=head", "--worker=node"]}, tasks=[task("head")]),
        "The specified mpi worker task was not found",
    ),
    (
        "replicas below 0",
        job(minAvailable=1, tasks=[task(replicas=-1, minAvailable=0), task("b", 1)]),
        "'replicas' < 0 in task: work, job: j; 'minAvailable' is greater than 'replicas' in "
        "task: work, job: j; job 'minAvailable' should not be greater than total replicas in "
        "tasks;",
    ),
    (
        "a task's minAvailable above its replicas",
        with_task(minAvailable=3),
        "'minAvailable' is greater than 'replicas' in task: work, job: j; job 'minAvailable' "
        "should not be greater than total replicas in tasks;",
    ),
    (
        "the job's minAvailable above the replicas",
        job(minAvailable=3),
        "job 'minAvailable' should not be greater than total replicas in tasks;",
    ),
    (
        "a task name that is not a DNS-1123 label",
        with_task(name="Work"),
        "[a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
        "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')];",
    ),
    (
        "a duplicated task name ends the task loop",
        job(minAvailable=1, tasks=[task("a"), task("a"), task("b", minAvailable=9)]),
        "duplicated task name a;",
    ),
    (
        "one event mapped to two actions",
        job(
            policies=[
                {"event": "PodFailed", "action": "RestartJob"},
                {"event": "PodFailed", "action": "AbortJob"},
            ]
        ),
        "1 error occurred:\n\t* duplicate event PodFailed  across different policy\n\n" + VALID,
    ),
    (
        "an event the controller keeps for itself, in a task's policy",
        with_task(policies=[{"event": "PodRunning", "action": "RestartJob"}]),
        '1 error occurred:\n\t* spec.tasks.policies: Invalid value: "PodRunning": invalid '
        "policy event\n\n" + VALID,
    ),
    (
        "an action the controller keeps for itself",
        job(policies=[{"events": ["PodEvicted"], "action": "SyncJob"}]),
        '1 error occurred:\n\t* spec.policies: Invalid value: "SyncJob": invalid policy '
        "action\n\n" + VALID,
    ),
    (
        "an event and an exit code",
        job(policies=[{"event": "PodFailed", "exitCode": 3, "action": "RestartJob"}]),
        "1 error occurred:\n\t* must not specify event and exitCode simultaneously\n\n" + VALID,
    ),
    (
        "neither an event nor an exit code",
        job(policies=[{"action": "RestartJob"}]),
        "1 error occurred:\n\t* either event and exitCode should be specified\n\n" + VALID,
    ),
    (
        "exit code 0",
        job(policies=[{"exitCode": 0, "action": "RestartJob"}]),
        "1 error occurred:\n\t* 0 is not a valid error code\n\n" + VALID,
    ),
    (
        "an exit code twice",
        job(
            policies=[
                {"exitCode": 2, "action": "RestartJob"},
                {"exitCode": 2, "action": "AbortJob"},
            ]
        ),
        "1 error occurred:\n\t* duplicate exitCode 2\n\n" + VALID,
    ),
    (
        "any event beside others",
        job(policies=[{"events": ["*", "PodFailed"], "action": "AbortJob"}]),
        "1 error occurred:\n\t* if there's * here, no other policy should be here\n\n" + VALID,
    ),
    (
        "a pod name that is not a qualified name",
        job(name="a" * 58),
        f"create pod with name {'a' * 58}-work-0 validate failed [name part must be no more "
        "than 63 characters];",
    ),
    (
        "a job name longer than a qualified name",
        job(name=LONG + "abcd", tasks=[task("w")]),
        f"create pod with name {LONG}abcd-w-0 validate failed [name part must be no more than "
        f"63 characters];create job with name {LONG}abcd validate failed [name part must be "
        "no more than 63 characters]",
    ),
    ("an unknown job plugin", job(plugins={"horovod": []}), "unable to find job plugin: horovod;"),
    (
        "a volume without mountPath",
        job(volumes=[{"volumeClaimName": "data"}]),
        "mountPath is required;",
    ),
    (
        "a mountPath twice",
        job(
            volumes=[
                {"mountPath": "/d", "volumeClaimName": "a"},
                {"mountPath": "/d", "volumeClaimName": "b"},
            ]
        ),
        "duplicated mountPath: /d;",
    ),
    (
        "a volume without a claim",
        job(volumes=[{"mountPath": "/d"}]),
        "either VolumeClaim or VolumeClaimName must be specified;",
    ),
    (
        "a claim name and a claim",
        job(volumes=[{"mountPath": "/d", "volumeClaimName": "a", "volumeClaim": {}}]),
        "conflict: If you want to use an existing PVC, just specify VolumeClaimName.If you want "
        "to create a new PVC, you do not need to specify VolumeClaimName",
    ),
    (
        "a claim name that is not a DNS-1123 subdomain",
        job(volumes=[{"mountPath": "/d", "volumeClaimName": "Data"}]),
        "invalid VolumeClaimName Data : [a lowercase RFC 1123 subdomain must consist of lower "
        "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]",
    ),
    (
        "tasks depending on each other in a cycle",
        job(tasks=[task("a", dependsOn={"name": ["b"]}), task("b", dependsOn={"name": ["a"]})]),
        "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG);",
    ),
    (
        "a dependency on a task that does not exist (quirk: not a DAG either)",
        with_task(dependsOn={"name": ["setup"]}),
        "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG);",
    ),
    (
        "a template without containers",
        job(tasks=[{"name": "w", "replicas": 1, "template": {"spec": {"containers": []}}}]),
        "spec.task[0].template.spec.containers: Required value.",
    ),
    (
        "a container without an image",
        with_container(image=None),
        "spec.task[0].template.spec.containers[0].image: Required value.",
    ),
    (
        "a container without a name",
        with_container(name=None),
        "spec.task[0].template.spec.containers[0].name: Required value.",
    ),
    (
        "requests above limits",
        with_container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
        'spec.task[0].template.spec.containers[0].resources.requests: Invalid value: "2": '
        "must be less than or equal to cpu limit of 1.",
    ),
    (
        "an extended resource requested below its limit",
        with_container(
            resources={"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "2"}}
        ),
        'spec.task[0].template.spec.containers[0].resources.requests: Invalid value: "1": '
        "must be equal to nvidia.com/gpu limit of 2.",
    ),
    (
        "a restart policy Kubernetes does not know",
        job(
            tasks=[
                {
                    "name": "w",
                    "replicas": 1,
                    "template": {"spec": {"containers": [CONTAINER], "restartPolicy": "Sometimes"}},
                }
            ]
        ),
        'spec.task[0].template.spec.restartPolicy: Unsupported value: "Sometimes": supported '
        'values: "Always", "OnFailure", "Never".',
    ),
    (
        "a NUMA topology policy with a fractional CPU request",
        job(
            tasks=[
                {
                    "name": "w",
                    "replicas": 1,
                    "topologyPolicy": "single-numa-node",
                    "template": {
                        "spec": {
                            "containers": [
                                {**CONTAINER, "resources": {"requests": {"cpu": "500m"}}}
                            ]
                        }
                    },
                }
            ]
        ),
        "the cpu request isn't  an integer in spec.task[0] container[0].",
    ),
]


@pytest.mark.parametrize(
    ("manifest", "message"), [c[1:] for c in JOB_RULES], ids=[c[0] for c in JOB_RULES]
)
def test_each_job_rule_refuses_with_its_own_message(
    tmp_path: Path, manifest: dict[str, Any], message: str
) -> None:
    assert job_refusal(tmp_path, manifest) == message.strip()


def test_a_job_within_every_rule_is_admitted(tmp_path: Path) -> None:
    manifest = job(
        maxRetry=0,
        plugins={"mpi": ["--master=head"], "ssh": [], "svc": []},
        policies=[
            {"events": ["PodEvicted", "PodFailed"], "action": "RestartJob"},
            {"exitCode": 3, "action": "AbortJob"},
        ],
        tasks=[
            task("head", 1, policies=[{"event": "TaskCompleted", "action": "CompleteJob"}]),
            task("worker", 2, dependsOn={"name": ["head"]}, topologyPolicy="best-effort"),
        ],
    )
    assert job_refusal(tmp_path, manifest) == ""


def test_claims_the_webhook_admits_are_not_modelled(tmp_path: Path) -> None:
    """Volume binding reads PersistentVolumeClaims, which vspec does not model: a Job's
    volumes and a claim in a pod template or a Pod are errors, in either mode."""
    with_volumes = job(volumes=[{"mountPath": "/data", "volumeClaimName": "data"}])
    assert refusals(tmp_path, {"queues": [{"name": "q"}], "jobs": [with_volumes]}) == [VOLUMES]
    claim = {"name": "d", "persistentVolumeClaim": {"claimName": "data"}}
    templated = job()
    templated["spec"]["tasks"][0]["template"]["spec"]["volumes"] = [claim]
    assert refusals(tmp_path, {"queues": [{"name": "q"}], "jobs": [templated]}, "bare") == [CLAIM]
    ephemeral = pod({})
    ephemeral["spec"]["volumes"] = [{"name": "d", "ephemeral": {}}]
    assert refusals(tmp_path, {"pods": [ephemeral]}, "bare") == [CLAIM]


@pytest.mark.parametrize(
    ("queues", "message"),
    [
        (
            [],
            'unable to find job queue: queues.scheduling.volcano.sh "q" not found; '
            "(queues: default, root)",  # vspec's addition: the queues there are
        ),
        (
            [{"name": "q", "state": "Closed"}],
            "can only submit job to queue with state `Open`, queue `q` status is `Closed`;",
        ),
        (
            [{"name": "q"}, {"name": "child", "parent": "q"}],
            "can only submit job to leaf queue, queue `q` has 1 child queues;",
        ),
    ],
)
def test_the_jobs_queue_must_exist_be_open_and_be_a_leaf(
    tmp_path: Path, queues: list[Any], message: str
) -> None:
    assert job_refusal(tmp_path, job(), queues) == message


def test_a_job_in_the_root_queue_is_refused(tmp_path: Path) -> None:
    manifest = job()
    manifest["spec"]["queue"] = "root"
    assert (
        job_refusal(tmp_path, manifest, [{"name": "root"}]) == "can not submit job to root queue;"
    )


# -- pods ------------------------------------------------------------------------------------


def pod(annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "annotations": annotations},
        "spec": {"schedulerName": "volcano", "containers": [CONTAINER]},
    }


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        (
            {"scheduling.volcano.sh/queue-name": "gone"},
            'unable to find job queue: queues.scheduling.volcano.sh "gone" not found;',
        ),
        (
            {"volcano.sh/jdb-min-available": "0"},
            'invalid value <"0"> for volcano.sh/jdb-min-available, it must be a positive integer',
        ),
        (
            {"volcano.sh/jdb-max-unavailable": "100%"},
            'invalid value <"100%"> for volcano.sh/jdb-max-unavailable, it must be a valid '
            "percentage which between 1% ~ 99%",
        ),
        (
            {"volcano.sh/jdb-max-unavailable": "half"},
            'invalid value strconv.Atoi: parsing "half": invalid syntax for '
            "volcano.sh/jdb-max-unavailable",
        ),
        (
            {"volcano.sh/jdb-min-available": "2", "volcano.sh/jdb-max-unavailable": "10%"},
            "not allow configure multiple annotations <[volcano.sh/jdb-min-available "
            "volcano.sh/jdb-max-unavailable]> at same time",
        ),
    ],
)
def test_pod_webhook_rules_for_a_pod_of_no_group(
    tmp_path: Path, annotations: dict[str, str], message: str
) -> None:
    cluster = {"pods": [pod(annotations)]}
    assert refusals(tmp_path, cluster, "bare") == []
    assert refusals(tmp_path, cluster) == [DENY_POD + message]
    # Admitted long ago: a bound pod is not checked.
    cluster["pods"][0]["spec"]["nodeName"] = "n1"
    assert refusals(tmp_path, cluster) == []


def test_a_pod_of_no_group_with_a_good_budget_and_queue_is_admitted(tmp_path: Path) -> None:
    cluster = {
        "queues": [{"name": "q"}],
        "pods": [
            pod({"scheduling.volcano.sh/queue-name": "q", "volcano.sh/jdb-max-unavailable": "25%"})
        ],
    }
    assert refusals(tmp_path, cluster) == []


# -- queues ----------------------------------------------------------------------------------


def queue(name: str, hierarchy: str = "", weights: str = "", weight: int = 1) -> dict[str, Any]:
    annotations = {"volcano.sh/hierarchy": hierarchy, "volcano.sh/hierarchy-weights": weights}
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "annotations": annotations if hierarchy else {}},
        "spec": {"weight": weight},
    }


def test_a_queue_weight_below_one_is_refused(tmp_path: Path) -> None:
    assert refusals(tmp_path, {"queues": [queue("q", weight=-2)]}) == [
        DENY_QUEUE
        + "requestBody.spec.weight: Invalid value: -2: queue weight must be a positive integer"
    ]


def test_hierarchy_sub_path_rule_is_one_way(tmp_path: Path) -> None:
    deep, shallow = queue("dev", "root/sci/dev", "1/2/3"), queue("sci", "root/sci", "1/2")
    assert refusals(tmp_path, {"queues": [deep, shallow]}) == [
        DENY_QUEUE + 'requestBody.metadata.annotations: Invalid value: "root/sci": root/sci is '
        "not allowed to be in the sub path of root/sci/dev of queue dev"
    ]
    # Quirk kept: created in the other order, both are admitted.
    assert refusals(tmp_path, {"queues": [shallow, deep]}) == []
    assert refusals(tmp_path, {"queues": [deep, shallow]}, "bare") == []
