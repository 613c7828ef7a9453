"""The Kubernetes core/v1 pieces the scheduler reads, as typed data classes.

Only what Volcano v1.11 and the Kubernetes filters it calls look at is kept. ``parse_*``
functions take the Kubernetes (camelCase) form after schema validation, so the spec
loader and the manifest reader share one conversion.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction
from typing import Any

from vspec.model.quantity import parse_quantity

ResourceList = dict[str, Fraction]


@dataclass(frozen=True)
class LabelSelectorRequirement:
    """One ``matchExpressions`` entry of a ``metav1.LabelSelector``."""

    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabelSelector:
    """``metav1.LabelSelector``: how pod affinity terms and topology spread constraints
    pick pods (and a term its namespaces) by their labels."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()


@dataclass(frozen=True)
class NodeSelectorRequirement:
    """One requirement of a ``v1.NodeSelectorTerm``; ``Gt`` and ``Lt`` compare the
    node's label as an integer."""

    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodeSelectorTerm:
    """``v1.NodeSelectorTerm``: a node matches when it meets all of the term's
    requirements, and a selector when it matches any of its terms."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(frozen=True)
class PreferredSchedulingTerm:
    """``v1.PreferredSchedulingTerm``: a node that matches ``preference`` scores ``weight`` more."""

    weight: int
    preference: NodeSelectorTerm


@dataclass(frozen=True)
class NodeAffinity:
    """``v1.NodeAffinity``: ``required`` keeps a pod off the nodes it does not select,
    ``preferred`` scores the nodes."""

    required: tuple[NodeSelectorTerm, ...] | None = None  # None: no required selector
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(frozen=True)
class PodAffinityTerm:
    """``v1.PodAffinityTerm``: the pods it selects, and the domain of ``topology_key``
    in which they count."""

    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class WeightedPodAffinityTerm:
    """``v1.WeightedPodAffinityTerm``: a preferred term, and what a node in its domain scores."""

    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True)
class PodAffinity:
    """``v1.PodAffinity``, and ``v1.PodAntiAffinity`` (the same shape): ``required``
    terms filter the nodes, ``preferred`` ones score them."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(frozen=True)
class Affinity:
    """``v1.Affinity``: each kind is None when the pod does not set it."""

    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


@dataclass(frozen=True)
class Toleration:
    """``v1.Toleration``: lets a pod onto a node despite the taints it matches."""

    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # "" matches every effect
    toleration_seconds: int | None = None


@dataclass(frozen=True)
class Taint:
    """``v1.Taint``: what a pod must tolerate to be placed on the node (``NoSchedule``,
    ``NoExecute``) or to score well there (``PreferNoSchedule``)."""

    key: str
    value: str = ""
    effect: str = "NoSchedule"  # NoSchedule | PreferNoSchedule | NoExecute


@dataclass(frozen=True)
class TopologySpreadConstraint:
    """``v1.TopologySpreadConstraint``: how unevenly the pods it selects may spread over
    the domains of ``topology_key``."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"
    match_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class ContainerPort:
    """``v1.ContainerPort``: a ``host_port`` takes the port on the node, which the
    node-ports filter checks."""

    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass
class Container:
    """``v1.Container``: what scheduling reads of one."""

    name: str = ""
    image: str = ""
    requests: ResourceList = field(default_factory=dict)
    limits: ResourceList = field(default_factory=dict)
    ports: list[ContainerPort] = field(default_factory=list)
    restart_policy: str | None = None  # init containers: "Always" makes a sidecar


@dataclass(frozen=True)
class Condition:
    """A pod or pod group condition."""

    type: str
    status: str = "True"
    reason: str = ""
    message: str = ""
    transition_id: str = ""
    last_transition_time: datetime | None = None


@dataclass(frozen=True)
class ContainerImage:
    """One image a node's status lists, with the size the image-locality score weighs."""

    names: tuple[str, ...]
    size_bytes: int = 0


# -- conversion from the Kubernetes form -----------------------------------------------


def _strs(raw: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in raw or ())


def parse_resource_list(raw: Mapping[str, Any] | None) -> ResourceList:
    return {str(k): parse_quantity(v) for k, v in (raw or {}).items()}


def parse_label_selector(raw: Mapping[str, Any] | None) -> LabelSelector | None:
    if raw is None:
        return None
    return LabelSelector(
        match_labels=tuple((str(k), str(v)) for k, v in (raw.get("matchLabels") or {}).items()),
        match_expressions=tuple(
            LabelSelectorRequirement(str(e["key"]), str(e["operator"]), _strs(e.get("values")))
            for e in raw.get("matchExpressions") or ()
        ),
    )


def _node_requirements(raw: Any) -> tuple[NodeSelectorRequirement, ...]:
    return tuple(
        NodeSelectorRequirement(str(e["key"]), str(e["operator"]), _strs(e.get("values")))
        for e in raw or ()
    )


def parse_node_selector_term(raw: Mapping[str, Any]) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=_node_requirements(raw.get("matchExpressions")),
        match_fields=_node_requirements(raw.get("matchFields")),
    )


def parse_pod_affinity_term(raw: Mapping[str, Any]) -> PodAffinityTerm:
    return PodAffinityTerm(
        topology_key=str(raw.get("topologyKey", "")),
        label_selector=parse_label_selector(raw.get("labelSelector")),
        namespaces=_strs(raw.get("namespaces")),
        namespace_selector=parse_label_selector(raw.get("namespaceSelector")),
        match_label_keys=_strs(raw.get("matchLabelKeys")),
        mismatch_label_keys=_strs(raw.get("mismatchLabelKeys")),
    )


def _parse_pod_affinity(raw: Mapping[str, Any] | None) -> PodAffinity | None:
    if raw is None:
        return None
    return PodAffinity(
        required=tuple(
            parse_pod_affinity_term(t)
            for t in raw.get("requiredDuringSchedulingIgnoredDuringExecution") or ()
        ),
        preferred=tuple(
            WeightedPodAffinityTerm(int(t["weight"]), parse_pod_affinity_term(t["podAffinityTerm"]))
            for t in raw.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        ),
    )


def parse_affinity(raw: Mapping[str, Any] | None) -> Affinity | None:
    if not raw:
        return None
    node_affinity = None
    na = raw.get("nodeAffinity")
    if na is not None:
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        node_affinity = NodeAffinity(
            required=None
            if req is None
            else tuple(parse_node_selector_term(t) for t in req.get("nodeSelectorTerms") or ()),
            preferred=tuple(
                PreferredSchedulingTerm(int(t["weight"]), parse_node_selector_term(t["preference"]))
                for t in na.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
            ),
        )
    return Affinity(
        node_affinity=node_affinity,
        pod_affinity=_parse_pod_affinity(raw.get("podAffinity")),
        pod_anti_affinity=_parse_pod_affinity(raw.get("podAntiAffinity")),
    )


def parse_toleration(raw: Mapping[str, Any]) -> Toleration:
    seconds = raw.get("tolerationSeconds")
    return Toleration(
        key=str(raw.get("key", "")),
        operator=str(raw.get("operator", "Equal")),
        value=str(raw.get("value", "")),
        effect=str(raw.get("effect", "")),
        toleration_seconds=None if seconds is None else int(seconds),
    )


def parse_taint(raw: Mapping[str, Any]) -> Taint:
    return Taint(str(raw["key"]), str(raw.get("value", "")), str(raw.get("effect", "NoSchedule")))


def parse_topology_spread_constraint(raw: Mapping[str, Any]) -> TopologySpreadConstraint:
    min_domains = raw.get("minDomains")
    return TopologySpreadConstraint(
        max_skew=int(raw["maxSkew"]),
        topology_key=str(raw["topologyKey"]),
        when_unsatisfiable=str(raw["whenUnsatisfiable"]),
        label_selector=parse_label_selector(raw.get("labelSelector")),
        min_domains=None if min_domains is None else int(min_domains),
        node_affinity_policy=str(raw.get("nodeAffinityPolicy", "Honor")),
        node_taints_policy=str(raw.get("nodeTaintsPolicy", "Ignore")),
        match_label_keys=_strs(raw.get("matchLabelKeys")),
    )


def parse_container(raw: Mapping[str, Any]) -> Container:
    resources = raw.get("resources") or {}
    return Container(
        name=str(raw.get("name", "")),
        image=str(raw.get("image", "")),
        requests=parse_resource_list(resources.get("requests")),
        limits=parse_resource_list(resources.get("limits")),
        ports=[
            ContainerPort(
                container_port=int(p.get("containerPort", 0)),
                host_port=int(p.get("hostPort", 0)),
                protocol=str(p.get("protocol", "TCP")),
                host_ip=str(p.get("hostIP", "")),
            )
            for p in raw.get("ports") or ()
        ],
        restart_policy=raw.get("restartPolicy"),
    )
