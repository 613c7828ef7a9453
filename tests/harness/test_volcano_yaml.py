"""A conf means what Volcano's YAML reader (gopkg.in/yaml.v2) makes of it, and what vspec
writes for Volcano or for a user means the same to both readers."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from vspec.engines.volcano.conf import conf_text
from vspec.errors import ConfError
from vspec.harness.loader import load_file, load_scheduler_conf, scheduler_conf_mapping
from vspec.harness.yamlload import parse_documents, volcano_plain
from vspec.harness.yamlwrite import dump


@pytest.mark.parametrize(
    ("text", "read"),
    [
        # yaml.v2's resolve table: single letters are YAML 1.1 booleans, as the words are
        ("y", True),
        ("Y", True),
        ("n", False),
        ("N", False),
        ("yes", True),
        ("Off", False),
        ("~", None),
        # ParseInt(s, 0, 64) after the underscores go: Go's base prefixes
        ("017", 15),
        ("0o17", 15),
        ("0x1F", 31),
        ("-0b101", -5),
        ("1_000", 1000),
        ("+12", 12),
        # else its float pattern: exponents need no dot or sign, 08 is no octal
        ("1e3", 1000.0),
        ("1.5e3", 1500.0),
        ("08", 8.0),
        ("-9223372036854775809", -9.223372036854776e18),  # past int64, not uint64
        (".5", 0.5),
        # and what it leaves a string: base 60, ParseFloat's errors, timestamps
        ("1:30", "1:30"),
        (".5_0", ".5_0"),
        ("1e400", "1e400"),
        ("2001-12-14", "2001-12-14"),
        ("-", "-"),
        ("nodeorder", "nodeorder"),
    ],
)
def test_a_plain_scalar_reads_as_yaml_v2_resolves_it(text: str, read: Any) -> None:
    value = volcano_plain(text)
    assert type(value) is type(read) and value == read


def test_nan_is_a_float_to_both() -> None:
    assert math.isnan(volcano_plain(".NaN"))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "conf.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


CONF = """\
    actions: "y, n"
    tiers:
    - plugins:
      - name: predicates
        enablePredicate: N
        arguments:
          predicate.NodeAffinityEnable: n
          predicate.PodAffinityEnable: 'n'
          weights: [1e3, "1e3", 08]
          nested: {deep: Y}
    configurations:
    - name: enqueue
      arguments: {overcommit-factor: 1e1}
"""


def test_flags_and_arguments_read_as_volcano_reads_them_names_as_written(tmp_path: Path) -> None:
    conf = load_scheduler_conf(_write(tmp_path, CONF))
    [plugin] = conf.tiers[0].plugins
    assert plugin.flags["predicate"] is False
    assert plugin.arguments["predicate.NodeAffinityEnable"] is False
    assert plugin.arguments["predicate.PodAffinityEnable"] == "n"  # quoted: a string
    assert plugin.arguments["weights"] == [1000.0, "1e3", 8.0]
    assert plugin.arguments["nested"] == {"deep": True}
    assert conf.action_arguments("enqueue")["overcommit-factor"] == 10.0
    assert conf.actions == ["y", "n"]  # a Go string field holds the text


def test_a_configmaps_conf_reads_the_same(tmp_path: Path) -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-scheduler-configmap"},
        "data": {"volcano-scheduler.conf": textwrap.dedent(CONF).replace('"y, n"', "allocate")},
    }
    path = tmp_path / "cm.yaml"
    path.write_text(yaml.safe_dump(manifest), encoding="utf-8")
    [plugin] = load_scheduler_conf(path).tiers[0].plugins
    assert plugin.arguments["predicate.NodeAffinityEnable"] is False


def test_anchors_aliases_and_merges_keep_volcanos_reading(tmp_path: Path) -> None:
    conf = load_scheduler_conf(
        _write(
            tmp_path,
            """\
            actions: allocate
            tiers:
            - plugins:
              - name: predicates
                arguments: &args
                  predicate.NodeAffinityEnable: &off n
                  predicate.PodAffinityEnable: *off
              - name: nodeorder
                arguments:
                  <<: *args
                  extra: 1
            """,
        )
    )
    first, second = conf.tiers[0].plugins
    assert first.arguments == {
        "predicate.NodeAffinityEnable": False,
        "predicate.PodAffinityEnable": False,
    }
    assert second.arguments["predicate.NodeAffinityEnable"] is False


def test_a_spec_outside_its_conf_keeps_pyyamls_reading(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            name: n
            scheduler: {actions: allocate, tiers: [{plugins: [{name: gang}]}]}
            cluster:
              nodes: [{name: y, allocatable: {cpu: 1}, labels: {zone: n}}]
            """
        ),
        encoding="utf-8",
    )
    [spec] = load_file(path).specs
    assert spec.name == "n"
    [node] = spec.cluster.nodes
    assert node.meta.name == "y" and node.meta.labels == {"zone": "n"}


@pytest.mark.parametrize("text", ["n", "Y", "1e3", "08", "0o17", "1:30", "plain", "yes"])
def test_what_vspec_writes_reads_back_the_same_to_volcano(text: str) -> None:
    [doc] = parse_documents(dump({"arguments": {"k": text}}), "written.yaml")
    assert doc.volcano_value(("arguments", "k")) == text


def test_the_conf_handed_to_volcano_quotes_the_strings_it_would_read_otherwise(
    tmp_path: Path,
) -> None:
    conf = load_scheduler_conf(_write(tmp_path, CONF))
    text = conf_text(conf)
    assert "predicate.PodAffinityEnable: 'n'" in text
    assert "predicate.NodeAffinityEnable: false" in text


def test_a_quoted_n_for_a_flag_is_an_error_that_says_why(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        actions: allocate
        tiers:
        - plugins:
          - name: gang
            enableJobReady: 'n'
        """,
    )
    with pytest.raises(ConfError, match=r"quoted string 'n'.*only when they are plain") as caught:
        load_scheduler_conf(path)
    assert caught.value.location is not None and caught.value.location.line == 5


def test_a_fuzz_spaces_pinned_conf_file_reads_as_volcano_reads_it(tmp_path: Path) -> None:
    raw = scheduler_conf_mapping(_write(tmp_path, CONF.replace('"y, n"', "allocate")))
    [plugin] = raw["tiers"][0]["plugins"]
    assert plugin["arguments"]["predicate.NodeAffinityEnable"] is False
    assert plugin["arguments"]["predicate.PodAffinityEnable"] == "n"
