"""Draws docs/architecture.svg: vspec's packages as rooms, their imports as arrows.

``python docs/architecture.py [OUT]`` reads the import statements of every module under
``vspec/`` (with :mod:`ast`: nothing is imported, no dependency beyond Python) and the
layers of the import-linter contract in pyproject.toml, and writes the picture: one row
per layer, top to bottom as the contract lists them, each package or top-level module a
room naming its files, each import between two rooms an arrow (thicker for more
imports). An import circle between rooms is drawn red, and listed on stderr with the
exit status 1: vspec allows one only inside ``framework/``.

Exists so that the layout in the README is the code's, not a drawing kept by hand; rerun
it when a package or an import between packages changes. Imports only the standard
library.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections import defaultdict
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "vspec"

CHAR_W, LINE_H, PAD, TITLE_H = 6.6, 14, 10, 22
COLUMN_W = 150  # one column of file names in a room
ROW_GAP, ROOM_GAP, MARGIN = 70, 24, 20
MAX_ROWS_PER_COLUMN = 9


def module_files() -> dict[str, Path]:
    """Every module's dotted name and file."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The vspec modules ``name`` imports (at any depth of its code, as import-linter
    counts them)."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def room_of(module: str) -> str:
    """The room a module is drawn in: its top-level package or module under vspec."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layers() -> tuple[list[list[str]], set[tuple[str, str]]]:
    """The rooms of each layer, top first, and the imports the contract ignores (type
    hints only), from the import-linter ``layers`` contract."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            rows = []
            for layer in contract["layers"]:
                names = layer.replace("|", ":").split(":")
                rows.append([n.strip().removeprefix("vspec.") for n in names])
            ignored = set()
            for line in contract.get("ignore_imports", []):
                source, _, target = line.partition("->")
                ignored.add((source.strip(), target.strip()))
            return rows, ignored
    raise SystemExit("pyproject.toml has no layers contract")


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one node: the import circles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


class Room:
    def __init__(self, name: str, files: list[str]) -> None:
        self.name = name
        self.files = files
        self.columns = max(1, -(-len(files) // MAX_ROWS_PER_COLUMN))
        per_column = -(-len(files) // self.columns) if files else 0
        title_w = len(self.title) * (CHAR_W + 1) + 2 * PAD
        self.w = max(self.columns * COLUMN_W, title_w)
        self.h = TITLE_H + per_column * LINE_H + PAD
        self.per_column = per_column
        self.x = self.y = 0.0

    @property
    def title(self) -> str:
        return f"{self.name}/" if self.files else f"{self.name}.py"


def draw(out: Path) -> int:
    files = module_files()
    known = set(files)
    rows, ignored = layers()
    module_edges = {
        name: {t for t in imports_of(name, path, known) if (name, t) not in ignored}
        for name, path in files.items()
    }
    contents: dict[str, list[str]] = defaultdict(list)
    for name, path in files.items():
        room = room_of(name)
        if room and path.parent != PACKAGE:  # a module inside a package
            inner = path.relative_to(PACKAGE / room)
            contents[room].append(str(inner).removesuffix("__init__.py").removesuffix(".py"))
        elif room:
            contents.setdefault(room, [])
    placed = {r for row in rows for r in row}
    loose = sorted(set(contents) - placed)
    if loose:
        rows.append(loose)  # rooms no layer names, drawn at the bottom
    rooms = {name: Room(name, sorted(f for f in contents[name] if f)) for name in contents}

    room_edges: dict[tuple[str, str], int] = defaultdict(int)
    for source, targets in module_edges.items():
        for target in targets:
            a, b = room_of(source), room_of(target)
            if a and b and a != b:
                room_edges[a, b] += 1
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in room_edges:
        graph[a].add(b)
    circles = strongly_connected(graph)
    in_circle = {(a, b) for c in circles for a in c for b in c if (a, b) in room_edges}
    inner_circles = []
    for room in rooms:
        inner = {m: {t for t in ts if room_of(t) == room} for m, ts in module_edges.items()}
        inner = {m: ts for m, ts in inner.items() if room_of(m) == room}
        inner_circles += [(room, c) for c in strongly_connected(inner)]

    width = max(
        sum(rooms[r].w for r in row if r in rooms) + ROOM_GAP * (len(row) - 1) for row in rows
    )
    width += 2 * MARGIN + 200
    y = MARGIN + 60.0
    for row in rows:
        present = [rooms[r] for r in row if r in rooms]
        row_w = sum(r.w for r in present) + ROOM_GAP * (len(present) - 1)
        x = (width - 200 - row_w) / 2
        for room in present:
            room.x, room.y = x, y
            x += room.w + ROOM_GAP
        y += max((r.h for r in present), default=0) + ROW_GAP
    height = y - ROW_GAP + MARGIN + 30

    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif">',
        '<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#7a869a"/></marker>'
        '<marker id="red" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#d0342c"/></marker>'
        "</defs>",
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>',
        f'<text x="{MARGIN}" y="{MARGIN + 12}" font-size="15" font-weight="bold">vspec: '
        "packages as rooms, imports as arrows</text>",
        f'<text x="{MARGIN}" y="{MARGIN + 28}" font-size="11" fill="#555">One row per '
        "import-linter layer, top to bottom: a room imports only rooms in rows below it.</text>",
        f'<text x="{MARGIN}" y="{MARGIN + 42}" font-size="11" fill="#555">Arrow width: how '
        "many imports (type hints the contract ignores left out). Red: an import circle "
        "between rooms.</text>",
    ]
    for (a, b), count in sorted(room_edges.items()):
        src, dst = rooms[a], rooms[b]
        x1, y1 = src.x + src.w / 2, src.y + src.h
        x2, y2 = dst.x + dst.w / 2, dst.y
        if dst.y <= src.y:  # same row or upward: loop out to the side
            y1, y2 = src.y + src.h / 2, dst.y + dst.h / 2
            x1 = src.x + (src.w if dst.x > src.x else 0)
            x2 = dst.x + (0 if dst.x > src.x else dst.w)
        bend = max(30.0, abs(y2 - y1) / 2)
        red = (a, b) in in_circle
        colour, marker = ("#d0342c", "red") if red else ("#7a869a", "head")
        stroke = min(6.0, 0.6 + count**0.5 * 0.45)
        svg.append(
            f'<path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{y1 + bend:.1f} {x2:.1f},{y2 - bend:.1f} '
            f'{x2:.1f},{y2:.1f}" fill="none" stroke="{colour}" stroke-opacity="0.55" '
            f'stroke-width="{stroke:.2f}" marker-end="url(#{marker})">'
            f"<title>{escape(a)} imports {escape(b)} ({count})</title></path>"
        )
    core = {"model", "api", "k8s", "util", "framework", "actions", "plugins"}
    for room in rooms.values():
        fill = "#e8f0fb" if room.name in core else "#fdf3e1"
        if not room.files:
            fill = "#eeeeee"
        svg.append(
            f'<rect x="{room.x:.1f}" y="{room.y:.1f}" width="{room.w:.1f}" height="{room.h:.1f}" '
            f'rx="6" fill="{fill}" stroke="#44546a"/>'
        )
        svg.append(
            f'<text x="{room.x + PAD:.1f}" y="{room.y + 16:.1f}" font-size="13" '
            f'font-weight="bold">{escape(room.title)}</text>'
        )
        for i, name in enumerate(room.files):
            column, line = divmod(i, room.per_column)
            fx = room.x + PAD + column * COLUMN_W
            fy = room.y + TITLE_H + (line + 1) * LINE_H - 3
            label = name if len(name) <= 21 else name[:20] + "…"
            svg.append(
                f'<text x="{fx:.1f}" y="{fy:.1f}" font-size="10.5" fill="#333">'
                f"{escape(label)}</text>"
            )
    key_x = width - 200 + 10
    for i, (fill, text) in enumerate(
        (("#e8f0fb", "Volcano-shaped core"), ("#fdf3e1", "vspec's own"), ("#eeeeee", "module"))
    ):
        ky = MARGIN + 70 + i * 22
        svg.append(
            f'<rect x="{key_x}" y="{ky}" width="16" height="14" fill="{fill}" stroke="#44546a"/>'
        )
        svg.append(f'<text x="{key_x + 22}" y="{ky + 11}" font-size="11">{text}</text>')
    svg.append("</svg>")
    out.write_text("\n".join(svg) + "\n")

    status = 0
    for circle in circles:
        print(f"import circle between rooms: {', '.join(circle)}", file=sys.stderr)
        status = 1
    for room, circle in inner_circles:
        if room != "framework":
            print(f"import circle in {room}/: {', '.join(circle)}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "architecture.svg"
    sys.exit(draw(target))
