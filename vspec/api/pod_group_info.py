"""The scheduler's ``PodGroup`` as a Go value (``api/pod_group_info.go``), for ``%+v``.

Volcano v1.11.0 wraps the internal ``scheduling.PodGroup`` (volcano.sh/apis v1.11.0
``pkg/apis/scheduling/types.go``) in ``api.PodGroup{PodGroup, Version}`` and
``JobInfo.String()`` prints the pointer with ``%+v``. The field layout below is those
structs', with ``metav1.TypeMeta`` and ``metav1.ObjectMeta`` of k8s.io/apimachinery
v0.31.3 (``pkg/apis/meta/v1/types.go``), so fmt renders every field a real scheduler
renders, in its order.

Where the text cannot match a real scheduler's, it differs only in these fields:
``TypeMeta`` is empty (as in objects from an informer); ``UID`` is vspec's (the
cluster's is a random UUID); ``ResourceVersion``, ``Generation``,
``DeletionGracePeriodSeconds``, ``OwnerReferences``, ``Finalizers`` and
``ManagedFields`` are zero (the API server fills them; vspec does not model them); a
non-nil ``MinResources`` prints :data:`vspec.gofmt.POINTER_ADDRESS` where Go prints a
heap address; condition ``TransitionID`` is vspec's session uid (Volcano's is random).
"""

from __future__ import annotations

from vspec.gofmt import Pointer, Struct, Typed, time_value
from vspec.model.corev1 import Condition
from vspec.model.objects import ObjectMeta, PodGroup

# ``api.PodGroupVersionV1Beta1``: the cache converts every v1beta1 PodGroup it watches.
POD_GROUP_VERSION_V1BETA1 = "v1beta1"


def _int32(value: int) -> Typed:
    return Typed("int32", value)


def _object_meta(meta: ObjectMeta) -> Struct:
    # *metav1.Time has time.Time's String(), so fmt prints the time, not the address.
    deletion: object = Pointer("*v1.Time")
    if meta.deletion_timestamp is not None:
        deletion = time_value(meta.deletion_timestamp)
    return Struct(
        "v1.ObjectMeta",
        (
            ("Name", meta.name),
            ("GenerateName", ""),
            ("Namespace", meta.namespace),
            ("SelfLink", ""),
            ("UID", Typed("types.UID", meta.uid)),
            ("ResourceVersion", ""),
            ("Generation", Typed("int64", 0)),
            ("CreationTimestamp", time_value(meta.creation_timestamp)),
            ("DeletionTimestamp", deletion),
            ("DeletionGracePeriodSeconds", Pointer("*int64")),
            ("Labels", Typed("map[string]string", dict(meta.labels))),
            ("Annotations", Typed("map[string]string", dict(meta.annotations))),
            ("OwnerReferences", Typed("[]v1.OwnerReference", [])),
            ("Finalizers", Typed("[]string", [])),
            ("ManagedFields", Typed("[]v1.ManagedFieldsEntry", [])),
        ),
    )


def _condition(cond: Condition) -> Struct:
    return Struct(
        "scheduling.PodGroupCondition",
        (
            ("Type", Typed("scheduling.PodGroupConditionType", cond.type)),
            ("Status", Typed("v1.ConditionStatus", cond.status)),
            ("TransitionID", cond.transition_id),
            ("LastTransitionTime", time_value(cond.last_transition_time)),
            ("Reason", cond.reason),
            ("Message", cond.message),
        ),
    )


def pod_group_value(pg: PodGroup) -> Pointer:
    """``*api.PodGroup`` of ``pg``, ready for :func:`vspec.gofmt.sprintf`."""
    min_resources = Pointer("*v1.ResourceList", pg.min_resources)
    spec = Struct(
        "scheduling.PodGroupSpec",
        (
            ("MinMember", _int32(pg.min_member)),
            ("MinTaskMember", Typed("map[string]int32", dict(pg.min_task_member))),
            ("Queue", pg.queue),
            ("PriorityClassName", pg.priority_class_name),
            ("MinResources", min_resources),
        ),
    )
    status = Struct(
        "scheduling.PodGroupStatus",
        (
            ("Phase", Typed("scheduling.PodGroupPhase", pg.phase)),
            ("Conditions", [_condition(c) for c in pg.conditions]),
            ("Running", _int32(pg.running)),
            ("Succeeded", _int32(pg.succeeded)),
            ("Failed", _int32(pg.failed)),
        ),
    )
    inner = Struct(
        "scheduling.PodGroup",
        (
            ("TypeMeta", Struct("v1.TypeMeta", (("Kind", ""), ("APIVersion", "")))),
            ("ObjectMeta", _object_meta(pg.meta)),
            ("Spec", spec),
            ("Status", status),
        ),
    )
    return Pointer(
        "*api.PodGroup",
        Struct("api.PodGroup", (("PodGroup", inner), ("Version", POD_GROUP_VERSION_V1BETA1))),
    )
