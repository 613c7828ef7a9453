"""The Volcano releases vspec's engine models, and what a spec says it describes.

vspec's engine re-implements Volcano v1.11.0's scheduler and, behind one gate per
upstream change, v1.10.0's. A :class:`Gates` is read once when a session opens (a field,
never a lookup per call), so the version costs nothing on the hot paths. Every gate, its
upstream change and the file it lives in are listed in docs/versions.md.

A spec may name the releases it describes (its ``volcano`` key: ``v1.11.0``, or a range
such as ``">=v1.11.0"``); on another release it is skipped with that reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vspec.errors import VspecError

DEFAULT_VERSION = "v1.11.0"
_RELEASE = re.compile(r"v(\d+)\.(\d+)\.(\d+)")
_CLAUSE = re.compile(r"\s*(>=|<=|==|!=|>|<|=)?\s*(v\d+\.\d+\.\d+)\s*")


def release(text: str) -> tuple[int, int, int]:
    """``vMAJOR.MINOR.PATCH`` as numbers, for ordering; anything else is a ValueError."""
    found = _RELEASE.fullmatch(text)
    if found is None:
        raise ValueError(f"{text!r} is not a release such as 'v1.11.0'")
    major, minor, patch = found.groups()
    return int(major), int(minor), int(patch)


@dataclass(frozen=True)
class VersionRange:
    """A spec's ``volcano`` key: comma-separated clauses (``>=v1.10.0, <v1.11.0``), all of
    which a release must meet; a bare release means exactly that one."""

    text: str
    clauses: tuple[tuple[str, tuple[int, int, int]], ...]

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        clauses = []
        for part in text.split(","):
            found = _CLAUSE.fullmatch(part)
            if found is None:
                raise ValueError(
                    f"{part.strip()!r} is not a release or a comparison such as '>=v1.11.0'"
                )
            op, version = found.groups()
            clauses.append((op or "==", release(version)))
        return cls(text, tuple(clauses))

    def admits(self, version: str) -> bool:
        at = release(version)
        return all(_COMPARE[op](at, bound) for op, bound in self.clauses)


_COMPARE = {
    "==": lambda a, b: a == b,
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}


@dataclass(frozen=True, slots=True)
class Gates:
    """What changed in pkg/scheduler between Volcano v1.10.0 and v1.11.0, one switch per
    upstream change: True is v1.11.0's behaviour, False v1.10.0's. Each use names its
    change in a comment; docs/versions.md lists them all."""

    # actions/preempt, actions/reclaim: a preemptor whose PreemptionPolicy is Never
    # evicts nobody (1d432afc4 "add preemptionpolicy in preempt and reclaim").
    preemption_policy: bool = True
    # actions/reclaim: preemptors are the starving jobs, not those with pending tasks,
    # and a job that stops starving stops reclaiming (a561215e0).
    reclaim_starving_jobs: bool = True
    # actions/reclaim: no Allocatable check before Preemptive, and proportion answers
    # Preemptive with its allocatable check (61f9c9d62).
    reclaim_preemptive_only: bool = True
    # framework/session_plugins: Preemptable/Reclaimable start over in the next tier
    # after an empty answer; v1.10.0's once-set init flag kept the empty set (7976b63e2).
    evictable_next_tier: bool = True
    # plugins/capacity: hierarchical queues (enableHierarchy) and the ancestors'
    # capability checks (a241d810b, 29c8027d3, 751d450ba).
    capacity_hierarchy: bool = True
    # plugins/predicates: statuses are collected until one aborts and a node over its
    # pod count fails; v1.10.0 returned at the first failing filter and let a node
    # whose only failure was the pod count pass (e41535577).
    predicate_statuses: bool = True
    # plugins/predicates: an InterPodAffinity failure is UnschedulableAndUnresolvable,
    # so preempt leaves that node out (e41535577, volcano#3845).
    pod_affinity_unresolvable: bool = True
    # plugins/nodegroup: a node that fits returns nil; v1.10.0 returned a FitError of a
    # Success status, which ended the session's predicate chain there (a2630bb09).
    nodegroup_fit_is_nil: bool = True
    # framework/session: a pod group whose allocated tasks all ended, failed ones
    # included, is Completed (9ac1c8c4f "mark PodGroup completed when pod fails").
    completed_counts_failed: bool = True
    # plugins/proportion, plugins/capacity: realCapability is the part of the total
    # above the guarantees (never negative); v1.10.0 subtracted (1cba5c359).
    real_capability_exceeded_part: bool = True
    # api/job_info: a job's elastic resources are the part of allocated above its
    # minimum, per dimension (9a1bcc682 "fix panic when get job's elastic resource").
    elastic_exceeded_part: bool = True


V1_11_0 = Gates()
V1_10_0 = Gates(
    preemption_policy=False,
    reclaim_starving_jobs=False,
    reclaim_preemptive_only=False,
    evictable_next_tier=False,
    capacity_hierarchy=False,
    predicate_statuses=False,
    pod_affinity_unresolvable=False,
    nodegroup_fit_is_nil=False,
    completed_counts_failed=False,
    real_capability_exceeded_part=False,
    elastic_exceeded_part=False,
)
MODELLED = {"v1.10.0": V1_10_0, "v1.11.0": V1_11_0}


def gates_for(version: str) -> Gates:
    """The gates of a release vspec's engine models; another is a :class:`VspecError`."""
    found = MODELLED.get(version)
    if found is None:
        raise VspecError(f"vspec's engine models Volcano {' and '.join(MODELLED)}, not {version!r}")
    return found
