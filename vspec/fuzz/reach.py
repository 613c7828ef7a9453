"""``vspec fuzz --coverage``: what of the engine a campaign reached, as branch coverage.

A space is only as strong as what it generates: a plugin branch no example runs is one
no invariant and no differential check can judge. :func:`measured` runs the whole
command under coverage.py in branch mode, restricted to the actions and plugins (the
built-in ones, and the user's from their plugins dirs), and prints per module the
branches taken, coverage.py's combined figure, the total, and the lines left unreached
in the worst modules, so that a user sees what to add to a space.

Coverage starts before the plugins dirs are imported (their module bodies count too)
and before the built-in plugins are (the fuzzer imports them when the run starts).
coverage.py is an optional dependency (``pip install 'vspec[coverage]'``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORST_SHOWN = 3  # modules whose unreached lines are listed
_ENGINE = Path(__file__).resolve().parent.parent
BUILTIN_SOURCES = (_ENGINE / "actions", _ENGINE / "plugins")


@dataclass(frozen=True)
class ModuleReach:
    """One module's figures, from coverage.py's JSON report."""

    name: str
    statements: int
    missed_statements: int
    branches: int
    covered_branches: int
    missing_lines: tuple[int, ...]
    missing_branches: tuple[tuple[int, int], ...]

    @property
    def branch_percent(self) -> float:
        return 100.0 * self.covered_branches / self.branches if self.branches else 100.0

    @property
    def combined_percent(self) -> float:
        """coverage.py's own figure in branch mode: statements and branches together."""
        total = self.statements + self.branches
        hit = self.statements - self.missed_statements + self.covered_branches
        return 100.0 * hit / total if total else 100.0


def measured(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``handler(args)`` under coverage.py, then the reach report on stdout; the plugins
    dirs of the command line and of the project are measured with the built-ins. With a
    data file (``--coverage FILE``) the run's arcs join those kept there, and the report
    is of all of them: how a user measures a campaign over several spaces."""
    from vspec.fuzz.runner import EXIT_USAGE
    from vspec.harness.settings import project_settings

    sources = [*args.plugins_dirs, *project_settings().plugins_dirs]
    if (getattr(args, "workers", None) or 1) > 1:
        # The workers are forked processes: what they reach never gets back to this one.
        print(
            "vspec: error: --coverage measures one process: run without --workers (shards "
            "run one at a time may share a --coverage FILE)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        import coverage
    except ImportError:
        print(
            "vspec: error: --coverage needs coverage.py: pip install 'vspec[coverage]' "
            "(or pip install coverage)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    directories = [*BUILTIN_SOURCES, *(Path(s).resolve() for s in sources)]
    kept = args.coverage or None  # the data file runs add up in, if any
    cov = coverage.Coverage(
        data_file=kept, branch=True, source=[str(d) for d in directories], config_file=False
    )
    if kept:
        cov.load()
    cov.start()
    try:
        status = handler(args)
    finally:
        cov.stop()
        if kept:
            cov.save()
    if status == EXIT_USAGE:
        return status
    for line in report_lines(_modules(cov)):
        print(line)
    return status


def _modules(cov: Any) -> list[ModuleReach]:
    """Each measured module's figures (coverage.py's public JSON report, read back)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "coverage.json"
        cov.json_report(outfile=str(out), show_contexts=False)
        files = json.loads(out.read_text(encoding="utf-8"))["files"]
    modules = []
    for path, entry in files.items():
        summary = entry["summary"]
        modules.append(
            ModuleReach(
                _module_name(Path(path).resolve()),
                summary["num_statements"],
                summary["missing_lines"],
                summary.get("num_branches", 0),
                summary.get("covered_branches", 0),
                tuple(entry["missing_lines"]),
                tuple((a, b) for a, b in entry.get("missing_branches", ())),
            )
        )
    return sorted(modules, key=lambda m: m.name)


def _module_name(path: Path) -> str:
    """``vspec/plugins/drf`` for a built-in; a user's module by its path from the current
    directory (two plugins dirs may both be called ``plugins``)."""
    for directory in BUILTIN_SOURCES:
        if path.is_relative_to(directory):
            relative = path.relative_to(directory).with_suffix("")
            return f"{directory.parent.name}/{directory.name}/{relative.as_posix()}"
    stem = path.with_suffix("")
    cwd = Path.cwd().resolve()
    return stem.relative_to(cwd).as_posix() if stem.is_relative_to(cwd) else stem.as_posix()


def report_lines(modules: Sequence[ModuleReach]) -> list[str]:
    """The table (a row per module with branches, then the total) and the unreached lines
    of the :data:`WORST_SHOWN` modules of lowest branch coverage."""
    rows = [m for m in modules if m.branches or m.statements]
    if not rows:
        return ["coverage: nothing measured"]
    width = max(len(m.name) for m in rows)
    lines = [f"coverage (branch mode) of {len(rows)} module(s):"]
    lines.append(f"  {'module':{width}s}  branches        branch%  cover%")
    for m in rows:
        lines.append(_row(m.name, width, m.covered_branches, m.branches, m))
    total = ModuleReach(
        "TOTAL",
        sum(m.statements for m in rows),
        sum(m.missed_statements for m in rows),
        sum(m.branches for m in rows),
        sum(m.covered_branches for m in rows),
        (),
        (),
    )
    lines.append(_row("TOTAL", width, total.covered_branches, total.branches, total))
    worst = sorted((m for m in rows if m.branch_percent < 100.0), key=_worst_first)
    for m in worst[:WORST_SHOWN]:
        lines.append(f"  not reached in {m.name}: lines {ranges(m.missing_lines) or 'none'}")
        # The branches whose line ran but one way: the missed lines show the others.
        missed = set(m.missing_lines)
        partial = [(a, b) for a, b in m.missing_branches if a not in missed]
        if partial:
            taken = ", ".join(f"{a}->{b if b > 0 else 'exit'}" for a, b in partial)
            lines.append(f"    and one way only: {taken}")
    return lines


def _worst_first(m: ModuleReach) -> tuple[float, str]:
    return (m.branch_percent, m.name)


def _row(name: str, width: int, covered: int, branches: int, m: ModuleReach) -> str:
    counts = f"{covered}/{branches}"
    return f"  {name:{width}s}  {counts:14s}  {m.branch_percent:6.1f}  {m.combined_percent:6.1f}"


def ranges(numbers: Iterable[int]) -> str:
    """``1-3, 7``: sorted numbers with runs folded."""
    out: list[str] = []
    run: list[int] = []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(_run(run))
        run = [n]
    if run:
        out.append(_run(run))
    return ", ".join(out)


def _run(run: list[int]) -> str:
    return str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"
