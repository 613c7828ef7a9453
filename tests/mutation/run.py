"""How many engine mutants ``vspec fuzz`` kills in a fixed budget each.

    python tests/mutation/run.py [--seconds 60 | --examples N] [--jobs 1] [--space S]
                                 [--keep DIR] [--plugins] [NAME...]

Each mutant (tests/mutation/mutants.py) is applied to a fresh copy of the ``vspec``
package in a temporary directory, and ``vspec fuzz --first`` runs on it in the mutant's
own space (``mixed``; ``preempt`` or ``reclaim`` for the eviction mutants, ``placement``
for the score, node filter and priority order ones; ``plugins`` for the mutants of the
plugins beyond the core, which ``--plugins`` runs instead of the core ones and whose
figure is kept apart), or in ``--space`` for all (with that copy
first on PYTHONPATH, its own example database, under ``nice``). A mutant is killed when
the fuzzer reports a finding; its shrunk spec's size (nodes, pods) is read back, and
how vspec fuzz shrank it (its size after Hypothesis, the time). A fuzz run that fails
otherwise (an exit status other than 0 or 1, status 1 with no finding written, or a
finding with status 0) is an ERROR of that mutant's run, never a survivor. The
unmutated package is fuzzed first with the same budget, in every space used: a finding
there is a false
alarm of the invariants, and so is a mutant's finding that also fails on the unmutated
engine (neither counts as a kill; the run exits 2). Otherwise exit 0 when at least
``--target`` of the mutants are killed, else 1; exit 2 also when a run had an ERROR.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from mutants import MUTANTS, PLUGIN_MUTANTS, Mutant  # noqa: E402


@dataclass
class Outcome:
    name: str
    killed: bool
    kind: str = ""
    seconds: float = 0.0
    nodes: int = 0
    pods: int = 0
    false_alarm: bool = False  # the finding fails on the unmutated engine too
    spec: str = ""  # the finding's spec file
    shrunk: str = ""  # how vspec fuzz shrank it ("shrunk to 2 node(s), 4 pod(s) ...")
    error: str = ""  # the fuzz run itself failed: why


def _copy_package(dest: Path, mutant: Mutant | None) -> None:
    shutil.copytree(ROOT / "vspec", dest / "vspec", ignore=shutil.ignore_patterns("__pycache__"))
    if mutant is None:
        return
    path = dest / mutant.path
    text = path.read_text(encoding="utf-8")
    if text.count(mutant.old) != 1:
        raise SystemExit(f"mutant {mutant.name}: its snippet is not found once in {mutant.path}")
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")


def _size(finding: Path) -> tuple[int, int]:
    doc = yaml.safe_load(finding.read_text(encoding="utf-8"))
    cluster = doc.get("cluster") or {}
    return len(cluster.get("nodes") or []), len(cluster.get("pods") or [])


def fuzz(
    mutant: Mutant | None,
    budget: tuple[str, ...],
    space: str,
    seed: int,
    diff: tuple[str, ...] = (),
) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="vspec-mutant-") as tmp:
        work = Path(tmp)
        _copy_package(work, mutant)
        env = dict(os.environ, PYTHONPATH=str(work), PYTHONDONTWRITEBYTECODE="1")
        command = [
            "nice", "-n", "19", sys.executable, "-m", "vspec", "fuzz",
            "--space", space, *budget, "--seed", str(seed), "--first",
            "--out", str(work / "findings"), "--database", str(work / "db"), *diff,
        ]  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        name = mutant.name if mutant else "(unmutated)"
        findings = sorted((work / "findings").glob("*.yaml"))
        error = _run_error(done.returncode, bool(findings))
        if error:
            print(f"{name}: {error}\n{done.stderr[-2000:]}", file=sys.stderr)
            return Outcome(name, False, seconds=elapsed, error=error)
        if not findings:
            return Outcome(name, False, seconds=elapsed)
        first = findings[0]
        nodes, pods = _size(first)
        kind = first.stem.rsplit("-", 1)[0]
        alarm = mutant is not None and _fails_unmutated(first)
        text = first.read_text(encoding="utf-8")
        shrunk = _shrink_line(done.stdout, kind)
        return Outcome(name, not alarm, kind, elapsed, nodes, pods, alarm, text, shrunk)


def _run_error(status: int, found: bool) -> str:
    """Why a fuzz run's exit status and its findings disagree ("" when they agree):
    ``vspec fuzz`` exits 1 exactly when it wrote a finding, 0 when it found nothing."""
    if status not in (0, 1):
        return f"vspec fuzz failed with exit status {status}"
    if status == 1 and not found:
        return "vspec fuzz exited 1 but wrote no finding"
    if status == 0 and found:
        return "vspec fuzz exited 0 but wrote a finding"
    return ""


def _shrink_line(stdout: str, kind: str) -> str:
    """What vspec fuzz's summary says of how the finding of ``kind`` was shrunk."""
    for line in stdout.splitlines():
        head, _, rest = line.strip().partition(" (")
        if head.startswith(f"{kind}: ") and rest.startswith("shrunk"):
            return rest.removesuffix(")")
    return ""


def _fails_unmutated(finding: Path) -> bool:
    """Whether the finding's spec fails on the project's own engine (exit 1)."""
    done = subprocess.run(
        [sys.executable, "-m", "vspec", "run", str(finding)],
        cwd=finding.parent,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
    )
    if done.returncode == 1:
        print(f"false alarm on the unmutated engine: {finding.name}", file=sys.stderr)
        print(finding.read_text(encoding="utf-8"), file=sys.stderr)
    return done.returncode == 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only these mutants")
    parser.add_argument("--seconds", type=float, default=60.0, help="fuzz budget per mutant")
    parser.add_argument(
        "--examples",
        type=int,
        metavar="N",
        help="a fixed example count per mutant instead of --seconds: a machine's load then "
        "changes the times, not the figures",
    )
    parser.add_argument("--jobs", type=int, default=1, help="mutants fuzzed at once")
    parser.add_argument("--space", help="one fuzz space for all (default: each mutant's own)")
    parser.add_argument("--seed", type=int, default=1, help="the fuzz seed for every run")
    parser.add_argument("--target", type=float, default=0.9, help="share to kill (0.9)")
    parser.add_argument(
        "--plugins",
        action="store_true",
        help="the mutants of the plugins beyond the core instead of the core ones "
        "(names given are looked up in both)",
    )
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="write each finding's spec here")
    parser.add_argument(
        "--diff",
        metavar="VERSION",
        help="the real Volcano of this release judges each example too (vspec fuzz --diff): "
        "a mutant that changes a decision is killed even where no invariant sees it",
    )
    args = parser.parse_args(argv)
    pool = MUTANTS + PLUGIN_MUTANTS if args.names else PLUGIN_MUTANTS if args.plugins else MUTANTS
    chosen = [m for m in pool if not args.names or m.name in args.names]
    spaces = {m.name: args.space or m.space for m in chosen}
    diff = ("--diff", "--volcano-version", args.diff) if args.diff else ()
    budget = (
        ("--examples", str(args.examples)) if args.examples else ("--seconds", str(args.seconds))
    )
    within = f"{args.examples} examples" if args.examples else f"{args.seconds:g} s"
    alarmed = False
    if not args.no_baseline:
        for space in sorted(set(spaces.values())):
            base = fuzz(None, budget, space, args.seed, diff)
            if base.error:
                print(f"ERROR ({space}): the unmutated engine's run: {base.error}")
                alarmed = True
            elif base.killed:
                # Kills are still judged one by one (a finding must pass on the unmutated
                # engine), but the invariant has a bug to fix: say so and fail the run.
                print(f"FALSE ALARM ({space}): the unmutated engine fails {base.kind}:")
                print(base.spec)
                alarmed = True
            else:
                print(
                    f"unmutated engine ({space}): no finding in {within} ({base.seconds:.0f} s)",
                    flush=True,
                )
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = [pool.submit(fuzz, m, budget, spaces[m.name], args.seed, diff) for m in chosen]
        outcomes = []
        for run in runs:
            o = run.result()
            outcomes.append(o)
            verdict = (
                f"killed by {o.kind} ({o.nodes} nodes, {o.pods} pods; {o.shrunk})"
                if o.killed
                else f"FALSE ALARM {o.kind}"
                if o.false_alarm
                else f"ERROR: {o.error}"
                if o.error
                else "SURVIVED"
            )
            print(f"{o.name:40s} {spaces[o.name]:8s} {o.seconds:5.0f} s  {verdict}", flush=True)
            if args.keep and o.spec:
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / f"{o.name}.yaml").write_text(o.spec, encoding="utf-8")
    killed = [o for o in outcomes if o.killed]
    alarms = [o.name for o in outcomes if o.false_alarm]
    if alarms:
        print(f"false alarms (invariant bugs, not kills): {', '.join(alarms)}")
    errors = [o.name for o in outcomes if o.error]
    if errors:
        print(f"runs that failed (neither kills nor survivors): {', '.join(errors)}")
    share = len(killed) / len(outcomes) if outcomes else 0.0
    largest = max(killed, key=lambda o: (o.pods, o.nodes), default=None)
    print(
        f"\nkilled {len(killed)} of {len(outcomes)} mutants ({share:.0%}) within "
        f"{within} each (space {args.space or 'per mutant'}, seed {args.seed})"
    )
    if killed:
        print(
            f"shrunk specs: at most {max(o.nodes for o in killed)} nodes and "
            f"{max(o.pods for o in killed)} pods (largest: {largest.name if largest else ''})"
        )
    if alarms or alarmed or errors:
        return 2
    return 0 if share >= args.target else 1


if __name__ == "__main__":
    raise SystemExit(main())
