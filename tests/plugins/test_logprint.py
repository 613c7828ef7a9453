"""logprint: the lines the seed's Go plugin prints, character for character.

The expected strings are derived by hand from the Go sources: the seed's logprint.go
(github.com/Stringxy/volcano-custom-plugin-demo pkg/scheduler/plugins/logprint/logprint.go
lines 46-56), Volcano v1.11.0 pkg/scheduler/api/job_info.go (``TaskInfo.String`` lines
311-322, ``JobInfo.String`` lines 691-701, ``IsReady`` 1032-1034, ``IsPending`` 1045-1049)
and resource_info.go ``Resource.String``, the PodGroup structs of volcano.sh/apis v1.11.0
pkg/apis/scheduling/types.go and k8s.io/apimachinery v0.31.3 pkg/apis/meta/v1/types.go,
printed by Go's fmt rules (%+v names struct fields; maps print sorted; nil pointers <nil>).
"""

from __future__ import annotations

from datetime import UTC, datetime

from tests.builders import node, pod, pod_group, queue
from vspec.framework.scheduler import simulate
from vspec.model.conf import load_conf
from vspec.model.corev1 import Condition
from vspec.model.objects import Cluster
from vspec.model.result import LogLine

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def _cluster() -> Cluster:
    running = pod_group("c1", "running", "q1", min_member=1, phase="Running", creation=T0)
    running.meta.uid = "uid-running"
    running.meta.labels = {"team": "b", "app": "a"}
    running.min_task_member = {"web": 1}
    running.conditions = [Condition("Scheduled", "True", "ok", "", "tx", T0)]
    return Cluster(
        nodes=[node("n1", {"cpu": "2", "memory": "2Gi", "pods": "10"})],
        pods=[
            pod("c1", "w1", "waiting", {"cpu": "4"}),
            pod("c1", "r1", "running", {"cpu": "1"}, phase="Running", node_name="n1"),
            pod("c1", "e1", "empty-gang", {"cpu": "1"}),
        ],
        pod_groups=[
            pod_group("c1", "waiting", "q1", min_member=1),
            running,
            pod_group("c1", "empty-gang", "q1", min_member=0),
        ],
        queues=[queue("q1")],
    )


def _logs(tiers: list[list[dict[str, object]]], verbosity: int = 1) -> list[LogLine]:
    conf = load_conf(
        {"actions": "print", "tiers": [{"plugins": t} for t in tiers]},
        default_plugin_flags=True,
    )
    return simulate(conf, _cluster(), verbosity=verbosity).logs


def _job_lines(tiers: list[list[dict[str, object]]]) -> list[str]:
    return [line.text for line in _logs(tiers) if line.text.startswith("Job ")]


ZERO = "0001-01-01 00:00:00 +0000 UTC"
RUNNING_POD_GROUP = (
    "&{PodGroup:{TypeMeta:{Kind: APIVersion:} ObjectMeta:{Name:running GenerateName: "
    "Namespace:c1 SelfLink: UID:uid-running ResourceVersion: Generation:0 "
    "CreationTimestamp:2026-12-01 08:00:00 +0000 UTC DeletionTimestamp:<nil> "
    "DeletionGracePeriodSeconds:<nil> Labels:map[app:a team:b] Annotations:map[] "
    "OwnerReferences:[] Finalizers:[] ManagedFields:[]} Spec:{MinMember:1 "
    "MinTaskMember:map[web:1] Queue:q1 PriorityClassName: MinResources:<nil>} "
    "Status:{Phase:Running Conditions:[{Type:Scheduled Status:True TransitionID:tx "
    "LastTransitionTime:2026-12-01 08:00:00 +0000 UTC Reason:ok Message:}] Running:0 "
    "Succeeded:0 Failed:0}} Version:v1beta1}"
)
EMPTY_POD_GROUP = (
    "&{PodGroup:{TypeMeta:{Kind: APIVersion:} ObjectMeta:{Name:empty-gang GenerateName: "
    "Namespace:c1 SelfLink: UID: ResourceVersion: Generation:0 "
    f"CreationTimestamp:{ZERO} DeletionTimestamp:<nil> "
    "DeletionGracePeriodSeconds:<nil> Labels:map[] Annotations:map[] "
    "OwnerReferences:[] Finalizers:[] ManagedFields:[]} Spec:{MinMember:0 "
    "MinTaskMember:map[] Queue:q1 PriorityClassName: MinResources:<nil>} "
    "Status:{Phase:Pending Conditions:[] Running:0 Succeeded:0 Failed:0}} Version:v1beta1}"
)


def test_pending_and_ready_lines_are_the_go_plugins() -> None:
    lines = _job_lines([[{"name": "gang"}, {"name": "logprint"}]])
    assert lines == [
        # Three %s verbs, two arguments: Go prints %!s(MISSING).
        "Job c1/waiting is pending, try to schedule it on node %!s(MISSING)",
        "Job c1/running is ready, detail info : Job (c1/running): namespace c1 (q1), "
        f"name running, minAvailable 1, podGroup {RUNNING_POD_GROUP}, preemptable false, "
        "revocableZone , minAvailable , maxAvailable "
        "\n\t 0: Task (c1-r1:c1/r1): taskSpec , job c1/running, status Running, pri 1, "
        "resreq cpu 1000.00, memory 0.00, pods 1.00, preemptable true, revocableZone , "
        "numaInfo { map[]}",
        # minMember 0: IsPending and IsReady at once, so both lines.
        "Job c1/empty-gang is pending, try to schedule it on node %!s(MISSING)",
        "Job c1/empty-gang is ready, detail info : Job (c1/empty-gang): namespace c1 (q1), "
        f"name empty-gang, minAvailable 0, podGroup {EMPTY_POD_GROUP}, preemptable false, "
        "revocableZone , minAvailable , maxAvailable "
        "\n\t 0: Task (c1-e1:c1/e1): taskSpec , job c1/empty-gang, status Pending, pri 1, "
        "resreq cpu 1000.00, memory 0.00, pods 1.00, preemptable true, revocableZone , "
        "numaInfo { map[]}",
    ]


def test_ready_is_is_ready_not_the_sessions_job_ready() -> None:
    # Without gang the session's JobReady accepts every job; logprint still asks
    # JobInfo.IsReady, so the waiting job (0 of 1 ready) has no ready line.
    lines = _job_lines([[{"name": "logprint"}]])
    assert not any(line.startswith("Job c1/waiting is ready") for line in lines)
    assert sum(" is ready, detail info : " in line for line in lines) == 2


def test_session_open_lines_at_v5() -> None:
    conf = [[{"name": "logprint", "arguments": {"b": True, "a": "x", "n": 2}}]]
    lines = [(line.text, line.source) for line in _logs(conf, verbosity=5)]
    assert ("Enter logPrint plugin ...", "logprint.go:46") in lines
    # %s of framework.Arguments (map[string]interface{}): sorted keys, bad verbs for
    # the non-strings.
    leaving = "Leaving logPrint plugin. map[a:x b:%!s(bool=true) n:%!s(int=2)] ..."
    assert (leaving, "logprint.go:48") in lines
    assert ("Enter Print Action ...", "print.go:56") in lines
    assert lines.index(("Leaving Action ...", "print.go:63")) > max(
        i for i, (text, _) in enumerate(lines) if text.startswith("Job ")
    )


def test_sources_of_the_job_lines() -> None:
    logs = _logs([[{"name": "gang"}, {"name": "logprint"}]])
    sources = {line.text.split(" is ")[1].split(",")[0]: line.source for line in logs}
    assert sources == {"pending": "logprint.go:53", "ready": "logprint.go:56"}


def test_nothing_below_verbosity_one() -> None:
    conf = [[{"name": "gang"}, {"name": "logprint"}]]
    assert not [line for line in _logs(conf, verbosity=0) if line.text.startswith("Job ")]


def test_the_lines_are_what_go_fmt_renders_from_the_plugins_formats() -> None:
    """The plugin writes its two lines as f-strings: they must be fmt.Sprintf's of the
    Go formats, the pending line's missing third argument included."""
    from vspec.gofmt import sprintf
    from vspec.plugins.logprint import PENDING_FORMAT, READY_FORMAT, pending_text, ready_text

    for namespace, name, detail in [("default", "j-1", "Job (x)\n\t 0: Task"), ("ns", "a", "")]:
        assert pending_text(namespace, name) == sprintf(PENDING_FORMAT, namespace, name)
        assert ready_text(namespace, name, detail) == sprintf(READY_FORMAT, namespace, name, detail)


def test_a_job_printed_again_in_its_session_shows_its_tasks_new_statuses() -> None:
    # logprint keeps a job's printed tasks with the job's version: the second print of
    # the session sees the task allocate placed in between, not the first print's text.
    conf = load_conf(
        {
            "actions": "print, allocate, print",
            "tiers": [{"plugins": [{"name": "gang"}, {"name": "logprint"}]}],
        },
        default_plugin_flags=True,
    )
    lines = [
        line.text
        for line in simulate(conf, _cluster(), verbosity=1).logs
        if line.text.startswith("Job c1/empty-gang is ready")
    ]
    assert len(lines) == 2
    assert "0: Task (c1-e1:c1/e1): taskSpec , job c1/empty-gang, status Pending," in lines[0]
    assert "status Pending" not in lines[1] and "0: Task (c1-e1:c1/e1)" in lines[1]
