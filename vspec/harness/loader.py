"""Spec files -> :class:`vspec.model.spec.Spec` (see spec-format.md, the contract).

A file is read once (:mod:`vspec.harness.yamlload`), each document is checked against the
JSON Schema (:mod:`vspec.harness.schema`) and only then converted, so the converters here can
trust shapes and types and only report what a schema cannot see: absurd quantities,
impossible dates, objects defined twice, include cycles, missing files. Every error is a
:class:`SpecError` at a file:line and key path; one bad spec of a multi-document file
does not stop the others.

The defaults are those of the contract, which mirror Volcano's own test builders so that
ties break the same way (pod UID ``<namespace>-<name>``, zero creation times, ...).
"""

from __future__ import annotations

import errno
import os
import random
import re
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vspec.errors import ConfError, InvalidFile, Location, SpecError
from vspec.harness import kinds
from vspec.harness import manifests as mf
from vspec.harness.apirules import (
    label_key_problem,
    label_problem,
    label_value_problem,
    subdomain_problem,
)
from vspec.harness.attribution import attributed
from vspec.harness.declared import undeclared
from vspec.harness.deployment import admit_pods, default_queues, deploy_queues
from vspec.harness.generate import generate_cluster
from vspec.harness.plugin_dirs import load_plugins_dirs, load_project_plugins, spec_plugins_dirs
from vspec.harness.schema import Kind, validate
from vspec.harness.settings import ProjectSettings, project_settings
from vspec.harness.yamlload import At, Document, copied, parse_documents, read_documents
from vspec.model.conf import (
    DEFAULT_SCHEDULER_CONF,
    SchedulerConf,
    SchedulerOptions,
    load_conf,
)
from vspec.model.corev1 import Container, parse_affinity
from vspec.model.objects import (
    DEFAULT_NOW,
    GROUP_NAME_ANNOTATION,
    TASK_SPEC_KEY,
    ZERO_TIME,
    Cluster,
    KubeObject,
    Node,
    NodeUsage,
    ObjectMeta,
    Pod,
    PodGroup,
    PriorityClass,
    Queue,
)
from vspec.model.spec import (
    QUEUE_COUNTS,
    QUEUE_RESOURCES,
    ClusterMode,
    Expect,
    LogsExpect,
    MetricBound,
    PodExpect,
    PodGroupExpect,
    QueueExpect,
    Spec,
)
from vspec.model.versions import VersionRange

if TYPE_CHECKING:
    from vspec.model.probes import Probe
    from vspec.model.timeline import Timeline

SPEC_SUFFIXES = (".yaml", ".yml")
# Top-level keys of a spec that no cluster file, conf or manifest has.
SPEC_ONLY_KEYS = frozenset({"cluster", "expect", "probes", "scheduler"})
CONFIGMAP_KEY = "volcano-scheduler.conf"
MAX_INCLUDE_DEPTH = 32  # files including files: deeper is a mistake (and Python's stack)
# apimachinery's names.SimpleNameGenerator: the generateName prefix cut to 58 characters,
# then 5 characters of util/rand's alphabet (no vowels, no 0, 1 or 3).
GENERATED_PREFIX_MAX = 58
GENERATED_SUFFIX = 5
GENERATED_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
IGNORED_NAMES_SHOWN = 3  # names listed in a warning about objects of an ignored kind
KUBELET_MAX_PODS = Fraction(110)  # what a kubelet reports as allocatable pods by default


@dataclass
class FileLoad:
    """What one file holds: its valid specs, an error per invalid one, and whether it is a
    spec file at all (a cluster file, conf or manifest is not)."""

    path: Path
    specs: list[Spec] = field(default_factory=list)
    errors: list[SpecError] = field(default_factory=list)
    is_spec_file: bool = False
    # the name each error's spec gives itself (None: it gives none), as errors are listed
    error_names: list[str | None] = field(default_factory=list)

    def invalid(self, error: SpecError, name: object = None) -> None:
        self.errors.append(error)
        self.error_names.append(name if isinstance(name, str) and name else None)


# -- finding and loading files ---------------------------------------------------------


def discover(
    paths: Sequence[Path], skipped: list[SpecError] | None = None, seen: set[str] | None = None
) -> list[Path]:
    """The files given, plus every ``.yaml``/``.yml`` below the directories given (hidden
    files and directories skipped), each once, in a deterministic order. What is not a
    regular file (a FIFO, a device, a symlink loop) would block or fail a read: it is
    left out, with the reason appended to ``skipped``. ``seen`` (real paths) is shared
    by the calls of one run, so a file found twice is left out the second time."""
    found: list[Path] = []
    seen = set() if seen is None else seen
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = _walk(path)
        elif os.path.lexists(path):
            files = [path]
        else:
            raise SpecError("no such file or directory", Location(str(path)))
        for file in files:
            why = not_regular(file)
            if why is not None:
                if skipped is not None:
                    skipped.append(SpecError(f"skipped: {why}", Location(str(file))))
                continue
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                found.append(file)
    return found


def not_regular(path: Path) -> str | None:
    """Why ``path`` cannot be read as a spec file, or None for a regular file."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop"
        return f"cannot read: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISCHR: "a device", stat.S_ISBLK: "a device"}
    kind = next((name for test, name in kinds.items() if test(mode)), "a socket")
    return f"not a regular file ({kind})"


def _walk(root: Path) -> list[Path]:
    """Symlinked directories are not followed (os.walk's default), so a loop of them
    cannot make the walk endless."""
    files: list[Path] = []
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith(".")]
        files.extend(
            Path(directory, n) for n in names if n.endswith(SPEC_SUFFIXES) and not n.startswith(".")
        )
    return sorted(files)


def load_file(path: Path, *, check_names: bool = False, seed: int | None = None) -> FileLoad:
    """Every spec of ``path``. A YAML document is a spec when it is a mapping with a
    top-level ``name``; a file with none is not a spec file. A file that is not valid YAML
    is one error (and counts as a spec file, so that a broken spec is never passed over).
    A spec's ``pluginsDir`` is imported before its conf is read. ``check_names`` checks
    every action and plugin a conf names against the registry, with a did-you-mean. ``seed``
    replaces each spec's ``seed`` for ``cluster.generate`` (``vspec run --seed``)."""
    load = FileLoad(Path(path))
    try:
        documents = read_documents(load.path)
    except SpecError as exc:
        load.invalid(exc)
        load.is_spec_file = True
        return load
    load.is_spec_file = any(_meant_as_spec(d.data) for d in documents)
    if not load.is_spec_file:
        return load
    context = _Context(None, check_names=check_names, seed=seed)
    names: dict[str, Location] = {}
    for doc in documents:
        if doc.data is None:
            continue  # an empty document, e.g. after a trailing ---
        try:
            spec = _spec(doc, context)
        except SpecError as exc:  # InvalidFile too: one invalid spec is one error
            written = doc.data.get("name") if isinstance(doc.data, dict) else None
            load.invalid(attributed(exc, doc), written)
            continue
        first = names.setdefault(spec.name, spec.location)
        if first is not spec.location:
            load.invalid(
                doc.error(
                    ("name",), f"spec name {spec.name!r} is used twice; first on line {first.line}"
                )
            )
            continue
        load.specs.append(spec)
    return load


def _meant_as_spec(data: Any) -> bool:
    """A document with a top-level ``name``, or with a key only a spec has: one whose
    ``name`` is misspelled or missing is an invalid spec, never "not a spec"."""
    return isinstance(data, dict) and ("name" in data or not SPEC_ONLY_KEYS.isdisjoint(data))


def load_cluster_file(
    path: Path,
    *,
    options: SchedulerOptions | None = None,
    seed: int = 0,
    cluster_mode: ClusterMode | None = None,
) -> Cluster:
    """A cluster file (the keys of ``cluster``, includes resolved) as a :class:`Cluster`,
    with the contract's defaults applied (``seed`` expands its ``generate``) in
    ``cluster_mode`` (default: the file's project setting); raises :class:`SpecError`
    (:class:`InvalidFile` for schema errors) when invalid."""
    builder = _ClusterBuilder(_Context(None), options or SchedulerOptions(), seed)
    builder.stream(Path(path), None, ())
    return builder.finish(cluster_mode or project_settings(Path(path)).cluster_mode)


def load_scheduler_conf(
    source: Path | Mapping[str, Any], *, known_actions: Collection[str] | None = None
) -> SchedulerConf:
    """A scheduler conf from a file (plain ``volcano-scheduler.conf`` or a ConfigMap
    manifest holding it) or from an already parsed mapping."""
    context = _Context(known_actions)
    if isinstance(source, Mapping):
        doc = Document("<scheduler conf>", 0, dict(source), (0, 0), {})
        _check(doc, "schedulerConf")
        return context.conf(At(doc))
    return context.scheduler_file(Path(source), None)


def scheduler_conf_mapping(source: Path | Mapping[str, Any] | At) -> dict[str, Any]:
    """The ``volcano-scheduler.conf`` mapping of a conf file (plain or a ConfigMap
    manifest), of a place in a YAML document or of a mapping, checked as a spec's
    ``scheduler`` is (schema, Volcano's rules, registered names), errors located, and
    read as Volcano reads it: for a fuzz space's pinned conf, which its findings write
    out whole."""
    context = _Context(None, check_names=True)
    if isinstance(source, At):
        read = _as_volcano_reads(source)
        source = read if isinstance(read, Mapping) else {}
    if isinstance(source, Mapping):
        doc = Document("<scheduler conf>", 0, dict(source), (0, 0), {})
        _check(doc, "schedulerConf")
        context.conf(At(doc))
        return dict(source)
    context.scheduler_file(source, None)
    return dict(_as_volcano_reads(At(context.confs[source.resolve()])))


# -- one load's shared state -------------------------------------------------------------


class _Context:
    """What the specs of one file share: parsed included files and confs, read once."""

    def __init__(
        self,
        known_actions: Collection[str] | None,
        *,
        check_names: bool = False,
        seed: int | None = None,
    ) -> None:
        self.known_actions = set(known_actions) if known_actions is not None else None
        self.check_names = check_names
        self.seed = seed  # overrides every spec's seed
        self.documents: dict[Path, Document] = {}
        self.streams: dict[Path, list[Document]] = {}  # cluster files, checked
        self.confs: dict[Path, Document] = {}  # scheduler conf files, checked

    def single_document(self, path: Path, at: At | None, what: str) -> Document:
        """The one document of an included file; ``at`` is where the spec names it."""
        key = path.resolve()
        if key not in self.documents:
            documents = _read(path, at, what)
            if len(documents) > 1:
                raise documents[1].error((), f"a {what} holds one YAML document, not several")
            self.documents[key] = (
                documents[0] if documents else Document(str(path), 0, {}, (0, 0), {})
            )
        return self.documents[key]

    def cluster_documents(self, path: Path, at: At | None) -> list[Document]:
        """A cluster file as ``kubectl apply -f`` takes one: a stream of documents, each
        the keys of ``cluster`` or Kubernetes manifests (one, or a list kind), in any mix;
        every document checked once, all errors of the file at once. In a file of several
        documents, each location names its document."""
        key = path.resolve()
        if key not in self.streams:
            documents = _read(path, at, "cluster file")
            if len(documents) > 1:
                documents = [replace(d, label=f"document {d.index + 1}") for d in documents]
            errors: list[SpecError] = []
            for doc in documents:
                if mf.is_manifest(doc.data):
                    errors.extend(_manifest_errors(doc, ()))
                else:
                    errors.extend(validate(doc, "cluster"))
            if errors:
                raise InvalidFile(errors)
            self.streams[key] = documents
        return self.streams[key]

    def scheduler_file(self, path: Path, at: At | None) -> SchedulerConf:
        key = path.resolve()
        if key not in self.confs:
            doc = self.single_document(path, at, "scheduler conf file")
            if mf.is_manifest(doc.data):
                _check(doc, "schedulerConfigMap")
                doc = _embedded_conf(doc)
            _check(doc, "schedulerConf")
            self.confs[key] = doc
        return self.conf(At(self.confs[key]))

    def conf(self, at: At) -> SchedulerConf:
        raw = _as_volcano_reads(at) or {}
        options = _options(raw.get("options") or {})
        conf = load_conf(
            raw,
            default_plugin_flags=bool(raw.get("defaultPluginFlags", True)),
            options=options,
            known_actions=self.known_actions,
            locate=lambda path: at.doc.locate((*at.path, *path)),
        )
        if self.check_names:
            _check_registered(conf, at)
        return conf


def _as_volcano_reads(at: At) -> Any:
    """The conf as vc-scheduler decodes it (yaml.v2 into Volcano's conf structs): an
    enable flag's bool and an argument's ``interface{}`` take a plain scalar by yaml.v2's
    YAML 1.1, where ``n`` is false and ``1e3`` a float (:meth:`Document.volcano_value`),
    while a Go string field (``actions``, a plugin's or configuration's ``name``) holds
    the text as written, and vspec's own keys read as the rest of a spec does."""
    raw = at.value
    conf = at.doc.volcano_value(at.path)
    if conf is raw or not isinstance(raw, dict):
        return raw
    for key in ("actions", "metrics", "options", "defaultPluginFlags"):
        if key in raw:
            conf[key] = raw[key]
    for ti, tier in enumerate(raw.get("tiers") or []):
        for pi, entry in enumerate((tier or {}).get("plugins") or []):
            _keep_name(entry, conf["tiers"][ti]["plugins"][pi])
    for ci, entry in enumerate(raw.get("configurations") or []):
        _keep_name(entry, conf["configurations"][ci])
    return conf


def _keep_name(written: Any, read: Any) -> None:
    if isinstance(written, dict) and "name" in written:
        read["name"] = written["name"]


def _check_registered(conf: SchedulerConf, at: At) -> None:
    """Every action and plugin ``conf`` names is registered (built in, an entry point or
    a plugins dir loaded so far); the engine's own check, located: an unknown plugin at
    its tier entry, an unknown action at ``actions``."""
    from vspec.framework.scheduler import check_conf

    try:
        check_conf(conf)
    except ConfError as exc:
        if exc.location is not None:
            raise
        raise ConfError(exc.message, (at / "actions").location()) from None


def _check(doc: Document, kind: Kind, path: tuple[str | int, ...] = ()) -> None:
    errors = validate(doc, kind, path)
    if errors:
        raise InvalidFile(errors)


_MANIFEST_SCHEMAS: dict[kinds.Target, Kind] = {
    "node": "nodeManifest",
    "pod": "podManifest",
    "podGroup": "podGroupManifest",
    "queue": "queueManifest",
    "priorityClass": "priorityClassManifest",
    "job": "vcJobManifest",
    "object": "anyManifest",
}


def _manifest_errors(doc: Document, path: tuple[str | int, ...]) -> list[SpecError]:
    """The manifest at ``path`` (a list kind's items each, lists in lists too) against
    the schema of its kind; kinds vspec does not take are only checked to be manifests
    (apiVersion, kind and metadata), never for their own fields."""
    data = doc.get(path)
    if mf.is_list(data):
        errors = validate(doc, "manifestList", path)
        if errors:
            return errors
        for i in range(len(data["items"])):
            errors.extend(_manifest_errors(doc, (*path, "items", i)))
        return errors
    target, _ = kinds.classify(data) if isinstance(data, dict) else (None, "")
    return validate(doc, _MANIFEST_SCHEMAS[target] if target else "anyManifest", path)


def _read(path: Path, at: At | None, what: str) -> list[Document]:
    """The non-empty documents of a file a spec names at ``at``."""
    if not path.is_file():
        if at is None:
            raise SpecError(f"{what} not found", Location(str(path)))
        raise at.error(f"{what} {at.value!r} not found (looked for {path})")
    return [d for d in read_documents(path) if d.data is not None]


def _embedded_conf(configmap: Document) -> Document:
    """The conf held as a string in a ConfigMap's data, located in the ConfigMap's file.
    A literal block (``|``) keeps its lines, so positions inside it are exact; any other
    string style is located from its first line (approximate)."""
    path = ("data", CONFIGMAP_KEY)
    line, column = configmap.position(path)
    if configmap.source_char(path) == "|":
        lines = configmap.text.splitlines()
        body = next((t for t in lines[line + 1 :] if t.strip()), "")
        offset = (line + 1, len(body) - len(body.lstrip(" ")))
    else:
        offset = (line, column)
    documents = parse_documents(configmap.get(path), configmap.file, key_prefix=path, offset=offset)
    documents = [d for d in documents if d.data is not None]
    if len(documents) != 1:
        raise configmap.error(path, f"{CONFIGMAP_KEY} must hold one YAML mapping")
    return documents[0]


def _options(raw: Mapping[str, Any]) -> SchedulerOptions:
    defaults = SchedulerOptions()
    names = raw.get("schedulerNames")
    return SchedulerOptions(
        min_nodes_to_find=int(raw.get("minNodesToFind", defaults.min_nodes_to_find)),
        min_percentage_of_nodes_to_find=int(
            raw.get("minPercentageOfNodesToFind", defaults.min_percentage_of_nodes_to_find)
        ),
        percentage_of_nodes_to_find=int(
            raw.get("percentageOfNodesToFind", defaults.percentage_of_nodes_to_find)
        ),
        scheduler_names=defaults.scheduler_names if names is None else tuple(names),
        default_queue=str(raw.get("defaultQueue", defaults.default_queue)),
    )


# -- a spec ------------------------------------------------------------------------------


def _spec(doc: Document, context: _Context) -> Spec:
    try:
        _check(doc, "spec")
    except InvalidFile as invalid:
        # One pass reports everything: the conf's own errors (an unknown plugin) too,
        # when the schema found nothing wrong in what the conf is read from.
        raise InvalidFile([*invalid.errors, *_conf_errors(doc, context, invalid.errors)]) from None
    data: dict[str, Any] = doc.data
    root = At(doc)
    settings = project_settings(doc.file)
    scheduler, plugins_dirs, replaces = _spec_scheduler(doc, context, settings)
    seed = int(data.get("seed", 0)) if context.seed is None else context.seed
    cluster_mode: ClusterMode = data.get("clusterMode", settings.cluster_mode)
    builder = _ClusterBuilder(context, scheduler.options, seed)
    cluster, timeline = _cluster_and_timeline(root, builder, context, cluster_mode)
    for key in ("podGroups", "pods", "pipelined", "queues"):
        if timeline is not None and key in (data.get("expect") or {}):
            raise (root / "expect" / key).error(
                f"{key} reads one session's state; a timeline's spec bounds its metrics",
                key=True,
            )
    missing = undeclared(cluster if timeline is None else timeline.everything(cluster), root)
    if missing:
        raise InvalidFile(missing)
    warnings = list(builder.warnings)
    now = mf.timestamp(data["now"], root / "now") if "now" in data else None
    expect = _expect(root / "expect")
    if timeline is None and expect.metrics:
        raise (root / "expect" / "metrics").error(
            "metrics bound a timeline; this spec has none", key=True
        )
    return Spec(
        name=data["name"],
        location=doc.locate(),
        scheduler=scheduler,
        cluster=cluster,
        expect=expect,
        probes=[_probe(root / "probes" / i) for i in range(len(data.get("probes") or ()))],
        description=data.get("description", ""),
        tags=list(data.get("tags", ())),
        skip=data.get("skip"),
        xfail=data.get("xfail"),
        seed=int(data.get("seed", 0)),
        now=DEFAULT_NOW if now is None else now,  # the schema demands a zone
        cycles=int(data.get("cycles", 1)),
        verbosity=int(data.get("verbosity", 3)),
        plugins_dirs=plugins_dirs,
        replace_builtins=replaces,
        cluster_mode=cluster_mode,
        warnings=warnings,
        timeline=timeline,
        volcano=_volcano(root / "volcano") if "volcano" in data else None,
    )


def _volcano(at: At) -> VersionRange:
    """The spec's ``volcano`` key: a release or a range of them."""
    try:
        return VersionRange.parse(str(at.value))
    except ValueError as exc:
        raise at.error(f"volcano: {exc}") from None


def _cluster_and_timeline(
    root: At, builder: _ClusterBuilder, context: _Context, mode: ClusterMode
) -> tuple[Cluster, Timeline | None]:
    """A spec's cluster and timeline: its own, or those of the workload file it names."""
    data: dict[str, Any] = root.value
    source = root
    if "workload" in data:
        for key in ("cluster", "timeline"):
            if key in data:
                raise (root / key).error(
                    "a spec with a workload takes its cluster and timeline from that file",
                    key=True,
                )
        path = Path(root.doc.file).parent / data["workload"]
        source = At(context.single_document(path, root / "workload", "workload file"))
        _check(source.doc, "workload")
    builder.section(source / "cluster")
    cluster = builder.finish(mode)
    if "timeline" not in (source.value or {}):
        return cluster, None
    from vspec.harness.timeline_load import load_timeline

    return cluster, load_timeline(source / "timeline", builder, builder.seed, cluster.nodes)


def load_workload(
    path: Path,
    *,
    options: SchedulerOptions | None = None,
    seed: int = 0,
    cluster_mode: ClusterMode | None = None,
) -> tuple[Cluster, Timeline]:
    """A workload file (``cluster`` and ``timeline``), as ``vspec compare`` reads it, in
    ``cluster_mode`` (default: the file's project setting); raises :class:`SpecError`
    (:class:`InvalidFile` for schema errors) when invalid."""
    context = _Context(None)
    doc = context.single_document(Path(path), None, "workload file")
    _check(doc, "workload")
    builder = _ClusterBuilder(context, options or SchedulerOptions(), seed)
    mode = cluster_mode or project_settings(Path(path)).cluster_mode
    cluster, timeline = _cluster_and_timeline(At(doc), builder, context, mode)
    assert timeline is not None  # the schema requires one
    return cluster, timeline


def _spec_scheduler(
    doc: Document, context: _Context, settings: ProjectSettings
) -> tuple[SchedulerConf, tuple[Path, ...], frozenset[str]]:
    """The spec's conf, read with its project's and its own plugins dirs loaded; and
    those dirs and the built-ins they replace, which the run needs again."""
    data: dict[str, Any] = doc.data
    root = At(doc)
    load_project_plugins(settings, everywhere=False)
    own_dirs = spec_plugins_dirs(data.get("pluginsDir"), doc.file)
    if own_dirs:
        load_plugins_dirs(
            own_dirs,
            origin=f"spec {data['name']!r}",
            location=(root / "pluginsDir").location(),
            everywhere=False,
        )
    plugins_dirs = (*settings.plugins_dirs, *own_dirs)
    replaces = frozenset(data.get("replaceBuiltins") or ())
    from vspec.framework.registry import scope

    with scope(plugins_dirs, replaces):
        return _scheduler(root / "scheduler", context), plugins_dirs, replaces


_CONF_KEYS = ("scheduler", "pluginsDir", "replaceBuiltins", "name")


def _conf_errors(doc: Document, context: _Context, found: list[SpecError]) -> list[SpecError]:
    """The errors of an otherwise invalid spec's conf, unless the schema already found
    one in the keys it is read from."""
    if not isinstance(doc.data, dict) or any(
        (e.location.key if e.location else "").split(".")[0].split("[")[0] in _CONF_KEYS
        for e in found
    ):
        return []
    try:
        _spec_scheduler(doc, context, project_settings(doc.file))
    except InvalidFile as exc:
        return list(exc.errors)
    except SpecError as exc:
        return [exc]
    return []


def _scheduler(at: At, context: _Context) -> SchedulerConf:
    raw = at.value
    if raw is None:
        return load_conf(DEFAULT_SCHEDULER_CONF, known_actions=context.known_actions)
    if isinstance(raw, str):
        return context.scheduler_file(Path(at.doc.file).parent / raw, at)
    return context.conf(at)


# -- the cluster -------------------------------------------------------------------------


Convert = Callable[[Mapping[str, Any], At], None]
_MANIFEST_KINDS: dict[str, tuple[str, kinds.Target]] = {
    "priorityClasses": ("PriorityClass", "priorityClass"),
    "queues": ("Queue", "queue"),
    "nodes": ("Node", "node"),
    "podGroups": ("PodGroup", "podGroup"),
    "pods": ("Pod", "pod"),
}


class _ClusterBuilder:
    """Merges the cluster sections of a spec and of the files it includes, in order
    (includes first, depth first); an object defined twice is an error naming both."""

    def __init__(self, context: _Context, options: SchedulerOptions, seed: int) -> None:
        self.context = context
        self.options = options
        self.seed = seed  # for cluster.generate
        self.cluster = Cluster()
        self.defined: dict[tuple[str, str], Location] = {}
        self.included: set[Path] = set()
        self.queues_declared = False
        self.generate_at: At | None = None
        self.volcano_jobs: list[tuple[Mapping[str, Any], At]] = []  # converted at finish
        # manifests of kinds Volcano ignores, by (apiVersion, kind): (names, first place)
        self.ignored: dict[tuple[str, str], tuple[list[str], Location]] = {}
        self.name_draws = random.Random(f"generateName:{seed}")  # metadata.generateName
        self.generated_names: set[str] = set()
        # compact jobs with controllerMinResources, and their pods by task: set at finish
        self.controller_min: list[tuple[PodGroup, list[list[Pod]]]] = []
        # pod groups written without a queue; True: a PodGroup of its own, whose webhook
        # reads the namespace's queue annotation (a job's group gets the job's queue)
        self.unqueued: list[tuple[PodGroup, bool]] = []
        self.queue_keys: dict[str, At] = {}  # pod group -> where its queue is written
        self.mode: ClusterMode = "deployed"  # set by finish, for a timeline's arrivals

    def section(self, at: At, includers: tuple[Path, ...] = ()) -> None:
        """A cluster mapping; ``includers`` are the files that include its file,
        outermost first (resolved)."""
        raw = at.value or {}
        include = raw.get("include")
        if isinstance(include, str):
            self.include(at / "include", include, includers)
        for i, target in enumerate(include if isinstance(include, list) else ()):
            self.include(at / "include" / i, target, includers)
        if "generate" in raw:
            self.generated(at / "generate")
        self.queues_declared |= "queues" in raw
        self.entries(raw, at, "priorityClasses", self.priority_class)
        self.entries(raw, at, "queues", self.queue)
        self.entries(raw, at, "nodes", self.node)
        self.entries(raw, at, "podGroups", self.pod_group)
        for i, entry in enumerate(raw.get("jobs") or ()):
            if mf.is_manifest(entry):
                for item, place in mf.expand(entry, at / "jobs" / i, "Job"):
                    self.typed(item, place, "job", self.volcano_job)
            else:
                self.job(at / "jobs" / i)
        self.entries(raw, at, "pods", self.pod)
        for i, entry in enumerate(raw.get("objects") or ()):
            if mf.is_list(entry):  # the schema checked the list, not its items' kinds
                errors = _manifest_errors(at.doc, (*at.path, "objects", i))
                if errors:
                    raise InvalidFile(errors)
            for item, place in mf.expand(entry, at / "objects" / i, None):
                self.manifest(item, place)

    @property
    def warnings(self) -> list[str]:
        """One located warning per kind ignored: where its first object is, and which."""
        out = []
        for (api, kind), (names, first) in self.ignored.items():
            shown = ", ".join(names[:IGNORED_NAMES_SHOWN])
            if len(names) > IGNORED_NAMES_SHOWN:
                shown += f" and {len(names) - IGNORED_NAMES_SHOWN} more"
            what = kind if len(names) == 1 else f"{len(names)} {kind}s"
            reason = kinds.ignored_reason(api, kind)
            out.append(f"{first}: ignored: {what} {shown} ({api}): {reason}")
        return out

    def named(self, raw: Mapping[str, Any]) -> Mapping[str, Any]:
        """The manifest with the name the API server gives one that has a
        ``metadata.generateName`` and no name (``names.SimpleNameGenerator``, before
        admission validates it), drawn from the spec's seed; a name drawn twice is drawn
        again, as the API server retries a generated name that exists."""
        meta = raw.get("metadata")
        if not isinstance(meta, Mapping) or meta.get("name") or not meta.get("generateName"):
            return raw
        prefix = str(meta["generateName"])[:GENERATED_PREFIX_MAX]
        name = ""
        while not name or name in self.generated_names:
            name = prefix + "".join(
                self.name_draws.choice(GENERATED_ALPHABET) for _ in range(GENERATED_SUFFIX)
            )
        self.generated_names.add(name)
        return {**raw, "metadata": {**meta, "name": name}}

    def manifest(self, raw: Mapping[str, Any], at: At) -> None:
        """A manifest of any kind (an included ``kubectl get`` List, ``objects``), sent to
        the converter of its kind; one vspec does not take is an error, or a warning when
        Volcano's scheduler ignores it too."""
        raw = self.named(raw)
        target, why = kinds.classify(raw)
        if target is None:
            if not why.startswith("ignored: "):
                raise at.error(why)
            key = (str(raw["apiVersion"]), str(raw["kind"]))
            names, _ = self.ignored.setdefault(key, ([], at.location()))
            namespace = raw["metadata"].get("namespace")
            name = str(raw["metadata"]["name"])
            names.append(f"{namespace}/{name}" if namespace else name)
            return
        if target == "queue":
            self.queues_declared = True
        convert: dict[kinds.Target, Convert] = {
            "node": self.node,
            "pod": self.pod,
            "podGroup": self.pod_group,
            "queue": self.queue,
            "priorityClass": self.priority_class,
            "job": self.volcano_job,
            "object": self.kube_object,
        }
        convert[target](raw, at)

    def typed(self, raw: Mapping[str, Any], at: At, target: kinds.Target, convert: Convert) -> None:
        """A manifest in a list of one kind: its apiVersion must be the one vspec takes."""
        raw = self.named(raw)
        why = kinds.check_api_version(raw, target)
        if why:
            raise at.error(why)
        convert(raw, at)

    def volcano_job(self, raw: Mapping[str, Any], at: At) -> None:
        """A Volcano Job: recorded now, converted once every queue is known (its
        admission reads them)."""
        meta = mf.object_meta(raw, at, namespaced=True, uid="")
        self.define("volcano job", meta, at)
        self.volcano_jobs.append((raw, at))

    def include(self, at: At, target: str, includers: tuple[Path, ...]) -> None:
        """A cluster file, or a manifest file (``kubectl get -o yaml``), merged here.
        The including files are resolved only here: most specs include none."""
        path = Path(at.doc.file).parent / target
        key = path.resolve()
        chain = (*includers, Path(at.doc.file).resolve())
        if key in chain:
            cycle = " -> ".join(p.name for p in (*chain[chain.index(key) :], key))
            raise at.error(f"cyclic include: {cycle}")
        if len(chain) > MAX_INCLUDE_DEPTH:
            raise at.error(f"includes nested more than {MAX_INCLUDE_DEPTH} files deep")
        if key in self.included:
            return  # included twice (a diamond): its objects are the same objects
        self.included.add(key)
        self.stream(path, at, chain)

    def stream(self, path: Path, at: At | None, includers: tuple[Path, ...]) -> None:
        """Every document of the cluster file ``path``, in order: manifests go where
        their kinds belong, cluster mappings are merged as sections."""
        for doc in self.context.cluster_documents(path, at):
            if mf.is_manifest(doc.data):
                for raw, place in mf.expand(doc.data, At(doc), None):
                    self.manifest(raw, place)
            else:
                self.section(At(doc), includers)

    def generated(self, at: At) -> None:
        """Expand ``cluster.generate`` with the spec's seed and take its objects as if
        they were declared where ``generate`` is: a clash with a declared object is the
        usual error, and generated queues count as declared queues."""
        if self.generate_at is not None:
            first = self.generate_at.location()
            raise at.error(f"cluster.generate is given twice; first at {_where(first)}")
        self.generate_at = at
        # Validated with the spec: its schema embeds generate_schema().
        where = at.location()
        cluster = generate_cluster(at.value, self.seed, location=where, validated=True)
        for pc in cluster.priority_classes:
            self.define("priority class", pc.meta, at, where)
        for queue in cluster.queues:
            self.define("queue", queue.meta, at, where)
        for node in cluster.nodes:
            self.define("node", node.meta, at, where)
        for pg in cluster.pod_groups:
            self.define("pod group", pg.meta, at, where)
        for pod in cluster.pods:
            self.define("pod", pod.meta, at, where)
        self.queues_declared |= bool(cluster.queues)
        self.cluster.priority_classes.extend(cluster.priority_classes)
        self.cluster.queues.extend(cluster.queues)
        self.cluster.nodes.extend(cluster.nodes)
        self.cluster.pod_groups.extend(cluster.pod_groups)
        self.cluster.pods.extend(cluster.pods)

    def entries(self, section: Mapping[str, Any], at: At, key: str, convert: Convert) -> None:
        kind, target = _MANIFEST_KINDS[key]
        for i, entry in enumerate(section.get(key) or ()):
            for raw, place in mf.expand(entry, at / key / i, kind):
                if mf.is_manifest(raw):
                    self.typed(raw, place, target, convert)
                else:
                    convert(raw, place)

    def define(self, kind: str, meta: ObjectMeta, at: At, where: Location | None = None) -> None:
        """Record where an object is defined (its own location, else ``where``, else
        ``at``'s, which ``generate`` finds once for thousands of objects); a second
        definition is an error, unless it is the same object's, at its own location,
        met again. The object must be one the API server would take
        (:mod:`vspec.harness.apirules`)."""
        _check_api_rules(kind, meta, at)
        key = (kind, meta.key)
        first = self.defined.get(key)
        if first is None:
            self.defined[key] = meta.location or where or at.location()
        elif meta.location is None or first is not meta.location:
            raise at.error(f"{kind} {meta.key!r} is defined twice; first at {_where(first)}")

    def priority_class(self, raw: Mapping[str, Any], at: At) -> None:
        if mf.is_manifest(raw):
            pc = mf.priority_class_from_manifest(raw, at)
        else:
            pc = PriorityClass(
                meta=_meta(raw, at, namespace="", uid=""),
                value=int(raw["value"]),
                global_default=bool(raw.get("globalDefault", False)),
                preemption_policy=raw.get("preemptionPolicy", "PreemptLowerPriority"),
            )
        self.define("priority class", pc.meta, at)
        self.cluster.priority_classes.append(pc)

    def queue(self, raw: Mapping[str, Any], at: At) -> None:
        if mf.is_manifest(raw):
            queue = mf.queue_from_manifest(raw, at)
        else:
            affinity = raw.get("affinity")
            queue = Queue(
                meta=_meta(raw, at, namespace="", uid=""),
                weight=int(raw.get("weight", 1)),
                capability=mf.resource_list(raw.get("capability"), at / "capability"),
                deserved=mf.resource_list(raw.get("deserved"), at / "deserved"),
                guarantee=mf.resource_list(raw.get("guarantee"), at / "guarantee"),
                priority=int(raw.get("priority", 0)),
                parent=raw.get("parent", ""),
                state=raw.get("state", "Open"),
                reclaimable=raw.get("reclaimable"),
                affinity=None if affinity is None else copied(affinity),
            )
        self.define("queue", queue.meta, at)
        self.cluster.queues.append(queue)

    def node(self, raw: Mapping[str, Any], at: At) -> None:
        node = mf.node_from_manifest(raw, at) if mf.is_manifest(raw) else _compact_node(raw, at)
        self.define("node", node.meta, at)
        self.cluster.nodes.append(node)

    def pod_group(self, raw: Mapping[str, Any], at: At) -> None:
        if mf.is_manifest(raw):
            pg = mf.pod_group_from_manifest(raw, at, default_queue=self.options.default_queue)
            unqueued = not (raw.get("spec") or {}).get("queue")
        else:
            pg = _compact_pod_group(raw, at, self.options.default_queue)
            unqueued = "queue" not in raw
        if unqueued:
            self.unqueued.append((pg, True))
        else:
            self.queue_keys[pg.meta.key] = (
                at / "spec" / "queue" if mf.is_manifest(raw) else at / "queue"
            )
        self.define("pod group", pg.meta, at)
        self.cluster.pod_groups.append(pg)

    def pod(self, raw: Mapping[str, Any], at: At) -> None:
        if mf.is_manifest(raw):
            claim = kinds.claim_volume(raw.get("spec") or {})
            if claim is not None:
                raise (at / "spec" / "volumes" / claim).error(kinds.VOLUME_BINDING_NOT_MODELLED)
        pod = mf.pod_from_manifest(raw, at) if mf.is_manifest(raw) else _compact_pod(raw, at)
        self.define("pod", pod.meta, at)
        self.cluster.pods.append(pod)

    def job(self, at: At) -> None:
        """A pod group and its pods: ``<job>-<task>-<index>``, labelled with the task."""
        raw: dict[str, Any] = at.value
        tasks = raw.get("tasks") or []
        group = {
            k: v
            for k, v in raw.items()
            if k not in ("tasks", "minAvailable", "controllerMinResources")
        }
        if "minAvailable" in raw:
            group["minMember"] = raw["minAvailable"]
        elif "minMember" not in raw:
            # Volcano's job admission: minAvailable defaults to the total of replicas.
            group["minMember"] = sum(int(t.get("replicas", 1)) for t in tasks)
        pg = _compact_pod_group(group, at, self.options.default_queue)
        if "queue" not in raw:
            self.unqueued.append((pg, False))
        else:
            self.queue_keys[pg.meta.key] = at / "queue"
        self.define("pod group", pg.meta, at)
        self.cluster.pod_groups.append(pg)
        pods = [self.task(task, at / "tasks" / i, pg) for i, task in enumerate(tasks)]
        if raw.get("controllerMinResources"):
            if "minResources" in raw:
                raise (at / "controllerMinResources").error(
                    "controllerMinResources computes minResources: give one of them", key=True
                )
            self.controller_min.append((pg, pods))

    def task(self, task: Mapping[str, Any], at: At, pg: PodGroup) -> list[Pod]:
        derived = {
            "namespace": pg.meta.namespace,
            "podGroup": pg.meta.name,
            "taskSpec": task["name"],
        }
        for key, value in derived.items():
            if key in task and task[key] != value:
                raise (at / key).error(
                    f"a task's {key} is its job's ({value!r}); leave it out or write {value!r}"
                )
        if "uid" in task and int(task.get("replicas", 1)) > 1:
            # Volcano keys tasks by UID: the replicas would silently collapse into one.
            raise (at / "uid").error("a uid names one pod; give it only with replicas: 1")
        template = {k: v for k, v in task.items() if k not in ("replicas", "name")}
        template.update(derived)
        if pg.priority_class_name and "priorityClassName" not in task:
            # Volcano's job controller gives a pod the job's class unless its task has one.
            template["priorityClassName"] = pg.priority_class_name
        pods = []
        for index in range(int(task.get("replicas", 1))):
            pod = _compact_pod({**template, "name": f"{pg.meta.name}-{task['name']}-{index}"}, at)
            self.define("pod", pod.meta, at)
            self.cluster.pods.append(pod)
            pods.append(pod)
        return pods

    def kube_object(self, raw: Mapping[str, Any], at: At) -> None:
        obj: KubeObject = mf.object_from_manifest(raw, at)
        self.define(obj.kind, obj.meta, at)
        self.cluster.objects.append(obj)

    def objects_at(self, at: At) -> Cluster:
        """The objects of one cluster-shaped mapping (a timeline arrival), defined
        against everything so far, pod priorities from the cluster's classes."""
        part = self.part()
        part.section(at)
        part.cluster.queues = self.cluster.queues
        part.cluster.priority_classes = self.cluster.priority_classes
        part.cluster.objects = self.cluster.objects  # namespaces' queue annotations
        if self.mode == "deployed":
            default_queues(part.cluster, part.unqueued)
        _create_volcano_jobs(part.volcano_jobs, part.cluster, self.options, self.mode)
        _controller_min(part.controller_min, part.cluster)
        if self.mode == "deployed":
            admit_pods(part.cluster, self.options, part.queue_keys)
        _resolve_pod_priorities(part.cluster)
        return part.cluster

    def node_at(self, at: At) -> Node:
        """The one node of a node entry (a timeline's ``add``)."""
        part = self.part()
        for raw, place in mf.expand(at.value, at, "Node"):
            part.node(raw, place)
        if len(part.cluster.nodes) != 1:
            raise at.error(f"adds one node, not {len(part.cluster.nodes)}")
        return part.cluster.nodes[0]

    def rename(self, kind: str, obj: Pod | PodGroup, at: At) -> None:
        self.define(kind, obj.meta, at)

    def part(self) -> _ClusterBuilder:
        """A builder whose objects are kept apart but named against this one's."""
        part = _ClusterBuilder(self.context, self.options, self.seed)
        part.defined = self.defined
        part.ignored = self.ignored
        part.name_draws = self.name_draws
        part.generated_names = self.generated_names
        return part

    def finish(self, mode: ClusterMode) -> Cluster:
        """Apply the defaults that need the whole cluster: what a deployed Volcano adds
        and refuses (in ``bare`` mode only the implicit queue when none is declared) and
        pod priorities from their classes."""
        self.mode = mode
        if mode == "deployed":
            default_queues(self.cluster, self.unqueued)
            deploy_queues(self.cluster, self.options)
        elif not self.queues_declared:
            self.cluster.queues.append(Queue(ObjectMeta(name="default")))
        _create_volcano_jobs(self.volcano_jobs, self.cluster, self.options, mode)
        _controller_min(self.controller_min, self.cluster)
        if mode == "deployed":
            admit_pods(self.cluster, self.options, self.queue_keys)
        _resolve_pod_priorities(self.cluster)
        return self.cluster


def _check_api_rules(kind: str, meta: ObjectMeta, at: At) -> None:
    """apimachinery's rules for the name, namespace and labels of an object defined at
    ``at`` (a manifest, a compact entry, or what a job or ``generate`` made); apiVersions
    are :mod:`vspec.harness.kinds`' to check."""
    problem = _name_problem(meta.name)
    if problem is not None:
        base, written = _metadata(at)
        where = base / "name" if written.get("name") == meta.name else at
        raise where.error(f"{kind} name {meta.name!r}: {problem}")
    problem = _namespace_problem(meta.namespace) if meta.namespace else None
    if problem is not None:
        base, written = _metadata(at)
        where = base / "namespace" if "namespace" in written else at
        raise where.error(f"namespace {meta.namespace!r}: {problem}")
    for key, value in meta.labels.items():
        problem = _label_problem(key, value)
        if problem is not None:
            base, written = _metadata(at)
            labels = written.get("labels")
            where = base / "labels" / key if isinstance(labels, Mapping) and key in labels else at
            raise where.error(f"label {key}={value!r}: {problem}")


def _metadata(at: At) -> tuple[At, Mapping[str, Any]]:
    """Where an object's name, namespace and labels are written (a manifest's
    ``metadata``, else the entry itself), looked at only to place an error."""
    base = at / "metadata" if mf.is_manifest(at.value) else at
    return base, base.value if isinstance(base.value, Mapping) else {}


# The rules per text, kept: every spec names its nodes, pods and namespaces anew, and
# a suite's specs reuse the same few names (n1, p1, default).
_name_problem = lru_cache(maxsize=4096)(subdomain_problem)
_namespace_problem = lru_cache(maxsize=1024)(label_problem)


@lru_cache(maxsize=4096)
def _label_problem(key: str, value: str) -> str | None:
    return label_key_problem(key) or label_value_problem(value)


def _where(location: Location) -> str:
    text = location.file
    if location.line:
        text += f":{location.line}"
    return f"{text} ({location.key})" if location.key else text


def _create_volcano_jobs(
    jobs: list[tuple[Mapping[str, Any], At]],
    cluster: Cluster,
    options: SchedulerOptions,
    mode: ClusterMode,
) -> None:
    """Admit each Volcano Job and add what its controller makes. vspec.harness.vcjob is
    imported only for a spec that has Jobs: most have none."""
    if not jobs:
        return
    from vspec.harness import vcjob

    for raw, at in jobs:
        vcjob.admit_and_create(raw, at, cluster, options, mode)


def _controller_min(jobs: list[tuple[PodGroup, list[list[Pod]]]], cluster: Cluster) -> None:
    """Compact jobs' ``controllerMinResources``; its module is imported only for them."""
    if jobs:
        from vspec.harness.jobmin import set_controller_min_resources

        set_controller_min_resources(jobs, cluster)


def _resolve_pod_priorities(cluster: Cluster) -> None:
    """Kubernetes' Priority admission: a pod naming a declared priority class without a
    priority gets the class's value. A pod naming an undeclared class keeps none, as the
    scheduler never resolves a pod's class itself."""
    values = {pc.meta.name: pc.value for pc in cluster.priority_classes}
    for pod in (*cluster.pods, *cluster.held_pods):
        if pod.priority is None and pod.priority_class_name in values:
            pod.priority = values[pod.priority_class_name]


# -- compact forms -----------------------------------------------------------------------


def _meta(
    raw: Mapping[str, Any], at: At, *, namespace: str | None = None, uid: str | None = None
) -> ObjectMeta:
    """ObjectMeta of a compact entry; ``namespace`` None means namespaced (default
    "default"), ``uid`` None means the builders' ``<namespace>-<name>``."""
    name = raw["name"]
    ns = (raw.get("namespace") or mf.DEFAULT_NAMESPACE) if namespace is None else namespace
    created = raw.get("creationTimestamp")
    deleted = raw.get("deletionTimestamp")
    return ObjectMeta(
        name=name,
        namespace=ns,
        uid=raw.get("uid") or (f"{ns}-{name}" if uid is None else uid),
        labels=dict(raw.get("labels") or {}),
        annotations=dict(raw.get("annotations") or {}),
        creation_timestamp=mf.creation_time(created, at / "creationTimestamp")
        if created is not None
        else ZERO_TIME,
        deletion_timestamp=mf.timestamp(deleted, at / "deletionTimestamp")
        if deleted is not None
        else None,
        location=at.location(),
    )


def _shorthand(mapping: dict[str, str], key: str, value: str, at: At) -> None:
    """Set ``key`` from a shorthand (podGroup, taskSpec) unless the entry already sets it
    to something else."""
    if mapping.get(key, value) != value:
        raise at.error(f"contradicts {key}={mapping[key]!r} given in the same entry")
    mapping[key] = value


def _compact_pod(raw: Mapping[str, Any], at: At) -> Pod:
    meta = _meta(raw, at)
    if "podGroup" in raw:
        _shorthand(meta.annotations, GROUP_NAME_ANNOTATION, raw["podGroup"], at / "podGroup")
    if "taskSpec" in raw:
        _shorthand(meta.labels, TASK_SPEC_KEY, raw["taskSpec"], at / "taskSpec")
    requests = mf.resource_list(raw.get("requests"), at / "requests")
    pod = Pod(
        meta=meta,
        phase=raw.get("phase", "Pending"),
        node_name=raw.get("nodeName", ""),
        priority=None if raw.get("priority") is None else int(raw["priority"]),
        priority_class_name=raw.get("priorityClassName", ""),
        preemption_policy=raw.get("preemptionPolicy", ""),
        node_selector=dict(raw.get("nodeSelector") or {}),
        tolerations=mf.tolerations(raw.get("tolerations")),
        affinity=parse_affinity(raw.get("affinity")),
        topology_spread_constraints=mf.spread_constraints(raw.get("topologySpreadConstraints")),
        containers=[Container(requests=requests)],  # one container, as util.BuildPod
    )
    if raw.get("schedulerName"):
        pod.scheduler_name = raw["schedulerName"]
    return pod


def _compact_node(raw: Mapping[str, Any], at: At) -> Node:
    """A compact node: ``pods`` defaults to 110 (as a kubelet reports) and capacity to
    allocatable; allocatable defaults to capacity when only capacity is given."""
    allocatable = (
        mf.resource_list(raw["allocatable"], at / "allocatable") if "allocatable" in raw else None
    )
    capacity = mf.resource_list(raw["capacity"], at / "capacity") if "capacity" in raw else None
    if allocatable is None:
        allocatable = dict(capacity or {})
    allocatable.setdefault("pods", KUBELET_MAX_PODS)
    usage = raw.get("usage")
    return Node(
        meta=_meta(raw, at, namespace="", uid=""),
        allocatable=allocatable,
        capacity=dict(allocatable) if capacity is None else capacity,
        taints=mf.taints(raw.get("taints")),
        unschedulable=bool(raw.get("unschedulable", False)),
        usage=None if usage is None else _usage(usage, at / "usage"),
    )


def _usage(raw: Mapping[str, Any], at: At) -> NodeUsage:
    return NodeUsage(
        cpu={k: float(v) for k, v in (raw.get("cpu") or {}).items()},
        memory={k: float(v) for k, v in (raw.get("memory") or {}).items()},
        time=mf.creation_time(raw.get("time"), at / "time"),
    )


def _compact_pod_group(raw: Mapping[str, Any], at: At, default_queue: str) -> PodGroup:
    min_resources = raw.get("minResources")
    return PodGroup(
        meta=_meta(raw, at, uid=""),
        queue=raw.get("queue", default_queue),
        min_member=int(raw.get("minMember", 0)),
        min_task_member={k: int(v) for k, v in (raw.get("minTaskMember") or {}).items()},
        min_resources=None
        if min_resources is None
        else mf.resource_list(min_resources, at / "minResources"),
        priority_class_name=raw.get("priorityClassName", ""),
        phase=raw.get("phase", "Pending"),
    )


# -- expect and probes -------------------------------------------------------------------


def _expect(at: At) -> Expect:
    raw = at.value
    expect = Expect()
    if not raw:
        return expect
    expect.binds = _opt_dict(raw.get("binds"))
    expect.binds_include = _opt_dict(raw.get("bindsInclude"))
    expect.bind_count = _opt_int(raw.get("bindCount"))
    expect.evictions = None if raw.get("evictions") is None else list(raw["evictions"])
    expect.evict_count = _opt_int(raw.get("evictCount"))
    if raw.get("pipelined") is not None:
        expect.pipelined = {job: list(nodes) for job, nodes in raw["pipelined"].items()}
    for job, pg in (raw.get("podGroups") or {}).items():
        expect.pod_groups[job] = PodGroupExpect(
            phase=pg.get("phase"),
            session_phase=pg.get("sessionPhase"),
            unschedulable=pg.get("unschedulable"),
        )
    for pod, pe in (raw.get("pods") or {}).items():
        expect.pods[pod] = PodExpect(
            node=pe.get("node"), node_given="node" in pe, status=pe.get("status")
        )
    for queue, qe in (raw.get("queues") or {}).items():
        expect.queues[queue] = _queue_expect(qe, at / "queues" / queue)
    logs = raw.get("logs")
    if logs is not None:
        for i, pattern in enumerate(logs.get("matches") or ()):
            _check_regex(pattern, at / "logs" / "matches" / i)
        expect.logs = LogsExpect(
            contains=list(logs.get("contains") or ()),
            matches=list(logs.get("matches") or ()),
            absent=list(logs.get("absent") or ()),
        )
    metrics = raw.get("metrics") or ()
    if metrics:  # only a timeline's spec has them: its expressions' module is imported here
        from vspec.timeline.expr import MetricError, parse_bound
    for i, text in enumerate(metrics):
        place = at / "metrics" / i
        try:
            parse_bound(text)
        except MetricError as exc:
            raise place.error(str(exc)) from None
        expect.metrics.append(MetricBound(text, place.location()))
    invariants = raw.get("invariants")
    if isinstance(invariants, list):
        expect.invariants = list(invariants)
    elif isinstance(invariants, dict):
        expect.disabled_invariants = list(invariants.get("disable") or ())
    expect.locations = _ExpectLocations(At(at.doc.part(at.path)))
    return expect


def _queue_expect(raw: Mapping[str, Any], at: At) -> QueueExpect:
    tolerance = raw.get("tolerance")
    return QueueExpect(
        resources={
            key: {n: float(q) for n, q in mf.resource_list(raw[key], at / key).items()}
            for key in QUEUE_RESOURCES
            if raw.get(key) is not None
        },
        counts={key: int(raw[key]) for key in QUEUE_COUNTS if raw.get(key) is not None},
        share=None if raw.get("share") is None else float(raw["share"]),
        tolerance=None if tolerance is None else float(tolerance),
    )


def _opt_int(raw: float | None) -> int | None:
    return None if raw is None else int(raw)  # the schema allows 2.0 for an integer


def _opt_dict(raw: Mapping[str, str] | None) -> dict[str, str] | None:
    return None if raw is None else dict(raw)


def _check_regex(pattern: str, at: At) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise at.error(f"{pattern!r} is not a regular expression: {exc}") from None


class _ExpectLocations(Mapping[str, Location]):
    """``Expect.locations``, found on first use: most specs pass and never ask, and
    locating each key of ``expect`` was a tenth of a small spec's loading."""

    def __init__(self, at: At) -> None:
        self._at = at
        self._found: dict[str, Location] | None = None

    def _locations(self) -> dict[str, Location]:
        if self._found is None:
            self._found = dict(_expect_locations(self._at, self._at.value))
        return self._found

    def __getitem__(self, key: str) -> Location:
        return self._locations()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._locations())

    def __len__(self) -> int:
        return len(self._locations())


def _expect_locations(at: At, raw: Mapping[str, Any]) -> Iterable[tuple[str, Location]]:
    """``Expect.locations``: one entry per key of ``expect`` and per key below its
    mappings and lists, named by their dotted path below ``expect`` without quoting:
    ``binds``, ``binds.c1/p1``, ``podGroups.c1/pg1.phase``, ``logs.contains[0]``."""
    for key, value in raw.items():
        yield key, (at / key).location()
        if isinstance(value, dict):
            for sub, inner in value.items():
                yield f"{key}.{sub}", (at / key / sub).location()
                if isinstance(inner, dict):
                    for leaf in inner:
                        yield f"{key}.{sub}.{leaf}", (at / key / sub / leaf).location()
                elif isinstance(inner, list):
                    for i in range(len(inner)):
                        yield f"{key}.{sub}[{i}]", (at / key / sub / i).location()
        elif isinstance(value, list):
            for i in range(len(value)):
                yield f"{key}[{i}]", (at / key / i).location()


def _probe(at: At) -> Probe:
    # Imported here: most specs have no probes, and the module is five data classes.
    from vspec.model.probes import JobProbe, OrderProbe, TaskProbe, VictimProbe, VictimTasksProbe

    raw: dict[str, Any] = at.value
    location = at.location()
    if "task" in raw:
        plugin_scores = raw.get("pluginScores")
        return TaskProbe(
            task=raw["task"],
            predicates=_opt_copy(raw.get("predicates")),
            scores=_floats(raw.get("scores")),
            plugin_scores=None
            if plugin_scores is None
            else {p: dict(_floats(s) or {}) for p, s in plugin_scores.items()},
            best_node=raw.get("bestNode"),
            tolerance=None if raw.get("tolerance") is None else float(raw["tolerance"]),
            location=location,
        )
    if "job" in raw:
        return JobProbe(
            job=raw["job"],
            enqueueable=raw.get("enqueueable"),
            ready=raw.get("ready"),
            pipelined=raw.get("pipelined"),
            starving=raw.get("starving"),
            valid=raw.get("valid"),
            location=location,
        )
    if "preemptor" in raw or "reclaimer" in raw:
        kind: Literal["preemptor", "reclaimer"] = "preemptor" if "preemptor" in raw else "reclaimer"
        return VictimProbe(
            kind=kind,
            task=raw[kind],
            candidates=list(raw["candidates"]),
            victims=list(raw["victims"]),
            location=location,
        )
    if "victimTasks" in raw:
        return VictimTasksProbe(
            tasks=list(raw["victimTasks"]), victims=list(raw["victims"]), location=location
        )
    return OrderProbe(
        order=raw["order"], items=list(raw["items"]), expect=list(raw["expect"]), location=location
    )


def _opt_copy(raw: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if raw is None else dict(raw)


def _floats(raw: Mapping[str, Any] | None) -> dict[str, float] | None:
    return None if raw is None else {k: float(v) for k, v in raw.items()}
