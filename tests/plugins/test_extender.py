"""extender: session functions answered over HTTP; failures ignorable or not."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.builders import node, pod, pod_group, queue, session, task
from vspec.api.unschedule_info import FitError
from vspec.model.objects import Cluster

ANSWERS: dict[str, Any] = {
    "/predicate": lambda req: (
        {"status": "no GPU here", "code": 3} if req["node"]["Name"] == "n2" else {}
    ),
    "/prioritize": lambda req: {"nodeScore": {n["Name"]: 10.0 for n in req["nodes"]}},
    "/preemptable": lambda req: {"status": 1, "victims": req["evictees"][:1]},
    "/jobEnqueueable": lambda req: {"status": -1 if req["job"]["Name"] == "big" else 1},
    "/queueOverused": lambda req: {"overused": req["queue"]["Name"] == "full"},
    "/jobReady": lambda req: {"status": True},
    "/open": lambda req: {},
}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answer = ANSWERS.get(self.path)
        if answer is None:
            self.send_response(500)
            self.end_headers()
            return
        payload = json.dumps(answer(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        """Silence the test server."""


@pytest.fixture(scope="module")
def extender_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def _entry(url: str, **extra: Any) -> dict[str, Any]:
    arguments = {
        "extender.urlPrefix": url,
        "extender.onSessionOpenVerb": "open",
        "extender.predicateVerb": "predicate",
        "extender.prioritizeVerb": "prioritize",
        "extender.preemptableVerb": "preemptable",
        "extender.jobEnqueueableVerb": "jobEnqueueable",
        "extender.queueOverusedVerb": "queueOverused",
        "extender.jobReadyVerb": "jobReady",
        **extra,
    }
    return {
        "name": "extender",
        "enablePredicate": True,
        "enableNodeOrder": True,
        "enablePreemptable": True,
        "enableJobEnqueued": True,
        "enabledOverused": True,
        "enableJobReady": True,
        "arguments": arguments,
    }


def _cluster() -> Cluster:
    return Cluster(
        nodes=[node(n, {"cpu": 4, "pods": 10}) for n in ("n1", "n2")],
        queues=[queue("q1"), queue("full")],
        pod_groups=[pod_group("ns", "small", "q1"), pod_group("ns", "big", "q1")],
        pods=[
            pod("ns", "p1", "small", {"cpu": 1}),
            pod("ns", "r1", "big", {"cpu": 1}, phase="Running", node_name="n1"),
            pod("ns", "r2", "big", {"cpu": 1}, phase="Running", node_name="n1"),
        ],
    )


def test_verbs_are_answered_by_the_extender(extender_url: str) -> None:
    ssn = session(_cluster(), [_entry(extender_url)])
    p1 = task(ssn, "ns/p1")
    ssn.predicate_fn(p1, ssn.nodes["n1"])
    with pytest.raises(FitError, match="no GPU here") as info:
        ssn.predicate_fn(p1, ssn.nodes["n2"])
    assert info.value.statuses[0].code == 3
    assert ssn.batch_node_order_fn(p1, [ssn.nodes["n1"], ssn.nodes["n2"]]) == {
        "n1": 10.0,
        "n2": 10.0,
    }
    victims = ssn.preemptable(p1, [task(ssn, "ns/r1"), task(ssn, "ns/r2")])
    assert [v.name for v in victims] == ["r1"]
    assert ssn.job_enqueueable(ssn.jobs["ns/small"]) is True
    assert ssn.job_enqueueable(ssn.jobs["ns/big"]) is False
    assert ssn.overused(ssn.queues["full"]) is True
    assert ssn.overused(ssn.queues["q1"]) is False
    assert ssn.job_ready(ssn.jobs["ns/small"]) is True


def test_unreachable_extender_not_ignorable_registers_nothing() -> None:
    url = "http://127.0.0.1:9/"  # discard port: nothing listens
    ssn = session(_cluster(), [_entry(url, **{"extender.httpTimeout": "200ms"})])
    assert ssn.registered("predicate", "extender") is None
    assert any(t.startswith("OnSessionClose failed with error Post") for t in ssn.log.texts())
    # Go's net/http wording, as the real scheduler logs it (measured on Volcano v1.10.0).
    assert any(
        t.endswith(
            'Post "http://127.0.0.1:9/open": dial tcp 127.0.0.1:9: connect: connection refused'
        )
        for t in ssn.log.texts()
    ), ssn.log.texts()


def test_unreachable_extender_ignorable_passes_everything() -> None:
    url = "http://127.0.0.1:9/"
    entry = _entry(url, **{"extender.httpTimeout": "200ms", "extender.ignorable": True})
    ssn = session(_cluster(), [entry])
    p1 = task(ssn, "ns/p1")
    ssn.predicate_fn(p1, ssn.nodes["n2"])
    assert ssn.job_enqueueable(ssn.jobs["ns/big"]) is True
    assert ssn.overused(ssn.queues["full"]) is False
    assert ssn.batch_node_order_fn(p1, [ssn.nodes["n1"]]) == {}


def test_failing_verb_without_ignorable(extender_url: str) -> None:
    arguments = {"extender.jobReadyVerb": "missing", "extender.queueOverusedVerb": "missing"}
    ssn = session(_cluster(), [_entry(extender_url, **arguments)])
    # Volcano answers "not ignorable" for both: overused, and (sic) ready.
    assert ssn.overused(ssn.queues["q1"]) is True
    assert ssn.job_ready(ssn.jobs["ns/small"]) is True
    assert any("failed missing with extender at URL" in t for t in ssn.log.texts())


def test_a_pod_group_and_a_queue_are_sent_as_go_encodes_volcano_s_internal_types() -> None:
    """api.PodGroup and QueueInfo.Queue hold the internal scheduling types, whose fields
    have no json tags: encoding/json promotes the embedded ObjectMeta's fields and keeps
    Go's field names for the rest (an extender reading "metadata" finds nothing)."""
    from vspec.plugins.extender import job_json, queue_json

    ssn = session(
        Cluster(
            queues=[queue("q1", weight=3)],
            pod_groups=[pod_group("ns", "pg", "q1", min_member=1, annotations={"tier": "x"})],
            pods=[pod("ns", "p1", "pg", {"cpu": 1})],
        ),
        [],
    )
    group = job_json(next(iter(ssn.jobs.values())))["PodGroup"]
    assert group["annotations"] == {"tier": "x"} and group["name"] == "pg"
    assert "metadata" not in group and "spec" not in group
    assert group["Spec"]["MinMember"] == 1 and group["Spec"]["Queue"] == "q1"
    assert group["Version"] == "v1beta1"
    internal = queue_json(ssn.queues["q1"])["Queue"]
    assert internal["name"] == "q1" and internal["Spec"]["Weight"] == 3
