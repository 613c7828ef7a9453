"""Decision fingerprints: ``python -m benchmarks.fingerprint PATH... > before.txt``.

A speed change must not change a single decision, so before and after it the same
command's output is compared with ``diff``. Each spec file's line is a hash of, per spec,
everything the engine decided and printed (binds, evictions, pipelined tasks, pod
groups, tasks, events, every log line, probe failures) and the message of every
registered invariant, run on every spec whether its configuration applies or not. A
spec that cannot be loaded or run is fingerprinted by its error text. Timeline specs are
fingerprinted through the timeline runner's verdict and its result.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from vspec.engines import get_engine
from vspec.errors import VspecError
from vspec.harness.loader import discover, load_file
from vspec.harness.runner import simulate_spec
from vspec.invariants import catalogue, evaluate_invariants
from vspec.model.result import SimulationResult
from vspec.model.spec import Spec


def _result_text(result: SimulationResult) -> str:
    parts = [
        repr(result.binds),
        repr(result.evictions),
        repr(sorted(result.pipelined.items())),
        repr(sorted(result.pod_groups.items())),
        repr(sorted(result.tasks.items())),
        repr(result.events),
        repr(result.probe_failures),
        "\n".join(line.text for line in result.logs),
    ]
    return "\n".join(parts)


def _spec_text(spec: Spec) -> str:
    engine = get_engine()
    if spec.timeline is not None:
        from vspec.harness.timeline_check import run_timeline_spec

        result, messages = run_timeline_spec(spec, spec.seed, engine)
        return _result_text(result) + "\n" + "\n".join(messages)
    result = simulate_spec(spec, engine, spec.seed)
    report = evaluate_invariants(
        spec.scheduler,
        spec.cluster,
        result,
        engine=engine,
        requested=[inv.name for inv in catalogue()],
        seed=spec.seed,
        now=spec.now,
        cycles=spec.cycles,
        verbosity=spec.verbosity,
    )
    return "\n".join([_result_text(result), *report.violations, *report.warnings])


def file_fingerprint(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        loaded = load_file(path, check_names=True)
    except VspecError as exc:
        return f"load error: {exc}"
    for err in loaded.errors:
        digest.update(f"invalid: {err}".encode())
    for spec in loaded.specs:
        try:
            text = _spec_text(spec)
        except Exception as exc:  # an engine error is part of the print
            text = f"error: {type(exc).__name__}: {exc}"
        digest.update(spec.name.encode() + b"\0" + text.encode())
    return digest.hexdigest()[:16]


def main(paths: list[str]) -> int:
    for path in discover([Path(p) for p in paths], [], set()):
        print(f"{file_fingerprint(path)}  {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
