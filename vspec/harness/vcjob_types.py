"""A Volcano Job (``batch.volcano.sh/v1alpha1``) as vspec reads it: what its admission
webhook checks (:mod:`vspec.harness.jobwebhook`) and its controller turns into a PodGroup
and pods (:mod:`vspec.harness.vcjob`). Plain data, so that the two read one type without
importing each other."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vspec.harness.yamlload import At
from vspec.model.objects import ObjectMeta


@dataclass
class Policy:
    """A lifecycle policy: what the job controller does on an event or exit code."""

    event: str
    events: list[str]
    action: str
    exit_code: int | None


@dataclass
class Task:
    name: str
    replicas: int
    min_available: int | None
    template: Mapping[str, Any]  # the pod template: metadata and spec
    topology_policy: str
    at: At
    policies: list[Policy] = field(default_factory=list)
    depends_on: list[str] | None = None  # dependsOn.name; None: no dependsOn


@dataclass
class Job:
    """The part of a Job spec that reaches the scheduler."""

    meta: ObjectMeta
    min_available: int
    queue: str
    scheduler_name: str
    priority_class_name: str
    plugins: dict[str, list[str]]  # job plugin -> its arguments, as written
    tasks: list[Task] = field(default_factory=list)
    max_retry: int = 0
    ttl_seconds_after_finished: int | None = None
    policies: list[Policy] = field(default_factory=list)
    volumes: list[Mapping[str, Any]] = field(default_factory=list)

    @property
    def pod_group_name(self) -> str:
        """``<job>-<uid>`` as the controller names it; a Job written without a uid (as
        submitted, before the API server gives it one) gets ``<job>``, the name the
        controller's lookup falls back to."""
        uid = self.meta.uid
        return f"{self.meta.name}-{uid}" if uid else self.meta.name
