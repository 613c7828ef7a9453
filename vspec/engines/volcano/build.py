"""Building the Go program against a chosen Volcano, once, into a cache directory.

A build is keyed by the program's sources, the Go version and the Volcano it links: a
module version fetched through the Go module proxy, or the content of a local source
tree (a user's fork, with their own actions and plugins registered in its factories).
The first build downloads Kubernetes and Volcano (about 600 MB of modules) and takes
minutes; later runs find the binary in the cache.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from vspec.errors import Location, VspecError
from vspec.framework.registry import GoPlugin

# The version the shipped go.mod and go.sum pin: the one a machine with only a partial
# module proxy can build, and the one CI builds.
SHIPPED_VERSION = "v1.10.0"
# The version vspec's Python engine models: the real engine's default.
DEFAULT_VERSION = "v1.11.0"
MIN_GO = (1, 22)
PROGRAM = Path(__file__).parent / "program"
MODULE = "volcano.sh/volcano"
BINARY = "volcano-engine"
_SOURCES = ("*.go", "go.mod", "go.sum")


class EngineBuildError(VspecError):
    """The real engine cannot be built here: no Go, a version the proxy refuses, a tree
    whose API the program does not compile against."""


@dataclass(frozen=True)
class Target:
    """Which Volcano to link: a released module ``version``, or a local ``source`` tree;
    and the Go plugins of the spec's plugins dirs, compiled in."""

    version: str = DEFAULT_VERSION
    source: Path | None = None
    plugins: tuple[GoPlugin, ...] = ()

    def __str__(self) -> str:
        what = f"source tree {self.source}" if self.source is not None else self.version
        if self.plugins:
            what += " with " + ", ".join(f"{p.name} ({p.origin})" for p in self.plugins)
        return what


def cache_root() -> Path:
    """``$VSPEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/vspec``, else ``~/.cache/vspec``."""
    base = os.environ.get("VSPEC_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "vspec"


def find_go() -> tuple[str, str]:
    """The ``go`` command and its version; an :class:`EngineBuildError` saying what is
    missing when there is none, or one older than Go 1.22."""
    go = shutil.which("go")
    if go is None:
        raise EngineBuildError(
            "the volcano engine needs Go >= 1.22 to build Volcano's scheduler, and no `go` "
            "is on PATH (install Go from your package manager or go.dev/dl; vspec's own "
            "engine, --engine python, needs no Go)"
        )
    version = _go(go, "env", "GOVERSION").strip()
    found = re.match(r"go(\d+)\.(\d+)", version)
    if found is None or (int(found[1]), int(found[2])) < MIN_GO:
        raise EngineBuildError(f"the volcano engine needs Go >= 1.22; {go} is {version}")
    return go, version


def _go(go: str, *args: str, cwd: Path | None = None) -> str:
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod -buildvcs=false"}
    done = subprocess.run(
        [go, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise _GoFailed(done.stdout + done.stderr)
    return done.stdout


class _GoFailed(Exception):
    """A go command exited non-zero; its output."""


def _digest(paths: Iterator[Path], root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def _program_files() -> Iterator[Path]:
    for pattern in _SOURCES:
        yield from PROGRAM.glob(pattern)


def program_digest() -> str:
    """The program's sources as this vspec ships them: a build of other sources was
    made by another vspec and is never used again."""
    return _digest(_program_files(), PROGRAM)


def tree_digest(tree: Path) -> str:
    """The content of a Volcano source tree as the build sees it: its module files and
    every non-test Go file."""
    files = (
        p
        for p in tree.rglob("*")
        if p.is_file()
        and (
            p.name in ("go.mod", "go.sum")
            or (p.suffix == ".go" and not p.name.endswith("_test.go"))
        )
        and "vendor" not in p.relative_to(tree).parts[:1]
    )
    return _digest(files, tree)


def build_key(target: Target, go_version: str) -> str:
    h = hashlib.sha256()
    h.update(program_digest().encode())
    h.update(go_version.encode())
    if target.source is not None:
        h.update(b"source\0" + tree_digest(target.source).encode())
    else:
        h.update(b"version\0" + target.version.encode())
    for plugin in target.plugins:
        root = plugin.origin.parent
        h.update(b"plugin\0" + plugin.name.encode() + _digest(iter(plugin.files), root).encode())
    return h.hexdigest()[:16]


def ensure_built(target: Target) -> Path:
    """The program's binary for ``target``, built first if the cache has none; a first
    build (minutes) shows its progress on standard error."""
    if target.source is not None and not (target.source / "go.mod").is_file():
        raise EngineBuildError(
            f"--volcano-source {target.source}: no go.mod there (a Volcano tree has one)"
        )
    go, go_version = find_go()
    home = cache_root() / "volcano" / build_key(target, go_version)
    binary = home / BINARY
    if binary.is_file():
        return binary
    home.mkdir(parents=True, exist_ok=True)
    with _locked(home / "lock"):
        if binary.is_file():  # another process built it while we waited
            return binary
        message = (
            f"building the Volcano engine ({target}, {go_version}) into {home}; a first "
            "build downloads about 600 MB of Go modules and takes 3-4 minutes"
        )
        start = time.monotonic()
        with _progress(message):
            _build(go, target, home, binary)
        (home / "build.json").write_text(
            json.dumps(
                {
                    "target": str(target),
                    "go": go_version,
                    "seconds": round(time.monotonic() - start),
                    "program": program_digest(),
                }
            )
        )
    return binary


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One build at a time per key, across processes (pytest-xdist workers)."""
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(go: str, target: Target, home: Path, binary: Path) -> None:
    src = home / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir()
    for path in _program_files():
        shutil.copy2(path, src / path.name)
    if target.source is not None:
        _link_source(go, src, target.source.resolve())
    elif target.version != SHIPPED_VERSION:
        _link_version(go, src, target.version)
    copies = _add_plugins(src, target.plugins)
    try:
        _go(go, "build", "-o", str(binary.with_suffix(".tmp")), ".", cwd=src)
    except _GoFailed as failed:
        raise _plugin_failure(str(failed), copies) or EngineBuildError(
            _compile_failure(target, str(failed))
        ) from None
    binary.with_suffix(".tmp").rename(binary)


def _package(name: str) -> str:
    return "plugin_" + re.sub(r"\W", "_", name)


def _add_plugins(src: Path, plugins: tuple[GoPlugin, ...]) -> dict[str, Path]:
    """Each Go plugin as a package of the program (``package main``, as a plugin built
    with -buildmode=plugin declares, renamed), registered under its name before the
    program starts, as ``LoadCustomPlugins`` registers a ``NAME.so``: over a built-in of
    that name. Returns each copy's path in the program -> the user's file."""
    copies: dict[str, Path] = {}
    if not plugins:
        return copies
    imports, registrations = [], []
    for plugin in plugins:
        package = _package(plugin.name)
        target = src / "userplugins" / package
        target.mkdir(parents=True)
        for path in plugin.files:
            text = re.sub(r"(?m)^package\s+\w+", f"package {package}", path.read_text(), count=1)
            (target / path.name).write_text(text)
            copies[f"userplugins/{package}/{path.name}"] = path
        imports.append(f'\t{package} "vspec.dev/volcano-engine/userplugins/{package}"')
        registrations.append(
            f"\tframework.RegisterPluginBuilder({json.dumps(plugin.name)}, {package}.New)"
        )
    (src / "userplugins.go").write_text(
        "package main\n\nimport (\n"
        + "\n".join(imports)
        + '\n\n\t"volcano.sh/volcano/pkg/scheduler/framework"\n)\n\n'
        + "// The Go plugins of the spec's plugins dirs, registered by their file names.\n"
        + "func init() {\n"
        + "\n".join(registrations)
        + "\n}\n"
    )
    return copies


def _plugin_failure(output: str, copies: dict[str, Path]) -> EngineBuildError | None:
    """A compile error in a user's Go plugin, located in the user's own file."""
    lines = []
    first: Location | None = None
    for line in output.splitlines():
        found = re.match(r"(?:\./)?(userplugins/\w+/[^:]+\.go):(\d+)(?::(\d+))?: (.*)", line)
        if found is None or found[1] not in copies:
            continue
        path = copies[found[1]]
        lines.append(f"{path}:{found[2]}: {found[4]}")
        if first is None:
            first = Location(str(path), int(found[2]), int(found[3] or 0))
    if first is None:
        if "userplugins.go" in output and "New" in output:
            return EngineBuildError(
                "a Go plugin must declare func New(framework.Arguments) framework.Plugin, "
                "as Volcano's loader looks it up:\n" + _tail(output)
            )
        return None
    return EngineBuildError("the Go plugin does not compile:\n" + "\n".join(lines), first)


def _replace_block(gomod: str, base: Path | None = None) -> list[str]:
    """The ``replace`` directives of a go.mod, local paths made absolute against ``base``."""
    lines: list[str] = []
    inside = False
    for raw in gomod.splitlines():
        line = raw.split("//", 1)[0].strip()
        if line.startswith("replace ("):
            inside = True
            continue
        if inside and line == ")":
            inside = False
            continue
        if line.startswith("replace "):
            line = line.removeprefix("replace ").strip()
        elif not inside or not line:
            continue
        old, _, new = line.partition("=>")
        new = new.strip()
        if base is not None and new.startswith((".", "/")):
            new = str((base / new).resolve())
        lines.append(f"\t{old.strip()} => {new}")
    return lines


def _write_gomod(src: Path, require: str, replaces: list[str]) -> None:
    text = (
        "module vspec.dev/volcano-engine\n\ngo 1.22.0\n\n"
        f"require {MODULE} {require}\n\nreplace (\n" + "\n".join(replaces) + "\n)\n"
    )
    (src / "go.mod").write_text(text)
    (src / "go.sum").unlink(missing_ok=True)


def _link_version(go: str, src: Path, version: str) -> None:
    """go.mod for a released Volcano: its require, and its own go.mod's replace block
    (Kubernetes' staging modules are only reachable through it)."""
    try:
        answer = json.loads(_go(go, "mod", "download", "-json", f"{MODULE}@{version}", cwd=src))
    except _GoFailed as failed:
        raise EngineBuildError(_refused(version, str(failed))) from None
    except json.JSONDecodeError:
        raise EngineBuildError(f"go mod download {MODULE}@{version} answered no JSON") from None
    if "Error" in answer:
        raise EngineBuildError(_refused(version, str(answer["Error"])))
    gomod = Path(answer["GoMod"]).read_text()
    _write_gomod(src, version, _replace_block(gomod))
    _tidy(go, src, str(version))


def _link_source(go: str, src: Path, tree: Path) -> None:
    """go.mod for a local tree: Volcano replaced by the tree, plus the tree's own replace
    block with its local paths made absolute."""
    own = _replace_block((tree / "go.mod").read_text(), tree)
    replaces = [
        f"\t{MODULE} => {tree}",
        *(r for r in own if not r.strip().startswith(MODULE + " ")),
    ]
    _write_gomod(src, "v0.0.0-00010101000000-000000000000", replaces)
    _tidy(go, src, f"the tree {tree}")


def _tidy(go: str, src: Path, what: str) -> None:
    try:
        _go(go, "mod", "tidy", cwd=src)
    except _GoFailed as failed:
        raise EngineBuildError(
            f"cannot resolve the Go modules of {what}:\n{_tail(str(failed))}"
        ) from None


def _refused(version: str, answer: str) -> str:
    return (
        f"the Go module proxy does not serve {MODULE} {version}; it answered:\n"
        f"{_tail(answer)}\n"
        "Ways out: --volcano-version with a version the proxy serves, or --volcano-source DIR "
        "with a Volcano source tree (a clone of your fork at the release you run)"
    )


def _compile_failure(target: Target, output: str) -> str:
    missing = sorted(set(re.findall(r"undefined: ([\w.]+)", output)))
    why = ""
    if missing:
        why = (
            f"\n{target} lacks the Volcano API the program calls ({', '.join(missing)}): "
            "it compiles against Volcano v1.10 and v1.11 and trees close to them"
        )
    return f"cannot build the Volcano engine against {target}:\n{_tail(output)}{why}"


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


@contextlib.contextmanager
def _progress(message: str) -> Iterator[None]:
    """A spinner with the time elapsed on a terminal (go build reports no fraction
    done); elsewhere (CI logs) one line before and one after. Standard error: standard
    output is the report's."""
    if not sys.stderr.isatty():
        print(f"vspec: {message}", file=sys.stderr, flush=True)
        start = time.monotonic()
        yield
        print(f"vspec: built in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        bar.add_task(message, total=None)
        yield
