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

from collections.abc import Mapping

from vspec.api.kept_texts import KeptTexts
from vspec.gofmt import POINTER_ADDRESS, go_time, time_value
from vspec.model.corev1 import Condition
from vspec.model.objects import ObjectMeta, PodGroup

# ``api.PodGroupVersionV1Beta1``: the cache converts every v1beta1 PodGroup it watches.
POD_GROUP_VERSION_V1BETA1 = "v1beta1"
# A nil ``*metav1.Time`` or ``*int64`` inside the struct; a non-nil pointer that fmt does
# not follow (below the top level) prints its address.
_NIL = "<nil>"


def _map(values: Mapping[str, object]) -> str:
    """A ``map[string]string`` or ``map[string]int32`` as ``%v`` prints it: keys in byte
    order (a str's code point order is its UTF-8 bytes' order)."""
    return "map[" + " ".join(f"{k}:{values[k]}" for k in sorted(values)) + "]"


def _object_meta(meta: ObjectMeta) -> str:
    # *metav1.Time has time.Time's String(), so fmt prints the time, not the address.
    deletion = _NIL if meta.deletion_timestamp is None else go_time(meta.deletion_timestamp)
    return (
        f"{{Name:{meta.name} GenerateName: Namespace:{meta.namespace} SelfLink: "
        f"UID:{meta.uid} ResourceVersion: Generation:0 "
        f"CreationTimestamp:{time_value(meta.creation_timestamp).text} "
        f"DeletionTimestamp:{deletion} DeletionGracePeriodSeconds:{_NIL} "
        f"Labels:{_map(meta.labels)} Annotations:{_map(meta.annotations)} "
        "OwnerReferences:[] Finalizers:[] ManagedFields:[]}"
    )


def _condition(cond: Condition) -> str:
    return (
        f"{{Type:{cond.type} Status:{cond.status} TransitionID:{cond.transition_id} "
        f"LastTransitionTime:{time_value(cond.last_transition_time).text} "
        f"Reason:{cond.reason} Message:{cond.message}}}"
    )


def pod_group_text(pg: PodGroup) -> str:
    """``%+v`` of the ``*api.PodGroup`` of ``pg``: a pointer to a struct at the top level
    prints as ``&{...}``, each field as ``Name:value``. Written out rather than built as
    :mod:`vspec.gofmt` values and rendered: the seed's logprint prints it for every ready
    job at V(1), and building the sixty values cost a fuzz example a tenth of its run."""
    min_resources = _NIL if pg.min_resources is None else POINTER_ADDRESS
    conditions = " ".join(_condition(c) for c in pg.conditions)
    return (
        "&{PodGroup:{TypeMeta:{Kind: APIVersion:} "
        f"ObjectMeta:{_object_meta(pg.meta)} "
        f"Spec:{{MinMember:{pg.min_member} MinTaskMember:{_map(pg.min_task_member)} "
        f"Queue:{pg.queue} PriorityClassName:{pg.priority_class_name} "
        f"MinResources:{min_resources}}} "
        f"Status:{{Phase:{pg.phase} Conditions:[{conditions}] Running:{pg.running} "
        f"Succeeded:{pg.succeeded} Failed:{pg.failed}}}}} "
        f"Version:{POD_GROUP_VERSION_V1BETA1}}}"
    )


def printed(pg: PodGroup) -> tuple[object, ...]:
    """Everything :func:`pod_group_text` prints, as a key: equal keys print equal texts
    (a map's items in another order print the same, sorted, so they only miss)."""
    meta = pg.meta
    return (
        meta.name,
        meta.namespace,
        meta.uid,
        meta.creation_timestamp,
        meta.deletion_timestamp,
        tuple(meta.labels.items()),
        tuple(meta.annotations.items()),
        pg.min_member,
        tuple(pg.min_task_member.items()),
        pg.queue,
        pg.priority_class_name,
        pg.min_resources is None,
        pg.phase,
        tuple(pg.conditions),  # frozen: equal conditions have equal fields, all printed
        pg.running,
        pg.succeeded,
        pg.failed,
    )


class PodGroupTexts(KeptTexts[PodGroup]):
    """:func:`pod_group_text` of pod groups, kept by what each prints (:func:`printed`):
    a running job's pod group keeps its status, and the conditions its last write
    stamped, from session to session."""

    def __init__(self) -> None:
        super().__init__(printed, pod_group_text)
