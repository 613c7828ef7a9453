"""The JSON Schema of ``timeline``, of workload files and of ``expect.metrics``.

Stated here, next to the code that reads them, and put into the spec schema by
:mod:`vspec.harness.schema` (as ``cluster.generate`` is); ``$ref``s name the spec
schema's own definitions, so an arrival's jobs are exactly the cluster's forms.
"""

from __future__ import annotations

from typing import Any

# Go's time.ParseDuration form ("90s", "1h30m", "500ms"), or a number of seconds.
DURATION: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "pattern": r"^(\d+(\.\d*)?(ns|us|µs|ms|s|m|h))+$|^0$"},
        {"type": "number", "minimum": 0},
    ],
    "x-message": "is not a duration (e.g. 90s, 10m, 1h30m, or a number of seconds)",
}


def _distribution() -> dict[str, Any]:
    """A duration, or a distribution of durations drawn with the spec's seed."""
    pair = {"type": "array", "items": DURATION, "minItems": 2, "maxItems": 2}
    return {
        "anyOf": [
            DURATION,
            _one("uniform", pair, "a uniformly drawn duration between the two, both included"),
            _one("exponential", DURATION, "an exponentially drawn duration of this mean"),
            _one(
                "choice",
                {"type": "array", "items": DURATION, "minItems": 1, "maxItems": 1000},
                "one of these, uniformly",
            ),
        ],
        "x-message": "is not a duration nor a distribution "
        "({uniform: [a, b]}, {exponential: mean}, {choice: [...]})",
    }


def _one(key: str, value: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: value},
        "required": [key],
        "additionalProperties": False,
        "description": description,
    }


def timeline_schema(cluster: dict[str, Any]) -> dict[str, Any]:
    """``cluster`` is the schema of the ``cluster`` key's properties: an arrival's
    ``jobs``, ``podGroups`` and ``pods`` and an added node are exactly those."""
    run_for = _distribution()
    arrival = {
        "type": "object",
        "properties": {
            "at": {**DURATION, "description": "Submit time, after the start of the clock."},
            "count": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1000000,
                "description": "Submit this many copies, named <name>-0, <name>-1, ...",
            },
            "every": {
                **run_for,
                "description": "Time between two copies (a distribution draws each gap).",
            },
            "runFor": {
                **run_for,
                "description": "How long each pod runs once bound; without it, forever.",
            },
            "runForEach": {
                "enum": ["pod", "job"],
                "x-message": "is not pod or job",
                "description": "Draw runFor once per pod (default), or once per job, "
                "shared by its pods.",
            },
            "runForTask": {
                "type": "object",
                "maxProperties": 1000,
                "additionalProperties": run_for,
                "description": "Per task (the pod's task-spec label, or a bare pod's name).",
            },
            "tags": {"type": "array", "maxItems": 100, "items": {"$ref": "#/$defs/string"}},
            "jobs": cluster["jobs"],
            "podGroups": cluster["podGroups"],
            "pods": cluster["pods"],
        },
        "required": ["at"],
        "additionalProperties": False,
    }
    node_event = {
        "type": "object",
        "properties": {
            "at": DURATION,
            "add": cluster["nodes"]["items"],
            "cordon": {"$ref": "#/$defs/name"},
            "uncordon": {"$ref": "#/$defs/name"},
            "drain": {"$ref": "#/$defs/name"},
            "remove": {"$ref": "#/$defs/name"},
        },
        "required": ["at"],
        "minProperties": 2,
        "maxProperties": 2,
        "additionalProperties": False,
        "x-message": "is not a node event: at, and one of add, cordon, uncordon, drain, remove",
    }
    return {
        "type": "object",
        "properties": {
            "period": {**DURATION, "description": "--schedule-period; default 1s."},
            "until": {**DURATION, "description": "Stop the clock here (default: when idle)."},
            "skip": {
                "enum": ["idle", "none"],
                "x-message": "is not a skip mode: idle or none",
                "description": "idle (default): jump over periods in which nothing can change.",
            },
            "arrivals": {"type": "array", "maxItems": 100000, "items": arrival},
            "nodes": {"type": "array", "maxItems": 100000, "items": node_event},
        },
        "additionalProperties": False,
        "description": "Jobs that arrive and finish, and node events (docs/timeline.md).",
    }


def workload_schema() -> dict[str, Any]:
    """A workload file: the cluster at the start and its timeline (``vspec compare``)."""
    return {
        "type": "object",
        "properties": {
            "description": {"$ref": "#/$defs/string"},
            "cluster": {"type": ["object", "null"], "allOf": [{"$ref": "#/$defs/cluster"}]},
            "timeline": {"$ref": "#/$defs/timeline"},
        },
        "required": ["timeline"],
        "additionalProperties": False,
        "description": "A vspec workload file: a cluster and a timeline.",
    }


def metrics_schema() -> dict[str, Any]:
    return {
        "type": "array",
        "maxItems": 1000,
        "items": {"type": "string", "minLength": 1, "maxLength": 2000},
        "description": "Bounds on a timeline's metrics, e.g. 'p95(wait, tag=big) <= 5m' "
        "(docs/timeline.md#metrics).",
    }
