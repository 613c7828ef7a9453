"""Writing YAML that vspec and Volcano read alike.

PyYAML writes a string plain whenever PyYAML itself would read it back as that string;
but vc-scheduler reads its conf with yaml.v2, for which a plain ``n`` is false and
``1e3`` a float. A conf handed to the real Volcano, or a finding written for a user to
run on either engine, must mean the same to both: such strings are quoted.
"""

from __future__ import annotations

from typing import Any

import yaml

from vspec.harness.yamlload import STR, volcano_plain


class _Dumper(yaml.SafeDumper):
    pass


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    read = volcano_plain(text)
    style = None if type(read) is str and read == text else "'"
    return dumper.represent_scalar(STR, text, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(data: Any, **options: Any) -> str:
    """``yaml.safe_dump`` (keys in their order) with the strings Volcano would read
    otherwise quoted."""
    text: str = yaml.dump(data, Dumper=_Dumper, sort_keys=False, **options)
    return text
