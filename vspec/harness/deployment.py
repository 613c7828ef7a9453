"""The cluster as a deployed Volcano v1.11.0 sees it (cluster mode ``deployed``).

Volcano's unit tests hand the scheduler a bare cache. A running installation does not:
the scheduler creates the ``root`` and ``default`` queues at start-up, the queue
controller gives every queue a parent, and the admission webhooks fill in defaults and
refuse some objects outright. :func:`deploy_queues` and :func:`admit_pods` apply those
rules to a loaded cluster (:mod:`vspec.harness.vcjob` those for Volcano Jobs), so a spec
written from a real cluster behaves as it would there. A refusal is a
:class:`SpecError` at the refused object, worded as ``kubectl`` prints the webhook's
answer. Which rules are modelled, each with its source file, is listed in
docs/spec-format.md ("Cluster modes").

Cluster mode ``bare`` skips all of this (the translated Go unit-test cases need it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence

from vspec.errors import Location, SpecError
from vspec.harness.yamlload import At
from vspec.model.conf import SchedulerOptions
from vspec.model.objects import QUEUE_NAME_ANNOTATION, Cluster, ObjectMeta, Pod, PodGroup, Queue

ROOT_QUEUE = "root"
DEFAULT_QUEUE = "default"  # schedulingv1beta1.DefaultQueue, what the webhooks write
QUEUE_OPEN = "Open"
HIERARCHY_ANNOTATION = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS_ANNOTATION = "volcano.sh/hierarchy-weights"
# A pod's disruption budget (validate/admit_pod.go, validateAnnotation), in Volcano's order.
JDB_ANNOTATIONS = ("volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable")
_ATOI = re.compile(r"[+-]?[0-9]+", re.ASCII)


class AdmissionRefused(SpecError):
    """A webhook of Volcano would refuse this object: it never reaches the cluster."""

    def __init__(self, webhook: str, message: str, location: Location | None) -> None:
        super().__init__(f'admission webhook "{webhook}" denied the request: {message}', location)
        self.webhook = webhook
        self.reason = message


def deploy_queues(cluster: Cluster, options: SchedulerOptions) -> None:
    """The queues as a running Volcano has them: each admitted, then the scheduler's
    start-up queues and the queue controller's parents. Jobs and pods are admitted
    against them (:func:`admit_pods`)."""
    for index, queue in enumerate(cluster.queues):
        admit_queue(queue, cluster.queues[:index])
    _add_startup_queues(cluster, options.default_queue)
    for queue in cluster.queues:
        _adopt_by_root(queue)
    queues = {q.meta.name: q for q in cluster.queues}
    for queue in cluster.queues:
        _check_parent(queue, queues)


def admit_pods(
    cluster: Cluster, options: SchedulerOptions, queue_keys: Mapping[str, At] | None = None
) -> None:
    """Every declared pod through the pod webhook. A refusal for a queue that does not
    exist is reported where the pod group names it (``queue_keys``: pod group -> its
    ``queue`` key, where written), with a did-you-mean among the queues."""
    queues = {q.meta.name: q for q in cluster.queues}
    pod_groups = {pg.meta.key: pg.queue for pg in cluster.pod_groups}
    for pod in cluster.pods:
        try:
            admit_pod(pod, options.scheduler_names, pod_groups, queues)
        except AdmissionRefused as exc:
            group = f"{pod.meta.namespace}/{pod.group_name}"
            queue = pod_groups.get(group)
            if queue is None or queue in queues:
                raise
            raise _unknown_queue(exc, pod, queue, queues, (queue_keys or {}).get(group)) from None


def _unknown_queue(
    exc: AdmissionRefused, pod: Pod, queue: str, queues: Mapping[str, Queue], at: At | None
) -> AdmissionRefused:
    return AdmissionRefused(
        exc.webhook,
        f"{exc.reason} (pod {pod.meta.key}; {queue_hint(queue, queues)})",
        at.location() if at is not None else exc.location,
    )


def queue_hint(name: str, queues: Mapping[str, Queue]) -> str:
    """vspec's addition to a webhook's "queue not found": the declared queue meant."""
    import difflib  # for an error only

    hint = difflib.get_close_matches(name, sorted(queues), n=1, cutoff=0.6)
    return f"did you mean {hint[0]!r}?" if hint else f"queues: {', '.join(sorted(queues))}"


def default_queues(cluster: Cluster, unqueued: Iterable[tuple[PodGroup, bool]]) -> None:
    """The queue of a pod group written without one, as the webhooks set it: a Volcano
    Job's is ``default`` (``patchDefaultQueue``, jobs/mutate/mutate_job.go), a PodGroup's
    the ``scheduling.volcano.sh/queue-name`` annotation of its Namespace, else ``default``
    (``createPodGroupPatch``, podgroups/mutate/mutate_podgroup.go). Not the scheduler's
    ``--default-queue``, which only a group that reaches it without a queue gets."""
    namespaces = {
        ns.meta.name: ns.meta.annotations.get(QUEUE_NAME_ANNOTATION, "")
        for ns in cluster.objects_of_kind("Namespace")
    }
    for pod_group, own in unqueued:
        annotated = namespaces.get(pod_group.meta.namespace, "") if own else ""
        pod_group.queue = annotated or DEFAULT_QUEUE


def _add_startup_queues(cluster: Cluster, default_queue: str) -> None:
    """``newDefaultAndRootQueue`` (pkg/scheduler/cache/cache.go): ``root`` (weight 1, not
    reclaimable) and the ``--default-queue`` (weight 1, reclaimable), each only when
    missing (a declared one is AlreadyExists and kept as written). They were created
    when the scheduler started, so they come before the declared queues."""
    names = {q.meta.name for q in cluster.queues}
    startup = [
        Queue(ObjectMeta(name=name), weight=1, reclaimable=reclaimable)
        for name, reclaimable in ((ROOT_QUEUE, False), (default_queue, True))
        if name not in names
    ]
    cluster.queues[:0] = startup


def _adopt_by_root(queue: Queue) -> None:
    """``updateQueueParent`` (pkg/controllers/queue/queue_controller_action.go): every
    queue but ``root`` without a parent gets the parent ``root``."""
    if queue.meta.name != ROOT_QUEUE and not queue.parent:
        queue.parent = ROOT_QUEUE


# -- queues: pkg/webhooks/admission/queues ---------------------------------------------------


def admit_queue(queue: Queue, existing: Sequence[Queue] = ()) -> None:
    """Mutate, then validate, a queue being created after the queues ``existing``."""
    _mutate_queue(queue)
    _validate_queue(queue, existing)


def _mutate_queue(queue: Queue) -> None:
    """``createQueuePatch`` (queues/mutate/mutate_queue.go). Quirk kept: an explicit
    ``weight: 0`` is Go's zero value, so it becomes 1 like an unset weight."""
    annotations = queue.meta.annotations
    hierarchy = annotations.get(HIERARCHY_ANNOTATION, "")
    weights = annotations.get(HIERARCHY_WEIGHTS_ANNOTATION, "")
    if hierarchy and weights and not hierarchy.startswith(ROOT_QUEUE):
        annotations[HIERARCHY_ANNOTATION] = f"{ROOT_QUEUE}/{hierarchy}"
        annotations[HIERARCHY_WEIGHTS_ANNOTATION] = f"1/{weights}"
    if queue.reclaimable is None:
        queue.reclaimable = True
    if queue.weight == 0:
        queue.weight = 1


def _validate_queue(queue: Queue, existing: Sequence[Queue]) -> None:
    """``validateQueue`` (queues/validate/validate_queue.go): a positive weight and
    well-formed hierarchy annotations, the complaints joined as a field.ErrorList's
    aggregate. (``validateStateOfQueue`` never refuses a created queue: the Queue CRD has
    a status subresource, so the API server drops ``status`` before this webhook sees it.
    A spec's ``state`` is the status the queue controller writes later.)"""
    errors = []
    if queue.weight <= 0:
        errors.append(
            f"requestBody.spec.weight: Invalid value: {queue.weight}: queue weight must be a "
            "positive integer"
        )
    hierarchy = _hierarchy_problem(queue, existing)
    if hierarchy:
        errors.append(f"requestBody.metadata.annotations: Invalid value: {hierarchy}")
    if errors:
        _refuse_queue(queue, errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")


def _hierarchy_problem(queue: Queue, existing: Sequence[Queue]) -> str:
    """``validateHierarchicalAttributes``: as many weights as path parts, each a number
    above 0, and no queue created before with a path below this one's. Quirk kept: the
    check is one-way, so ``root/sci`` is refused after ``root/sci/dev`` but
    ``root/sci/dev`` is accepted after ``root/sci``."""
    annotations = queue.meta.annotations
    hierarchy = annotations.get(HIERARCHY_ANNOTATION, "")
    weights = annotations.get(HIERARCHY_WEIGHTS_ANNOTATION, "")
    if not hierarchy and not weights:
        return ""
    if len(hierarchy.split("/")) != len(weights.split("/")):
        return (
            f"{_quoted(hierarchy)}: {HIERARCHY_ANNOTATION} must have the same length with "
            f"{HIERARCHY_WEIGHTS_ANNOTATION}"
        )
    for weight in weights.split("/"):
        problem = _weight_problem(weight, weights)
        if problem:
            return f"{_quoted(weights)}: {problem}"
    for other in existing:
        path = other.meta.annotations.get(HIERARCHY_ANNOTATION, "")
        if path and other.meta.name != queue.meta.name and path.startswith(hierarchy + "/"):
            return (
                f"{_quoted(hierarchy)}: {hierarchy} is not allowed to be in the sub path of {path} "
                f"of queue {other.meta.name}"
            )
    return ""


def _quoted(text: str) -> str:
    """A string value as field.Invalid prints it (Go's ``%q``)."""
    return json.dumps(text, ensure_ascii=False)


def _weight_problem(weight: str, weights: str) -> str:
    """What ``strconv.ParseFloat`` and the > 0 check say of one hierarchy weight."""
    try:
        value = float(weight)
    except ValueError:
        return (
            f"{weight} in the {weights} is invalid number: strconv.ParseFloat: "
            f'parsing "{weight}": invalid syntax'
        )
    return f"{weight} in the {weights} must be larger than 0" if value <= 0 else ""


def _check_parent(queue: Queue, queues: dict[str, Queue]) -> None:
    """``validateHierarchicalQueue``: a parent other than ``root`` must exist. (Its other
    rule, a parent must not have allocated pods, reads queue status vspec does not keep.)"""
    if queue.parent in ("", ROOT_QUEUE) or queue.parent in queues:
        return
    _refuse_queue(
        queue,
        f"failed to get parent queue of queue {queue.meta.name}: "
        f'queue.scheduling.volcano.sh "{queue.parent}" not found',
    )


def _refuse_queue(queue: Queue, message: str) -> None:
    raise AdmissionRefused("validatequeue.volcano.sh", message, queue.meta.location)


# -- pods: pkg/webhooks/admission/pods/validate/admit_pod.go --------------------------------


def admit_pod(
    pod: Pod,
    scheduler_names: tuple[str, ...],
    pod_groups: dict[str, str],
    queues: dict[str, Queue],
) -> None:
    """``validatePod`` for a pod of this scheduler that is still to be placed (a bound or
    finished pod was admitted long ago): the pod group it names must exist, and its
    queue must exist and be Open. A pod of no group is let through (the podgroup
    controller, which would give it one, is not modelled)."""
    if pod.node_name or pod.phase in ("Succeeded", "Failed"):
        return
    if not pod.scheduled_by(scheduler_names):
        return  # vspec's convention: a pod without schedulerName is this scheduler's
    group = pod.group_name
    if not group:
        _admit_pod_of_no_group(pod, queues)
        return
    queue_name = pod_groups.get(f"{pod.meta.namespace}/{group}")
    if queue_name is None:
        _refuse_pod(
            pod,
            f"failed to get PodGroup for pod <{pod.meta.namespace}/{pod.meta.name}>: "
            f'podgroups.scheduling.volcano.sh "{group}" not found',
        )
        return
    problem = queue_state_problem(queue_name, queues)
    if problem:
        _refuse_pod(pod, f"failed : {problem}")


def _admit_pod_of_no_group(pod: Pod, queues: dict[str, Queue]) -> None:
    """The rest of ``validatePod``, for a pod naming no pod group: the queue its
    ``scheduling.volcano.sh/queue-name`` annotation names must exist and be Open, and its
    disruption budget annotations must be well formed (``validateAnnotation``)."""
    queue = pod.meta.annotations.get(QUEUE_NAME_ANNOTATION, "")
    problem = queue_state_problem(queue, queues) if queue else ""
    if problem:
        _refuse_pod(pod, problem)
    found = [key for key in JDB_ANNOTATIONS if key in pod.meta.annotations]
    for key in found:
        problem = _budget_problem(key, pod.meta.annotations[key])
        if problem:
            _refuse_pod(pod, problem)
    if len(found) > 1:
        _refuse_pod(
            pod,
            f"not allow configure multiple annotations <[{' '.join(JDB_ANNOTATIONS)}]> at "
            "same time",
        )


def _budget_problem(key: str, value: str) -> str:
    """``validateIntPercentageStr``: a positive integer (``intstr.Parse`` reads one as
    ``strconv.Atoi`` does), or a percentage from 1% to 99%."""
    number = _atoi(value)
    if isinstance(number, int):
        if number <= 0:
            return f'invalid value <"{value}"> for {key}, it must be a positive integer'
        return ""
    percent = _atoi(value.replace("%", ""))
    if isinstance(percent, str):
        return f"invalid value {percent} for {key}"
    if percent <= 0 or percent >= 100:
        return (
            f'invalid value <"{value}"> for {key}, it must be a valid percentage which '
            "between 1% ~ 99%"
        )
    return ""


def _atoi(text: str) -> int | str:
    """Go's ``strconv.Atoi``: the int64, or its error's text."""
    if not _ATOI.fullmatch(text):
        return f'strconv.Atoi: parsing "{text}": invalid syntax'
    value = int(text)
    if not -(2**63) <= value < 2**63:
        return f'strconv.Atoi: parsing "{text}": value out of range'
    return value


def queue_state_problem(name: str, queues: dict[str, Queue]) -> str:
    """``checkQueueState``'s complaint about queue ``name`` ("" when it is usable)."""
    queue = queues.get(name)
    if queue is None:
        return f' unable to find job queue: queues.scheduling.volcano.sh "{name}" not found;'
    if queue.state != QUEUE_OPEN:
        return (
            " can only submit job to queue with state `Open`, "
            f"queue `{queue.meta.name}` status is `{queue.state}`;"
        )
    return ""


def _refuse_pod(pod: Pod, message: str) -> None:
    # The webhook answers with strings.TrimSpace of its message.
    raise AdmissionRefused("validatepod.volcano.sh", message.strip(), pod.meta.location)
