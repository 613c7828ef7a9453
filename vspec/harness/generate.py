"""Generated cluster fixtures: the ``cluster.generate`` vocabulary (docs/generate.md).

A spec describes a large cluster by its *shape* (node shapes x counts, queues, job
templates) instead of listing thousands of objects. :func:`generate_cluster` expands that
description into the same :class:`~vspec.model.objects.Cluster` model the loader builds
from explicit objects, deterministically from one seed: the same parameters and seed give
the same cluster on every machine (one :class:`random.Random`, drawn in a fixed order).

Any field value may be a *generator form* that is resolved per object:

- ``{choice: [a, b]}``: a uniformly random element;
- ``{cycle: [a, b]}``: element ``i mod n`` for the i-th object of its entry;
- ``{range: [lo, hi]}``: a uniformly random integer, both ends included;
- ``{fraction: p, value: x}``: ``x`` for a fraction ``p`` of the objects, else unset.

Jobs marked running are placed whole (all pods or none) first-fit on nodes that admit
them (resources, ``pods`` count, NoSchedule/NoExecute taints, node selector,
unschedulable), so a generated cluster never starts overcommitted.

Here, beside the loader that expands a spec's ``generate`` key with it (the fuzzer's
strategies use it too); imports the model, the errors and Volcano's ``Resource`` (to
fit running jobs on nodes).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any

from vspec.api.resource import Resource
from vspec.errors import Location, SpecError
from vspec.model.corev1 import (
    Container,
    ResourceList,
    Taint,
    Toleration,
    parse_taint,
    parse_toleration,
)
from vspec.model.objects import (
    GROUP_NAME_ANNOTATION,
    TASK_SPEC_KEY,
    Cluster,
    Node,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)
from vspec.model.quantity import QuantityError, parse_quantity

DEFAULT_PODS = Fraction(110)  # what a kubelet reports when a compact node leaves it out
MAX_GENERATED = 200_000  # nodes, queues, pod groups and pods: about 15 s to build
_FORMS = ("choice", "cycle", "range")


class GenerateError(SpecError):
    """``cluster.generate`` is malformed; the message names the key."""


# -- generator forms ------------------------------------------------------------------------


class _Unset:
    """A ``fraction`` form that did not fire: the field keeps its default."""


UNSET = _Unset()


def _is_form(raw: object) -> bool:
    if not isinstance(raw, Mapping):
        return False
    keys = set(raw)
    return (len(keys) == 1 and next(iter(keys)) in _FORMS) or keys == {"fraction", "value"}


# Values that are neither forms nor hold any: the leaves of a template, returned as they
# are without the (abstract) Mapping check, which a generated cluster makes for every
# value of every object it draws.
_LEAVES = (str, int, float)


def resolve(raw: Any, rng: random.Random, index: int) -> Any:
    """The value of ``raw`` for the ``index``-th object; generator forms nest anywhere."""
    if isinstance(raw, _LEAVES):
        return raw
    if _is_form(raw):
        if "choice" in raw:
            return resolve(raw["choice"][rng.randrange(len(raw["choice"]))], rng, index)
        if "cycle" in raw:
            return resolve(raw["cycle"][index % len(raw["cycle"])], rng, index)
        if "range" in raw:
            lo, hi = raw["range"]
            return rng.randint(int(lo), int(hi))
        if rng.random() < float(raw["fraction"]):
            return resolve(raw["value"], rng, index)
        return UNSET
    if isinstance(raw, Mapping):
        out = {}
        for key, value in raw.items():
            resolved = resolve(value, rng, index)
            if resolved is not UNSET:
                out[str(key)] = resolved
        return out
    if isinstance(raw, list):
        return [v for v in (resolve(item, rng, index) for item in raw) if v is not UNSET]
    return raw


def _get(entry: Mapping[str, Any], key: str, default: Any, rng: random.Random, index: int) -> Any:
    value = resolve(entry[key], rng, index) if key in entry else UNSET
    return default if value is UNSET else value


# -- the generator --------------------------------------------------------------------------


@dataclass
class _NodeRoom:
    """What is left on one node while running jobs are placed."""

    node: Node
    free: dict[str, float]
    hard_taints: list[Taint]


@dataclass
class _Generator:
    """One ``generate`` section being expanded: the cluster so far, the names already
    given, and the room left on the nodes for the jobs that start running."""

    rng: random.Random
    where: str
    location: Location | None
    cluster: Cluster = field(default_factory=Cluster)
    counters: dict[str, int] = field(default_factory=dict)
    rooms: list[_NodeRoom] = field(default_factory=list)
    cursor: int = 0
    hopeless: set[tuple[Any, ...]] = field(default_factory=set)
    # Each quantity as written (its type with it: 1 and "1" are checked apart), parsed
    # once: every job draws its requests from the same few.
    quantities: dict[tuple[type, Any], Fraction] = field(default_factory=dict)

    def error(self, key: str, message: str) -> GenerateError:
        return GenerateError(f"{self.where}.{key}: {message}", self.location)

    def next_name(self, prefix: str) -> str:
        n = self.counters.get(prefix, 0)
        self.counters[prefix] = n + 1
        return f"{prefix}{n}"

    def resources(self, raw: Any, key: str) -> ResourceList:
        if not isinstance(raw, Mapping):
            raise self.error(key, f"must be a mapping of quantities, got {raw!r}")
        try:
            return {str(k): self.quantity(v) for k, v in raw.items()}
        except QuantityError as exc:
            raise self.error(key, str(exc)) from None

    def quantity(self, raw: Any) -> Fraction:
        if not isinstance(raw, _LEAVES):
            return parse_quantity(raw)  # not a quantity (a form may draw anything): refused
        known = (type(raw), raw)
        q = self.quantities.get(known)
        if q is None:
            q = self.quantities[known] = parse_quantity(raw)
        return q

    # -- nodes --------------------------------------------------------------------------------
    def nodes(self, entries: Sequence[Mapping[str, Any]]) -> None:
        for e, entry in enumerate(entries):
            prefix = str(entry.get("name", "n"))
            for i in range(int(entry.get("count", 1))):
                self.node(entry, prefix, i, f"nodes[{e}]")

    def node(self, entry: Mapping[str, Any], prefix: str, i: int, key: str) -> None:
        rng = self.rng
        allocatable = self.resources(_get(entry, "allocatable", {}, rng, i), f"{key}.allocatable")
        allocatable.setdefault("pods", DEFAULT_PODS)
        labels = {str(k): str(v) for k, v in _get(entry, "labels", {}, rng, i).items()}
        taints = [parse_taint(t) for t in _get(entry, "taints", [], rng, i)]
        node = Node(
            ObjectMeta(self.next_name(prefix), labels=labels),
            allocatable=allocatable,
            capacity=dict(allocatable),
            taints=taints,
            unschedulable=bool(_get(entry, "unschedulable", False, rng, i)),
        )
        self.cluster.nodes.append(node)
        if not node.unschedulable:
            free = _dims(Resource.from_list(allocatable))
            hard = [t for t in taints if t.effect in ("NoSchedule", "NoExecute")]
            self.rooms.append(_NodeRoom(node, free, hard))

    # -- queues and priority classes ------------------------------------------------------------
    def queues(self, entries: Sequence[Mapping[str, Any]]) -> None:
        rng = self.rng
        for e, entry in enumerate(entries):
            count = int(entry.get("count", 1))
            prefix = str(entry.get("name", "q"))
            for i in range(count):
                name = prefix if count == 1 and "name" in entry else self.next_name(prefix)
                key = f"queues[{e}]"
                self.cluster.queues.append(
                    Queue(
                        ObjectMeta(name),
                        weight=int(_get(entry, "weight", 1, rng, i)),
                        capability=self.resources(_get(entry, "capability", {}, rng, i), key),
                        deserved=self.resources(_get(entry, "deserved", {}, rng, i), key),
                        guarantee=self.resources(_get(entry, "guarantee", {}, rng, i), key),
                        priority=int(_get(entry, "priority", 0, rng, i)),
                    )
                )

    def priority_classes(self, entries: Sequence[Mapping[str, Any]]) -> None:
        for entry in entries:
            self.cluster.priority_classes.append(
                PriorityClass(
                    ObjectMeta(str(entry["name"])),
                    value=int(entry.get("value", 0)),
                    global_default=bool(entry.get("globalDefault", False)),
                    preemption_policy=str(entry.get("preemptionPolicy", "PreemptLowerPriority")),
                )
            )

    # -- jobs -------------------------------------------------------------------------------------
    def jobs(self, entries: Sequence[Mapping[str, Any]]) -> None:
        queue_names = [q.meta.name for q in self.cluster.queues] or ["default"]
        for e, entry in enumerate(entries):
            count = int(entry.get("count", 1))
            fraction = float(entry.get("running", 0.0))
            running = set(self.rng.sample(range(count), round(count * fraction)))
            default_queue = {"cycle": queue_names}
            for i in range(count):
                self.job(entry, i, i in running, default_queue, f"jobs[{e}]")

    def job(
        self,
        entry: Mapping[str, Any],
        i: int,
        running: bool,
        default_queue: Mapping[str, Any],
        key: str,
    ) -> None:
        rng = self.rng
        name = self.next_name(str(entry.get("name", "job")))
        namespace = str(_get(entry, "namespace", "default", rng, i))
        queue = str(resolve(entry.get("queue", default_queue), rng, i))
        pods: list[Pod] = []
        min_task_member: dict[str, int] = {}
        for t, task in enumerate(entry.get("tasks") or [{"name": "task", "replicas": 1}]):
            pods.extend(self.task_pods(task, name, namespace, i, f"{key}.tasks[{t}]"))
            task_min = _get(task, "minAvailable", None, rng, i)
            if task_min is not None:
                min_task_member[str(task.get("name", "task"))] = int(task_min)
        min_available = _get(entry, "minAvailable", "all", rng, i)
        min_member = len(pods) if min_available == "all" else min(int(min_available), len(pods))
        pg = PodGroup(
            ObjectMeta(name, namespace),
            queue=queue,
            min_member=min_member,
            min_task_member=min_task_member,
            priority_class_name=str(_get(entry, "priorityClassName", "", rng, i)),
            phase=str(_get(entry, "phase", "Pending", rng, i)),
        )
        if _get(entry, "minResources", False, rng, i):
            total = Resource()
            for pod in pods[:min_member]:
                for c in pod.containers:
                    total.add(Resource.from_list(c.requests))
            pg.min_resources = _resource_list(total)
        if running and self.place(pods):
            pg.phase = "Running"
            pg.running = len(pods)
        self.cluster.pod_groups.append(pg)
        self.cluster.pods.extend(pods)

    def task_pods(
        self, task: Mapping[str, Any], job: str, namespace: str, i: int, key: str
    ) -> list[Pod]:
        rng = self.rng
        role = str(task.get("name", "task"))
        replicas = int(_get(task, "replicas", 1, rng, i))
        best_effort = rng.random() < float(task.get("bestEffort", 0.0))
        requests = {} if best_effort else self.resources(_get(task, "requests", {}, rng, i), key)
        priority = _get(task, "priority", None, rng, i)
        selector = {str(k): str(v) for k, v in _get(task, "nodeSelector", {}, rng, i).items()}
        tolerations = [parse_toleration(t) for t in _get(task, "tolerations", [], rng, i)]
        labels = {str(k): str(v) for k, v in _get(task, "labels", {}, rng, i).items()}
        labels[TASK_SPEC_KEY] = role
        containers = [Container(name=role, requests=requests)]
        pods = []
        for r in range(replicas):
            pod_name = f"{job}-{role}-{r}"
            pods.append(
                Pod(
                    ObjectMeta(
                        pod_name,
                        namespace,
                        uid=f"{namespace}-{pod_name}",
                        labels=labels,
                        annotations={GROUP_NAME_ANNOTATION: job},
                    ),
                    priority=None if priority is None else int(priority),
                    node_selector=selector,
                    tolerations=tolerations,
                    containers=containers,
                )
            )
        return pods

    # -- placing running jobs ----------------------------------------------------------------------
    def place(self, pods: list[Pod]) -> bool:
        """First-fit every pod from a rotating cursor; all or nothing (gang)."""
        taken: list[tuple[_NodeRoom, dict[str, float]]] = []
        needs: dict[int, dict[str, float]] = {}  # by containers list: a task's pods share one
        for pod in pods:
            need = needs.get(id(pod.containers))
            if need is None:
                need = needs[id(pod.containers)] = _dims(_request(pod))
            room = self.fit(pod, need)
            if room is None:
                for r, given in taken:
                    for dim, amount in given.items():
                        r.free[dim] += amount
                return False
            for dim, amount in need.items():
                room.free[dim] -= amount
            taken.append((room, need))
        for (room, _), pod in zip(taken, pods, strict=True):
            pod.node_name = room.node.meta.name
            pod.phase = "Running"
        return True

    def fit(self, pod: Pod, need: Mapping[str, float]) -> _NodeRoom | None:
        signature = (
            tuple(need.items()),
            tuple(sorted(pod.node_selector.items())),
            tuple(pod.tolerations),
        )
        if signature in self.hopeless or not self.rooms:
            return None
        n = len(self.rooms)
        for step in range(n):
            room = self.rooms[(self.cursor + step) % n]
            if _admits(room, pod, need):
                self.cursor = (self.cursor + step) % n
                return room
        # Rooms only shrink (a rolled-back gang frees less than it found), so a pod shape
        # that fits nowhere never will: remembering it keeps big clusters linear.
        self.hopeless.add(signature)
        return None


def _request(pod: Pod) -> Resource:
    total = Resource()
    for c in pod.containers:
        total.add(Resource.from_list(c.requests))
    total.add_scalar("pods", 1.0)
    return total


def _dims(r: Resource) -> dict[str, float]:
    dims = {"cpu": r.milli_cpu, "memory": r.memory}
    dims.update(r.scalars)
    return {k: v for k, v in dims.items() if v > 0}


def _resource_list(r: Resource) -> ResourceList:
    out: ResourceList = {}
    if r.milli_cpu:
        out["cpu"] = Fraction(int(r.milli_cpu), 1000)
    if r.memory:
        out["memory"] = Fraction(int(r.memory))
    for name, q in r.scalars.items():
        if name != "pods" and q:
            out[name] = Fraction(int(q), 1000)
    return out


def _tolerates(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    for t in tolerations:
        if t.effect and t.effect != taint.effect:
            continue
        if t.operator == "Exists" and (not t.key or t.key == taint.key):
            return True
        if t.operator != "Exists" and t.key == taint.key and t.value == taint.value:
            return True
    return False


def _admits(room: _NodeRoom, pod: Pod, need: Mapping[str, float]) -> bool:
    free = room.free
    if any(free.get(dim, 0.0) < amount for dim, amount in need.items()):
        return False
    labels = room.node.meta.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    return all(_tolerates(pod.tolerations, t) for t in room.hard_taints)


def generate_cluster(
    params: Mapping[str, Any],
    seed: int,
    *,
    location: Location | None = None,
    validated: bool = False,
) -> Cluster:
    """Expand a ``cluster.generate`` mapping into a cluster; same params + seed, same cluster.

    Raises :class:`GenerateError` (a :class:`~vspec.errors.SpecError`) naming the key
    when ``params`` does not follow :func:`generate_schema`. ``validated``: the caller
    has checked ``params`` against that schema already (the spec loader, whose schema
    embeds it), so jsonschema is neither imported nor run a second time.
    """
    if not validated:
        _validate(params, location)
    _check_size(params, location)
    gen = _Generator(random.Random(seed), "cluster.generate", location)
    gen.priority_classes(params.get("priorityClasses") or [])
    gen.queues(params.get("queues") or [])
    gen.nodes(params.get("nodes") or [])
    gen.jobs(params.get("jobs") or [])
    return gen.cluster


def _validate(params: Mapping[str, Any], location: Location | None) -> None:
    errors = sorted(_validator().iter_errors(params), key=lambda e: list(e.absolute_path))
    if errors:
        worst = errors[0]
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in worst.absolute_path)
        raise GenerateError(f"cluster.generate{path}: {worst.message}", location)


@cache
def _validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(generate_schema())


def _check_size(params: Mapping[str, Any], location: Location | None) -> None:
    """Counts are checked before anything is built: ``count: 100000000`` is refused at
    once, not after minutes and gigabytes."""
    sizes = {
        "nodes": sum(int(e.get("count", 1)) for e in params.get("nodes") or ()),
        "queues": sum(int(e.get("count", 1)) for e in params.get("queues") or ()),
        "jobs": sum(
            int(e.get("count", 1))
            * (1 + sum(_most(t.get("replicas", 1)) for t in e.get("tasks") or ()))
            for e in params.get("jobs") or ()
        ),
    }
    total = sum(sizes.values())
    if total > MAX_GENERATED:
        shown = ", ".join(f"{key} {n}" for key, n in sizes.items() if n)
        raise GenerateError(
            f"makes {total} objects ({shown}; jobs count their pod groups "
            f"and pods); vspec generates at most {MAX_GENERATED}",
            location,
        )


def _most(raw: Any) -> int:
    """The largest integer a generator form can yield (a bound, so nothing is drawn)."""
    if _is_form(raw):
        if "range" in raw:
            return int(raw["range"][1])
        choices = raw.get("choice") or raw.get("cycle") or [raw.get("value", 0)]
        return max((_most(c) for c in choices), default=0)
    return int(raw) if isinstance(raw, int | float) else 0


# -- JSON Schema -------------------------------------------------------------------------------


def _valued(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema``, or any generator form (forms are checked loosely: their elements may
    themselves be forms)."""
    return {
        "anyOf": [
            schema,
            {
                "type": "object",
                "properties": {"choice": {"type": "array", "minItems": 1}},
                "required": ["choice"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"cycle": {"type": "array", "minItems": 1}},
                "required": ["cycle"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "range": {
                        "type": "array",
                        "prefixItems": [{"type": "integer"}, {"type": "integer"}],
                        "minItems": 2,
                        "maxItems": 2,
                    }
                },
                "required": ["range"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "fraction": {"type": "number", "minimum": 0, "maximum": 1},
                    "value": {},
                },
                "required": ["fraction", "value"],
                "additionalProperties": False,
            },
        ]
    }


def generate_schema() -> dict[str, Any]:
    """The JSON Schema of ``cluster.generate``, self-contained (no ``$ref``) so the spec
    schema can embed it anywhere."""
    quantity = {"type": ["string", "number"]}
    resources = _valued({"type": "object", "additionalProperties": _valued(quantity)})
    strings = _valued({"type": "object", "additionalProperties": _valued({"type": "string"})})
    fraction = {"type": "number", "minimum": 0, "maximum": 1}
    count = {"type": "integer", "minimum": 0}
    prefix = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"}
    node = {
        "type": "object",
        "properties": {
            "count": count,
            "name": prefix,
            "allocatable": resources,
            "labels": strings,
            "taints": _valued({"type": "array", "items": _valued({"type": "object"})}),
            "unschedulable": _valued({"type": "boolean"}),
        },
        "required": ["count"],
        "additionalProperties": False,
    }
    queue = {
        "type": "object",
        "properties": {
            "count": count,
            "name": prefix,
            "weight": _valued({"type": "integer", "minimum": 0}),
            "capability": resources,
            "deserved": resources,
            "guarantee": resources,
            "priority": _valued({"type": "integer"}),
        },
        "additionalProperties": False,
    }
    task = {
        "type": "object",
        "properties": {
            "name": prefix,
            "replicas": _valued({"type": "integer", "minimum": 0}),
            "requests": resources,
            "bestEffort": fraction,
            "priority": _valued({"type": "integer"}),
            "minAvailable": _valued({"type": "integer", "minimum": 0}),
            "nodeSelector": strings,
            "tolerations": _valued({"type": "array", "items": _valued({"type": "object"})}),
            "labels": strings,
        },
        "additionalProperties": False,
    }
    job = {
        "type": "object",
        "properties": {
            "count": count,
            "name": prefix,
            "namespace": _valued({"type": "string"}),
            "queue": _valued({"type": "string"}),
            "minAvailable": _valued(
                {"anyOf": [{"const": "all"}, {"type": "integer", "minimum": 0}]}
            ),
            "priorityClassName": _valued({"type": "string"}),
            "phase": _valued({"enum": ["Pending", "Inqueue", "Running", "Unknown", ""]}),
            "running": fraction,
            "minResources": _valued({"type": "boolean"}),
            "tasks": {"type": "array", "items": task},
        },
        "required": ["count"],
        "additionalProperties": False,
    }
    priority_class = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "value": {"type": "integer"},
            "globalDefault": {"type": "boolean"},
            "preemptionPolicy": {"enum": ["PreemptLowerPriority", "Never"]},
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "description": "A generated cluster (docs/generate.md), expanded with the spec's seed.",
        "properties": {
            "nodes": {"type": "array", "items": node},
            "queues": {"type": "array", "items": queue},
            "priorityClasses": {"type": "array", "items": priority_class},
            "jobs": {"type": "array", "items": job},
        },
        "additionalProperties": False,
    }
