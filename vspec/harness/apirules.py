"""What the Kubernetes API server would refuse, refused here with the rule that was broken.

A spec describes objects as a cluster holds them; an object the API server rejects (a Node
``v2``, a pod named ``My_Pod``, a label value of 64 characters) cannot exist there, so a
spec built on one tests nothing real. The rules are apimachinery's
(``pkg/util/validation/validation.go``): DNS-1123 subdomains for object names, DNS-1123
labels for namespaces, qualified names and label values for labels. Which group/versions
each kind is taken at is :mod:`vspec.harness.kinds`'.
"""

from __future__ import annotations

import re

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", re.ASCII)
_DNS1123_SUBDOMAIN = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", re.ASCII
)
_QUALIFIED = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", re.ASCII)


def subdomain_problem(name: str) -> str | None:
    """Why ``name`` is not a DNS-1123 subdomain (the name rule of most kinds)."""
    if len(name) > DNS1123_SUBDOMAIN_MAX:
        return f"longer than {DNS1123_SUBDOMAIN_MAX} characters"
    if _DNS1123_SUBDOMAIN.fullmatch(name):
        return None
    return _dns_rule(name, "a DNS-1123 subdomain", dots=True)


def label_problem(name: str) -> str | None:
    """Why ``name`` is not a DNS-1123 label (the rule of namespace names)."""
    if len(name) > DNS1123_LABEL_MAX:
        return f"longer than {DNS1123_LABEL_MAX} characters"
    if _DNS1123_LABEL.fullmatch(name):
        return None
    return _dns_rule(name, "a DNS-1123 label", dots=False)


def _dns_rule(name: str, what: str, *, dots: bool) -> str:
    allowed = "lowercase letters, digits, '-'" + (" and '.'" if dots else "")
    bad = next((c for c in name if not (c.isascii() and (c.islower() or c.isdigit()))), None)
    if not name:
        return f"empty; {what} holds 1 to 63 {allowed}"
    if bad is not None and bad not in ("-." if dots else "-"):
        return f"{bad!r} is not allowed in {what} ({allowed} only)"
    return f"{what} starts and ends with a lowercase letter or digit (each dot-separated part too)"


def label_key_problem(key: str) -> str | None:
    """Why ``key`` is not a label key: ``[prefix/]name``, the prefix a DNS-1123
    subdomain, the name a qualified name of at most 63 characters."""
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix:
            return "the prefix before '/' is empty"
        problem = subdomain_problem(prefix)
        if problem is not None:
            return f"prefix {prefix!r}: {problem}"
    return _qualified_problem(name, "name part" if slash else "key")


def label_value_problem(value: str) -> str | None:
    """Why ``value`` is not a label value: empty, or at most 63 characters of
    alphanumerics, '-', '_' and '.', starting and ending with an alphanumeric."""
    if not value:
        return None
    return _qualified_problem(value, "value")


def _qualified_problem(text: str, what: str) -> str | None:
    if not text:
        return f"the {what} is empty"
    if len(text) > QUALIFIED_NAME_MAX:
        return f"the {what} is longer than {QUALIFIED_NAME_MAX} characters"
    if _QUALIFIED.fullmatch(text):
        return None
    return (
        f"the {what} must be letters, digits, '-', '_' and '.', starting and ending with a "
        "letter or digit"
    )
