"""extender: delegate scheduling decisions to an HTTP service
(``plugins/extender/extender.go``, ``argument.go``).

Each configured verb becomes a POST of a JSON request to ``<urlPrefix>/<verb>``; the
JSON answer decides. An unreachable or failing extender is skipped when
``extender.ignorable`` is true (predicate passes, votes Permit, not overused, ready);
otherwise the predicate fails, votes Reject and the queue is overused, but (a Volcano
quirk) the job is ready, and a failed ``onSessionOpen`` call registers nothing at all.

Requests carry the session objects in the shape of Volcano's Go structs (field names as
Go encodes them), reduced to the fields a policy reads. Victims an extender returns are
matched back to the candidates by UID.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from vspec.api.job_info import JobInfo
from vspec.api.node_info import NodeInfo
from vspec.api.queue_info import QueueInfo
from vspec.api.resource import Resource
from vspec.api.task_info import TaskInfo
from vspec.api.types import PERMIT, REJECT, Code, Status
from vspec.api.unschedule_info import FitError
from vspec.errors import GoError
from vspec.framework.arguments import Arguments
from vspec.framework.interface import ArgumentSpec, BoolArgument, Plugin
from vspec.framework.registry import register_plugin
from vspec.golang import parse_duration
from vspec.model.objects import ObjectMeta

if TYPE_CHECKING:
    from vspec.framework.session import Session

URL_PREFIX = "extender.urlPrefix"
HTTP_TIMEOUT = "extender.httpTimeout"
IGNORABLE = "extender.ignorable"
IGNORABLE_ARG = BoolArgument(IGNORABLE, False, "skip the extender when it fails")
VERBS = (
    "onSessionOpen",
    "onSessionClose",
    "predicate",
    "prioritize",
    "preemptable",
    "reclaimable",
    "queueOverused",
    "jobEnqueueable",
    "jobReady",
)
DEFAULT_TIMEOUT = timedelta(seconds=1)

Json = dict[str, Any]


def _go_transport_error(url: str, reason: object) -> str:
    """What Go's net/http says where Python's urllib gave ``reason``: the extender's error
    text reaches the Unschedulable condition and the log, so it is Go's wording (for the
    failures a spec can stage: nothing listening, a timeout); any other reason as Python
    gives it."""
    import socket
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname or ""
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(reason, ConnectionRefusedError):
        return f"dial tcp {address}: connect: connection refused"
    if isinstance(reason, TimeoutError | socket.timeout):
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    return str(reason)


class ExtenderError(GoError):
    """The extender could not be asked, or did not answer 200 with JSON."""


# -- requests in the shape of Volcano's Go structs ----------------------------------------------
def resource_json(r: Resource) -> Json:
    return {
        "MilliCPU": r.milli_cpu,
        "Memory": r.memory,
        "ScalarResources": dict(r.scalars) or None,
        "MaxTaskNum": r.max_task_num,
    }


def meta_json(meta: ObjectMeta) -> Json:
    out: Json = {"name": meta.name, "uid": meta.uid}
    if meta.namespace:
        out["namespace"] = meta.namespace
    if meta.labels:
        out["labels"] = meta.labels
    if meta.annotations:
        out["annotations"] = meta.annotations
    return out


def task_json(task: TaskInfo) -> Json:
    return {
        "UID": task.uid,
        "Job": task.job,
        "Name": task.name,
        "Namespace": task.namespace,
        "TaskRole": task.task_role,
        "Resreq": resource_json(task.resreq),
        "InitResreq": resource_json(task.init_resreq),
        "NodeName": task.node_name,
        "Status": int(task.status),
        "Priority": task.priority,
        "Preemptable": task.preemptable,
        "BestEffort": task.best_effort,
        "RevocableZone": task.revocable_zone,
        "Pod": {"metadata": meta_json(task.pod.meta), "status": {"phase": task.pod.phase}},
    }


def node_json(node: NodeInfo) -> Json:
    return {
        "Name": node.name,
        "Node": {"metadata": meta_json(node.node.meta)} if node.node is not None else None,
        "Releasing": resource_json(node.releasing),
        "Pipelined": resource_json(node.pipelined),
        "Idle": resource_json(node.idle),
        "Used": resource_json(node.used),
        "Allocatable": resource_json(node.allocatable),
        "Capacity": resource_json(node.capacity),
        "Tasks": {key: task_json(t) for key, t in node.tasks.items()},
        "RevocableZone": node.revocable_zone,
    }


def job_json(job: JobInfo) -> Json:
    pg = job.pod_group
    pod_group = None
    if pg is not None:
        # api.PodGroup embeds the internal scheduling.PodGroup, whose fields carry no
        # json tags: its ObjectMeta's fields sit at the top and Spec/Status keep Go's names.
        pod_group = {
            **meta_json(pg.meta),
            "Spec": {
                "MinMember": pg.min_member,
                "Queue": pg.queue,
                "MinResources": {k: str(v) for k, v in (pg.min_resources or {}).items()} or None,
            },
            "Status": {"Phase": pg.phase},
            "Version": "v1beta1",
        }
    return {
        "UID": job.uid,
        "Name": job.name,
        "Namespace": job.namespace,
        "Queue": job.queue,
        "Priority": job.priority,
        "MinAvailable": job.min_available,
        "Tasks": {uid: task_json(t) for uid, t in job.tasks.items()},
        "Allocated": resource_json(job.allocated),
        "TotalRequest": resource_json(job.total_request),
        "Preemptable": job.preemptable,
        "PodGroup": pod_group,
    }


def queue_json(queue: QueueInfo) -> Json:
    spec = queue.queue
    return {
        "UID": queue.uid,
        "Name": queue.name,
        "Weight": queue.weight,
        "Hierarchy": queue.hierarchy,
        "Weights": queue.weights,
        # The internal scheduling.Queue: no json tags, as api.PodGroup's (job_json).
        "Queue": {
            **meta_json(spec.meta),
            "Spec": {
                "Weight": spec.weight,
                "Capability": {k: str(v) for k, v in spec.capability.items()},
                "Priority": spec.priority,
            },
        },
    }


# -- the plugin ----------------------------------------------------------------------------------
def _as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@register_plugin
class ExtenderPlugin(Plugin):
    """Session functions answered by an HTTP extender (POST <urlPrefix>/<verb>)."""

    name: ClassVar[str] = "extender"
    arguments_spec: ClassVar[tuple[ArgumentSpec, ...]] = (
        ArgumentSpec(URL_PREFIX, "string", "", "base URL of the extender, e.g. http://127.0.0.1"),
        ArgumentSpec(HTTP_TIMEOUT, "duration", "1s", "timeout of each call"),
        IGNORABLE_ARG,
        *(
            ArgumentSpec(f"extender.{verb}Verb", "string", "", f"path of the {verb} call")
            for verb in VERBS
        ),
    )

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(arguments)

        def text(key: str) -> str:
            value = arguments.get(key)
            return value if isinstance(value, str) else ""

        self.url_prefix = text(URL_PREFIX)
        self.verbs = {verb: text(f"extender.{verb}Verb") for verb in VERBS}
        self.ignorable = IGNORABLE_ARG.read(arguments)
        self.timeout = DEFAULT_TIMEOUT
        raw_timeout = text(HTTP_TIMEOUT)
        if raw_timeout:
            with contextlib.suppress(ValueError):  # an unparsable timeout keeps 1s
                self.timeout = parse_duration(raw_timeout)

    def send(self, verb: str, request: Json) -> Any:
        """POST ``request`` to the verb's URL; the decoded JSON answer."""
        # Imported here: urllib.request (with ssl and http.client) is a tenth of every
        # `vspec run`'s start-up, and only a conf with an extender sends anything.
        import urllib.error
        import urllib.request

        action = self.verbs[verb]
        url = self.url_prefix.rstrip("/") + "/" + action
        body = json.dumps(request).encode()
        http_request = urllib.request.Request(
            url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        # Errors are raised after their except block, not from it: the caught error would
        # stay the new one's __context__ (``from None`` only hides it), and its traceback's
        # frames hold the session, a cycle that outlives the run of every failed call.
        failure = ""
        try:
            with urllib.request.urlopen(
                http_request, timeout=self.timeout.total_seconds()
            ) as response:
                payload = response.read()
        except urllib.error.HTTPError as err:
            failure = f"failed {action} with extender at URL {url}, code {err.code}"
        except (urllib.error.URLError, OSError, ValueError) as err:
            failure = f'Post "{url}": {_go_transport_error(url, getattr(err, "reason", err))}'
        if failure:
            raise ExtenderError(failure)
        if not payload:
            return {}
        try:
            return json.loads(payload)
        except json.JSONDecodeError as err:
            failure = str(err)
        raise ExtenderError(failure)

    def _ask(self, ssn: Session, verb: str, what: str, request: Json) -> Mapping[str, Any] | None:
        """The answer as a mapping, or None (logged) when the call failed."""
        try:
            answer = self.send(verb, request)
        except ExtenderError as err:
            ssn.log.warning(f"{what} failed with error {err}")
            return None
        return answer if isinstance(answer, Mapping) else {}

    def on_session_open(self, ssn: Session) -> None:
        ssn.log.v(4, f"Initialize extender plugin with endpoint address {self.url_prefix}")
        if self.verbs["onSessionOpen"]:
            request = {
                "Jobs": {uid: job_json(j) for uid, j in ssn.jobs.items()},
                "Nodes": {name: node_json(n) for name, n in ssn.nodes.items()},
                "Queues": {name: queue_json(q) for name, q in ssn.queues.items()},
                "NamespaceInfo": {},
                "RevocableNodes": {name: node_json(n) for name, n in ssn.revocable_nodes.items()},
                "NodeList": None,
            }
            # Quirk kept: Volcano logs an open failure as "OnSessionClose failed".
            answer = self._ask(ssn, "onSessionOpen", "OnSessionClose", request)
            if answer is None and not self.ignorable:
                # Quirk kept: a failed open registers nothing at all.
                return
        verbs = self.verbs
        if verbs["predicate"]:
            self._register_predicate(ssn)
        if verbs["prioritize"]:
            self._register_prioritize(ssn)
        for verb in ("preemptable", "reclaimable"):
            if verbs[verb]:
                self._register_evictable(ssn, verb)
        if verbs["jobEnqueueable"]:
            self._register_job_enqueueable(ssn)
        if verbs["queueOverused"]:
            self._register_queue_overused(ssn)
        if verbs["jobReady"]:
            self._register_job_ready(ssn)

    def on_session_close(self, ssn: Session) -> None:
        if self.verbs["onSessionClose"]:
            self._ask(ssn, "onSessionClose", "OnSessionClose", {})

    def _register_predicate(self, ssn: Session) -> None:
        def predicate(task: TaskInfo, node: NodeInfo) -> None:
            try:
                answer = self.send("predicate", {"task": task_json(task), "node": node_json(node)})
            except ExtenderError as err:
                ssn.log.warning(f"Predicate failed with error {err}")
                failure = str(err)
            else:
                failure = ""
            if failure:  # raised here, not in the except block (see send)
                if self.ignorable:
                    return
                raise FitError.of(task, node.name, failure)
            if not isinstance(answer, Mapping):
                return
            message = answer.get("status")
            if not isinstance(message, str) or not message:
                return
            code = _as_int(answer.get("code"))
            if code == Code.Success:
                code = Code.Error
            status_code = Code(code) if code in Code._value2member_map_ else Code.Error
            raise FitError.with_status(task, node.name, Status(status_code, message, self.name))

        ssn.add_predicate_fn(self.name, predicate)

    def _register_prioritize(self, ssn: Session) -> None:
        def prioritize(task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
            request = {"task": task_json(task), "nodes": [node_json(n) for n in nodes]}
            try:
                answer = self.send("prioritize", request)
            except ExtenderError as err:
                ssn.log.warning(f"Prioritize failed with error {err}")
                if self.ignorable:
                    return {}
                raise
            if not isinstance(answer, Mapping):
                answer = {}
            scores = answer.get("nodeScore")
            message = answer.get("errorMessage") or ""
            if not message and isinstance(scores, Mapping):
                return {str(k): float(v) for k, v in scores.items()}
            raise ExtenderError(str(message))

        ssn.add_batch_node_order_fn(self.name, prioritize)

    def _register_evictable(self, ssn: Session, verb: str) -> None:
        what = "Preemptable" if verb == "preemptable" else "Reclaimable"

        def evictable(evictor: TaskInfo, evictees: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
            request = {"evictor": task_json(evictor), "evictees": [task_json(t) for t in evictees]}
            answer = self._ask(ssn, verb, what, request)
            if answer is None:
                return [], PERMIT if self.ignorable else REJECT
            wanted = {v.get("UID") for v in answer.get("victims") or () if isinstance(v, Mapping)}
            victims = [t for t in evictees if t.uid in wanted]
            return victims, _as_int(answer.get("status"))

        if verb == "preemptable":
            ssn.add_preemptable_fn(self.name, evictable)
        else:
            ssn.add_reclaimable_fn(self.name, evictable)

    def _register_job_enqueueable(self, ssn: Session) -> None:
        def job_enqueueable(job: JobInfo) -> int:
            answer = self._ask(ssn, "jobEnqueueable", "JobEnqueueable", {"job": job_json(job)})
            if answer is None:
                return PERMIT if self.ignorable else REJECT
            return _as_int(answer.get("status"))

        ssn.add_job_enqueueable_fn(self.name, job_enqueueable)

    def _register_queue_overused(self, ssn: Session) -> None:
        def overused(queue: QueueInfo) -> bool:
            answer = self._ask(ssn, "queueOverused", "QueueOverused", {"queue": queue_json(queue)})
            if answer is None:
                return not self.ignorable
            return answer.get("overused") is True

        ssn.add_overused_fn(self.name, overused)

    def _register_job_ready(self, ssn: Session) -> None:
        def job_ready(job: JobInfo) -> bool:
            answer = self._ask(ssn, "jobReady", "JobReady", {"job": job_json(job)})
            if answer is None:
                # Quirk kept: a failed call makes the job ready unless ignorable.
                return not self.ignorable
            return answer.get("status") is True

        ssn.add_job_ready_fn(self.name, job_ready)
