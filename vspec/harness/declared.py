"""Expectations and probes name only what the cluster declares.

An expectation about a pod, pod group, node or queue the cluster never declares would pass
vacuously (``pods: {default/typo: {node: null}}``) or fail for a reason the user cannot
see; it is a located error at load time instead, naming what was not found, with a
did-you-mean from the names the cluster does declare.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vspec.errors import SpecError
from vspec.harness.yamlload import At
from vspec.model.objects import Cluster


@dataclass(frozen=True)
class _Names:
    """What one kind of object the cluster declares, by the key a spec names it with."""

    what: str  # "pod", "pod group", "node", "queue"
    known: frozenset[str]

    def missing(self, name: Any) -> bool:
        return isinstance(name, str) and name not in self.known

    def check(self, name: Any, at: At, out: list[SpecError], *, key: bool = False) -> None:
        if not self.missing(name):
            return
        import difflib  # for an error only

        hint = difflib.get_close_matches(name, sorted(self.known), n=1, cutoff=0.6)
        more = f"; did you mean {hint[0]!r}?" if hint else ""
        out.append(at.error(f"no {self.what} {name!r} in the cluster{more}", key=key))

    # The place of a name is made only for an error: a spec names what it declares.
    def keys(self, mapping: Any, at: At, out: list[SpecError]) -> None:
        for name in mapping if isinstance(mapping, Mapping) else ():
            if self.missing(name):
                self.check(name, at / name, out, key=True)

    def items(self, items: Any, at: At, out: list[SpecError]) -> None:
        for i, name in enumerate(items if isinstance(items, list) else ()):
            if self.missing(name):
                self.check(name, at / i, out)


@dataclass(frozen=True)
class _Cluster:
    """The names of what the cluster declares, by kind, that ``expect`` entries must name."""

    pods: _Names
    groups: _Names
    nodes: _Names
    queues: _Names

    @classmethod
    def of(cls, cluster: Cluster) -> _Cluster:
        return cls(
            _Names("pod", frozenset(p.meta.key for p in (*cluster.pods, *cluster.held_pods))),
            _Names("pod group", frozenset(g.meta.key for g in cluster.pod_groups)),
            # A pod may still run on a node that has left the cluster: Volcano keeps such
            # a pod's node as a placeholder (a NodeInfo without a Node), so it is named.
            _Names(
                "node",
                frozenset(n.meta.name for n in cluster.nodes)
                | frozenset(p.node_name for p in cluster.pods if p.node_name),
            ),
            _Names("queue", frozenset(q.meta.name for q in cluster.queues)),
        )


def undeclared(cluster: Cluster, spec: At) -> list[SpecError]:
    """An error for every name in ``expect`` and ``probes`` the cluster does not declare."""
    names = _Cluster.of(cluster)
    out: list[SpecError] = []
    _expect(names, spec / "expect", out)
    for i, _ in enumerate((spec / "probes").value or ()):
        _probe(names, spec / "probes" / i, out)
    return out


def _expect(names: _Cluster, at: At, out: list[SpecError]) -> None:
    raw = at.value or {}
    for key in ("binds", "bindsInclude"):
        names.pods.keys(raw.get(key), at / key, out)
        for pod, node in _pairs(raw.get(key)):
            if names.nodes.missing(node):
                names.nodes.check(node, at / key / pod, out)
    names.pods.items(raw.get("evictions"), at / "evictions", out)
    names.groups.keys(raw.get("pipelined"), at / "pipelined", out)
    for job, nodes in _pairs(raw.get("pipelined")):
        names.nodes.items(nodes, at / "pipelined" / job, out)
    names.groups.keys(raw.get("podGroups"), at / "podGroups", out)
    names.pods.keys(raw.get("pods"), at / "pods", out)
    names.queues.keys(raw.get("queues"), at / "queues", out)
    for pod, expected in _pairs(raw.get("pods")):
        node = expected.get("node") if isinstance(expected, Mapping) else None
        if node is not None and names.nodes.missing(node):
            names.nodes.check(node, at / "pods" / pod / "node", out)


def _probe(names: _Cluster, at: At, out: list[SpecError]) -> None:
    raw = at.value or {}
    for key in ("task", "preemptor", "reclaimer"):
        if key in raw:
            names.pods.check(raw[key], at / key, out)
    for key in ("candidates", "victims", "victimTasks"):
        names.pods.items(raw.get(key), at / key, out)
    if "job" in raw:
        names.groups.check(raw["job"], at / "job", out)
    for key in ("predicates", "scores"):
        names.nodes.keys(raw.get(key), at / key, out)
    for plugin, scores in _pairs(raw.get("pluginScores")):
        names.nodes.keys(scores, at / "pluginScores" / plugin, out)
    if "bestNode" in raw:
        names.nodes.check(raw["bestNode"], at / "bestNode", out)
    order = {"jobs": names.groups, "tasks": names.pods, "queues": names.queues}.get(
        raw.get("order", "")
    )
    if order is not None:
        order.items(raw.get("items"), at / "items", out)
        order.items(raw.get("expect"), at / "expect", out)


def _pairs(mapping: Any) -> Iterable[tuple[str, Any]]:
    return mapping.items() if isinstance(mapping, Mapping) else ()
