"""Kubernetes' per-node view (``framework.NodeInfo``) kept by a session as ``ssn.node_map``.

It differs from Volcano's ``NodeInfo``: an evicted task leaves it at once (the predicates
plugin's deallocate handler removes it) while Volcano keeps the task as Releasing. Like
Kubernetes, it keeps running sums (requested and non-zero requested resources, used host
ports) and the pods with (anti-)affinity, so filters and scores never rescan all pods.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from operator import is_not
from typing import TypeVar, cast

from vspec.api.node_info import NodeInfo
from vspec.api.task_info import TaskInfo
from vspec.k8s.podinfo import (
    CPU,
    DEFAULT_BIND_ALL_HOST_IP,
    ContainerFacts,
    HostPort,
    PodInfo,
    containers_key,
)
from vspec.model.corev1 import Container
from vspec.model.objects import Cluster, Node, Pod
from vspec.model.quantity import milli_value, value

_Derived = TypeVar("_Derived")
Labels = Mapping[str, Mapping[str, str]]  # namespace -> its labels
# How many values K8sMemo.node_derived keeps (per pod spec, some): then it starts over.
_DERIVED_KEPT = 256
# The rows of views built again kept for readers (K8sMemo.rebuilt_since), up to this
# many times the views: then a new list starts and readers compare every view once.
_REBUILT_KEPT = 8


class ImageStateSummary:
    """``framework.ImageStateSummary``: an image's size and on how many nodes it was seen."""

    __slots__ = ("num_nodes", "size")

    def __init__(self, size: int, num_nodes: int) -> None:
        self.size = size
        self.num_nodes = num_nodes

    def __repr__(self) -> str:
        return f"ImageStateSummary(size={self.size}, num_nodes={self.num_nodes})"


class K8sNodeInfo:
    __slots__ = (
        "_reports",
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non0_cpu",
        "non0_mem",
        "pod_infos",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node, allocatable: dict[str, int] | None = None) -> None:
        """``allocatable``: the node's, in Kubernetes units, when already derived."""
        self.node = node
        self.name = node.meta.name
        self.pods: dict[str, TaskInfo] = {}
        self.pod_infos: dict[str, PodInfo] = {}
        self.pods_with_affinity: dict[str, PodInfo] = {}
        self.pods_with_required_anti_affinity: dict[str, PodInfo] = {}
        # Resource sums in Kubernetes units: cpu in millicores, the rest in whole units.
        self.allocatable = k8s_allocatable(node) if allocatable is None else dict(allocatable)
        self.requested: dict[str, int] = {}
        self.non0_cpu = 0
        self.non0_mem = 0
        # HostPortInfo: host IP -> {(protocol, port)}; a set, as in Kubernetes.
        self.used_ports: dict[str, set[tuple[str, int]]] = {}
        self.image_states: dict[str, ImageStateSummary] = {}
        # Bumped by every add/remove, so scorers can memoise per node state.
        self.generation = 0
        # Where an add/remove reports this node's name (K8sMemo.node_map hands views on).
        self._reports: set[str] | None = None

    def add_task(self, task: TaskInfo, info: PodInfo | None = None) -> None:
        """``NodeInfo.AddPod``; ``info`` may be passed when it was already derived."""
        key = task.key
        if key in self.pods:
            self.remove_task(task)
        pi = info if info is not None else PodInfo(task.pod)
        self._bump()
        self.pods[key] = task
        self.pod_infos[key] = pi
        for name, q in pi.requested.items():
            self.requested[name] = self.requested.get(name, 0) + q
        self.non0_cpu += pi.non0_cpu
        self.non0_mem += pi.non0_mem
        for ip, protocol, port in pi.host_ports:
            self.used_ports.setdefault(ip, set()).add((protocol, port))
        if pi.has_affinity:
            self.pods_with_affinity[key] = pi
            if pi.has_required_anti_affinity:
                self.pods_with_required_anti_affinity[key] = pi

    def remove_task(self, task: TaskInfo) -> bool:
        """``NodeInfo.RemovePod``; False (Kubernetes: an error) when the pod is not here."""
        key = task.key
        pi = self.pod_infos.pop(key, None)
        if pi is None:
            return False
        self._bump()
        del self.pods[key]
        for name, q in pi.requested.items():
            self.requested[name] -= q
        self.non0_cpu -= pi.non0_cpu
        self.non0_mem -= pi.non0_mem
        for ip, protocol, port in pi.host_ports:
            ports = self.used_ports.get(ip)
            if ports is not None:
                ports.discard((protocol, port))
                if not ports:
                    del self.used_ports[ip]
        self.pods_with_affinity.pop(key, None)
        self.pods_with_required_anti_affinity.pop(key, None)
        return True

    def set_reports(self, names: set[str] | None) -> None:
        """Add this view's node name to ``names`` on every add/remove from now on."""
        self._reports = names

    def _bump(self) -> None:
        self.generation += 1
        if self._reports is not None:
            self._reports.add(self.name)

    def port_conflicts(self, port: HostPort) -> bool:
        """``HostPortInfo.CheckConflict``: 0.0.0.0 clashes with every IP, and vice versa."""
        ip, protocol, number = port
        pp = (protocol, number)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in ports for ports in self.used_ports.values())
        for key in (DEFAULT_BIND_ALL_HOST_IP, ip):
            ports = self.used_ports.get(key)
            if ports is not None and pp in ports:
                return True
        return False

    def __repr__(self) -> str:
        return f"K8sNodeInfo({self.name}: {len(self.pods)} pods)"


def image_state_summaries(nodes: Iterable[Node]) -> dict[str, dict[str, ImageStateSummary]]:
    """``addNodeImageStates`` run for each node in the order the cache received them.

    Quirk kept: a node's summary records how many nodes had the image *when that node
    was added*, and the size the first node reported.
    """
    seen: dict[str, tuple[int, set[str]]] = {}
    result: dict[str, dict[str, ImageStateSummary]] = {}
    for node in nodes:
        summaries: dict[str, ImageStateSummary] = {}
        for image in node.images:
            for name in image.names:
                state = seen.get(name)
                if state is None:
                    state = (image.size_bytes, set())
                    seen[name] = state
                state[1].add(node.meta.name)
                if name not in summaries:
                    summaries[name] = ImageStateSummary(state[0], len(state[1]))
        result[node.meta.name] = summaries
    return result


def k8s_allocatable(node: Node) -> dict[str, int]:
    """Cpu in millicores, the rest in whole units."""
    return {
        name: milli_value(q) if name == CPU else value(q) for name, q in node.allocatable.items()
    }


class K8sMemo:
    """What Kubernetes derives from a Node or a Pod alone, kept by object for as long
    as the object lives in the cluster: a scheduler's sessions would otherwise derive
    it again for every node and every pod each session. Objects are never changed in
    place (the model is copy-on-write), so the same object derives the same view."""

    def __init__(self) -> None:
        self._nodes: dict[int, tuple[Node, dict[str, int]]] = {}
        self._pods: dict[int, tuple[Pod, PodInfo]] = {}
        self._containers: dict[Hashable, ContainerFacts] = {}
        self._by_list: dict[int, tuple[list[Container], ContainerFacts]] = {}
        self._last: _Views | None = None  # the views the last node map was made of
        self._made: dict[str, K8sNodeInfo] | None = None  # that node map
        self._replaced: set[str] | None = None  # the nodes handed out anew since (None: all)
        self._images: tuple[list[Node], dict[str, dict[str, ImageStateSummary]]] | None = None
        # The last Snapshot, and what node_derived kept for the views it was made of.
        self._snapshot: tuple[_Views, Cluster, Snapshot] | None = None
        self._derived: tuple[_Views | None, dict[Hashable, object]] = (None, {})

    def allocatable(self, node: Node) -> dict[str, int]:
        found = self._nodes.get(id(node))
        if found is None or found[0] is not node:
            found = self._nodes[id(node)] = (node, k8s_allocatable(node))
        return found[1]

    def pod_info(self, pod: Pod) -> PodInfo:
        found = self._pods.get(id(pod))
        if found is None or found[0] is not pod:
            found = self._pods[id(pod)] = (pod, PodInfo(pod, self._container_facts(pod)))
        return found[1]

    def _container_facts(self, pod: Pod) -> ContainerFacts:
        """The pods of a generated job share one containers list: a pod without init
        containers or overhead is found by that list (kept here, so its id stays its
        own), others by the content of :func:`containers_key`."""
        containers = pod.containers
        plain = not pod.init_containers and not pod.overhead
        if plain:
            shared = self._by_list.get(id(containers))
            if shared is not None and shared[0] is containers:
                return shared[1]
        key = containers_key(pod)
        facts = self._containers.get(key)
        if facts is None:
            facts = self._containers[key] = ContainerFacts(pod)
        if plain:
            self._by_list[id(containers)] = (containers, facts)
        return facts

    def snapshot(self, node_map: dict[str, K8sNodeInfo], cluster: Cluster) -> Snapshot:
        """``Snapshot.of_session`` of the last node map, made once for every plugin that
        builds its handle at a session's open: the same as each would make while no
        view changed since (none does before the actions run)."""
        last, kept = self._last, self._snapshot
        if last is None or last.changed or len(node_map) != len(last.views):
            self._snapshot = None
            return Snapshot.of_session(node_map, cluster)
        if (
            kept is not None
            and kept[0] is last
            and kept[1] is cluster
            and kept[2].node_map is node_map
        ):
            return kept[2]
        snapshot = last.snapshot(node_map, namespace_labels(cluster))
        self._snapshot = (last, cluster, snapshot)
        return snapshot

    def node_derived(self, key: Hashable, derive: Callable[[], _Derived]) -> _Derived:
        """What ``derive`` works out from the Node objects of the last node map alone
        (taints, labels), kept while its views stand for the same Node objects: the
        views a node map hands on, or builds again for a node's tasks, keep their Node
        (another Node makes the map afresh)."""
        last = self._last
        if last is None:
            return derive()
        owner, values = self._derived
        if owner is not last or len(values) >= _DERIVED_KEPT:
            values = {}
            self._derived = (last, values)
        if key not in values:
            values[key] = derive()
        return cast(_Derived, values[key])

    def nodes_replaced(self, names: set[str] | None) -> None:
        """The cache handed out new session nodes under ``names`` (None: every node, or
        nodes other than the last): their views are built again at the next node map."""
        if names is None or self._replaced is None:
            self._replaced = None
        else:
            self._replaced |= names

    def node_map(self, nodes: list[NodeInfo]) -> dict[str, K8sNodeInfo]:
        """:func:`build_node_map` of the cache's latest snapshot's ``nodes``, handing on
        the last node map's view of a node when the snapshot handed that node on and
        the view did not change since (each view reports its changes), as it then holds
        what a new view would: a session pays only for the views built again."""
        last, replaced = self._last, self._replaced
        self._replaced = set()
        if last is None or replaced is None or len(nodes) != len(last.views):
            return self._map_afresh(nodes)
        views = last.views
        for name in {*replaced, *last.changed}:
            row = last.rows.get(name)
            if row is None or nodes[row].name != name or nodes[row].node is not views[row].node:
                return self._map_afresh(nodes)  # another Node: image summaries may change
            old = views[row]
            old.set_reports(None)
            ni = nodes[row]
            assert ni.node is not None
            info = views[row] = last.by_name[name] = self.view(ni, ni.node)
            info.image_states = old.image_states
            info.set_reports(last.changed)
            last.note(row)
            last.rebuilt.append(row)
        last.changed.clear()
        if len(last.rebuilt) > _REBUILT_KEPT * len(views):
            last.rebuilt = []  # marks on the old list compare every view again, once
        made = self._made = dict(last.by_name)
        return made

    def rebuilt_since(
        self, node_map: dict[str, K8sNodeInfo], mark: object
    ) -> tuple[list[K8sNodeInfo], list[int] | None, object] | None:
        """For ``node_map``, when it is the last map this memo made: its views row by row
        (the session's node list's rows; a list this memo patches at the next map, to be
        read now), the rows whose view was built again since ``mark`` (None: since
        an unknown point, as for the first mark, ``None``) and the mark for the next
        call. None for any other map. The others are the very objects they were then, and
        so are the session nodes of their rows (a view is built again for every node the
        cache cloned again: :meth:`nodes_replaced`), so a reader keeping something per
        view or node (the node columns) compares only those rows, not a thousand cold
        ones."""
        last = self._last
        if last is None or node_map is not self._made:
            return None
        log = last.rebuilt
        rows = None
        if isinstance(mark, tuple) and mark[0] is log:
            rows = log[mark[1] :]
        return last.views, rows, (log, len(log))

    def _map_afresh(self, nodes: list[NodeInfo]) -> dict[str, K8sNodeInfo]:
        if self._last is not None:
            for view in self._last.views:
                view.set_reports(None)
        node_map = self._made = _fresh_node_map(nodes, self)
        views = list(node_map.values())
        self._last = _Views(views) if len(views) == len(nodes) else None
        return node_map

    def view(self, ni: NodeInfo, node: Node) -> K8sNodeInfo:
        """A new view of session node ``ni`` (of ``node``), from the derived values."""
        info = K8sNodeInfo(node, self.allocatable(node))
        for task in ni.tasks.values():
            info.add_task(task, self.pod_info(task.pod))
        return info

    def images(self, nodes: list[Node]) -> dict[str, dict[str, ImageStateSummary]]:
        """:func:`image_state_summaries`, derived again only when the nodes change."""
        last = self._images
        if last is None or len(last[0]) != len(nodes) or any(map(is_not, last[0], nodes)):
            last = self._images = (nodes, image_state_summaries(nodes))
        return last[1]

    def retain(self, cluster: Cluster) -> None:
        """Forget the objects gone from ``cluster``, once they outnumber the live ones."""
        if len(self._pods) > 2 * len(cluster.pods) + 1000:
            live = {id(pod) for pod in cluster.pods}
            self._pods = {k: v for k, v in self._pods.items() if k in live}
        if len(self._nodes) > 2 * len(cluster.nodes) + 100:
            nodes = {id(node) for node in cluster.nodes}
            self._nodes = {k: v for k, v in self._nodes.items() if k in nodes}


def build_node_map(
    nodes: Iterable[NodeInfo], memo: K8sMemo | None = None
) -> dict[str, K8sNodeInfo]:
    """``GenerateNodeMapAndSlice``: every task on a node, Releasing and Pipelined
    included; ``memo`` holds the values and views already derived
    (:meth:`K8sMemo.node_map`)."""
    if memo is not None:
        # A session's node list is a list already: copying it touched every cold node.
        return memo.node_map(nodes if isinstance(nodes, list) else list(nodes))
    return _fresh_node_map(nodes, None)


def _fresh_node_map(nodes: Iterable[NodeInfo], memo: K8sMemo | None) -> dict[str, K8sNodeInfo]:
    node_infos = [(ni, ni.node) for ni in nodes if ni.node is not None]
    kube_nodes = [node for _, node in node_infos if node is not None]
    images = image_state_summaries(kube_nodes) if memo is None else memo.images(kube_nodes)
    node_map = {}
    for ni, node in node_infos:
        assert node is not None
        if memo is None:
            info = K8sNodeInfo(node)
            for task in ni.tasks.values():
                info.add_task(task)
        else:
            info = memo.view(ni, node)
        info.image_states = images[ni.name]
        node_map[ni.name] = info
    return node_map


class _Views:
    """The views the last node map was made of, row by row as the session's node list,
    the names of those changed since (each reports to ``changed``), and the rows whose
    view holds pods with affinity and with required anti-affinity (a Snapshot's lists:
    kept up to date as views are built again, rather than read from every view)."""

    __slots__ = (
        "affinity",
        "anti_affinity",
        "by_name",
        "changed",
        "names",
        "rebuilt",
        "rows",
        "views",
    )

    def __init__(self, views: list[K8sNodeInfo]) -> None:
        self.views = views
        self.names = [view.name for view in views]
        self.rows = {name: row for row, name in enumerate(self.names)}
        # The views by name, patched with them: a node map is a copy of it (a dict's
        # copy clones its table, where building one hashes and probes every name).
        self.by_name = dict(zip(self.names, views, strict=True))
        self.changed: set[str] = set()
        # The rows whose view was built again, in order (K8sMemo.rebuilt_since).
        self.rebuilt: list[int] = []
        self.affinity: set[int] = set()
        self.anti_affinity: set[int] = set()
        for row, view in enumerate(views):
            view.set_reports(self.changed)
            self.note(row)

    def note(self, row: int) -> None:
        """Bring the affinity rows up to date with the view at ``row``."""
        view = self.views[row]
        for rows, holds in (
            (self.affinity, view.pods_with_affinity),
            (self.anti_affinity, view.pods_with_required_anti_affinity),
        ):
            if holds:
                rows.add(row)
            else:
                rows.discard(row)

    def snapshot(self, node_map: dict[str, K8sNodeInfo], labels: Labels) -> Snapshot:
        """The Snapshot of these views, as ``Snapshot.of_session`` makes it, while none
        changed since they were noted."""
        views = self.views
        return Snapshot(
            node_map,
            labels,
            # Not copied (a copy touches every cold view): the list changes only at the
            # next session's node map, when this session and its Snapshot are done.
            node_list=views,
            affinity=[views[row] for row in sorted(self.affinity)],
            anti_affinity=[views[row] for row in sorted(self.anti_affinity)],
        )


class Snapshot:
    """``util/k8s.Snapshot``: the node map a Kubernetes plugin reads through its handle.

    Quirk kept: the lists of nodes with affinity pods are computed once, when a plugin
    builds its handle at session open; nodes whose first such pod arrives later in the
    session are not in them (the NodeInfo objects themselves stay live).
    """

    __slots__ = (
        "have_pods_with_affinity",
        "have_pods_with_required_anti_affinity",
        "namespace_labels",
        "node_list",
        "node_map",
    )

    def __init__(
        self,
        node_map: Mapping[str, K8sNodeInfo],
        namespace_labels: Labels,
        *,
        node_list: list[K8sNodeInfo] | None = None,
        affinity: list[K8sNodeInfo] | None = None,
        anti_affinity: list[K8sNodeInfo] | None = None,
    ) -> None:
        """The lists, when not given, are read from ``node_map`` (the K8s memo keeps
        them up to date instead)."""
        self.node_map = node_map
        self.node_list = list(node_map.values()) if node_list is None else node_list
        self.have_pods_with_affinity = (
            [n for n in self.node_list if n.pods_with_affinity] if affinity is None else affinity
        )
        self.have_pods_with_required_anti_affinity = (
            [n for n in self.node_list if n.pods_with_required_anti_affinity]
            if anti_affinity is None
            else anti_affinity
        )
        self.namespace_labels = namespace_labels

    @classmethod
    def of_session(cls, node_map: Mapping[str, K8sNodeInfo], cluster: Cluster) -> Snapshot:
        return cls(node_map, namespace_labels(cluster))


def namespace_labels(cluster: Cluster) -> Labels:
    """Namespace labels come from ``Namespace`` objects of the cluster, if any."""
    return {ns.meta.name: ns.meta.labels for ns in cluster.objects_of_kind("Namespace")}
