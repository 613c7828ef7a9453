"""``vspec run`` with its sessions watched: ``python -m benchmarks.instrumented REPORT PATH...``.

The command line is vspec's own (:func:`vspec.cli.main`); bench.py's instrument() times
each action's execute in CPU seconds, and every simulation's pods and binds are counted.
Writes ``{"actions": {name: seconds}, "simulations": [{"pods", "binds"}]}`` to REPORT
and exits with vspec's status.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.bench import instrument
from vspec import cli
from vspec.framework import scheduler


def main(report: str, paths: list[str]) -> int:
    times, _ = instrument()
    simulations: list[dict[str, int]] = []
    original = scheduler.simulate

    def counted(conf: Any, cluster: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(conf, cluster, *args, **kwargs)
        simulations.append({"pods": len(cluster.pods), "binds": len(result.binds)})
        return result

    scheduler.simulate = counted  # PythonEngine looks it up per call
    code = cli.main(["run", *paths])
    Path(report).write_text(json.dumps({"actions": dict(times), "simulations": simulations}))
    return code


if __name__ == "__main__":
    cli.end(lambda: main(sys.argv[1], sys.argv[2:]))  # as the vspec command ends
