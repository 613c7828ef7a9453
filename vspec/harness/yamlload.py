"""Reading YAML fast, safely, and with the position of every value.

Spec files can be large (10,000 pods) and are written by people, so this reader has to be
quick, must point each error at file:line:column, and must refuse what PyYAML would
happily accept: duplicate keys (the last one silently wins), Python tags, and alias bombs.

PyYAML's composer builds a node per value and resolves every scalar in Python, which costs
over a second for a 10,000-pod file. Instead, the C parser's events are turned into plain
data directly, with a resolution cache for repeated scalars, and each mapping and sequence
records where its entries start in a side table keyed by the container's ``id``. That
table costs a tuple per entry, far less than a node per value, and gives the exact
position of any key path afterwards (:meth:`Document.locate`), long after parsing.

Limits (:data:`MAX_ITEMS`, :data:`MAX_NODES`, :data:`MAX_ALIAS_NODES`, :data:`MAX_DEPTH`,
:data:`MAX_DOCUMENTS`)
are enforced while parsing, so an absurd input is refused in well under a second and in
bounded memory instead of after it has been built.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from yaml import _yaml as _libyaml
from yaml import events as ev
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from vspec.errors import Location, SpecError

MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_ITEMS = 100_000  # entries of one mapping or sequence
MAX_NODES = 2_000_000  # values in one document, aliases expanded
MAX_ALIAS_NODES = 100_000  # values one document reaches through aliases
MAX_DEPTH = 64  # nesting of mappings and sequences
MAX_INT_DIGITS = 30  # Kubernetes' widest integers (int64, quantities up to 1e24) fit
MAX_INT = 10**MAX_INT_DIGITS - 1
MAX_DOCUMENTS = 10_000  # documents of one file (each costs a Document, even when empty)

Key = str | int
KeyPath = tuple[Key, ...]

_TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (_TAG + t for t in ("str", "int", "float", "bool", "null"))
TIMESTAMP, MERGE, MAP, SEQ = (_TAG + t for t in ("timestamp", "merge", "map", "seq"))
_SCALAR_TAGS = frozenset({STR, INT, FLOAT, BOOL, NULL, TIMESTAMP})
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def _emitted(name: str) -> type[ev.Event]:
    """The event class libyaml's parser emits: the one of the ``yaml.events`` module it was
    first imported with. A runner that drops and re-imports ``yaml`` (pytester does) gives
    ``yaml.events`` new classes, but the C extension is never re-initialised and keeps the
    old ones, so matching against ``yaml.events`` would recognise no event at all."""
    cls: type[ev.Event] = getattr(_libyaml, name, None) or getattr(ev, name)
    return cls


_STREAM_START, _STREAM_END = _emitted("StreamStartEvent"), _emitted("StreamEndEvent")
_DOCUMENT_START = _emitted("DocumentStartEvent")
_SCALAR, _ALIAS = _emitted("ScalarEvent"), _emitted("AliasEvent")
_MAPPING_START, _MAPPING_END = _emitted("MappingStartEvent"), _emitted("MappingEndEvent")
_SEQUENCE_START, _SEQUENCE_END = _emitted("SequenceStartEvent"), _emitted("SequenceEndEvent")


def format_path(path: Sequence[Key]) -> str:
    """``cluster.pods[2].requests.cpu``; keys that are not identifiers are quoted:
    ``expect.binds["c1/p1"]``, ``allocatable["nvidia.com/gpu"]``."""
    return _formatted(tuple(path))


@lru_cache(maxsize=4096)
def _formatted(path: KeyPath) -> str:
    # Cached: the loader locates each object and plugin entry it builds, and the specs
    # of a suite repeat the same paths (cluster.pods[0], scheduler.tiers[1].plugins[2]).
    text = "".join(f"[{step}]" if isinstance(step, int) else _segment(step) for step in path)
    return text[1:] if text.startswith(".") else text


@lru_cache(maxsize=1024)
def _segment(key: str) -> str:
    return f".{key}" if _IDENTIFIER.match(key) else f"[{json.dumps(key)}]"


# Where a container's entries start (0-based line, column):
#   mapping:  (line, column, {key: (key line, key column, value line, value column)})
#   sequence: (line, column, [(item line, item column), ...])
_Marks = tuple[int, int, Any]
# The plain scalars Volcano's YAML reader takes otherwise than this one (``y``, ``1e3``):
#   id(container) -> {key or index: the value yaml.v2 gives it}
_VolcanoReadings = dict[int, dict[Key, Any]]


@dataclass
class Document:
    """One YAML document of a file: its plain data and where each value came from.

    ``data`` holds only dict, list, str, int, float, bool and None; timestamps stay
    strings (the loader parses them as RFC 3339). Mapping keys are always strings, as
    written. Values reached through an alias are shared, not copied: never mutate ``data``.
    """

    file: str
    index: int
    data: Any
    start: tuple[int, int]
    marks: dict[int, _Marks] = field(repr=False)
    text: str = field(repr=False, default="")
    key_prefix: KeyPath = ()
    offset: tuple[int, int] | None = None  # set for a document embedded in a string
    # "document 2" for a document of a file that holds several: shown before the key path
    # of each location, as a line alone does not say which object of a stream is meant.
    label: str = ""
    volcano: _VolcanoReadings = field(repr=False, default_factory=dict)

    def key(self, path: Sequence[Key]) -> str:
        """The key path of a location in this document, after its label."""
        text = format_path((*self.key_prefix, *path))
        if not self.label:
            return text
        return f"{self.label}, {text}" if text else self.label

    def get(self, path: Sequence[Key]) -> Any:
        """The value at ``path``, or None when a step is missing."""
        node = self.data
        for step in path:
            if isinstance(node, dict) and isinstance(step, str):
                node = node.get(step)
            elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
                node = node[step]
            else:
                return None
        return node

    def position(self, path: Sequence[Key], *, key: bool = False) -> tuple[int, int]:
        """0-based line and column of the value at ``path`` (of its key with ``key``);
        the deepest existing container's position when the path runs out."""
        line, column = self.start
        node = self.data
        last = len(path) - 1
        for i, step in enumerate(path):
            marks = self.marks.get(id(node))
            if marks is None:
                break
            if i == 0:
                line, column = marks[0], marks[1]
            children = marks[2]
            if isinstance(node, dict) and isinstance(step, str) and step in children:
                k_line, k_col, v_line, v_col = children[step]
                line, column = (k_line, k_col) if key and i == last else (v_line, v_col)
                node = node[step]
            elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(children):
                line, column = children[step]
                node = node[step]
            else:
                break
        else:
            if not path and id(node) in self.marks:
                line, column = self.marks[id(node)][:2]
        return line, column

    def locate(self, path: Sequence[Key] = (), *, key: bool = False) -> Location:
        """The :class:`Location` (1-based) of the value at ``path``, named by its key path."""
        line, column = self.position(path, key=key)
        if self.offset is not None:
            line, column = line + self.offset[0], column + self.offset[1]
        return Location(self.file, line + 1, column + 1, self.key(path))

    def error(self, path: Sequence[Key], message: str, *, key: bool = False) -> SpecError:
        return SpecError(message, self.locate(path, key=key))

    def volcano_value(self, path: Sequence[Key]) -> Any:
        """The value at ``path`` as Volcano's conf reader (gopkg.in/yaml.v2) decodes it
        into ``interface{}`` values: the same data but for the plain scalars it resolves
        otherwise (:func:`volcano_plain`). The value itself when there are none, else a
        copy."""
        value = self.get(path)
        return self._volcano_copy(value) if self.volcano else value

    def _volcano_copy(self, node: Any) -> Any:
        readings = self.volcano.get(id(node), {})
        if isinstance(node, dict):
            return {
                k: readings[k] if k in readings else self._volcano_copy(v) for k, v in node.items()
            }
        if isinstance(node, list):
            return [
                readings[i] if i in readings else self._volcano_copy(v) for i, v in enumerate(node)
            ]
        return node

    def part(self, path: Sequence[Key]) -> Document:
        """The value at ``path`` as a document of its own that locates as this one does,
        keeping only the positions of that value: what is located later (only when an
        error is reported) need not keep the whole file's data alive."""
        value = self.get(path)
        marks: dict[int, _Marks] = {}
        volcano: _VolcanoReadings = {}
        pending = [value]
        while pending:
            node = pending.pop()
            if isinstance(node, dict | list) and id(node) in self.marks:
                marks[id(node)] = self.marks[id(node)]
                if id(node) in self.volcano:
                    volcano[id(node)] = self.volcano[id(node)]
                pending.extend(node.values() if isinstance(node, dict) else node)
        line, column = self.position(path)
        return Document(
            self.file,
            self.index,
            value,
            (line, column),
            marks,
            key_prefix=(*self.key_prefix, *path),
            offset=self.offset,
            label=self.label,
            volcano=volcano,
        )

    def source_char(self, path: Sequence[Key]) -> str:
        """The first character of the value at ``path`` in the source (``|`` marks a
        literal block scalar, quotes a quoted one)."""
        line, column = self.position(path)
        lines = self.text.splitlines()
        return lines[line][column : column + 1] if line < len(lines) else ""


def copied(value: Any) -> Any:
    """A deep copy of a document's value, for a model object that keeps it (a queue's
    affinity, a whole manifest): the data is only dicts, lists and immutable scalars, so
    this walk does what ``copy.deepcopy`` does at a tenth of its cost (its memo and type
    dispatch). A value an alias shares is copied once per place, as it would be written."""
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copied(v) for v in value]
    return value


_ROOT = object()  # At's value not given: the document's value at the path


class At:
    """A place in a document: converters carry one so any error they raise names the
    file, line and key path of the value at fault. ``at / "key" / 3`` goes deeper.

    It carries the value there (``doc.get(path)``, found from its parent's value when
    going deeper, as documents are never changed): the loader asks each place for its
    value a few times, and walking from the document's root each time was a tenth of
    building a small spec's model."""

    __slots__ = ("doc", "parent", "path", "value")

    def __init__(
        self, doc: Document, path: KeyPath = (), value: Any = _ROOT, parent: Any = None
    ) -> None:
        self.doc = doc
        self.path = path
        self.value: Any = doc.get(path) if value is _ROOT else value
        self.parent = parent  # the container holding the value at the last step, if known

    def __truediv__(self, step: Key) -> At:
        node, value = self.value, _ROOT
        if isinstance(node, dict) and isinstance(step, str):
            value = node.get(step, _ROOT)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            value = node[step]
        if value is _ROOT:  # no such value
            return At(self.doc, (*self.path, step), None)
        return At(self.doc, (*self.path, step), value, node)

    def location(self) -> Location:
        """Read from the parent's marks when the value exists, as the walk from the
        root (:meth:`Document.position`) would find it: the loader locates every object
        it builds, and walking down to each was most of that."""
        doc, parent = self.doc, self.parent
        marks = None if parent is None else doc.marks.get(id(parent))
        if marks is None:
            return doc.locate(self.path)
        entry = marks[2][self.path[-1]]  # (key line, key column, line, column) or (line, column)
        line, column = (entry[2], entry[3]) if isinstance(parent, dict) else entry
        if doc.offset is not None:
            line, column = line + doc.offset[0], column + doc.offset[1]
        return Location(doc.file, line + 1, column + 1, doc.key(self.path))

    def error(self, message: str, *, key: bool = False) -> SpecError:
        return self.doc.error(self.path, message, key=key)


def read_documents(path: Path) -> list[Document]:
    """Every document of a YAML file. A file that cannot be read or parsed is one error."""
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):
            # Reading a FIFO or a device would block, or never end.
            raise SpecError("not a regular file", Location(str(path)))
        size = status.st_size
        if size > MAX_FILE_BYTES:
            raise SpecError(
                f"file is {size} bytes; vspec reads at most {MAX_FILE_BYTES} bytes",
                Location(str(path)),
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"cannot read: {exc.strerror or exc}", Location(str(path))) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError("invalid YAML: the file is not UTF-8", Location(str(path), line)) from exc
    return parse_documents(text, str(path))


def parse_documents(
    text: str,
    file: str,
    *,
    key_prefix: KeyPath = (),
    offset: tuple[int, int] | None = None,
) -> list[Document]:
    """Every document of a YAML stream. ``offset`` shifts positions (0-based lines,
    columns) for YAML embedded in a string of another file."""
    return _Builder(text, file, key_prefix, offset).documents()


# -- scalars -----------------------------------------------------------------------------

# A snapshot, so that another library adding resolvers to PyYAML cannot change how a
# spec reads.
_IMPLICIT: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    first: list(resolvers) for first, resolvers in Resolver.yaml_implicit_resolvers.items()
}
_BOOLEANS = {"yes": True, "true": True, "on": True, "no": False, "false": False, "off": False}


class _ScalarConstructor(SafeConstructor):
    """PyYAML's YAML 1.1 rules for ints and floats (``0x1F``, ``1_000``, ``.inf``),
    reused so numbers read exactly as PyYAML and yaml.v2 read them."""

    def number(self, tag: str, value: str) -> Any:
        node = ScalarNode(tag, value)
        return self.construct_yaml_int(node) if tag == INT else self.construct_yaml_float(node)


def _resolve_plain(value: str) -> str:
    for tag, regexp in _IMPLICIT.get(value[:1], ()):
        if regexp.match(value):
            return tag
    return STR


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag


class _Frame:
    """A mapping or sequence being built."""

    __slots__ = (
        "anchor",
        "children",
        "container",
        "count0",
        "is_map",
        "key",
        "key_column",
        "key_line",
        "merges",
    )

    def __init__(
        self, container: Any, is_map: bool, children: Any, count0: int, anchor: str | None
    ) -> None:
        self.container = container
        self.is_map = is_map
        self.key: Any = None  # the pending key of a mapping: a str, _MERGE or None
        self.key_line = self.key_column = 0  # where the pending key is
        self.children = children
        self.merges: list[tuple[Any, int, int]] | None = None  # made at the first ``<<``
        self.count0 = count0
        self.anchor = anchor


class _DocumentState:
    """One document being built: its collections in progress, anchors and counts."""

    __slots__ = (
        "alias_nodes",
        "anchors",
        "count",
        "marks",
        "root",
        "stack",
        "volcano",
        "volcano_anchors",
    )

    def __init__(self, marks: dict[int, _Marks], volcano: _VolcanoReadings) -> None:
        self.marks = marks
        self.volcano = volcano
        # An anchored plain scalar Volcano reads otherwise: its reading, for each alias.
        self.volcano_anchors: dict[str, Any] = {}
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}  # name -> (value, values it holds)
        self.count = 0  # values so far, aliases expanded
        self.alias_nodes = 0  # values reached through aliases
        self.root: Any = None


_PENDING = object()  # an anchor whose collection is still being built
_MERGE = object()  # the pending key of a YAML merge (a plain ``<<``)


class _Builder:
    """Turns the C parser's event stream into :class:`Document` objects."""

    def __init__(
        self, text: str, file: str, key_prefix: KeyPath, offset: tuple[int, int] | None
    ) -> None:
        self.text = text
        self.file = file
        self.key_prefix = key_prefix
        self.offset = offset
        self.plain_cache: dict[str, Any] = {}

    def error(
        self, message: str, line: int, column: int, stack: Sequence[_Frame] = ()
    ) -> SpecError:
        """An error at ``line``, ``column``; with the ``stack`` of collections being
        built, named by the key path of the value being read there."""
        if self.offset is not None:
            line, column = line + self.offset[0], column + self.offset[1]
        where = format_path(_reading(stack))
        return SpecError(message, Location(self.file, line + 1, column + 1, where))

    def documents(self) -> list[Document]:
        # libyaml's parser alone: CSafeLoader would also set up a constructor and a
        # resolver per file, which the builder replaces.
        parser = _libyaml.CParser(self.text)
        try:
            return list(self._documents(parser))
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = exc.problem or exc.context or "malformed"
            if exc.context and exc.problem:
                problem = f"{problem} ({exc.context})"
            raise self.error(f"invalid YAML: {problem}", *_mark(mark)) from None
        except yaml.reader.ReaderError as exc:
            # libyaml counts characters; a user counts lines and columns.
            before = self.text[: exc.position]
            line = before.count("\n")
            column = exc.position - (before.rfind("\n") + 1)
            char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else "a character"
            name = " (a NUL byte)" if exc.character == 0 else ""
            raise self.error(
                f"invalid YAML: {char}{name} is a control character, which YAML does not allow",
                line,
                column,
            ) from None
        except yaml.YAMLError as exc:
            raise SpecError(f"invalid YAML: {exc}", Location(self.file)) from None
        finally:
            parser.dispose()

    def _documents(self, parser: _libyaml.CParser) -> Iterator[Document]:
        get_event = parser.get_event
        index = 0
        while True:
            event = get_event()
            if event is None:
                return
            kind = type(event)
            if kind is _DOCUMENT_START:
                start = _mark(event.start_mark)
                if index >= MAX_DOCUMENTS:
                    raise self.error(
                        f"more than {MAX_DOCUMENTS} YAML documents in one file", *start
                    )
                marks: dict[int, _Marks] = {}
                volcano: _VolcanoReadings = {}
                data = self._document(get_event, marks, volcano)
                yield Document(
                    self.file,
                    index,
                    data,
                    start,
                    marks,
                    self.text,
                    self.key_prefix,
                    self.offset,
                    volcano=volcano,
                )
                index += 1
            elif kind is _STREAM_END:
                return
            elif kind is not _STREAM_START:
                # Never skip what is not understood: skipping could loop for ever.
                raise self.error(f"unexpected YAML event {kind.__name__}", *_mark(event.start_mark))

    def _document(self, get_event: Any, marks: dict[int, _Marks], volcano: _VolcanoReadings) -> Any:
        """Build one document's data; consumes events up to its DocumentEndEvent. The
        loop runs once per YAML value, so an untagged scalar in a collection (the bulk
        of any file: every key, most values and items) is put in place inline, with no
        call; the rest goes through :meth:`_add`."""
        state = _DocumentState(marks, volcano)
        stack, plain_cache = state.stack, self.plain_cache
        scalar, alias = _SCALAR, _ALIAS
        mapping_start, sequence_start = _MAPPING_START, _SEQUENCE_START
        mapping_end, sequence_end = _MAPPING_END, _SEQUENCE_END
        frame: _Frame | None = None  # the innermost collection (stack[-1])
        while True:
            event = get_event()
            if event is None:
                raise SpecError(
                    "invalid YAML: the stream ends inside a document", Location(self.file)
                )
            kind = type(event)
            mark = event.start_mark
            line, column = mark.line, mark.column
            if kind is scalar:
                state.count += 1
                if state.count > MAX_NODES:
                    raise self.error(f"more than {MAX_NODES} values in one document", line, column)
                if frame is not None and event.tag is None and event.anchor is None:
                    text = event.value
                    key = frame.key
                    if frame.is_map and key is None:
                        if (text != "<<" or not event.implicit[0]) and text not in frame.container:
                            if len(frame.container) >= MAX_ITEMS:
                                raise self.error(
                                    f"a mapping of more than {MAX_ITEMS} keys", line, column
                                )
                            frame.key = text  # a key, kept as written
                            frame.key_line, frame.key_column = line, column
                            continue
                        # a merge, or a duplicate (which _add reports)
                        value = _MERGE if text == "<<" and event.implicit[0] else text
                    elif not event.implicit[0]:  # quoted or block: a string
                        value = text
                    else:
                        value = plain_cache.get(text, _PENDING)
                        if value is _PENDING:
                            value = self._scalar(event, line, column, state)
                    if not frame.is_map:
                        items = frame.container
                        if len(items) >= MAX_ITEMS:
                            raise self.error(f"a list of more than {MAX_ITEMS} items", line, column)
                        items.append(value)
                        frame.children.append((line, column))
                        continue
                    if key is not None and key is not _MERGE:
                        frame.container[key] = value
                        frame.children[key] = (frame.key_line, frame.key_column, line, column)
                        frame.key = None
                        continue
                else:
                    value = self._scalar(event, line, column, state)
                    if event.anchor is not None:
                        state.anchors[event.anchor] = (value, 1)
            elif kind is alias:
                value = self._alias(state, event.anchor, line, column)
                if event.anchor in state.volcano_anchors:
                    _note_volcano(state, state.volcano_anchors[event.anchor])
            elif kind is mapping_start or kind is sequence_start:
                frame = self._open(state, event, kind is mapping_start, line, column)
                continue
            elif kind is mapping_end or kind is sequence_end:
                if self._close(state):
                    get_event()  # the DocumentEndEvent
                    return state.root
                frame = stack[-1]
                continue
            else:
                raise self.error(f"unexpected YAML event {kind.__name__}", line, column)
            if state.count > MAX_NODES:  # an alias's values
                raise self.error(f"more than {MAX_NODES} values in one document", line, column)
            if frame is None:
                get_event()  # the DocumentEndEvent of a document that is one scalar
                return value
            self._add(frame, value, line, column)

    def _alias(self, state: _DocumentState, anchor: str, line: int, column: int) -> Any:
        """The anchored value, shared; what it would expand to counts against the limits,
        so an alias bomb is refused after a few aliases, not after expanding them."""
        anchored = state.anchors.get(anchor)
        if anchored is None:
            raise self.error(f"undefined alias *{anchor}", line, column)
        value, size = anchored
        if value is _PENDING:
            raise self.error(f"alias *{anchor} refers to itself", line, column)
        state.count += size
        state.alias_nodes += size
        if state.alias_nodes > MAX_ALIAS_NODES:
            raise self.error(
                f"aliases expand to more than {MAX_ALIAS_NODES} values "
                "(a YAML alias bomb?); write the values out instead",
                line,
                column,
            )
        return value

    def _open(
        self, state: _DocumentState, event: Any, is_map: bool, line: int, column: int
    ) -> _Frame:
        state.count += 1
        if event.tag is not None:
            self._check_collection_tag(event.tag, MAP if is_map else SEQ, line, column)
        stack = state.stack
        if len(stack) >= MAX_DEPTH:
            raise self.error(f"nesting deeper than {MAX_DEPTH} levels", line, column)
        container: Any = {} if is_map else []
        children: Any = {} if is_map else []
        state.marks[id(container)] = (line, column, children)
        parent = stack[-1] if stack else None
        if parent is None:
            state.root = container
        elif parent.is_map and parent.key is not None and parent.key is not _MERGE:
            # A mapping's value, as _add puts it (the usual case: no call).
            parent.container[parent.key] = container
            parent.children[parent.key] = (parent.key_line, parent.key_column, line, column)
            parent.key = None
        else:
            self._add(parent, container, line, column)
        if event.anchor is not None:
            state.anchors[event.anchor] = (_PENDING, 0)
        frame = _Frame(container, is_map, children, state.count, event.anchor)
        state.stack.append(frame)
        return frame

    def _close(self, state: _DocumentState) -> bool:
        """End the innermost collection; True when it was the document's root."""
        frame = state.stack.pop()
        if frame.merges:
            self._merge(frame, state)
        if frame.anchor is not None:
            state.anchors[frame.anchor] = (frame.container, state.count - frame.count0 + 1)
        return not state.stack

    def _add(self, frame: _Frame, value: Any, line: int, column: int) -> None:
        """Put ``value`` into the collection being built: as a key, a value or an item."""
        if not frame.is_map:
            items = frame.container
            if len(items) >= MAX_ITEMS:
                raise self.error(f"a list of more than {MAX_ITEMS} items", line, column)
            items.append(value)
            frame.children.append((line, column))
            return
        key = frame.key
        if key is None:  # ``value`` is a key
            if value is _MERGE:
                frame.key = _MERGE
                return
            if not isinstance(value, str):
                raise self.error(
                    "a mapping key must be a string, not a mapping or a list", line, column
                )
            if value in frame.container:
                first = frame.children[value][0] + 1
                raise self.error(
                    f"duplicate key {value!r} (first defined on line {first})", line, column
                )
            if len(frame.container) >= MAX_ITEMS:
                raise self.error(f"a mapping of more than {MAX_ITEMS} keys", line, column)
            frame.key = value
            frame.key_line, frame.key_column = line, column
            return
        frame.key = None
        if key is _MERGE:
            if frame.merges is None:
                frame.merges = []
            frame.merges.append((value, line, column))
            return
        frame.container[key] = value
        frame.children[key] = (frame.key_line, frame.key_column, line, column)

    def _scalar(self, event: ev.ScalarEvent, line: int, column: int, state: _DocumentState) -> Any:
        tag = event.tag
        value: str = event.value
        stack = state.stack
        is_key = bool(stack) and stack[-1].is_map and stack[-1].key is None
        if event.anchor is not None:
            state.volcano_anchors.pop(event.anchor, None)  # an anchor named again
        if tag is None or tag == "!":
            if not event.implicit[0]:  # quoted, block, or "!"-tagged: a string
                return value
            if is_key:
                # Keys stay as written ("1", "true"): labels and resource names are strings.
                return _MERGE if value == "<<" else value
            try:
                return self.plain_cache[value]
            except KeyError:
                try:
                    constructed = _plain(value)
                except _Unreadable as exc:
                    raise self.error(str(exc), line, column, stack) from None
                volcano = volcano_plain(value)
                if _same(constructed, volcano):
                    self.plain_cache[value] = constructed
                else:  # never cached: each place it is met is noted
                    _note_volcano(state, volcano)
                    if event.anchor is not None:
                        state.volcano_anchors[event.anchor] = volcano
                return constructed
        if tag not in _SCALAR_TAGS:
            raise self.error(
                f"unsupported YAML tag {_short_tag(tag)!r}: vspec reads plain YAML values only",
                line,
                column,
            )
        constructed = self._construct(tag, value, line, column, stack)
        return value if is_key else constructed

    def _construct(
        self, tag: str, value: str, line: int, column: int, stack: Sequence[_Frame]
    ) -> Any:
        try:
            return _constructed(tag, value)
        except _Unreadable as exc:
            raise self.error(str(exc), line, column, stack) from None

    def _check_collection_tag(self, tag: str | None, expected: str, line: int, col: int) -> None:
        if tag is not None and tag != "!" and tag != expected:
            raise self.error(
                f"unsupported YAML tag {_short_tag(tag)!r}: vspec reads plain YAML values only",
                line,
                col,
            )

    def _merge(self, frame: _Frame, state: _DocumentState) -> None:
        """YAML merge keys (``<<: *base``): the mapping's own keys win, then earlier
        merged mappings over later ones; merged keys come first, as in PyYAML."""
        marks = state.marks
        merged: dict[str, Any] = {}
        positions: dict[str, Any] = {}
        readings: dict[Key, Any] = {}
        for value, line, column in frame.merges or ():
            sources = value if isinstance(value, list) else [value]
            for source in sources:
                if not isinstance(source, dict):
                    raise self.error(
                        "a merge key (<<) needs a mapping or a list of mappings", line, column
                    )
                source_children = marks[id(source)][2]
                source_readings = state.volcano.get(id(source), {})
                for k, v in source.items():
                    if k not in merged:
                        merged[k] = v
                        positions[k] = source_children[k]
                        if k in source_readings:
                            readings[k] = source_readings[k]
        own, own_children = frame.container, frame.children
        for k in own:
            merged.pop(k, None)
            readings.pop(k, None)
        merged.update(own)
        positions.update(own_children)
        own.clear()
        own.update(merged)
        own_children.clear()
        own_children.update(positions)
        if readings:
            state.volcano[id(own)] = readings | state.volcano.get(id(own), {})


def _reading(stack: Sequence[_Frame]) -> list[Key]:
    """The key path of the value being read: each collection's key (or index) in its
    parent, found by identity (a parent's pending key is cleared once its value opens),
    then the innermost mapping's pending key or list's next index. Only for an error."""
    path: list[Key] = []
    for parent, child in itertools.pairwise(stack):
        items = parent.container.items() if parent.is_map else enumerate(parent.container)
        path.extend(k for k, v in items if v is child.container)
    if stack:
        last = stack[-1]
        if not last.is_map:
            path.append(len(last.container))
        elif isinstance(last.key, str):
            path.append(last.key)
    return path


class _Unreadable(ValueError):
    """A scalar its tag cannot read; the builder adds where it is."""


_NUMBERS = _ScalarConstructor()  # stateless for numbers: one for the process


@lru_cache(maxsize=8192)
def _plain(value: str) -> Any:
    """The value of a plain scalar, shared by every file a process reads: the builder's
    cache is per file, and the files of a suite repeat the same few scalars (1, true,
    500m, default), each resolved against PyYAML's patterns and converted once per file
    before. Only values are cached (all immutable); an unreadable scalar raises each time."""
    return _constructed(_resolve_plain(value), value)


# -- Volcano's reading ---------------------------------------------------------------------
# vc-scheduler decodes volcano-scheduler.conf with gopkg.in/yaml.v2 (resolve.go), whose YAML
# 1.1 is not PyYAML's: ``y``, ``Y``, ``n``, ``N`` are booleans, ``1e3`` and ``08`` floats,
# ``0o17`` an integer, ``1:30`` a string (PyYAML: sexagesimal 90), an integer past int64 a
# float. An argument written so means what Volcano reads, not what PyYAML does.
_VOLCANO_WORDS: dict[str, Any] = {
    **dict.fromkeys(
        ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"], True
    ),
    **dict.fromkeys(
        ["n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"], False
    ),
    **dict.fromkeys(["", "~", "null", "Null", "NULL"]),
    **dict.fromkeys([".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"], math.inf),
    **dict.fromkeys(["-.inf", "-.Inf", "-.INF"], -math.inf),
    **dict.fromkeys([".nan", ".NaN", ".NAN"], math.nan),
}
_VOLCANO_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_GO_BASES = {"b": 2, "o": 8, "x": 16}


@lru_cache(maxsize=4096)
def volcano_plain(text: str) -> Any:
    """The value yaml.v2 gives a plain scalar decoded into an ``interface{}``: the words
    of its table, else, from the first character, a float (``.5``) or, for a digit or a
    sign, an integer as Go's ``ParseInt(s, 0, 64)`` then ``ParseUint`` read it with the
    underscores dropped, else a float of its own pattern; anything else is the text.
    Timestamps stay strings (yaml.v2 keeps them so for ``interface{}``)."""
    if text in _VOLCANO_WORDS:
        return _VOLCANO_WORDS[text]
    first = text[:1]
    if first == ".":
        return text if "_" in text else _go_float(text)
    if not (first.isdigit() or first in "+-"):
        return text
    plain = text.replace("_", "")
    number = _go_int(plain)
    if number is not None:
        return number
    return _go_float(plain) if _VOLCANO_FLOAT.match(plain) else text


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, else ``ParseUint`` (no sign), else None: base
    prefixes 0b, 0o, 0x and a leading 0 for octal, in int64 (uint64 without a sign)."""
    sign, digits = (text[0], text[1:]) if text[:1] in "+-" else ("", text)
    base = 10
    if len(digits) > 1 and digits[0] == "0":
        base = _GO_BASES.get(digits[1].lower(), 8)
        digits = digits[2:] if base != 8 or digits[1] in "oO" else digits[1:]
    if not digits or not digits.isascii() or not digits.isalnum():
        return None
    try:
        value = int(digits, base)
    except ValueError:
        return None
    value = -value if sign == "-" else value
    limit = 2**63 if sign else 2**64
    return value if -(2**63) <= value < limit else None


def _go_float(text: str) -> Any:
    """``strconv.ParseFloat(text, 64)`` for the texts the callers pass (Go's decimal
    forms); out of range is an error in Go, so the text stays a string."""
    try:
        value = float(text)
    except ValueError:
        return text
    return text if math.isinf(value) else value


def _same(pyyaml: Any, volcano: Any) -> bool:
    return type(pyyaml) is type(volcano) and (pyyaml == volcano or repr(pyyaml) == repr(volcano))


def _note_volcano(state: _DocumentState, value: Any) -> None:
    """Note Volcano's reading of the scalar about to be put in the innermost collection:
    at its mapping's pending key or its list's next index."""
    if not state.stack:
        return  # a document that is one scalar: no conf is
    frame = state.stack[-1]
    if not frame.is_map:
        state.volcano.setdefault(id(frame.container), {})[len(frame.container)] = value
    elif isinstance(frame.key, str):
        state.volcano.setdefault(id(frame.container), {})[frame.key] = value


def _constructed(tag: str, value: str) -> Any:
    if tag in (STR, TIMESTAMP):  # timestamps are parsed later, as RFC 3339
        return value
    if tag == NULL:
        return None
    if tag == BOOL:
        if value.lower() not in _BOOLEANS:
            raise _Unreadable(f"{value!r} is not a boolean")
        return _BOOLEANS[value.lower()]
    if tag in (INT, FLOAT):
        try:
            number = _NUMBERS.number(tag, value)
        except (ValueError, ConstructorError):
            raise _Unreadable(
                f"{_clip(value)!r} is not {'an integer' if tag == INT else 'a number'}"
            ) from None
        if isinstance(number, int) and abs(number) > MAX_INT:
            # Python refuses to print a 4300-digit int; no spec value needs 31 digits.
            raise _Unreadable(f"{_clip(value)!r}: an integer of more than {MAX_INT_DIGITS} digits")
        return number
    return value  # "=" (the YAML "value" key) and other plain oddities read as strings


def _clip(text: str, limit: int = 40) -> str:
    """A scalar as an error quotes it: a 5,000-digit one is shown by its start."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _mark(mark: Any) -> tuple[int, int]:
    return (mark.line, mark.column) if mark is not None else (0, 0)
