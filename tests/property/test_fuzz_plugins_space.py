"""The `plugins` space draws what the plugins beyond the core read (NUMA topologies,
zones, quotas, budgets, cooldowns, usage, node groups, hierarchies, queue states, shared
GPUs, extender answers); its specs load back to the same run; mixtures are weighted."""

from __future__ import annotations

import json
import re
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from tests.property.test_properties import outcome
from vspec.engines import get_engine
from vspec.errors import SpecError, VspecError
from vspec.fuzz.extender import fake_extender_url
from vspec.fuzz.runner import builtin_space, examine, parse_space
from vspec.fuzz.strategies import GeneratedSpec
from vspec.fuzz.strategies.conf import ConfSpace, scheduler_confs
from vspec.fuzz.strategies.dice import weighted_one_of
from vspec.harness.yamlwrite import dump

PLUGINS = builtin_space("plugins").strategy()


def _draw(strategy: st.SearchStrategy[Any], count: int, at: int = 7) -> list[Any]:
    drawn: list[Any] = []

    @seed(at)
    @settings(max_examples=count, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn


def _features(case: GeneratedSpec) -> set[str]:
    """What of the other plugins' vocabulary a drawn spec holds."""
    found = {obj.kind for obj in case.cluster.objects}
    found |= {f"queue {q.state}" for q in case.cluster.queues}
    for q in case.cluster.queues:
        found |= set(q.meta.annotations) | ({"nodeGroupAffinity"} if q.affinity else set())
    for node in case.cluster.nodes:
        found |= set(node.meta.labels) | ({"usage"} if node.usage else set())
        found |= set(node.meta.annotations)
    for pg in case.cluster.pod_groups:
        found |= set(pg.meta.annotations)
    for pod in case.cluster.pods:
        found |= set(pod.meta.annotations) | {"limits" for c in pod.containers if c.limits}
    for tier in case.scheduler["tiers"]:
        for entry in tier["plugins"]:
            found |= set(entry.get("arguments", {}))
    return found


def test_the_plugins_space_draws_every_plugins_input() -> None:
    found = set().union(*(_features(case) for case in _draw(PLUGINS, 300)))
    wanted = {
        "Numatopology",
        "ResourceQuota",
        "PodDisruptionBudget",
        "queue Closed",
        "queue Closing",
        "volcano.sh/hierarchy-weights",
        "nodeGroupAffinity",
        "volcano.sh/nodegroup-name",
        "volcano.sh/revocable-zone",
        "usage",
        "volcano.sh/jdb-max-unavailable",
        "volcano.sh/task-topology-affinity",
        "volcano.sh/task-topology-anti-affinity",
        "volcano.sh/cooldown-time",
        "volcano.sh/numa-topology-policy",
        "volcano.sh/preemptable",
        "limits",
        "tdm.revocable-zone.rz",
        "extender.urlPrefix",
        "strategies",
        "thresholds",
        "deviceshare.SchedulePolicy",
    }
    assert wanted <= found, sorted(wanted - found)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(PLUGINS)
def test_plugins_space_specs_load_back_to_the_same_run(
    tmp_path_factory: pytest.TempPathFactory, case: GeneratedSpec
) -> None:
    from vspec.harness.loader import load_file

    path = tmp_path_factory.mktemp("doc") / "spec.yaml"
    path.write_text(dump(case.document()), encoding="utf-8")
    load = load_file(path)
    assert not load.errors, load.errors
    [spec] = load.specs
    assert spec.cluster.objects == case.cluster.objects
    assert outcome(spec.scheduler, spec.cluster, spec) == outcome(case.conf, case.cluster, case)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(PLUGINS)
def test_plugins_space_raises_no_false_alarm(case: GeneratedSpec) -> None:
    failures = examine(case, get_engine())
    # Known: shuffle panics evicting tdm's victims, allocate and backfill on a nil best
    # node (specs/findings/, left unreported by the space).
    space = builtin_space("plugins")
    assert not [kind for kind, m in failures.items() if space.reported(kind, m, case)], failures


FINDINGS = Path(__file__).resolve().parents[2] / "specs" / "findings"


def _finding_cases(name: str) -> list[GeneratedSpec]:
    """The specs of a findings file as drawn cases (its conf as written, its cluster)."""
    from vspec.harness.loader import load_file

    path = FINDINGS / name
    raws = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    specs = load_file(path).specs
    return [
        GeneratedSpec(raw["scheduler"], spec.cluster) for raw, spec in zip(raws, specs, strict=True)
    ]


def test_the_plugins_space_leaves_out_only_its_known_panics_by_their_cause() -> None:
    space, engine = builtin_space("plugins"), get_engine()
    [nodegroup] = _finding_cases("nodegroup-preferred-anti-affinity-panics.yaml")
    allocating, _, backfilling = _finding_cases("negative-score-weight-panics.yaml")
    for case, kind in ((nodegroup, "crash-allocate"), (allocating, "crash-allocate")):
        failures = examine(case, engine)
        assert list(failures) == [kind] and not space.reported(kind, failures[kind], case)
    failures = examine(backfilling, engine)
    assert not space.reported("crash-backfill", failures["crash-backfill"], backfilling)
    # Another crash of allocate where the known panic's cause is: a finding.
    other = ["plugin 'allocate': resource is not sufficient to do operation"]
    assert space.reported("crash-allocate", other, nodegroup)
    # The known panic's words without its cause (binpack weighing +1, no node group):
    # the engine found no best node where Volcano would find one.
    plain = GeneratedSpec(
        {**allocating.scheduler, "tiers": [{"plugins": [{"name": "binpack"}]}]},
        allocating.cluster,
    )
    assert space.reported("crash-allocate", failures["crash-backfill"], plain)
    assert space.reported("crash-backfill", failures["crash-backfill"], plain)
    # A node group the queue prefers, not one it prefers to avoid: no cause either.
    [queue] = [q for q in nodegroup.cluster.queues if q.affinity]
    assert queue.affinity is not None
    queue.affinity["nodeGroupAffinity"] = queue.affinity.pop("nodeGroupAntiAffinity")
    assert space.reported("crash-allocate", failures["crash-backfill"], nodegroup)


def test_deviceshares_nil_vgpu_pool_panic_is_left_out_by_its_cause_only() -> None:
    space = builtin_space("plugins")
    [case] = _finding_cases("deviceshare-vgpu-score-without-vgpu-panics.yaml")
    failures = examine(case, get_engine())
    assert list(failures) == ["crash-deviceshare"]
    assert not space.reported("crash-deviceshare", failures["crash-deviceshare"], case)
    # Another deviceshare crash: a finding.
    assert space.reported("crash-deviceshare", ["plugin 'deviceshare': boom"], case)
    # The words without the cause (vGPUs off in the conf): a finding.
    tiers = [
        {
            "plugins": [
                {**p, "arguments": {**p.get("arguments", {}), "deviceshare.VGPUEnable": False}}
                for p in tier["plugins"]
            ]
        }
        for tier in case.scheduler["tiers"]
    ]
    off = GeneratedSpec({**case.scheduler, "tiers": tiers}, case.cluster)
    assert space.reported("crash-deviceshare", failures["crash-deviceshare"], off)


def test_the_large_part_draws_scorer_weights_below_zero() -> None:
    """Where the columnar choice runs, weights below zero: SelectBestNode's floor."""
    from vspec.fuzz.known import SCORER_WEIGHTS

    [large] = [p for p in builtin_space("plugins").mix if p.bounds and p.bounds.shape == "large"]
    drawn = _draw(large.strategy(), 40)
    weights = [
        value
        for case in drawn
        for tier in case.scheduler["tiers"]
        for entry in tier["plugins"]
        for key, value in entry.get("arguments", {}).items()
        if key in SCORER_WEIGHTS
    ]
    assert min(weights) < 0 < max(weights)


def test_the_plugins_space_reports_any_other_allocate_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vspec.actions.allocate import Allocate
    from vspec.errors import EngineError
    from vspec.fuzz.runner import Fuzzer

    def broken(*args: Any) -> None:
        raise EngineError("an allocate bug")

    monkeypatch.setattr(Allocate, "_place", staticmethod(broken))
    report = Fuzzer(
        builtin_space("plugins"), get_engine(), tmp_path / "out", None, None, shrink_seconds=2
    ).run(seconds=None, examples=40, seed_value=3)
    assert "crash-allocate" in report.findings


def _ask(verb: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        f"{fake_extender_url()}/{verb}", data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def _node(name: str, **labels: str) -> dict[str, Any]:
    return {"Name": name, "Node": {"metadata": {"name": name, "labels": labels}}}


def test_the_fake_extender_answers_from_the_objects() -> None:
    verdict, score = "extender.vspec.io/verdict", "extender.vspec.io/score"
    assert _ask("predicate", {"node": _node("n0", **{verdict: "reject"})})["code"] == 3
    assert _ask("predicate", {"node": _node("n1")}) == {}
    with pytest.raises(urllib.error.HTTPError):
        _ask("predicate", {"node": _node("n2", **{verdict: "fail"})})
    nodes = [_node("n0", **{score: "50"}), _node("n1")]
    assert _ask("prioritize", {"nodes": nodes}) == {"nodeScore": {"n0": 50.0, "n1": 0.0}}
    kept = {"UID": "a", "Pod": {"metadata": {"annotations": {verdict: "reject"}}}}
    gone = {"UID": "b", "Pod": {"metadata": {}}}
    assert _ask("preemptable", {"evictees": [kept, gone]}) == {"status": 1, "victims": [gone]}
    assert _ask("reclaimable", {"evictees": [kept]}) == {"status": 0, "victims": []}
    group = {"PodGroup": {"annotations": {verdict: "reject"}}}  # Volcano's internal type
    assert _ask("jobEnqueueable", {"job": group}) == {"status": -1}
    queue = {"Queue": {"annotations": {verdict: "reject"}}}
    assert _ask("queueOverused", {"queue": queue}) == {"overused": True}
    job = {"MinAvailable": 2, "Tasks": {"a": {"Status": 1 << 5}, "b": {"Status": 1}}}
    assert _ask("jobReady", {"job": job}) == {"status": False}  # gang's rule: 1 of 2 ready
    # A refusal without a code (Volcano makes it an Error), a JSON null (no refusal).
    assert _ask("predicate", {"node": _node("n3", **{verdict: "uncoded"})}) == {
        "status": "refused by the extender"
    }
    assert _ask("predicate", {"node": _node("n4", **{verdict: "null"})}) is None
    failing = {"Pod": {"metadata": {"annotations": {verdict: "fail"}}}}
    with pytest.raises(urllib.error.HTTPError):
        _ask("preemptable", {"evictor": failing, "evictees": [gone]})
    # Go encodes an empty slice as null (the real Volcano under vspec diff).
    assert _ask("reclaimable", {"evictor": gone, "evictees": None}) == {"status": 0, "victims": []}
    assert _ask("prioritize", {"nodes": None}) == {"nodeScore": {}}
    # The session verbs' answers are not read: an empty body.
    request = urllib.request.Request(
        f"{fake_extender_url()}/onSessionOpen", data=b"{}", method="POST"
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200 and response.read() == b""


def test_the_plugins_space_draws_what_the_core_scorers_and_filters_branch_on() -> None:
    cases = _draw(PLUGINS, 400)
    found: Counter[str] = Counter()
    for case in cases:
        pods = case.cluster.pods
        found["queue label"] += any("volcano.sh/queue-name" in p.meta.labels for p in pods)
        found["queue annotation only"] += any(
            "volcano.sh/queue-name" in p.meta.annotations
            and "volcano.sh/queue-name" not in p.meta.labels
            for p in pods
        )
        found["template uid"] += any("volcano.sh/template-uid" in p.meta.annotations for p in pods)
        found["preferred pod affinity"] += any(
            p.affinity
            and (p.affinity.pod_affinity or p.affinity.pod_anti_affinity)
            and (p.affinity.pod_affinity or p.affinity.pod_anti_affinity).preferred
            for p in pods
        )
        found["spread over rank"] += any(
            c.topology_key == "rank" for p in pods for c in p.topology_spread_constraints
        )
        found["scheduling gate"] += any(p.scheduling_gates and not p.node_name for p in pods)
        verdicts = {n.meta.labels.get("extender.vspec.io/verdict") for n in case.cluster.nodes}
        found["uncoded"] += "uncoded" in verdicts
        found["null"] += "null" in verdicts
        found["failing evictor"] += any(
            p.meta.annotations.get("extender.vspec.io/verdict") == "fail" for p in pods
        )
    assert all(found[k] for k in found) and len(found) == 9, found
    # One part at klog level 5 where priority, nodeorder and nodegroup decide preemption.
    [verbose] = [p for p in builtin_space("plugins").mix if p.verbosities == (5,)]
    assert verbose.conf is not None and "preempt" in verbose.conf.require_actions
    assert {"priority", "nodeorder", "nodegroup"} <= set(verbose.conf.require_plugins)
    # logprint prints its arguments at V(5) as yaml.v2 decoded them: maps and lists too.
    logprint = ConfSpace(plugins=("logprint",), structured_arguments=True)
    drawn = [
        c["tiers"][0]["plugins"][0].get("arguments", {})
        for c in _draw(scheduler_confs(logprint), 40)
    ]
    assert any(isinstance(a.get("limits"), dict) and isinstance(a.get("list"), list) for a in drawn)


def test_a_finding_keeps_its_pods_preferred_pod_affinity(tmp_path: Path) -> None:
    from vspec.harness.loader import load_file

    def preferring(case: GeneratedSpec) -> list[Any]:
        return [
            p.affinity
            for p in case.cluster.pods
            if p.affinity and p.affinity.pod_affinity and p.affinity.pod_affinity.preferred
        ]

    case = next(c for c in _draw(PLUGINS, 200) if preferring(c))
    path = tmp_path / "spec.yaml"
    path.write_text(dump(case.document()), encoding="utf-8")
    [spec] = load_file(path).specs
    assert preferring(GeneratedSpec(case.scheduler, spec.cluster)) == preferring(case)


def test_large_clusters_carry_what_the_columnar_path_declines_or_narrows() -> None:
    from vspec.fuzz.strategies.features import large_featured
    from vspec.fuzz.strategies.generator import large_clusters

    found: Counter[str] = Counter()
    for cluster in _draw(large_featured(large_clusters()), 60):
        nodes = cluster.nodes
        assert all(n.meta.labels["kubernetes.io/hostname"] == n.meta.name for n in nodes)
        found["prefer no schedule"] += any(
            t.effect == "PreferNoSchedule" for n in nodes for t in n.taints
        )
        found["gpu nodes"] += any("nvidia.com/gpu" in n.allocatable for n in nodes)
        pending = [p for p in cluster.pods if not p.node_name]
        found["gpu pods"] += any("nvidia.com/gpu" in p.containers[0].requests for p in pending)
        found["one node"] += any("kubernetes.io/hostname" in p.node_selector for p in pending)
        found["preferred zone"] += any(
            p.affinity and p.affinity.node_affinity and p.affinity.node_affinity.preferred
            for p in pending
        )
        found["spread"] += any(p.topology_spread_constraints for p in pending)
        assert not any(
            p.affinity or p.topology_spread_constraints for p in cluster.pods if p.node_name
        )
    assert all(found[k] for k in found) and len(found) == 6, found


def test_a_mixture_draws_each_part_by_its_weight() -> None:
    drawn = Counter(_draw(weighted_one_of(((9, st.just("a")), (1, st.just("b")))), 400))
    assert drawn["a"] > 5 * drawn["b"] > 0


def test_a_space_file_weights_its_parts(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("plugins: [priority, gang]\n", encoding="utf-8")
    where = str(tmp_path / "space.yaml")
    space = parse_space(
        {
            "mix": [
                {"space": "plugins", "weight": 3},
                {"space": "mine.yaml"},
                {"actions": ["allocate"], "weight": 2},
            ],
            "ignore": ["crash-gang"],
        },
        where,
    )
    assert [part.weight for part in space.mix] == [3, 1, 2]
    assert space.mix[1].conf is not None and space.mix[1].conf.plugins == ("priority", "gang")
    # The plugins space's known findings stay left out inside a mixture: the shuffle
    # panic by kind, the nil best node by its cause.
    from vspec.fuzz.known import NIL_VGPU_POOL, NO_BEST_NODE

    assert set(space.ignored) == {"crash-gang", "crash-shuffle"}
    assert space.known == (NO_BEST_NODE, NIL_VGPU_POOL)
    for raw, message in [
        ({"mix": []}, "mix: a non-empty list"),
        ({"mix": [{"space": "seed", "weight": 0}]}, "weight must be a positive integer"),
        ({"mix": [{"space": "seed", "plugins": []}]}, "unknown key(s) ['plugins'] beside space"),
        ({"mix": [{"space": "seed"}], "plugins": []}, "unknown key(s) ['plugins'] beside mix"),
        ({"mix": [{"space": "nowhere.yaml"}]}, "no such space file"),
    ]:
        with pytest.raises(SpecError, match=re.escape(message)):
            parse_space(raw, where)


def _part(*plugins: str) -> Any:
    """The plugins space's part that pins ``plugins``."""
    space = builtin_space("plugins")
    return next(
        p for p in space.mix if p.conf is not None and set(plugins) <= set(p.conf.require_plugins)
    )


def _logs(cases: list[GeneratedSpec]) -> list[str]:
    engine = get_engine()
    texts = []
    for case in cases:
        try:
            result = engine.simulate(
                case.conf, case.cluster, seed=case.seed, cycles=case.cycles, verbosity=4
            )
        except VspecError:  # a known crash the space ignores
            continue
        texts.append("\n".join(line.text for line in result.logs))
    return texts


def test_the_plugins_space_draws_vgpus_cooldowns_and_bound_pods() -> None:
    found = set().union(*(_features(case) for case in _draw(PLUGINS, 300)))
    assert {
        "volcano.sh/node-vgpu-register",
        "volcano.sh/node-vgpu-handshake",
        "volcano.sh/vgpu-ids-new",
        "volcano.sh/gpu-index",
        "deviceshare.VGPUEnable",
        "volcano.sh/revocable-zone",
    } <= found
    pods = [pod for case in _draw(PLUGINS, 300) for pod in case.cluster.pods]
    # cdp reads a cooldown from a label too, and judges Bound pods (Pending on a node)
    assert any("volcano.sh/cooldown-time" in pod.meta.labels for pod in pods)
    assert any(pod.phase == "Pending" and pod.node_name for pod in pods)


def test_the_device_part_places_shared_gpus_and_vgpus() -> None:
    logs = _logs(_draw(_part("predicates", "deviceshare").strategy(), 150))
    assert any("DeviceSharing:Into FitInPod" in text for text in logs)  # shared GPUs
    assert any("hami-vgpu DeviceSharing starts filtering" in text for text in logs)


def test_the_rescheduling_part_finds_nodes_below_and_above_the_thresholds() -> None:
    # Three samples: one seed's 150 examples move with any change of what the space draws
    # (a draw more per cluster), and lowNodeUtilization's evictions are rare in each.
    part = _part("rescheduling").strategy()
    logs = _logs([case for at in (7, 8, 9) for case in _draw(part, 150, at)])
    # lowNodeUtilization's victims come from high nodes while low ones take them
    assert any("lowNodes: ['" in text and "highNodes: ['" in text for text in logs)
    assert any(re.search(r"node: \S+, utilization: map", text) for text in logs)  # evicted


def test_the_capacity_space_draws_queue_trees_with_jobs_in_the_leaves() -> None:
    depths: Counter[int] = Counter()
    for case in _draw(builtin_space("capacity").strategy(), 150):
        parents = {q.meta.name: q.parent for q in case.cluster.queues}
        assert parents.get("root") == ""
        inner = set(parents.values())
        assert not {pg.queue for pg in case.cluster.pod_groups} & inner
        for name in parents:
            depth, at = 0, name
            while parents.get(at):
                depth, at = depth + 1, parents[at]
            depths[depth] += 1
    assert depths[2] and depths[1], depths  # under a queue under root, and under root


def test_the_numa_part_puts_every_node_under_the_static_cpu_manager_of_one_policy() -> None:
    # numa-aware scores only between nodes its predicate passed: a Guaranteed pod of the
    # house policy needs several NUMA nodes of that policy under the static CPU manager.
    [part] = [
        p for p in builtin_space("plugins").mix if p.conf and "numa-aware" in p.conf.require_plugins
    ]
    for case in _draw(part.strategy(), 20):
        topologies = {
            o.meta.name: o.body["spec"]["policies"]
            for o in case.cluster.objects_of_kind("Numatopology")
        }
        assert topologies.keys() == {n.meta.name for n in case.cluster.nodes}
        assert {p["CPUManagerPolicy"] for p in topologies.values()} == {"static"}
        assert len({p["TopologyManagerPolicy"] for p in topologies.values()}) == 1
