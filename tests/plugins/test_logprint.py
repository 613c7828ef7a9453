"""logprint: what the print action makes it log."""

from __future__ import annotations

import re

from extra_builders import node, pod, pod_group, queue

from vspec.framework.scheduler import simulate
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster

GO_VERB = re.compile(r"%[!+#\-0-9.]*[a-zA-Z]")


def _cluster() -> Cluster:
    return Cluster(
        nodes=[node("n1", {"cpu": "2", "memory": "2Gi", "pods": "10"})],
        pods=[
            pod("c1", "w1", "waiting", {"cpu": "4"}),
            pod("c1", "r1", "running", {"cpu": "1"}, phase="Running", node_name="n1"),
            pod("c1", "e1", "empty-gang", {"cpu": "1"}),
        ],
        pod_groups=[
            pod_group("c1", "waiting", "q1", min_member=1),
            pod_group("c1", "running", "q1", min_member=1, phase="Running"),
            pod_group("c1", "empty-gang", "q1", min_member=0),
        ],
        queues=[queue("q1")],
    )


def _lines(tiers: list[list[dict[str, object]]], verbosity: int = 1) -> list[str]:
    conf = load_conf(
        {"actions": "print", "tiers": [{"plugins": t} for t in tiers]},
        default_plugin_flags=True,
    )
    result = simulate(conf, _cluster(), verbosity=verbosity)
    return [line.text for line in result.logs if line.text.startswith("Job ")]


def test_pending_and_ready_lines() -> None:
    lines = _lines([[{"name": "gang"}, {"name": "logprint"}]])
    assert lines == [
        "Job c1/waiting is pending: phase <Pending>, 1 of 1 tasks pending, minAvailable 1, "
        "queue <q1>",
        "Job c1/running is ready: minAvailable 1, ready tasks 1/1, queue <q1>, phase <Running>",
        # minMember 0: pending and ready at once, so both lines.
        "Job c1/empty-gang is pending: phase <Pending>, 1 of 1 tasks pending, "
        "minAvailable 0, queue <q1>",
        "Job c1/empty-gang is ready: minAvailable 0, ready tasks 0/1, queue <q1>, phase <Pending>",
    ]
    assert not any(GO_VERB.search(line) for line in lines)


def test_ready_is_the_session_verdict() -> None:
    # Without gang's JobReady every job is ready.
    lines = _lines([[{"name": "logprint"}]])
    assert lines[1] == (
        "Job c1/waiting is ready: minAvailable 1, ready tasks 0/1, queue <q1>, phase <Pending>"
    )
    assert sum(" is ready: " in line for line in lines) == 3


def test_nothing_below_verbosity_one() -> None:
    assert _lines([[{"name": "gang"}, {"name": "logprint"}]], verbosity=0) == []
