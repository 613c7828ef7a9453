"""The Kubernetes manifests of docs/campaigns.md (examples/campaign/): valid YAML of the
kinds the page names, whose pods' command lines vspec's own parser takes, one shard per
pod index covering the campaign, against the Redis Service beside them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from vspec.cli import _parser
from vspec.harness.runner import Shard

CAMPAIGN = Path(__file__).parents[2] / "examples" / "campaign"
DOCS = Path(__file__).parents[2] / "docs" / "campaigns.md"


def _documents(name: str) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all((CAMPAIGN / name).read_text(encoding="utf-8")))


def _redis_address() -> str:
    [service] = [d for d in _documents("redis.yaml") if d["kind"] == "Service"]
    return f"redis://{service['metadata']['name']}:{service['spec']['ports'][0]['port']}"


def _command(script: str, variable: str, index: int) -> list[str]:
    """The vspec command line the pod of ``index`` runs (its shell's arithmetic done)."""
    line = re.sub(rf"\$\(\(\s*{variable}\s*\+\s*1\s*\)\)", str(index + 1), script.split(";")[0])
    argv = shlex.split(line)
    assert argv[0] == "vspec"
    return argv[1:]


@pytest.mark.parametrize(
    ("name", "variable"),
    [("fuzz-indexed-job.yaml", "JOB_COMPLETION_INDEX"), ("fuzz-volcano-job.yaml", "VC_TASK_INDEX")],
)
def test_each_pod_runs_one_shard_of_the_campaign(name: str, variable: str) -> None:
    [job] = _documents(name)
    if job["apiVersion"] == "batch/v1":
        assert job["spec"]["completionMode"] == "Indexed"
        pods, template = job["spec"]["completions"], job["spec"]["template"]
    else:
        assert job["apiVersion"] == "batch.volcano.sh/v1alpha1"
        assert "env" in job["spec"]["plugins"]  # what sets VC_TASK_INDEX
        [task] = job["spec"]["tasks"]
        pods, template = task["replicas"], task["template"]
    [container] = template["spec"]["containers"]
    [script] = container["args"]
    assert "test $? -le 1" in script  # findings (exit 1) are a finished pod, not a retry
    shards = []
    for index in range(pods):
        args = _parser("fuzz").parse_args(_command(script, variable, index))
        assert args.database == _redis_address()
        assert args.seed is not None
        shards.append(args.shard)
    assert shards == [Shard(k, pods) for k in range(1, pods + 1)]


def test_the_page_names_the_manifests_and_the_collect_command() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for path in CAMPAIGN.iterdir():
        assert f"examples/campaign/{path.name}" in text
    assert "vspec fuzz --collect" in text
