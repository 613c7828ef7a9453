"""apimachinery's rules for names and labels (issue 14, item 6)."""

from __future__ import annotations

import pytest

from vspec.harness.apirules import (
    label_key_problem,
    label_problem,
    label_value_problem,
    subdomain_problem,
)


@pytest.mark.parametrize("name", ["n1", "a", "node-1.zone-a", "0", "a" * 253])
def test_subdomains(name: str) -> None:
    assert subdomain_problem(name) is None


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("My-Node", "'M' is not allowed"),
        ("a_b", "'_' is not allowed"),
        ("-a", "starts and ends with a lowercase letter or digit"),
        ("a.", "starts and ends"),
        ("a..b", "starts and ends"),
        ("a" * 254, "longer than 253 characters"),
        ("nöde", "'ö' is not allowed"),
    ],
)
def test_subdomain_rules_name_the_rule_broken(name: str, rule: str) -> None:
    assert rule in (subdomain_problem(name) or "")


def test_namespace_is_a_label() -> None:
    assert label_problem("team-a") is None
    assert "'.' is not allowed in a DNS-1123 label" in (label_problem("team.a") or "")
    assert "longer than 63" in (label_problem("a" * 64) or "")


@pytest.mark.parametrize(
    "key", ["zone", "volcano.sh/task-spec", "kubernetes.io/hostname", "A_b.c", "x" * 63]
)
def test_label_keys(key: str) -> None:
    assert label_key_problem(key) is None


@pytest.mark.parametrize(
    ("key", "rule"),
    [
        ("/zone", "the prefix before '/' is empty"),
        ("Example.com/zone", "prefix 'Example.com'"),
        ("example.com/", "the name part is empty"),
        ("-zone", "starting and ending with a letter or digit"),
        ("x" * 64, "longer than 63 characters"),
    ],
)
def test_label_key_rules(key: str, rule: str) -> None:
    assert rule in (label_key_problem(key) or "")


def test_label_values() -> None:
    assert label_value_problem("") is None
    assert label_value_problem("v1.2_3-x") is None
    assert "longer than 63" in (label_value_problem("v" * 64) or "")
    assert "starting and ending" in (label_value_problem("a b") or "")
