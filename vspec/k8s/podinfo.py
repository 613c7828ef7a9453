"""Kubernetes' ``framework.PodInfo``: what the scheduler derives once from a pod spec.

Requests (real and "non-zero"), host ports and parsed inter-pod affinity terms are
computed once per pod and then read for every node the pod is compared with.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from fractions import Fraction

from vspec.k8s.labels import (
    NOT_IN,
    NOTHING,
    Requirement,
    Selector,
    SelectorError,
    equals_requirement,
    selector_from_label_selector,
)
from vspec.model.corev1 import (
    Container,
    PodAffinity,
    PodAffinityTerm,
    ResourceList,
    WeightedPodAffinityTerm,
)
from vspec.model.objects import Pod
from vspec.model.quantity import milli_value, value

CPU = "cpu"
MEMORY = "memory"
# schedutil.DefaultMilliCPURequest / DefaultMemoryRequest: what a container without a
# cpu/memory request counts as when spreading load ("non-zero" requests).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
_NON_MISSING: ResourceList = {
    CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
}
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"

HostPort = tuple[str, str, int]  # host IP, protocol, port (sanitized)
NamespaceLabels = Mapping[str, Mapping[str, str]]


class AffinityTerm:
    """``framework.AffinityTerm``: a pod (anti-)affinity term with its selectors parsed."""

    __slots__ = ("namespace_selector", "namespaces", "selector", "topology_key")

    def __init__(
        self,
        namespaces: frozenset[str],
        selector: Selector,
        topology_key: str,
        namespace_selector: Selector,
    ) -> None:
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.namespace_selector = namespace_selector

    @classmethod
    def of(cls, pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
        """``newAffinityTerm``; no namespaces and no namespace selector mean the pod's own."""
        selector = selector_from_label_selector(term.label_selector)
        # The API server merges matchLabelKeys/mismatchLabelKeys into the label selector
        # at pod creation (MatchLabelKeysInPodAffinity, on in v1.31); specs skip the API
        # server, so it is done here.
        labels = pod.meta.labels
        extra: list[Requirement] = [
            equals_requirement(k, labels[k]) for k in term.match_label_keys if k in labels
        ]
        extra.extend(
            (k, NOT_IN, frozenset((labels[k],)), 0) for k in term.mismatch_label_keys if k in labels
        )
        if extra:
            selector = selector.with_requirements(extra)
        if not term.namespaces and term.namespace_selector is None:
            namespaces = frozenset((pod.meta.namespace,))
        else:
            namespaces = frozenset(term.namespaces)
        return cls(
            namespaces,
            selector,
            term.topology_key,
            selector_from_label_selector(term.namespace_selector),
        )

    def matches(
        self, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str] | None
    ) -> bool:
        """``AffinityTerm.Matches``: namespace listed or selected, then the label selector."""
        if namespace in self.namespaces or self.namespace_selector.matches(ns_labels or {}):
            return self.selector.matches(labels)
        return False

    def merged_namespaces(self, namespace_labels: NamespaceLabels) -> AffinityTerm:
        """``mergeAffinityTermNamespacesIfNotEmpty``: resolve the namespace selector into
        names of existing namespaces (an empty selector, meaning all, is kept)."""
        if self.namespace_selector.empty:
            return self
        selected = {
            name
            for name, labels in namespace_labels.items()
            if self.namespace_selector.matches(labels)
        }
        return AffinityTerm(self.namespaces | selected, self.selector, self.topology_key, NOTHING)


class WeightedAffinityTerm:
    __slots__ = ("term", "weight")

    def __init__(self, term: AffinityTerm, weight: int) -> None:
        self.term = term
        self.weight = weight


def _add(into: dict[str, Fraction], rl: Mapping[str, Fraction]) -> None:
    for name, q in rl.items():
        into[name] = into[name] + q if name in into else q  # no Fraction(0) + q


def _max(into: dict[str, Fraction], rl: Mapping[str, Fraction]) -> None:
    for name, q in rl.items():
        if q > into.get(name, Fraction(0)) or name not in into:
            into[name] = q


def _container_requests(c: Container, non_missing: bool) -> Mapping[str, Fraction]:
    if not non_missing or (CPU in c.requests and MEMORY in c.requests):
        return c.requests
    return {**_NON_MISSING, **c.requests}


def pod_requests(pod: Pod, *, non_missing: bool) -> dict[str, Fraction]:
    """``resourcehelper.PodRequests``: containers, sidecars, max with init containers, overhead.

    With ``non_missing``, a container that does not request cpu or memory counts
    100m / 200Mi for it (``NonMissingContainerRequests``).
    """
    reqs: dict[str, Fraction] = {}
    for c in pod.containers:
        _add(reqs, _container_requests(c, non_missing))
    if pod.init_containers:
        restartable: dict[str, Fraction] = {}
        init: dict[str, Fraction] = {}
        for c in pod.init_containers:
            creq = _container_requests(c, non_missing)
            if c.restart_policy == "Always":
                _add(reqs, creq)
                _add(restartable, creq)
                _max(init, restartable)
            else:
                tmp = dict(creq)
                _add(tmp, restartable)
                _max(init, tmp)
        _max(reqs, init)
    if pod.overhead:
        _add(reqs, pod.overhead)
    return reqs


def host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """``GetHostPorts``: host ports of containers and of restartable init containers."""
    containers = [c for c in pod.init_containers if c.restart_policy == "Always"]
    containers.extend(pod.containers)
    return tuple(
        (p.host_ip or DEFAULT_BIND_ALL_HOST_IP, p.protocol or "TCP", p.host_port)
        for c in containers
        for p in c.ports
        if p.host_port > 0
    )


def normalized_image_name(name: str) -> str:
    """A name without a tag gets ``:latest``."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def pod_images(pod: Pod) -> tuple[list[str], int]:
    """The normalized image of every init container and container, and how many there are."""
    images = [normalized_image_name(c.image) for c in (*pod.init_containers, *pod.containers)]
    return images, len(images)


def containers_key(pod: Pod) -> Hashable:
    """The content of the pod fields :class:`ContainerFacts` reads (images, requests in
    their order, ports, sidecar policies, overhead): pods of one template share it."""
    return (
        tuple(
            (c.image, c.restart_policy, tuple(c.requests.items()), tuple(c.ports))
            for c in pod.init_containers
        ),
        tuple((c.image, tuple(c.requests.items()), tuple(c.ports)) for c in pod.containers),
        tuple(pod.overhead.items()),
    )


class ContainerFacts:
    """What Kubernetes derives from a pod's containers and overhead alone. The tasks of
    a job share one pod template, so this is derived once per distinct
    :func:`containers_key` (and shared, never changed) rather than once per pod."""

    __slots__ = ("host_ports", "images", "non0_cpu", "non0_mem", "num_containers", "requested")

    def __init__(self, pod: Pod) -> None:
        self.requested = {
            name: milli_value(q) if name == CPU else value(q)
            for name, q in pod_requests(pod, non_missing=False).items()
        }
        non0 = pod_requests(pod, non_missing=True)
        self.non0_cpu = milli_value(non0.get(CPU, Fraction(0)))
        self.non0_mem = value(non0.get(MEMORY, Fraction(0)))
        self.host_ports = host_ports(pod)
        images, self.num_containers = pod_images(pod)
        self.images = tuple(images)


class PodInfo:
    """A pod as a Kubernetes ``NodeInfo`` holds it (and as the incoming pod of a filter)."""

    __slots__ = (
        "deleting",
        "has_affinity",
        "host_ports",
        "images",
        "key",
        "labels",
        "namespace",
        "non0_cpu",
        "non0_mem",
        "num_containers",
        "parse_error",
        "pod",
        "preferred_affinity_terms",
        "preferred_anti_affinity_terms",
        "requested",
        "required_affinity_terms",
        "required_anti_affinity_terms",
    )

    def __init__(self, pod: Pod, containers: ContainerFacts | None = None) -> None:
        """``containers``: the pod's, when already derived (for another pod alike)."""
        self.pod = pod
        self.namespace = pod.meta.namespace
        self.key = f"{self.namespace}/{pod.meta.name}"
        self.labels = pod.meta.labels
        self.deleting = pod.meta.deletion_timestamp is not None
        facts = ContainerFacts(pod) if containers is None else containers
        self.requested = facts.requested
        self.non0_cpu = facts.non0_cpu
        self.non0_mem = facts.non0_mem
        self.host_ports = facts.host_ports
        self.images, self.num_containers = facts.images, facts.num_containers
        self.required_affinity_terms: tuple[AffinityTerm, ...] = ()
        self.required_anti_affinity_terms: tuple[AffinityTerm, ...] = ()
        self.preferred_affinity_terms: tuple[WeightedAffinityTerm, ...] = ()
        self.preferred_anti_affinity_terms: tuple[WeightedAffinityTerm, ...] = ()
        self.parse_error: str | None = None
        affinity = pod.affinity
        # podWithAffinity: any pod (anti-)affinity stanza, even an empty one.
        self.has_affinity = affinity is not None and (
            affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None
        )
        if not self.has_affinity or affinity is None:
            return
        # Each list is parsed on its own; one that fails stays empty (as in NewPodInfo).
        empty = PodAffinity()
        aff = affinity.pod_affinity or empty
        anti = affinity.pod_anti_affinity or empty
        self.required_affinity_terms = self._terms(aff.required)
        self.required_anti_affinity_terms = self._terms(anti.required)
        self.preferred_affinity_terms = self._weighted(aff.preferred)
        self.preferred_anti_affinity_terms = self._weighted(anti.preferred)

    def _terms(self, terms: Iterable[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
        try:
            return tuple(AffinityTerm.of(self.pod, t) for t in terms)
        except SelectorError as exc:
            self.parse_error = self.parse_error or str(exc)
            return ()

    def _weighted(
        self, terms: Iterable[WeightedPodAffinityTerm]
    ) -> tuple[WeightedAffinityTerm, ...]:
        try:
            return tuple(
                WeightedAffinityTerm(AffinityTerm.of(self.pod, w.term), w.weight) for w in terms
            )
        except SelectorError as exc:
            self.parse_error = self.parse_error or str(exc)
            return ()

    @property
    def has_required_anti_affinity(self) -> bool:
        """``podWithRequiredAntiAffinity``."""
        aff = self.pod.affinity
        return (
            aff is not None
            and aff.pod_anti_affinity is not None
            and bool(aff.pod_anti_affinity.required)
        )

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"
