"""The YAML reader ends on every event stream: it never waits for an event it cannot see."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from yaml import Mark
from yaml import events as ev

from vspec.errors import SpecError
from vspec.harness.yamlload import _Builder, parse_documents

REPO = Path(__file__).resolve().parents[2]


class _Parser:
    """Stands for libyaml's parser: hands out the given events, then None for ever."""

    def __init__(self, events: list[Any]) -> None:
        self.events = iter(events)

    def get_event(self) -> Any:
        return next(self.events, None)


def _documents(events: list[Any]) -> list[Any]:
    builder = _Builder("", "f.yaml", (), None)
    return [d.data for d in builder._documents(_Parser(events))]  # type: ignore[arg-type]


def test_a_stream_without_its_end_event_ends() -> None:
    assert _documents([ev.StreamStartEvent()]) == []


def test_an_unknown_event_is_an_error_not_a_hang() -> None:
    class Stranger(ev.Event):
        pass

    with pytest.raises(SpecError, match="unexpected YAML event Stranger"):
        _documents([ev.StreamStartEvent(), Stranger()])


def test_a_document_cut_short_is_an_error() -> None:
    mark = Mark("f.yaml", 0, 0, 0, "", 0)
    start = ev.MappingStartEvent(None, None, True, start_mark=mark, end_mark=mark)
    events = [ev.StreamStartEvent(), ev.DocumentStartEvent(start_mark=mark), start]
    with pytest.raises(SpecError, match="stream ends inside a document"):
        _documents(events)


def test_reading_after_yaml_is_imported_again() -> None:
    """pytester drops the modules a run imported; a fresh ``yaml.events`` then has new
    classes while libyaml keeps emitting the old ones. Reading must still work."""
    script = textwrap.dedent(
        """
        import sys
        import yaml.events
        for name in [m for m in sys.modules if m.split(".")[0] in ("yaml", "vspec")]:
            del sys.modules[name]
        from vspec.harness.yamlload import parse_documents
        [doc] = parse_documents("a: [1, {b: c}]\\n", "x.yaml")
        print(doc.data)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'a': [1, {'b': 'c'}]}"


def test_multi_document_stream() -> None:
    docs = parse_documents("a: 1\n---\n- x\n---\n", "s.yaml")
    assert [d.data for d in docs] == [{"a": 1}, ["x"], None]
