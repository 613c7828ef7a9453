"""The JSON Schema: valid Draft 2020-12, complete against the contract, and the fast
validator used for loading agrees with plain jsonschema on the published schema."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from vspec.harness.loader import discover
from vspec.harness.schema import (
    SCHEMAS,
    _FastPaths,
    _Inliner,
    _raw_schema,
    cluster_schema,
    scheduler_schema,
    spec_schema,
)
from vspec.harness.yamlload import parse_documents, read_documents
from vspec.model.conf import FLAG_KEYS

REPO = Path(__file__).resolve().parents[2]

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
BADINPUT = Path(__file__).resolve().parents[1] / "badinput"


def all_properties(node: Any) -> set[str]:
    """Every key named under ``properties`` anywhere in a schema."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                found |= set(value)
            found |= all_properties(value)
    elif isinstance(node, list):
        for item in node:
            found |= all_properties(item)
    return found


def test_schemas_are_valid_draft_2020_12() -> None:
    for schema in (spec_schema(), cluster_schema(), scheduler_schema()):
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    ids = {s()["$id"] for s in SCHEMAS.values()}
    assert ids == {"urn:vspec:spec:v1", "urn:vspec:cluster:v1", "urn:vspec:scheduler:v1"}


def _documents(path: Path) -> list[Any]:
    """Every document as JSON sees it (timestamps stay strings), empty ones as None."""
    return [d.data for d in read_documents(path)]


def test_every_document_of_the_repositorys_files_fits_its_schema() -> None:
    """What an editor checks with a modeline in each document: the spec schema on every
    document of every spec file (empty ones included), the cluster and scheduler conf
    schemas on the fixtures, plain and as Kubernetes manifests."""
    checks = [
        (spec_schema(), sorted((REPO / "specs").rglob("*.yaml"))),
        (cluster_schema(), sorted((REPO / "fixtures" / "clusters").glob("*.yaml"))),
        (scheduler_schema(), sorted((REPO / "fixtures" / "schedulers").glob("*.yaml"))),
    ]
    for schema, files in checks:
        validator = Draft202012Validator(schema)
        assert files
        for file in files:
            for doc in _documents(file):
                errors = [e.message for e in validator.iter_errors(doc)]
                assert errors == [], f"{file}: {errors}"


def test_multi_document_spec_file_with_a_trailing_separator() -> None:
    validator = Draft202012Validator(spec_schema())
    text = "name: a\n---\n# yaml-language-server: $schema=spec.json\nname: b\n---\n"
    docs = [d.data for d in parse_documents(text, "multi.yaml")]
    assert docs[-1] is None and all(validator.is_valid(d) for d in docs)
    assert not validator.is_valid({"nmae": "typo"})


def test_file_schemas_tell_manifests_apart_as_the_loader_does() -> None:
    cluster = Draft202012Validator(cluster_schema())
    assert cluster.is_valid({"nodes": [{"name": "n1", "allocatable": {"cpu": 4}}]})
    assert not cluster.is_valid({"nodes": [{"nmae": "n1"}]})
    assert cluster.is_valid({"apiVersion": "v1", "kind": "List", "items": []})
    assert not cluster.is_valid({"apiVersion": "v1", "kind": "List"})  # no items
    assert cluster.is_valid({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    scheduler = Draft202012Validator(scheduler_schema())
    assert scheduler.is_valid({"actions": "enqueue, allocate", "tiers": []})
    assert not scheduler.is_valid({"actions": "allocate", "tiers": [{"plugin": []}]})
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"volcano-scheduler.conf": ""}}
    assert scheduler.is_valid(configmap)
    assert not scheduler.is_valid({**configmap, "kind": "Secret"})


def test_cluster_generate_is_the_generators_own_schema() -> None:
    from vspec.harness.generate import generate_schema

    embedded = spec_schema()["$defs"]["cluster"]["properties"]["generate"]
    assert embedded == generate_schema()
    assert "nodes" in embedded["properties"]


def test_spec_schema_is_a_copy() -> None:
    spec_schema()["$defs"].clear()
    assert spec_schema()["$defs"]


def test_plugin_flags_are_volcanos() -> None:
    plugin = spec_schema()["$defs"]["plugin"]["properties"]
    assert set(plugin) == {"name", "arguments", *FLAG_KEYS}


@pytest.mark.skipif(not (SHARED / "spec-format.md").is_file(), reason="no spec-format.md")
def test_every_key_of_the_contract_is_in_the_schema() -> None:
    text = (SHARED / "spec-format.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    keys = {m for block in blocks for m in re.findall(r"^[\s-]*([A-Za-z][\w]*):", block, re.M)}
    placeholders = {"master", "worker", "binpack", "cpu", "memory", "nodeRole", "time"}
    missing = keys - all_properties(spec_schema()) - placeholders
    assert not missing


def published_validator(kind: str) -> Draft202012Validator:
    """The published definition of ``kind`` alone (without the spec schema's null case)."""
    schema = {k: v for k, v in spec_schema().items() if k != "anyOf"}
    return Draft202012Validator({**schema, "$ref": f"#/$defs/{kind}"})


def fast_validator(kind: str) -> Any:
    return _FastPaths().validator_class()(_Inliner(_raw_schema()["$defs"]).definition(kind))


def corpus_documents() -> list[Any]:
    docs = []
    paths = sorted(BADINPUT.glob("*.yaml"))
    if (SHARED / "conformance").is_dir():
        paths += discover([SHARED / "conformance"])
    for path in paths:
        try:
            docs += [d.data for d in read_documents(path)]
        except Exception:  # the corpus holds YAML that does not parse: nothing to compare
            continue
    return docs


def test_fast_validator_agrees_with_jsonschema_on_the_corpus() -> None:
    published, fast = published_validator("spec"), fast_validator("spec")
    documents = corpus_documents()
    assert len(documents) > 20
    inlined, checks = _Inliner(_raw_schema()["$defs"]).definition("spec"), _FastPaths()
    verdicts = set()
    for data in documents:
        expected = sorted(e.message for e in published.iter_errors(data))
        assert sorted(e.message for e in fast.iter_errors(data)) == expected
        verdicts.add(bool(expected))
        # A valid spec is decided by the fast checks alone (jsonschema is not imported).
        verdict = checks.quick(inlined, data)
        assert verdict is (None if expected and verdict is None else not expected), expected
    assert verdicts == {True, False}  # the corpus holds valid and invalid specs


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(
        [
            "500m",
            "1Gi",
            "2",
            "1e3",
            "Running",
            "c1/p1",
            "2025-01-01T00:00:00Z",
            "",
            "abc",
            "-1",
            "n1",
            "nvidia.com/gpu",
        ]
    ),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["name", "cpu", "kind", "apiVersion", "x", "phase"]), inner, max_size=4
        )
    ),
    max_leaves=12,
)
LEAF_KINDS = [
    "quantity",
    "resourceList",
    "name",
    "namespacedName",
    "timestamp",
    "optionalTimestamp",
    "podPhase",
    "podGroupPhase",
    "count",
    "int32",
    "stringMap",
    "taint",
    "toleration",
    "pod",
    "podEntry",
    "queueEntry",
    "probe",
    "scheduler",
    "schedulerConf",
    "node",
]


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(LEAF_KINDS), value=json_values)
def test_fast_paths_decide_exactly_as_jsonschema(kind: str, value: Any) -> None:
    inlined = _Inliner(_raw_schema()["$defs"]).definition(kind)
    valid = published_validator(kind).is_valid(value)
    verdict = _FastPaths().quick(inlined, value)
    assert verdict is None or verdict == valid
    # Following each $ref when its check is compiled decides as the inlined schema does.
    assert _FastPaths().quick(_raw_schema()["$defs"][kind], value) == verdict
    assert fast_validator(kind).is_valid(value) == valid


def messages(text: str) -> list[str]:
    from vspec.harness.schema import validate

    return [e.message for e in validate(parse_documents(text, "f.yaml")[0], "spec")]


def test_messages_for_people() -> None:
    assert messages("name: x\ncyclez: 1\n") == ["unknown key 'cyclez' (did you mean 'cycles'?)"]
    assert messages("name: x\nseed: -1\n") == ["-1 is less than the minimum 0"]
    assert messages("name: x\ntags: yes\n") == ["expected a list, got true (a boolean)"]
    assert messages("name: x\ncluster: {pods: [{name: p, phase: Runnin}]}\n") == [
        "'Runnin' is not a pod phase: one of Pending, Running, Succeeded, Failed, Unknown "
        "(did you mean 'Running'?)"
    ]
    assert messages("description: no name\n") == ["missing required key 'name'"]
    assert messages("name: x\ncluster: {nodes: [{name: n, allocatable: {'a b': 1}}]}\n") == [
        "key 'a b' is not a resource name (e.g. cpu, memory, nvidia.com/gpu)"
    ]


def test_error_count_is_capped() -> None:
    pods = ", ".join(f"{{name: p{i}, bad: 1}}" for i in range(50))
    found = messages(f"name: x\ncluster: {{pods: [{pods}]}}\n")
    assert len(found) == 21 and found[-1] == "... and 30 more errors"
