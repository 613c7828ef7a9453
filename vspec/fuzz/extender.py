"""A fake scheduler extender for the fuzzer: an HTTP service on 127.0.0.1 answering the
``extender`` plugin's verbs from the objects of the request, so that a drawn spec says
what the extender answers (labels and annotations of
:mod:`vspec.fuzz.strategies.features`):

- ``predicate``: a node labelled ``extender.vspec.io/verdict: reject`` is refused (the
  status message and code as an extender writes them; ``uncoded``: with no code, which
  Volcano makes an Error); ``fail`` answers HTTP 500; ``null`` a JSON null (no refusal);
- ``prioritize``: each node's ``extender.vspec.io/score`` label (0 without);
- ``preemptable`` / ``reclaimable``: every evictee but those whose pod carries the
  ``reject`` verdict, Permit (Abstain with none left); HTTP 500 when the evictor's pod
  carries ``fail``;
- ``jobEnqueueable``: Reject for a pod group annotated ``reject``, else Permit;
- ``queueOverused``: a queue annotated ``reject`` is overused;
- ``jobReady``: gang's rule (enough tasks allocated, bound, running or done), so that an
  extender never makes a partial gang ready;
- ``onSessionOpen`` / ``onSessionClose``: an empty body (Volcano reads none).

The service is started once per process, when the fuzzer first builds the extender's
argument strategy, and answers until the process ends (a daemon thread). A finding
written with its URL runs under ``vspec run`` against whatever listens there then:
nothing, mostly, which the extender plugin reports as a failed call.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hypothesis import strategies as st

from vspec.fuzz.strategies.features import EXTENDER_SCORE, EXTENDER_VERDICT
from vspec.plugins.extender import VERBS

Json = dict[str, Any]
Answer = Json | bytes | None  # a JSON answer, a raw body, or None for HTTP 500
UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens
# Go's TaskStatus bit flags of the tasks gang counts as ready (Allocated, Binding, Bound,
# Running, Succeeded): the wire format's, not vspec's enum.
_READY_STATUSES = (1 << 1, 1 << 3, 1 << 4, 1 << 5, 1 << 7)


def _verdict(meta: Mapping[str, Any] | None, where: str = "labels") -> str:
    return str(((meta or {}).get(where) or {}).get(EXTENDER_VERDICT, ""))


def _node_meta(node: Mapping[str, Any]) -> Mapping[str, Any]:
    return (node.get("Node") or {}).get("metadata") or {}


def _predicate(request: Json) -> Answer:
    verdict = _verdict(_node_meta(request["node"]))
    if verdict == "fail":
        return None
    if verdict == "reject":
        return {"status": "refused by the extender", "code": 3}
    if verdict == "uncoded":
        return {"status": "refused by the extender"}
    if verdict == "null":
        return b"null"
    return {}


def _prioritize(request: Json) -> Json:
    scores = {}
    for node in request.get("nodes") or ():  # Go encodes an empty slice as null
        raw = ((_node_meta(node).get("labels")) or {}).get(EXTENDER_SCORE, "0")
        scores[node["Name"]] = float(raw)
    return {"nodeScore": scores}


def _evictable(request: Json) -> Answer:
    evictor = (request.get("evictor") or {}).get("Pod") or {}
    if _verdict(evictor.get("metadata"), "annotations") == "fail":
        return None
    victims = [
        t
        for t in request.get("evictees") or ()
        if _verdict(t["Pod"]["metadata"], "annotations") != "reject"
    ]
    return {"status": 1 if victims else 0, "victims": victims}


def _enqueueable(request: Json) -> Json:
    group = request["job"].get("PodGroup")  # Volcano's internal PodGroup: metadata at the top
    return {"status": -1 if _verdict(group, "annotations") == "reject" else 1}


def _overused(request: Json) -> Json:
    queue = request["queue"]["Queue"]  # Volcano's internal Queue: metadata at the top
    return {"overused": _verdict(queue, "annotations") == "reject"}


def _ready(request: Json) -> Json:
    job = request["job"]
    ready = sum(1 for t in job["Tasks"].values() if t["Status"] in _READY_STATUSES)
    return {"status": ready >= job["MinAvailable"]}


def _nothing(_: Json) -> Answer:
    return b""


ANSWERS: dict[str, Callable[[Json], Answer]] = {
    "/onSessionOpen": _nothing,
    "/onSessionClose": _nothing,
    "/predicate": _predicate,
    "/prioritize": _prioritize,
    "/preemptable": _evictable,
    "/reclaimable": _evictable,
    "/jobEnqueueable": _enqueueable,
    "/queueOverused": _overused,
    "/jobReady": _ready,
}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        answer = ANSWERS.get(self.path)
        payload = answer(body) if answer is not None else None
        if payload is None:
            self.send_response(500)
            self.end_headers()
            return
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        """Silent: the fuzzer's output is its findings."""


@functools.cache
def fake_extender_url() -> str:
    """The URL of this process's fake extender, started on first use."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True, name="fake-extender").start()
    return f"http://127.0.0.1:{server.server_address[1]}"


@functools.cache
def extender_arguments() -> st.SearchStrategy[dict[str, Any]]:
    """The extender plugin's arguments: the fake extender (or, one time in three, an
    unreachable one: every call's failure path), ignorable or not, every verb but
    onSessionOpen asked (one time in three: the victims and queue verbs are then in
    play wherever the extender decides, and an unreachable extender that is not
    ignorable has its calls fail rather than register nothing) or each verb asked or
    not."""
    url = st.sampled_from([fake_extender_url()] * 2 + [UNREACHABLE])
    verbs = {f"extender.{verb}Verb": verb for verb in VERBS}
    some = st.fixed_dictionaries({}, optional={k: st.just(v) for k, v in verbs.items()})
    every = {k: v for k, v in verbs.items() if v != "onSessionOpen"}
    drawn = st.fixed_dictionaries(
        {
            "extender.urlPrefix": url,
            "extender.httpTimeout": st.just("1s"),
            "verbs": st.one_of(some, some, st.just(every)),
        },
        optional={"extender.ignorable": st.booleans()},
    )
    return drawn.map(_flat).map(_without_known_panic)


def _flat(arguments: dict[str, Any]) -> dict[str, Any]:
    """The drawn verbs beside the other arguments."""
    verbs = arguments.pop("verbs")
    return {**arguments, **verbs}


def _without_known_panic(arguments: dict[str, Any]) -> dict[str, Any]:
    """No prioritize call to an unreachable extender that is not ignorable: its failing
    batch scorer leaves allocate no best node, where Volcano dereferences nil and panics
    (the engine's crash-allocate, a known outcome rather than a finding)."""
    if arguments["extender.urlPrefix"] == UNREACHABLE and not arguments.get("extender.ignorable"):
        arguments.pop("extender.prioritizeVerb", None)
    return arguments
