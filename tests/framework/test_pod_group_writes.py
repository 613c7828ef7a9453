"""The job updater writes a pod group back only when its status changed (stamps aside,
``isPodGroupStatusUpdated``); the others stay as the API server holds them, so the next
session's clone shows the conditions its last writer stamped (``UpdateJobStatus``)."""

from __future__ import annotations

import re

from tests.builders import node, pod, pod_group, queue
from vspec.framework.scheduler import simulate
from vspec.fuzz.runner import SEED_CONF
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster


def test_an_unchanged_pod_group_keeps_the_stamps_of_its_last_writer() -> None:
    """Session 0 binds the pod (the pod group goes Running), session 1 sees it Running
    (the running count changes: written again), session 2 changes nothing (not written):
    session 3's logprint line shows session 1's transition id, as Volcano's would."""
    cluster = Cluster(
        nodes=[node("n1", {"cpu": "4", "memory": "4Gi", "pods": "10"})],
        pods=[pod("ns", "j-0", "j", {"cpu": "1"})],
        pod_groups=[pod_group("ns", "j", "default")],
        queues=[queue("default")],
    )
    result = simulate(load_conf(SEED_CONF), cluster, cycles=4, verbosity=3)
    uids = [m[1] for line in result.logs if (m := re.match(r"Close Session (\S+)", line.text))]
    printed = {
        line.cycle: re.findall(r"TransitionID:(\S+)", line.text)
        for line in result.logs
        if "TransitionID:" in line.text
    }
    assert len(uids) == 4
    assert printed == {1: [uids[0]], 2: [uids[1]], 3: [uids[1]]}
