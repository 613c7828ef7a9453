"""Label selectors and node selector terms, as apimachinery and nodeaffinity match them."""

from __future__ import annotations

import pytest

from tests.builders import node as k8s_node
from vspec.k8s.labels import (
    NodeSelectorTermMatcher,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    SelectorError,
    parse_go_int64,
    selector_from_label_selector,
    selector_from_set,
)
from vspec.model.corev1 import (
    LabelSelector,
    LabelSelectorRequirement,
    parse_affinity,
    parse_label_selector,
    parse_node_selector_term,
)


def test_nil_selector_matches_nothing_and_empty_selector_everything() -> None:
    nothing = selector_from_label_selector(None)
    everything = selector_from_label_selector(LabelSelector())
    assert not nothing.matches({}) and not nothing.matches({"a": "b"})
    assert everything.matches({}) and everything.matches({"a": "b"})
    assert everything.empty and not nothing.empty


@pytest.mark.parametrize(
    ("expression", "labels", "expected"),
    [
        ({"key": "role", "operator": "In", "values": ["a", "b"]}, {"role": "b"}, True),
        ({"key": "role", "operator": "In", "values": ["a"]}, {}, False),
        ({"key": "role", "operator": "NotIn", "values": ["a"]}, {}, True),
        ({"key": "role", "operator": "NotIn", "values": ["a"]}, {"role": "a"}, False),
        ({"key": "role", "operator": "Exists"}, {"role": ""}, True),
        ({"key": "role", "operator": "DoesNotExist"}, {"role": ""}, False),
    ],
)
def test_label_selector_operators(
    expression: dict[str, object], labels: dict[str, str], expected: bool
) -> None:
    sel = parse_label_selector({"matchExpressions": [expression]})
    assert selector_from_label_selector(sel).matches(labels) is expected


def test_match_labels_and_expressions_are_anded() -> None:
    sel = parse_label_selector(
        {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]}
    )
    compiled = selector_from_label_selector(sel)
    assert compiled.matches({"app": "web", "tier": "x"})
    assert not compiled.matches({"app": "web"})
    assert not compiled.matches({"app": "db", "tier": "x"})


def test_invalid_label_selectors_are_refused() -> None:
    with pytest.raises(SelectorError):
        selector_from_label_selector(
            LabelSelector(match_expressions=(LabelSelectorRequirement("a", "In", ()),))
        )
    with pytest.raises(SelectorError):
        selector_from_label_selector(
            LabelSelector(match_expressions=(LabelSelectorRequirement("a", "Gt", ("1",)),))
        )


def test_go_int_parsing_is_strict() -> None:
    assert parse_go_int64("+5") == 5
    assert parse_go_int64("-12") == -12
    assert parse_go_int64(" 5") is None
    assert parse_go_int64("1_000") is None
    assert parse_go_int64(str(2**63)) is None


def test_selector_from_set() -> None:
    assert selector_from_set({"a": "1"}).matches({"a": "1", "b": "2"})
    assert not selector_from_set({"a": "1"}).matches({"a": "2"})


def _term(raw: dict[str, object]) -> NodeSelectorTermMatcher:
    return NodeSelectorTermMatcher(parse_node_selector_term(raw))


def test_node_selector_term_gt_lt_and_fields() -> None:
    node = k8s_node("n1", labels={"cores": "16"})
    assert _term(
        {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["8"]}]}
    ).matches(node)
    assert not _term(
        {"matchExpressions": [{"key": "cores", "operator": "Lt", "values": ["8"]}]}
    ).matches(node)
    assert not _term(
        {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["0"]}]}
    ).matches(node)
    assert _term(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    ).matches(node)
    assert not _term(
        {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}
    ).matches(node)


def test_empty_and_invalid_terms_match_no_node() -> None:
    node = k8s_node("n1", labels={"a": "b"})
    assert not _term({}).matches(node)
    bad = _term({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]})
    assert bad.error is not None and not bad.matches(node)
    fields = _term(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}
    )
    assert fields.error is not None


def test_required_node_affinity_is_node_selector_and_any_term() -> None:
    affinity = parse_affinity(
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "Gt", "values": ["x"]}]},
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]},
                    ]
                }
            }
        }
    )
    assert affinity is not None
    required = RequiredNodeAffinity({"disk": "ssd"}, affinity.node_affinity)
    assert not required.always
    # The invalid first term is ignored; the second one matches.
    assert required.matches(k8s_node("n1", labels={"zone": "z1", "disk": "ssd"}))
    assert not required.matches(k8s_node("n2", labels={"zone": "z1"}))
    assert not required.matches(k8s_node("n3", labels={"zone": "z2", "disk": "ssd"}))
    assert RequiredNodeAffinity({}, None).always


def test_required_affinity_with_no_terms_matches_nothing() -> None:
    affinity = parse_affinity(
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
            }
        }
    )
    assert affinity is not None
    assert not RequiredNodeAffinity({}, affinity.node_affinity).matches(k8s_node("n1"))


def test_preferred_terms_sum_matching_weights_and_drop_zero_weights() -> None:
    affinity = parse_affinity(
        {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 5,
                        "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
                    },
                    {
                        "weight": 3,
                        "preference": {"matchExpressions": [{"key": "b", "operator": "Exists"}]},
                    },
                    {
                        "weight": 0,
                        "preference": {
                            "matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]
                        },
                    },
                ]
            }
        }
    )
    assert affinity is not None and affinity.node_affinity is not None
    terms = PreferredSchedulingTerms(affinity.node_affinity.preferred)
    assert terms.error is None  # the invalid term has weight 0 and is never parsed
    assert terms.score(k8s_node("n1", labels={"a": "1", "b": "2"})) == 8
    assert terms.score(k8s_node("n2", labels={"b": "2"})) == 3
    assert terms.score(k8s_node("n3")) == 0


def test_preferred_term_parse_error_is_reported() -> None:
    affinity = parse_affinity(
        {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchExpressions": [{"key": "a", "operator": "Lt", "values": []}]
                        },
                    }
                ]
            }
        }
    )
    assert affinity is not None and affinity.node_affinity is not None
    assert PreferredSchedulingTerms(affinity.node_affinity.preferred).error is not None
