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

from collections.abc import Iterable

from vspec.errors import Location, SpecError
from vspec.model.conf import SchedulerOptions
from vspec.model.objects import QUEUE_NAME_ANNOTATION, Cluster, ObjectMeta, Pod, PodGroup, Queue

ROOT_QUEUE = "root"
DEFAULT_QUEUE = "default"  # schedulingv1beta1.DefaultQueue, what the webhooks write
QUEUE_OPEN = "Open"
HIERARCHY_ANNOTATION = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS_ANNOTATION = "volcano.sh/hierarchy-weights"


class AdmissionRefused(SpecError):
    """A webhook of Volcano would refuse this object: it never reaches the cluster."""

    def __init__(self, webhook: str, message: str, location: Location | None) -> None:
        super().__init__(f'admission webhook "{webhook}" denied the request: {message}', location)
        self.webhook = webhook


def deploy_queues(cluster: Cluster, options: SchedulerOptions) -> None:
    """The queues as a running Volcano has them: each admitted, then the scheduler's
    start-up queues and the queue controller's parents. Jobs and pods are admitted
    against them (:func:`admit_pods`)."""
    for queue in cluster.queues:
        admit_queue(queue)
    _add_startup_queues(cluster, options.default_queue)
    for queue in cluster.queues:
        _adopt_by_root(queue)
    queues = {q.meta.name: q for q in cluster.queues}
    for queue in cluster.queues:
        _check_parent(queue, queues)


def admit_pods(cluster: Cluster, options: SchedulerOptions) -> None:
    """Every declared pod through the pod webhook."""
    queues = {q.meta.name: q for q in cluster.queues}
    pod_groups = {pg.meta.key: pg.queue for pg in cluster.pod_groups}
    for pod in cluster.pods:
        admit_pod(pod, options.scheduler_names, pod_groups, queues)


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


def admit_queue(queue: Queue) -> None:
    """Mutate, then validate, a queue being created."""
    _mutate_queue(queue)
    _validate_queue(queue)


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


def _validate_queue(queue: Queue) -> None:
    """``validateQueue`` (queues/validate/validate_queue.go): well-formed hierarchy
    annotations. (Its other rules need no code here: a negative weight never passes the
    spec schema, and the state is left to the queue controller.)"""
    annotations = queue.meta.annotations
    hierarchy = annotations.get(HIERARCHY_ANNOTATION, "")
    weights = annotations.get(HIERARCHY_WEIGHTS_ANNOTATION, "")
    if not hierarchy and not weights:
        return
    field = "requestBody.metadata.annotations"
    if len(hierarchy.split("/")) != len(weights.split("/")):
        _refuse_queue(
            queue,
            f"{field}: Invalid value: {hierarchy!r}: {HIERARCHY_ANNOTATION} must have the "
            f"same length with {HIERARCHY_WEIGHTS_ANNOTATION}",
        )
    for weight in weights.split("/"):
        problem = _weight_problem(weight, weights)
        if problem:
            _refuse_queue(queue, f"{field}: Invalid value: {weights!r}: {problem}")


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
