"""logprint's kept pod group texts are reused only for a pod group that prints the same."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime

from vspec.api.pod_group_info import PodGroupTexts, pod_group_text
from vspec.model.corev1 import Condition
from vspec.model.objects import ObjectMeta, PodGroup

_T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _pod_group() -> PodGroup:
    return PodGroup(
        ObjectMeta("pg", "ns", uid="u", labels={"a": "1"}, creation_timestamp=_T0),
        queue="q",
        min_member=2,
        min_task_member={"w": 1},
        phase="Running",
        conditions=[Condition("Scheduled", reason="tasks in gang are ready", transition_id="s1")],
        running=2,
    )


def _copied(pg: PodGroup) -> PodGroup:
    """A session's copy: the model is copy-on-write, so a change is made to a deep copy."""
    return copy.deepcopy(pg)


def _condition(pg: PodGroup, **change: object) -> None:
    pg.conditions[0] = dataclasses.replace(pg.conditions[0], **change)  # type: ignore[arg-type]


_CHANGES: list[Callable[[PodGroup], None]] = [
    lambda pg: setattr(pg.meta, "name", "pg2"),
    lambda pg: setattr(pg.meta, "namespace", "ns2"),
    lambda pg: setattr(pg.meta, "uid", "u2"),
    lambda pg: pg.meta.labels.__setitem__("b", "2"),
    lambda pg: pg.meta.annotations.__setitem__("x", "y"),
    lambda pg: setattr(pg.meta, "creation_timestamp", datetime(2025, 1, 2, tzinfo=UTC)),
    lambda pg: setattr(pg.meta, "deletion_timestamp", _T0),
    lambda pg: setattr(pg, "min_member", 3),
    lambda pg: pg.min_task_member.__setitem__("w", 2),
    lambda pg: setattr(pg, "queue", "other"),
    lambda pg: setattr(pg, "priority_class_name", "high"),
    lambda pg: setattr(pg, "min_resources", {"cpu": 1}),
    lambda pg: setattr(pg, "phase", "Inqueue"),
    lambda pg: _condition(pg, type="Unschedulable"),
    lambda pg: _condition(pg, status="False"),
    lambda pg: _condition(pg, transition_id="s2"),
    lambda pg: _condition(pg, last_transition_time=_T0),
    lambda pg: _condition(pg, reason="NotEnoughResources"),
    lambda pg: _condition(pg, message="1/2 tasks in gang unschedulable"),
    lambda pg: pg.conditions.append(Condition("Unschedulable")),
    lambda pg: setattr(pg, "running", 1),
    lambda pg: setattr(pg, "succeeded", 1),
    lambda pg: setattr(pg, "failed", 1),
]


def test_a_pod_group_printed_again_unchanged_reuses_its_text() -> None:
    texts = PodGroupTexts()
    pg = _pod_group()
    first = texts(pg)
    texts.next_session()
    assert texts(_copied(pg)) is first  # kept: not rendered again


def test_every_printed_field_changed_between_sessions_prints_anew() -> None:
    """Each change alone, made to the copy the next session prints, gives that copy's
    own text, never the kept one."""
    for change in _CHANGES:
        texts = PodGroupTexts()
        pg = _pod_group()
        before = texts(pg)
        texts.next_session()
        changed = _copied(pg)
        change(changed)
        assert texts(changed) == pod_group_text(changed) != before, change


def test_only_the_last_session_s_texts_are_kept() -> None:
    texts = PodGroupTexts()
    texts(_pod_group())
    texts.next_session()
    texts.next_session()
    assert texts._now == texts._before == {}
