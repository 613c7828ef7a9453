"""The JSON Schema of spec files and cluster files, and validation against it.

``schema.json`` (JSON Schema Draft 2020-12, shipped as package data) is the one statement
of which keys exist and what they hold; ``vspec schema`` prints it for editors. Errors are
rewritten into messages a spec author can act on, each at the file, line and key path of
the offending value: an unknown key gets a did-you-mean, a failing leaf uses the schema's
``x-message`` keyword (e.g. ``'abc' is not a Kubernetes quantity``).

A 10,000-pod spec must load in a second or two, and jsonschema spends most of its time
creating a sub-validator for every value it descends into. Two things cut that by two
thirds without changing a verdict: validation runs on a copy of the schema with every
``$ref`` replaced by its target, and a value whose (leaf) schema can be decided in one
expression (:meth:`_FastPaths.compile`) is not descended into when it is valid. Invalid
values always go through jsonschema itself, so every error is jsonschema's own.

The fast checks cover every keyword the schema uses, so a valid document is decided
without jsonschema at all: it is imported (about 0.08 s of a `vspec run`'s start-up) only
when a document has an error to report, or a check cannot decide.
"""

from __future__ import annotations

import copy
import json
import re
import reprlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vspec.errors import SpecError
from vspec.harness.generate import generate_schema
from vspec.harness.yamlload import Document, Key
from vspec.timeline.schema import metrics_schema, timeline_schema, workload_schema

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

Kind = Literal[
    "spec",
    "cluster",
    "schedulerConf",
    "schedulerConfigMap",
    "manifestList",
    "anyManifest",
    "nodeManifest",
    "podManifest",
    "podGroupManifest",
    "queueManifest",
    "priorityClassManifest",
    "vcJobManifest",
    "workload",
]

MAX_ERRORS = 20  # reported per document; the rest are counted in one line
_MAX_COLLECTED = 1000  # errors looked at per document, so a hopeless file stays cheap
_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}
_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlist = _short.maxdict = 4


@cache
def _raw_schema() -> dict[str, Any]:
    # Next to this module (importlib.resources would cost every run its import).
    text = Path(__file__).with_name("schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    # The generate vocabulary is vspec.harness.generate's: its schema is stated there, once.
    schema["$defs"]["cluster"]["properties"]["generate"] = generate_schema()
    # So are timelines, workload files and metric bounds: vspec.timeline's.
    schema["$defs"]["timeline"] = timeline_schema(schema["$defs"]["cluster"]["properties"])
    schema["$defs"]["workload"] = workload_schema()
    spec = schema["$defs"]["spec"]["properties"]
    spec["timeline"] = {"$ref": "#/$defs/timeline"}
    spec["workload"] = {
        "type": "string",
        "minLength": 1,
        "description": "A workload file (cluster and timeline; relative to this file), "
        "in place of cluster and timeline.",
    }
    schema["$defs"]["expect"]["properties"]["metrics"] = metrics_schema()
    return schema


# A document that names an apiVersion or a kind is a manifest (``manifests.is_manifest``).
_MANIFEST_LIKE = {"anyOf": [{"required": ["apiVersion"]}, {"required": ["kind"]}]}


def spec_schema() -> dict[str, Any]:
    """The schema of a spec file (what ``vspec schema`` prints). An editor applies it to
    each YAML document that carries the modeline (yaml-language-server reads it per
    document), so it also accepts the empty document a trailing ``---`` leaves, which the
    loader passes over."""
    schema = copy.deepcopy(_raw_schema())
    del schema["$ref"]
    schema["anyOf"] = [{"$ref": "#/$defs/spec"}, {"type": "null"}]
    return schema


def cluster_schema() -> dict[str, Any]:
    """The schema of a document of a cluster file (what ``cluster.include`` names): the
    keys of a spec's ``cluster``, or Kubernetes manifests as ``kubectl apply -f`` takes
    them (one manifest, or a list kind of them), told apart as the loader tells them."""
    return _file_schema(
        "urn:vspec:cluster:v1",
        "vspec cluster file",
        "A document of a cluster file: the keys of a spec's cluster (nodes, jobs, podGroups, "
        "pods, queues, ...), or Kubernetes manifests as kubectl apply -f takes them.",
        {
            "if": _MANIFEST_LIKE,
            "then": {
                "if": {
                    "properties": {"kind": {"type": "string", "pattern": "List$"}},
                    "required": ["kind", "items"],
                },
                "then": {"$ref": "#/$defs/manifestList"},
                "else": {"$ref": "#/$defs/anyManifest"},
            },
            "else": {"$ref": "#/$defs/cluster"},
        },
    )


def scheduler_schema() -> dict[str, Any]:
    """The schema of a scheduler conf file (what a spec's ``scheduler`` names): the
    content of ``volcano-scheduler.conf``, or the ConfigMap that holds it."""
    return _file_schema(
        "urn:vspec:scheduler:v1",
        "vspec scheduler conf file",
        "A volcano-scheduler.conf (actions, tiers, configurations), or the "
        "volcano-scheduler-configmap ConfigMap holding it under data.",
        {
            "if": _MANIFEST_LIKE,
            "then": {"$ref": "#/$defs/schedulerConfigMap"},
            "else": {"$ref": "#/$defs/schedulerConf"},
        },
    )


def _file_schema(id_: str, title: str, description: str, body: dict[str, Any]) -> dict[str, Any]:
    """A schema for one kind of file, sharing the spec schema's definitions."""
    schema = copy.deepcopy(_raw_schema())
    del schema["$ref"]
    schema.update({"$id": id_, "title": title, "description": description, **body})
    return schema


SCHEMAS = {"spec": spec_schema, "cluster": cluster_schema, "scheduler": scheduler_schema}


def validate(doc: Document, kind: Kind, path: tuple[Key, ...] = ()) -> list[SpecError]:
    """The errors of the value at ``path`` of ``doc`` against the definition ``kind``,
    sorted by position; at most :data:`MAX_ERRORS` of them (plus one that counts the rest)."""
    instance = doc.get(path)
    if _fast_paths().quick(_raw_schema()["$defs"][kind], instance) is True:
        return []
    errors: list[SpecError] = []
    for error in _validator(kind).iter_errors(instance):
        errors.extend(_translate(doc, path, error))
        if len(errors) >= _MAX_COLLECTED:
            break
    errors.sort(key=lambda e: (e.location.line, e.location.column) if e.location else (0, 0))
    if len(errors) > MAX_ERRORS:
        rest = len(errors) - MAX_ERRORS
        more = f"{rest} more errors" if len(errors) < _MAX_COLLECTED else "many more errors"
        errors = errors[:MAX_ERRORS]
        errors.append(SpecError(f"... and {more}", doc.locate(path)))
    return errors


@cache
def _inlined(kind: Kind) -> Any:
    """The definition ``kind`` with every ``$ref`` replaced, for jsonschema (which only
    an invalid document meets)."""
    return _Inliner(_raw_schema()["$defs"]).definition(kind)


@cache
def _fast_paths() -> _FastPaths:
    """One set of compiled checks for the process: they are keyed by the ids of the
    cached inlined schemas, which live as long."""
    return _FastPaths()


@cache
def _validator(kind: Kind) -> Validator:
    return _fast_paths().validator_class()(_inlined(kind))


class _Inliner:
    """Replaces ``{"$ref": "#/$defs/x", ...}`` by the (shared) inlined definition ``x``."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.done: dict[str, Any] = {}
        self.active: set[str] = set()

    def definition(self, name: str) -> Any:
        if name not in self.done:
            if name in self.active:
                raise ValueError(f"schema definition {name!r} refers to itself")
            self.active.add(name)
            self.done[name] = self.inline(self.defs[name])
            self.active.discard(name)
        return self.done[name]

    def inline(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: self.inline(value) for key, value in node.items() if key != "$ref"}
        if "$ref" not in node:
            return out
        return _joined(out, self.definition(node["$ref"].removeprefix("#/$defs/")))


def _joined(siblings: dict[str, Any], target: Any) -> Any:
    """What a ``$ref`` to ``target`` beside the keywords ``siblings`` means: the target
    itself when they only describe it, else both."""
    if not siblings or all(key in ("description", "examples") for key in siblings):
        return target
    return {**siblings, "allOf": [target, *siblings.get("allOf", [])]}


# -- fast paths ------------------------------------------------------------------------
# A check returns True (valid), False (invalid) or None (cannot tell: ask jsonschema).
Check = Callable[[Any], "bool | None"]
Keyword = Callable[[Any, Any, Any, Any], "Iterator[ValidationError]"]
_NEUTRAL = frozenset({"description", "examples", "x-message", "title", "$schema", "$id"})
# Decided by the check of ``if`` (jsonschema ignores them without an ``if``).
_BRANCHES = frozenset({"then", "else"})
# The keywords of the shapes compiled as one check (_FastPaths.check_object, check_array,
# check_map).
_OBJECT_KEYWORDS = frozenset({"type", "properties", "additionalProperties", "required"})
_ARRAY_KEYWORDS = frozenset({"type", "items", "maxItems", "minItems"})
_MAP_KEYWORDS = frozenset({"type", "propertyNames", "additionalProperties", "maxProperties"})
# Keywords whose checks answer True or False, never None (cannot tell).
_EXACT = frozenset(
    {"type", "pattern", "minLength", "maxLength", "minimum", "maximum", "maxItems", "minItems"}
)


def _original(keyword: str) -> Keyword:
    from jsonschema import Draft202012Validator

    original: Keyword = Draft202012Validator.VALIDATORS[keyword]
    return original


def _is_type(name: str, value: Any) -> bool:
    """jsonschema's Draft 2020-12 type semantics (booleans are not numbers; 1.0 is an integer)."""
    if name == "string":
        return isinstance(value, str)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return name == "number" and isinstance(value, int | float)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _undecided(value: Any) -> bool | None:
    return None


def _valid(value: Any) -> bool | None:
    return True


def _invalid(value: Any) -> bool | None:
    return False


def _each(check: Check, values: Iterable[Any]) -> bool | None:
    """False as soon as one value fails ``check``; else None if one could not be told;
    else True. (Explicit loops: the checks run for every value of every spec.)"""
    verdict: bool | None = True
    for value in values:
        result = check(value)
        if result is False:
            return False
        if result is None:
            verdict = None
    return verdict


def _every(checks: Sequence[Check], value: Any) -> bool | None:
    """:func:`_each` for several checks of one value."""
    verdict: bool | None = True
    for check in checks:
        result = check(value)
        if result is False:
            return False
        if result is None:
            verdict = None
    return verdict


def _conjunction(parts: Sequence[Check]) -> Check:
    """Two to four checks that each answer True or False: ``and``-ed in one expression,
    which decides a leaf (a name: its type, lengths and pattern) in one call."""
    if len(parts) == 2:
        a, b = parts
        return lambda value: a(value) and b(value)
    if len(parts) == 3:
        a, b, c = parts
        return lambda value: a(value) and b(value) and c(value)
    a, b, c, d = parts
    return lambda value: a(value) and b(value) and c(value) and d(value)


_TYPES: Mapping[str, Check] = {
    "string": lambda value: isinstance(value, str),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
}


class _FastPaths:
    """jsonschema keyword implementations that skip descending into values whose schema
    :meth:`quick` decides to be valid; anything else goes through jsonschema.

    A schema's check is compiled once, with the checks of its subschemas (the schema
    has no cycles), so checking a value is a few calls per value. A ``$ref`` is followed
    when its check is first wanted: inlining the whole schema first cost every run a
    millisecond or two, for the small part of it that its files use."""

    def __init__(self) -> None:
        self.checks: dict[int, Check] = {}  # id(schema) -> check; the schema outlives self
        self.defs: Mapping[str, Any] = _raw_schema()["$defs"]

    def validator_class(self) -> type[Validator]:
        from jsonschema import Draft202012Validator
        from jsonschema.validators import extend

        keywords: dict[str, Keyword] = {
            "properties": self.properties,
            "additionalProperties": self.additional_properties,
            "items": self.items,
            "propertyNames": self.property_names,
            "if": self.if_,
        }
        cls: type[Validator] = extend(Draft202012Validator, keywords)  # type: ignore[no-untyped-call]
        return cls

    def quick(self, schema: Any, value: Any) -> bool | None:
        return self.check_of(schema)(value)

    def check_of(self, schema: Any) -> Check:
        if schema is True or schema is False:
            return _valid if schema else _invalid
        if not isinstance(schema, dict):
            return _undecided
        check = self.checks.get(id(schema))
        if check is None:
            check = self.checks[id(schema)] = self.followed(schema)
        return check

    def followed(self, schema: dict[str, Any]) -> Check:
        """:meth:`compile` of ``schema`` as :class:`_Inliner` inlines it, one level deep."""
        if "$ref" not in schema:
            return self.compile(schema)
        target = self.defs[schema["$ref"].removeprefix("#/$defs/")]
        joined = _joined({k: v for k, v in schema.items() if k != "$ref"}, target)
        return self.check_of(target) if joined is target else self.compile(joined)

    def compile(self, schema: Mapping[str, Any]) -> Check:
        """An exact check when every keyword of ``schema`` is one of those below. The
        shapes most values meet (a mapping of known keys, a list of one kind of item)
        are one check each, which walks the value once."""
        active = {k for k in schema if k not in _NEUTRAL}
        if (
            active <= _OBJECT_KEYWORDS
            and active - {"type"}
            and schema.get("type") in (None, "object")
        ):
            return self.check_object(schema)
        if active <= _ARRAY_KEYWORDS and schema.get("type") == "array" and "items" in active:
            return self.check_array(schema)
        if active <= _MAP_KEYWORDS and schema.get("type") == "object" and "propertyNames" in active:
            return self.check_map(schema)
        parts: list[Check] = []
        for keyword, arg in schema.items():
            if keyword in _NEUTRAL or (keyword in _BRANCHES and "if" in schema):
                continue
            if keyword == "if":
                parts.append(self.check_if(arg, schema.get("then"), schema.get("else")))
                continue
            if keyword == "additionalProperties":
                if "patternProperties" in schema:
                    return _undecided
                parts.append(self.check_additional(arg, frozenset(schema.get("properties", {}))))
                continue
            if keyword == "items":
                parts.append(self.check_items(arg, len(schema.get("prefixItems", ()))))
                continue
            make = getattr(self, f"check_{keyword}", None)
            if make is None:
                return _undecided
            parts.append(make(arg))
        if not parts:
            return _valid
        if len(parts) == 1:
            return parts[0]
        if active <= _EXACT and len(parts) <= 4:  # a leaf: a type and its bounds
            return _conjunction(parts)
        return lambda value: _every(parts, value)

    def check_object(self, schema: Mapping[str, Any]) -> Check:
        """``type: object`` (or none), ``properties``, ``additionalProperties`` and
        ``required`` in one pass over the mapping's keys."""
        typed = "type" in schema
        props: Mapping[str, Any] = schema.get("properties", {})
        extra = (
            self.check_of(schema["additionalProperties"])
            if "additionalProperties" in schema
            else None
        )
        required = tuple(schema.get("required", ()))
        checks: dict[str, Check] = {}  # compiled when a value first has the key (see below)

        def check(value: Any) -> bool | None:
            if not isinstance(value, dict):
                return not typed
            for key in required:
                if key not in value:
                    return False
            verdict: bool | None = True
            for key, item in value.items():
                sub = checks.get(key)
                if sub is None:
                    if key in props:
                        sub = checks[key] = self.check_of(props[key])
                    elif extra is None:
                        continue
                    else:
                        sub = extra  # not kept by key: a label map's keys are the user's
                result = sub(item)
                if result is False:
                    return False
                if result is None:
                    verdict = None
            return verdict

        return check

    def check_map(self, schema: Mapping[str, Any]) -> Check:
        """A mapping of the user's keys (labels, a resource list): ``propertyNames``,
        ``additionalProperties`` and ``maxProperties`` in one pass over its entries."""
        names = self.check_of(schema["propertyNames"])
        values = self.check_of(schema.get("additionalProperties", True))
        most = schema.get("maxProperties")

        def check(value: Any) -> bool | None:
            if not isinstance(value, dict):
                return False
            if most is not None and len(value) > most:
                return False
            verdict: bool | None = True
            for key, item in value.items():
                for result in (names(key), values(item)):
                    if result is False:
                        return False
                    if result is None:
                        verdict = None
            return verdict

        return check

    def check_array(self, schema: Mapping[str, Any]) -> Check:
        """``type: array`` with ``items`` and its bounds, in one pass over the list."""
        items = self.check_of(schema["items"])
        most, least = schema.get("maxItems"), schema.get("minItems", 0)

        def check(value: Any) -> bool | None:
            if not isinstance(value, list):
                return False
            if len(value) < least or (most is not None and len(value) > most):
                return False
            verdict: bool | None = True
            for item in value:
                result = items(item)
                if result is False:
                    return False
                if result is None:
                    verdict = None
            return verdict

        return check

    # -- exact checks of single keywords ------------------------------------------------
    def check_type(self, arg: Any) -> Check:
        names = arg if isinstance(arg, list) else [arg]
        if len(names) == 1 and names[0] in _TYPES:
            return _TYPES[names[0]]
        return lambda value: any(_is_type(n, value) for n in names)

    def check_pattern(self, arg: str) -> Check:
        search = re.compile(arg).search
        return lambda value: bool(search(value)) if isinstance(value, str) else True

    def check_enum(self, arg: list[Any]) -> Check:
        """Strings and booleans decided here; jsonschema tells a boolean from 1 and 1.0,
        so a boolean matches only a boolean. Other values are left to it unless the
        enum holds only strings and booleans, which no other value equals."""
        allowed = frozenset(v for v in arg if isinstance(v, str))
        flags = [v for v in arg if isinstance(v, bool)]
        other: bool | None = None if len(allowed) + len(flags) < len(arg) else False

        def check(value: Any) -> bool | None:
            if isinstance(value, str):
                return value in allowed
            if isinstance(value, bool):
                return any(value is flag for flag in flags)
            return other

        return check

    def check_const(self, arg: Any) -> Check:
        return self.check_enum([arg])

    def check_minLength(self, n: int) -> Check:
        return lambda value: len(value) >= n if isinstance(value, str) else True

    def check_maxLength(self, n: int) -> Check:
        return lambda value: len(value) <= n if isinstance(value, str) else True

    def check_minimum(self, n: float) -> Check:
        return lambda value: not value < n if _number(value) else True

    def check_maximum(self, n: float) -> Check:
        return lambda value: not value > n if _number(value) else True

    def check_maxItems(self, n: int) -> Check:
        return lambda value: len(value) <= n if isinstance(value, list) else True

    def check_minItems(self, n: int) -> Check:
        return lambda value: len(value) >= n if isinstance(value, list) else True

    def check_minProperties(self, n: int) -> Check:
        return lambda value: len(value) >= n if isinstance(value, dict) else True

    def check_maxProperties(self, n: int) -> Check:
        return lambda value: len(value) <= n if isinstance(value, dict) else True

    def check_required(self, keys: list[str]) -> Check:
        if len(keys) == 1:  # most: an if's condition (a manifest names its apiVersion)
            key = keys[0]
            return lambda value: key in value if isinstance(value, dict) else True
        return lambda value: all(k in value for k in keys) if isinstance(value, dict) else True

    def check_anyOf(self, subs: list[Any]) -> Check:
        checks = [self.check_of(sub) for sub in subs]

        def check(value: Any) -> bool | None:
            verdict: bool | None = False
            for sub in checks:
                result = sub(value)
                if result is True:
                    return True
                if result is None:
                    verdict = None
            return verdict

        return check

    def check_allOf(self, subs: list[Any]) -> Check:
        checks = [self.check_of(sub) for sub in subs]
        return lambda value: _every(checks, value)

    def check_not(self, sub: Any) -> Check:
        negated = self.check_of(sub)

        def check(value: Any) -> bool | None:
            result = negated(value)
            return None if result is None else not result

        return check

    def check_if(self, condition: Any, then: Any, otherwise: Any) -> Check:
        holds_for = self.check_of(condition)
        branches = (
            _valid if otherwise is None else self.check_of(otherwise),
            _valid if then is None else self.check_of(then),
        )

        def check(value: Any) -> bool | None:
            holds = holds_for(value)
            return None if holds is None else branches[holds](value)  # [False]: else

        return check

    def check_additional(self, extra: Any, known: frozenset[str]) -> Check:
        """``additionalProperties`` beside ``properties`` (no ``patternProperties``)."""
        check = self.check_of(extra)
        return lambda value: (
            _each(check, [v for k, v in value.items() if k not in known])
            if isinstance(value, dict)
            else True
        )

    def check_items(self, items: Any, start: int) -> Check:
        """``items`` applies to the values after the ``prefixItems`` (``start`` of them)."""
        check = self.check_of(items)
        return lambda value: (
            _each(check, value[start:] if start else value) if isinstance(value, list) else True
        )

    def check_prefixItems(self, subs: list[Any]) -> Check:
        checks = [self.check_of(sub) for sub in subs]

        def check(value: Any) -> bool | None:
            if not isinstance(value, list):
                return True
            verdict: bool | None = True
            for sub, item in zip(checks, value, strict=False):
                result = sub(item)
                if result is False:
                    return False
                if result is None:
                    verdict = None
            return verdict

        return check

    def check_propertyNames(self, names: Any) -> Check:
        check = self.check_of(names)
        return lambda value: _each(check, value) if isinstance(value, dict) else True

    def check_properties(self, props: Mapping[str, Any]) -> Check:
        # Each property's check is compiled when a value first has that key: a run meets
        # a small part of the schema (manifests, timelines and Volcano Jobs are most of
        # it), and compiling all of it was 10 ms of every `vspec run`'s start-up.
        checks: dict[str, Check] = {}

        def check(value: Any) -> bool | None:
            # By the value's keys: a spec writes a few of the dozens a schema allows.
            if not isinstance(value, dict):
                return True
            verdict: bool | None = True
            for key, item in value.items():
                sub = checks.get(key)
                if sub is None and key in props:
                    sub = checks[key] = self.check_of(props[key])
                if sub is not None:
                    result = sub(item)
                    if result is False:
                        return False
                    if result is None:
                        verdict = None
            return verdict

        return check

    # -- keywords ------------------------------------------------------------------------
    def properties(
        self, validator: Any, props: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if isinstance(instance, dict):
            for key, sub in props.items():
                if key in instance and self.quick(sub, instance[key]) is not True:
                    yield from validator.descend(instance[key], sub, path=key, schema_path=key)

    def additional_properties(
        self, validator: Any, extra: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if (
            not isinstance(extra, dict)
            or not isinstance(instance, dict)
            or ("patternProperties" in schema)
        ):
            yield from _original("additionalProperties")(validator, extra, instance, schema)
            return
        known = schema.get("properties", {})
        for key, value in instance.items():
            if key not in known and self.quick(extra, value) is not True:
                yield from validator.descend(value, extra, path=key)

    def items(
        self, validator: Any, items: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if not isinstance(items, dict) or "prefixItems" in schema or not isinstance(instance, list):
            yield from _original("items")(validator, items, instance, schema)
            return
        for index, item in enumerate(instance):
            if self.quick(items, item) is not True:
                yield from validator.descend(item, items, path=index)

    def property_names(
        self, validator: Any, names: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if isinstance(instance, dict):
            for key in instance:
                if self.quick(names, key) is not True:
                    yield from validator.descend(key, names)

    def if_(
        self, validator: Any, condition: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        holds = self.quick(condition, instance)
        if holds is None:
            holds = validator.evolve(schema=condition).is_valid(instance)
        branch = "then" if holds else "else"
        if branch in schema:
            yield from validator.descend(instance, schema[branch], schema_path=branch)


# -- error messages ----------------------------------------------------------------------


def _translate(doc: Document, base: tuple[Key, ...], error: ValidationError) -> Iterable[SpecError]:
    path: tuple[Key, ...] = (*base, *error.absolute_path)
    schema: dict[str, Any] = error.schema if isinstance(error.schema, dict) else {}
    validator = str(error.validator)
    instance: Any = error.instance
    custom = schema.get("x-message")
    if isinstance(custom, dict):
        custom = custom.get(validator)
    if validator == "additionalProperties" and schema.get("additionalProperties") is False:
        yield from _unknown_keys(doc, path, instance, schema)
        return
    if "propertyNames" in error.schema_path and isinstance(instance, str):
        # jsonschema reports a bad key at its mapping; point at the key itself.
        yield doc.error(
            (*path, instance), f"key {_show(instance)} {custom or 'is not allowed'}", key=True
        )
        return
    if isinstance(custom, str):
        message = custom if validator == "not" else f"{_show(instance)} {custom}"
        if validator == "enum":
            choices: Any = error.validator_value
            message += _did_you_mean(instance, choices)
    else:
        message = _message(validator, error, schema)
    yield doc.error(path, message)


def _did_you_mean(value: Any, choices: Iterable[Any]) -> str:
    import difflib  # for an error only, as jsonschema is

    hint = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def _show(value: Any) -> str:
    """A value as YAML spells it (true, null), shortened."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return _short.repr(value)


def _unknown_keys(
    doc: Document, path: tuple[Key, ...], instance: Any, schema: Mapping[str, Any]
) -> Iterable[SpecError]:
    import difflib

    known = list(schema.get("properties", {}))
    manifest = _misplaced_manifest(instance, known)
    if manifest is not None:
        yield doc.error(path, manifest)
        return
    for key in instance:
        if key in known:
            continue
        hint = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
        below = _belongs_below(str(key), schema)
        if hint:
            message = f"unknown key {key!r} (did you mean {hint[0]!r}?)"
        elif below:
            message = f"unknown key {key!r} here: it belongs {below}"
        else:
            listed = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
            message = f"unknown key {key!r} (known keys: {listed})"
        yield doc.error((*path, key), message, key=True)


def _misplaced_manifest(instance: Any, known: list[str]) -> str | None:
    """One message for a whole manifest pasted where its content belongs, not one
    unknown key each for apiVersion, kind, metadata and data."""
    if "kind" in known or not {"apiVersion", "kind"} <= set(instance):
        return None
    kind = instance.get("kind")
    if kind == "ConfigMap" and "actions" in known:
        return (
            "a ConfigMap manifest is not taken inline: save it to a file and write "
            "`scheduler: that-file.yaml` (the conf is read from its "
            "data['volcano-scheduler.conf']), or write the conf itself here "
            "(actions, tiers, ...)"
        )
    return f"a {_show(kind)} manifest is not taken here (known keys: {', '.join(known[:12])})"


def _belongs_below(key: str, schema: Mapping[str, Any]) -> str:
    """Where an unknown key is a known one a level below (``requests`` written on a
    job instead of on each of its ``tasks``): ``in each entry of 'tasks'``."""
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, Mapping):
            continue
        items = sub.get("items")
        if isinstance(items, Mapping) and key in (items.get("properties") or {}):
            return f"in each entry of {name!r}"
        if key in (sub.get("properties") or {}):
            return f"under {name!r}"
    return ""


def _message(validator: str, error: ValidationError, schema: Mapping[str, Any]) -> str:
    instance: Any = error.instance
    shown = _show(instance)
    value: Any = error.validator_value
    if validator == "type":
        types: list[str] = value if isinstance(value, list) else [value]
        wanted = " or ".join(_TYPE_NAMES.get(t, t) for t in types)
        return f"expected {wanted}, got {_describe(instance)}"
    if validator == "required":
        missing = [k for k in value if isinstance(instance, dict) and k not in instance]
        return f"missing required key {', '.join(repr(k) for k in missing)}"
    if validator == "enum":
        choices = ", ".join(_show(v) for v in value)
        return f"{shown} is not one of {choices}" + _did_you_mean(instance, value)
    if validator == "const":
        return f"expected {value!r}, got {shown}"
    if validator == "maxItems":
        return f"a list of {len(instance)} items; at most {value} are allowed"
    if validator == "maxProperties":
        return f"a mapping of {len(instance)} keys; at most {value} are allowed"
    if validator == "minLength":
        return "must not be empty"
    if validator == "maxLength":
        return f"longer than {value} characters"
    if validator == "minimum":
        return f"{shown} is less than the minimum {value}"
    if validator == "maximum":
        return f"{shown} is more than the maximum {value}"
    if validator == "not":
        return f"{shown} is not allowed here"
    return error.message if len(error.message) < 200 else f"{shown} is invalid ({validator})"


def _describe(instance: Any) -> str:
    if isinstance(instance, dict):
        return "a mapping"
    if isinstance(instance, list):
        return "a list"
    if instance is None:
        return "null (nothing)"
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    return f"{_show(instance)} ({kind.get(type(instance), type(instance).__name__)})"
