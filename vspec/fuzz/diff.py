"""``vspec diff``'s campaign: spec files and generated specs on both engines, every
disagreement shrunk and written.

The specs come from files and directories (as ``vspec run`` finds them) and from fuzz
spaces (the examples ``vspec fuzz`` would draw, one-cycle and multi-cycle). Each is
judged by :class:`vspec.diff.judge.Judge`; a disagreement is shrunk by
:func:`vspec.fuzz.shrink.shrink` while a difference of the same aspect shows (Volcano's
first run each time), judged again (with Volcano's reruns), and written as a spec file
whose leading comment gives both outcomes. A spec from a file is shrunk as the
generated specs are; what the written file cannot hold (objects the strategies never
draw) is said in its comment, with the original to run instead.

Timelines are not compared (their metrics sum thousands of decisions; the sessions'
decisions are what the spec files and spaces compare), nor the probes of a spec (the
real engine does not answer them: the spec runs without).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import yaml

from vspec.diff.judge import Case, Judge, Verdict
from vspec.errors import VspecError
from vspec.fuzz import DIFF_DATABASE
from vspec.fuzz.campaign import Part
from vspec.harness.yamlwrite import dump
from vspec.model.conf import SchedulerOptions
from vspec.model.objects import DEFAULT_NOW
from vspec.model.probes import Probe, probe_document
from vspec.model.versions import DEFAULT_VERSION

if TYPE_CHECKING:
    from vspec.fuzz.strategies import GeneratedSpec
    from vspec.model.spec import Spec


@dataclass(frozen=True)
class Subject:
    """One spec to compare: where it came from and the generated form the shrinker edits
    (a file's spec keeps its clock and scheduler options beside it)."""

    label: str  # file::name, or space and example number
    source: str  # the file, or "space NAME": what the summary counts by
    spec: GeneratedSpec
    now: datetime | None = None
    options: SchedulerOptions = field(default_factory=SchedulerOptions)
    lossy: bool = False  # the written form loses some of the cluster (a spec file's)
    probes: tuple[Probe, ...] = ()  # a spec file's, compared too

    def case(self, spec: GeneratedSpec | None = None) -> Case:
        spec = spec or self.spec
        return Case(
            replace(spec.conf, options=self.options),
            spec.cluster,
            spec.seed,
            self.now,
            spec.cycles,
            spec.verbosity,
            self.probes,
        )


@dataclass(frozen=True)
class Disagreement:
    subject: Subject
    verdict: Verdict
    path: Path | None  # the shrunk spec written; None: another process owns its aspects
    # The earlier disagreement of the same aspects whose shrunk spec stands for this one.
    like: Disagreement | None = None
    # The process of the campaign that owns its space and aspects (vspec.fuzz.campaign):
    # it shrinks and writes them, not this one.
    owner: str | None = None


@dataclass
class DiffReport:
    compared: Counter[str] = field(default_factory=Counter)  # source -> specs compared
    disagreements: list[Disagreement] = field(default_factory=list)
    # Volcano disagreed in one run and agreed in another: its own nondeterminism.
    nondeterministic: list[tuple[str, Verdict]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # label, why
    errors: list[str] = field(default_factory=list)  # specs that would not load
    other_ties: int = 0  # choices where Volcano took another tied node

    @property
    def total(self) -> int:
        return sum(self.compared.values())

    def summary(self) -> str:
        return f"{self.total} specs compared, {len(self.disagreements)} disagreements"

    def merge(self, other: DiffReport) -> None:
        """Add another process's report (a campaign's, vspec.fuzz.campaign); an error of
        the command line's paths, which every process meets, is kept once."""
        self.compared += other.compared
        self.disagreements += other.disagreements
        self.nondeterministic += other.nondeterministic
        self.skipped += other.skipped
        self.errors = list(dict.fromkeys([*self.errors, *other.errors]))
        self.other_ties += other.other_ties


@dataclass
class Campaign:
    judge: Judge
    out: Path
    shrink_seconds: float = 30.0  # per disagreement
    progress: TextIO | None = field(default_factory=lambda: sys.stderr)
    report: DiffReport = field(default_factory=DiffReport)
    # One process of a campaign (vspec.fuzz.campaign): the spec files and examples it
    # compares (the residue slot.index - 1 of slot.count of their positions), its name
    # and the ledger it claims aspects in. None: a run of its own, every one.
    part: Part | None = None
    # The first disagreement of each space and set of aspects, shrunk and written.
    _kinds: dict[tuple[str, frozenset[str]], Disagreement] = field(default_factory=dict)
    _owners: dict[tuple[str, frozenset[str]], str] = field(default_factory=dict)

    def compare(self, subject: Subject) -> Verdict:
        verdict = self.judge.judge(subject.case())
        self.report.compared[subject.source] += 1
        self.report.other_ties += len(verdict.comparison.other_ties)
        if verdict.disagrees:
            self._disagreement(subject, verdict)
        elif verdict.comparison.differences:
            self.report.nondeterministic.append((subject.label, verdict))
            self._say(f"  {subject.label}: Volcano's own nondeterminism ({_why(verdict)})")
        if self.part is not None:
            self.part.count(self.report.total, len(self.report.disagreements))
        return verdict

    def _takes(self, position: int) -> bool:
        return self.part is None or self.part.slot.takes(position)

    def spec_files(self, paths: Sequence[str | Path]) -> None:
        from vspec.harness.plugin_dirs import spec_scope
        from vspec.harness.runner import load_specs, spec_files

        problems: list[str] = []
        for position, (path, named) in enumerate(spec_files(paths, problems)):
            if not self._takes(position):
                continue
            specs, errors = load_specs(path, named=named, problems=problems, check_names=False)
            self.report.errors += [f"{e.location.file}: {'; '.join(e.messages)}" for e in errors]
            for spec in specs:
                label = f"{spec.location.file}::{spec.name}"
                why = _not_compared(spec, self.judge.volcano_version or DEFAULT_VERSION)
                if why is not None:
                    self.report.skipped.append((label, why))
                    continue
                with spec_scope(spec):
                    self.compare(_subject(spec, label))
        self.report.errors += problems

    def space(self, name: str, *, seconds: float | None, examples: int | None, seed: int) -> None:
        """Examples of the fuzz space ``name`` until ``examples`` ran or ``seconds``
        passed (the first)."""
        for n, spec in enumerate(generated(name, seconds=seconds, examples=examples, seed=seed)):
            if self._takes(n):
                self.compare(
                    Subject(f"space {name}, seed {seed}, example {n}", f"space {name}", spec)
                )
        self._say(f"diff: space {name}: {self.report.compared[f'space {name}']} specs compared")

    def _disagreement(self, subject: Subject, verdict: Verdict) -> None:
        # Generated specs repeat a frequent disagreement: one of each set of aspects
        # per space is shrunk, lest the repeats spend the run. Every file's is.
        kind = (subject.source, verdict.comparison.aspects)
        known = self._kinds.get(kind) if subject.source.startswith("space ") else None
        if known is not None:
            self.report.disagreements.append(Disagreement(subject, verdict, known.path, known))
            self._say(f"  {subject.label}: disagreement of the same aspects as {known.path}")
            return
        owner = self._owner(kind)
        if owner is not None:
            self.report.disagreements.append(Disagreement(subject, verdict, None, owner=owner))
            self._say(f"  {subject.label}: disagreement of aspects {owner} found")
            return
        shrunk, verdict = self._shrink(subject, verdict)
        path = write(self.out, shrunk, verdict)
        if self.part is not None:
            self.part.ledger().publish(path.stem, path, self.part.name)
        found = Disagreement(shrunk, verdict, path)
        self._kinds[kind] = found
        self.report.disagreements.append(found)
        first = verdict.comparison.differences[0] if verdict.comparison.differences else None
        text = f"{first.aspect}: {first.text}" if first else "(gone once shrunk)"
        self._say(f"  {subject.label}: disagreement, {text}\n    -> {path}")

    def _owner(self, kind: tuple[str, frozenset[str]]) -> str | None:
        """The other process of the campaign that owns a space's set of aspects, if one
        does (a spec file's disagreement is this process's: the file is its own)."""
        if self.part is None or not kind[0].startswith("space "):
            return None
        owner = self._owners.get(kind)
        if owner is None:
            aspects = ",".join(sorted(kind[1]))
            owner = self.part.ledger().claim(f"{kind[0]}|{aspects}", self.part.name)
            self._owners[kind] = owner
        return owner if owner != self.part.name else None

    def _shrink(self, subject: Subject, verdict: Verdict) -> tuple[Subject, Verdict]:
        """The smallest spec reached by the fuzzer's shrinker on which a difference of the
        first one's aspect still shows, judged again with Volcano's reruns."""
        from vspec.fuzz.shrink import shrink

        aspect = verdict.comparison.differences[0].aspect

        def fails(candidate: GeneratedSpec) -> bool:
            try:
                found = self.judge.judge(subject.case(candidate), confirm=False)
            except VspecError:
                return False
            return aspect in found.comparison.aspects

        deadline = time.perf_counter() + self.shrink_seconds
        smaller = shrink(subject.spec, fails, deadline=deadline)
        if smaller is subject.spec:
            return subject, verdict
        shrunk = replace(subject, spec=smaller)
        again = self.judge.judge(shrunk.case())
        if not again.disagrees:
            return subject, verdict  # the smaller one was Volcano's nondeterminism
        return shrunk, again

    def _say(self, text: str) -> None:
        if self.progress is not None:
            print(text, file=self.progress, flush=True)


def _not_compared(spec: Spec, version: str) -> str | None:
    if spec.skip is not None:
        return f"skipped: {spec.skip}"
    if spec.volcano is not None and not spec.volcano.admits(version):
        return f"it describes Volcano {spec.volcano.text}, not {version}"
    if spec.timeline is not None:
        return "a timeline (its metrics are not compared)"
    return None


def _subject(spec: Spec, label: str) -> Subject:
    """A file's spec in the generated form: its conf written out whole (every flag), so
    that the written spec means the same without the file's defaults."""
    from vspec.engines.volcano.conf import conf_text
    from vspec.fuzz.strategies import GeneratedSpec

    scheduler = yaml.safe_load(conf_text(spec.scheduler))
    scheduler["defaultPluginFlags"] = False  # every flag is written: none is defaulted
    generated = GeneratedSpec(
        scheduler, spec.cluster, spec.seed, spec.cycles, spec.verbosity, name=spec.name
    )
    return Subject(
        label,
        spec.location.file,
        generated,
        spec.now,
        spec.scheduler.options,
        lossy=True,
        probes=tuple(spec.probes),
    )


def generated(
    name: str, *, seconds: float | None, examples: int | None, seed: int
) -> Iterator[GeneratedSpec]:
    """Specs drawn from the fuzz space ``name`` (a built-in or a space file), as
    ``vspec fuzz`` draws them, from ``seed``: Hypothesis draws a batch at a time (a
    batch of its run per seed), and they are handed out until ``examples`` were or
    ``seconds`` passed."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    from vspec.fuzz.runner import load_space

    strategy = load_space(name).builtin_only().strategy()
    deadline = time.perf_counter() + seconds if seconds is not None else float("inf")
    left = examples if examples is not None else sys.maxsize
    batch_seed = seed
    while left > 0 and time.perf_counter() < deadline:
        batch: list[GeneratedSpec] = []

        @seeded(batch_seed)
        @settings(
            max_examples=min(left, BATCH),
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(strategy)
        def draw(spec: GeneratedSpec) -> None:
            batch.append(spec)  # noqa: B023 (run here, within its own iteration)

        draw()
        if not batch:
            return
        for spec in batch[:left]:
            if time.perf_counter() >= deadline:
                return
            yield spec
        left -= len(batch)
        batch_seed += 1


BATCH = 50


def write(out: Path, subject: Subject, verdict: Verdict) -> Path:
    """The spec file of a disagreement: the spec, with both outcomes in its comment."""
    doc: dict[str, Any] = subject.spec.document(
        description=f"vspec diff: vspec's engine and Volcano disagree ({subject.label}).",
        tags=["diff"],
    )
    doc["name"] = f"diff: {subject.spec.name}"
    if subject.now is not None and subject.now != DEFAULT_NOW:
        doc["now"] = subject.now.isoformat().replace("+00:00", "Z")
    if subject.options != SchedulerOptions():
        from vspec.engines.volcano.conf import options

        doc["scheduler"]["options"] = options(subject.options)
    if subject.probes:
        doc["probes"] = [probe_document(probe) for probe in subject.probes]
    body = dump(doc, default_flow_style=None, width=100)
    comment = "\n".join(_comment(subject, verdict)).splitlines()  # a printed line may hold several
    text = "\n".join(f"# {line}".rstrip() for line in comment) + "\n" + body
    digest = hashlib.sha256(body.encode()).hexdigest()[:8]
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"diff-{digest}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _comment(subject: Subject, verdict: Verdict) -> list[str]:
    lines = [f"vspec diff: {subject.label}", "", "Differences (Volcano against vspec's engine):"]
    lines += [f"  {d.aspect}: {d.text}" for d in verdict.comparison.differences]
    lines += ["", f"vspec's engine (seed {verdict.model_seed}):"]
    lines += [f"  {line}" for line in verdict.model.describe()]
    lines += ["", "Volcano:"]
    lines += [f"  {line}" for line in verdict.real.describe()]
    if verdict.nondeterministic:
        lines += ["", "Volcano's own outcome varies with the same input:"]
        lines += [f"  {line}" for line in verdict.evidence()]
    if subject.lossy:
        lines += [
            "",
            f"Written from {subject.source}: objects the fuzzer never draws are not written;",
            "if this file agrees, run the original.",
        ]
    return lines


# -- the command line ------------------------------------------------------------------------------

EXIT_OK, EXIT_DISAGREE, EXIT_USAGE = 0, 1, 2


def diff_command(args: argparse.Namespace) -> int:
    """``vspec diff``'s handler (its command line is :mod:`vspec.cli.diff`'s)."""
    import random

    from vspec.engines import EngineChoice, get_engine
    from vspec.fuzz import BUILTIN_SPACES

    spaces = [s for name in args.space for s in (BUILTIN_SPACES if name == "all" else (name,))]
    if args.collect:
        return _collect(args, spaces)
    if not args.paths and not spaces:
        print("vspec diff: error: name spec files or directories, or --space", file=sys.stderr)
        return EXIT_USAGE
    if args.runs < 1:
        print("vspec diff: error: --runs must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    if args.shard is not None and args.seed is None:
        print("vspec diff: error: --shard needs --seed, the same on every machine", file=sys.stderr)
        return EXIT_USAGE
    seconds = args.seconds if args.seconds is not None or args.examples is not None else 60.0
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    try:
        get_engine(choice=EngineChoice("python", args.volcano_version))  # a release it models
    except VspecError as exc:
        print(f"vspec diff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"vspec diff: seed {seed}", file=sys.stderr)
    try:
        if args.workers > 1 or args.shard is not None:
            report = campaign_diff(args, spaces, seconds=seconds, seed=seed)
        else:
            report = compare_all(args, spaces, seconds=seconds, seed=seed)
    except VspecError as exc:  # the real engine's build, a space file that does not load
        print(f"vspec diff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print_report(report)
    return EXIT_DISAGREE if report.disagreements or report.errors else EXIT_OK


def _collect(args: argparse.Namespace, spaces: list[str]) -> int:
    """``--collect``: a sharded campaign's disagreements, written to ``--out``, and its
    summary merged from every shard's."""
    if args.seed is None or args.database is None:
        print(
            "vspec diff: error: --collect needs the campaign's --seed and --database",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        line, written, shards = collect_diff(args, spaces)
    except VspecError as exc:
        print(f"vspec diff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"vspec diff: collected {shards} shard summaries into {args.out}", file=sys.stderr)
    for path in written.values():
        print(f"DISAGREE {path}")
    print(line)
    return EXIT_DISAGREE if written else EXIT_OK


def compare_all(
    args: argparse.Namespace,
    spaces: list[str],
    *,
    seconds: float | None,
    seed: int,
    campaign: Callable[[Judge], Campaign] | None = None,
) -> DiffReport:
    """The command line's spec files and spaces compared on a real engine of its own;
    ``campaign`` makes the campaign from the judge (a process's share of a bigger one)."""
    from vspec.engines import EngineChoice, get_engine

    real = get_engine(choice=EngineChoice("volcano", args.volcano_version, args.volcano_source))
    judge = Judge(real, args.volcano_version, reruns=args.runs - 1)
    compared = campaign(judge) if campaign else Campaign(judge, args.out, args.shrink_seconds)
    try:
        if args.paths:
            compared.spec_files(args.paths)
        for name in spaces:
            compared.space(name, seconds=seconds, examples=args.examples, seed=seed)
    finally:
        close = getattr(real, "close", None)
        if close is not None:
            close()
    return compared.report


def _why(verdict: Verdict) -> str:
    return verdict.explained or f"its run {verdict.agreeing_run} agrees with vspec's engine"


def print_report(report: DiffReport) -> None:
    for source, count in sorted(report.compared.items()):
        print(f"{source}: {count} compared")
    for label, why in report.skipped:
        print(f"not compared: {label}: {why}")
    for error in report.errors:
        print(f"error: {error}")
    for label, verdict in report.nondeterministic:
        print(f"Volcano's own nondeterminism: {label} ({_why(verdict)})")
        for line in verdict.evidence():
            print(f"  {line}")
    if report.other_ties:
        print(f"{report.other_ties} node choice(s) where Volcano took another tied node")
    for found in report.disagreements:
        differences = found.verdict.comparison.differences
        varies = " (Volcano's own outcome varies too)" if found.verdict.nondeterministic else ""
        like = " (same aspects, not shrunk again)" if found.like is not None else ""
        path = found.path or f"(same aspects as {found.owner} found, not shrunk here)"
        print(f"DISAGREE {found.subject.label}{varies}: {path}{like}")
        for difference in differences[:5]:
            print(f"  {difference.aspect}: {difference.text}")
        if len(differences) > 5:
            print(f"  ... {len(differences) - 5} more")
    print(report.summary())


# -- campaigns (vspec.fuzz.campaign) --------------------------------------------------------


def campaign_diff(
    args: argparse.Namespace, spaces: list[str], *, seconds: float | None, seed: int
) -> DiffReport:
    """This machine's share of a ``vspec diff`` campaign in ``--workers`` processes, each
    with its own real engine; their reports merged, each space's set of aspects shrunk
    and written by the one process that claimed it first."""
    from vspec.fuzz.campaign import Ledger, open_database, process_label, run_parts
    from vspec.harness.attribution import cache_dir

    if args.database is None:
        args.database = cache_dir(Path.cwd()) / DIFF_DATABASE
    sharded = args.shard is not None
    name = diff_campaign_name(spaces, seed, sharded=sharded)
    ledger = Ledger(open_database(args.database), name)  # one error, not every process's
    resolved = {"spaces": spaces, "seconds": seconds, "seed": seed}
    reports, _ = run_parts(_diff_process, args, name, "specs compared", **resolved)
    merged = DiffReport()
    for report in reports:
        merged.merge(report)
    merged.disagreements = _with_owners_here(merged.disagreements)
    summary = {"compared": merged.total, "disagreements": len(merged.disagreements)}
    ledger.end(process_label(args.shard, 0, 1), summary, sharded=sharded)
    return merged


def diff_campaign_name(spaces: list[str], seed: int, *, sharded: bool) -> str:
    """A ``vspec diff`` campaign's name: its spaces and its seed."""
    from vspec.fuzz.campaign import campaign_name

    return campaign_name("diff", f"{','.join(spaces)}:{seed}", sharded=sharded)


def collect_diff(args: argparse.Namespace, spaces: list[str]) -> tuple[str, dict[str, Path], int]:
    """A sharded ``vspec diff`` campaign's summary line, merged from its shards', and its
    disagreements' files written to ``args.out``; with the number of shards."""
    from vspec.fuzz.campaign import Ledger, open_database, write_findings

    name = diff_campaign_name(spaces, args.seed, sharded=True)
    ledger = Ledger(open_database(args.database), name)
    summaries = ledger.summaries()
    compared = sum(int(s["compared"]) for s in summaries)
    disagreements = sum(int(s["disagreements"]) for s in summaries)
    line = f"{compared} specs compared, {disagreements} disagreements"
    return line, write_findings(ledger, args.out), len(summaries)


def _diff_process(part: Part) -> DiffReport:
    args = part.args

    def campaign(judge: Judge) -> Campaign:
        return Campaign(judge, args.out, args.shrink_seconds, part.output(), part=part)

    return compare_all(args, args.spaces, seconds=args.seconds, seed=args.seed, campaign=campaign)


def _with_owners_here(found: list[Disagreement]) -> list[Disagreement]:
    """The disagreements another process of this machine owns, pointed at the one it
    wrote (as a single process's repeats are); those a process elsewhere owns stay so."""
    from dataclasses import replace

    written = {
        (d.subject.source, d.verdict.comparison.aspects): d for d in found if d.path is not None
    }
    out = []
    for d in found:
        here = written.get((d.subject.source, d.verdict.comparison.aspects))
        if d.owner is not None and here is not None:
            d = replace(d, path=here.path, like=here, owner=None)
        out.append(d)
    return out
