"""Label selectors and node selector terms as the Kubernetes scheduler evaluates them.

Ports ``apimachinery/pkg/labels`` (``LabelSelectorAsSelector``, ``SelectorFromSet``) and
``component-helpers/scheduling/corev1/nodeaffinity`` (``RequiredNodeAffinity``,
``PreferredSchedulingTerms``). Selectors are compiled once per pod and then matched
against many nodes or pods, so matching is a flat loop over tuples.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from vspec.errors import GoError
from vspec.model.corev1 import (
    LabelSelector,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from vspec.model.objects import Node

# Operators, as small ints so that matching is a chain of integer comparisons.
IN: Final = 0
NOT_IN: Final = 1
EXISTS: Final = 2
DOES_NOT_EXIST: Final = 3
GT: Final = 4
LT: Final = 5

_LABEL_OPS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}
_NODE_OPS = {**_LABEL_OPS, "Gt": GT, "Lt": LT}
_GO_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

NODE_NAME_FIELD = "metadata.name"


class SelectorError(GoError, ValueError):
    """A selector Kubernetes would refuse to parse."""


def parse_go_int64(text: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: no spaces, no underscores, int64 range."""
    if _GO_INT.fullmatch(text) is None:
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


Requirement = tuple[str, int, frozenset[str], int]  # key, operator, values, Gt/Lt bound


def _requirement_matches(req: Requirement, labels: Mapping[str, str]) -> bool:
    key, op, values, bound = req
    if op == IN:
        return labels.get(key) in values
    if op == NOT_IN:
        return labels.get(key) not in values
    if op == EXISTS:
        return key in labels
    if op == DOES_NOT_EXIST:
        return key not in labels
    raw = labels.get(key)
    if raw is None:
        return False
    number = parse_go_int64(raw)
    if number is None:
        return False
    return number > bound if op == GT else number < bound


def _requirement(
    key: str, operator: str, values: tuple[str, ...], ops: Mapping[str, int]
) -> Requirement:
    op = ops.get(operator)
    if op is None:
        raise SelectorError(f"{operator!r} is not a valid selector operator")
    if op in (IN, NOT_IN) and not values:
        raise SelectorError(f"for 'in', 'notin' operators, values set can't be empty ({key})")
    if op in (EXISTS, DOES_NOT_EXIST) and values:
        raise SelectorError(f"values set must be empty for exists and does not exist ({key})")
    bound = 0
    if op in (GT, LT):
        if len(values) != 1:
            raise SelectorError(f"for 'Gt', 'Lt' operators, exactly one value is required ({key})")
        parsed = parse_go_int64(values[0])
        if parsed is None:
            raise SelectorError(f"for 'Gt', 'Lt' operators, the value must be an integer ({key})")
        bound = parsed
    return (key, op, frozenset(values), bound)


class Selector:
    """``labels.Selector``: requirements ANDed; ``nothing`` matches no label set at all."""

    __slots__ = ("nothing", "requirements")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        self.requirements: tuple[Requirement, ...] = tuple(requirements)
        self.nothing = nothing

    @property
    def empty(self) -> bool:
        """``Selector.Empty()``: true for Everything, false for Nothing."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(_requirement_matches(req, labels) for req in self.requirements)

    def with_requirements(self, extra: Iterable[Requirement]) -> Selector:
        """``mergeLabelSetWithSelector``: the same selector with more requirements."""
        if self.nothing:
            return self
        return Selector((*self.requirements, *extra))

    def __repr__(self) -> str:
        return "Selector(nothing)" if self.nothing else f"Selector({self.requirements})"


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


def equals_requirement(key: str, value: str) -> Requirement:
    return (key, IN, frozenset((value,)), 0)


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """``labels.SelectorFromSet``: every key must carry exactly its value."""
    return Selector(equals_requirement(k, v) for k, v in labels.items())


def selector_from_label_selector(sel: LabelSelector | None) -> Selector:
    """``metav1.LabelSelectorAsSelector``: nil matches nothing, an empty one everything."""
    if sel is None:
        return NOTHING
    reqs = [equals_requirement(k, v) for k, v in sel.match_labels]
    reqs.extend(
        _requirement(e.key, e.operator, e.values, _LABEL_OPS) for e in sel.match_expressions
    )
    return Selector(reqs)


# -- node selector terms ---------------------------------------------------------------------

FieldRequirement = tuple[str, bool, str]  # key, equal (In) or not equal (NotIn), value


class NodeSelectorTermMatcher:
    """One parsed ``NodeSelectorTerm``.

    An empty term matches no node, and a term that failed to parse never matches
    (Kubernetes keeps its parse errors and ignores them for required affinity).
    """

    __slots__ = ("empty", "error", "fields", "requirements")

    def __init__(self, term: NodeSelectorTerm) -> None:
        self.empty = not term.match_expressions and not term.match_fields
        self.error: str | None = None
        self.requirements: tuple[Requirement, ...] = ()
        self.fields: tuple[FieldRequirement, ...] = ()
        try:
            self.requirements = tuple(_node_requirement(r) for r in term.match_expressions)
            self.fields = tuple(_field_requirement(r) for r in term.match_fields)
        except SelectorError as exc:
            self.error = str(exc)

    def matches(self, node: Node) -> bool:
        if self.empty or self.error is not None:
            return False
        labels = node.meta.labels
        for req in self.requirements:
            if not _requirement_matches(req, labels):
                return False
        for key, equal, value in self.fields:
            actual = node.meta.name if key == NODE_NAME_FIELD else ""
            if (actual == value) != equal:
                return False
        return True


def _node_requirement(r: NodeSelectorRequirement) -> Requirement:
    return _requirement(r.key, r.operator, r.values, _NODE_OPS)


def _field_requirement(r: NodeSelectorRequirement) -> FieldRequirement:
    if r.operator not in ("In", "NotIn"):
        raise SelectorError(f"{r.operator!r} is not a supported field selector operator")
    if len(r.values) != 1:
        raise SelectorError(f"field selector {r.key} must have one value")
    return (r.key, r.operator == "In", r.values[0])


class RequiredNodeAffinity:
    """``GetRequiredNodeAffinity``: ``spec.nodeSelector`` AND any required affinity term."""

    __slots__ = ("label_selector", "terms")

    def __init__(self, node_selector: Mapping[str, str], affinity: NodeAffinity | None) -> None:
        self.label_selector = selector_from_set(node_selector) if node_selector else None
        self.terms: tuple[NodeSelectorTermMatcher, ...] | None = None
        if affinity is not None and affinity.required is not None:
            self.terms = tuple(NodeSelectorTermMatcher(t) for t in affinity.required)

    @property
    def always(self) -> bool:
        """True when every node matches (the common case, checked once per task)."""
        return self.label_selector is None and self.terms is None

    def matches(self, node: Node) -> bool:
        if self.label_selector is not None and not self.label_selector.matches(node.meta.labels):
            return False
        if self.terms is None:
            return True
        return any(term.matches(node) for term in self.terms)


class PreferredSchedulingTerms:
    """``NewPreferredSchedulingTerms``: zero-weight terms dropped; a parse error fails scoring."""

    __slots__ = ("error", "terms")

    def __init__(self, terms: Iterable[PreferredSchedulingTerm]) -> None:
        self.terms: list[tuple[NodeSelectorTermMatcher, int]] = []
        errors = []
        for term in terms:
            if term.weight == 0:
                continue
            matcher = NodeSelectorTermMatcher(term.preference)
            if matcher.error is not None:
                errors.append(matcher.error)
                continue
            self.terms.append((matcher, term.weight))
        self.error = "; ".join(errors) if errors else None

    def score(self, node: Node) -> int:
        """The sum of the weights of the terms the node matches."""
        if not self.terms:  # most pods prefer no node: asked for every scored node
            return 0
        return sum(weight for matcher, weight in self.terms if matcher.matches(node))
