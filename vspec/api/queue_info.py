"""``QueueInfo`` (``api/queue_info.go``)."""

from __future__ import annotations

from vspec.model.objects import Queue

HIERARCHY_ANNOTATION = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS_ANNOTATION = "volcano.sh/hierarchy-weights"


class QueueInfo:
    __slots__ = ("hierarchy", "name", "queue", "uid", "weight", "weights")

    def __init__(self, queue: Queue) -> None:
        self.uid = queue.meta.name
        self.name = queue.meta.name
        self.weight = queue.weight  # 0 is kept: Volcano does not default it here
        self.hierarchy = queue.meta.annotations.get(HIERARCHY_ANNOTATION, "")
        self.weights = queue.meta.annotations.get(HIERARCHY_WEIGHTS_ANNOTATION, "")
        self.queue = queue

    def reclaimable(self) -> bool:
        return True if self.queue.reclaimable is None else self.queue.reclaimable

    def __repr__(self) -> str:
        return f"Queue({self.name})"
