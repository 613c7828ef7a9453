"""Whole specs (:func:`specs`, :class:`GeneratedSpec`): a drawn cluster of the shape the
bounds ask for (:func:`cluster_strategy`) with a drawn configuration, seed, cycle count
and verbosity, which :meth:`GeneratedSpec.document` writes back as a spec file.

The top of the strategies: imports the other strategy modules and the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

from vspec.errors import Location
from vspec.fuzz.strategies.allocation import allocate_clusters
from vspec.fuzz.strategies.cluster import ClusterBounds, clusters
from vspec.fuzz.strategies.conf import ConfSpace, conf_from_document, scheduler_confs
from vspec.fuzz.strategies.dice import BOOLEANS, SEEDS, int_range, sampled, weighted
from vspec.fuzz.strategies.document import cluster_document
from vspec.fuzz.strategies.eviction import eviction_clusters
from vspec.fuzz.strategies.features import featured, large_featured
from vspec.fuzz.strategies.generator import large_clusters
from vspec.model.conf import SchedulerConf
from vspec.model.objects import (
    Cluster,
)
from vspec.model.spec import Spec

_SHAPES = ("preempt", "reclaim")


def cluster_strategy(bounds: ClusterBounds) -> st.SearchStrategy[Cluster]:
    """The clusters ``bounds.shape`` asks for: eviction-shaped ones three times in four
    (the rest random, so that the preempt and reclaim spaces still see everything), or
    allocate-shaped ones half the time (the rest random: the node filters need them);
    with ``bounds.features``, with what the other plugins read drawn onto them."""
    if bounds.features:
        plain = cluster_strategy(replace(bounds, features=False))
        if bounds.shape == "large":
            return large_featured(plain)
        return featured(plain, numa_everywhere=bounds.numa_everywhere)
    if bounds.shape == "allocate":
        return _either(BOOLEANS, allocate_clusters(bounds), clusters(bounds))
    if bounds.shape == "large":
        return large_clusters(bounds.max_jobs)
    if bounds.shape not in _SHAPES:
        return clusters(bounds)
    return _either(
        weighted((1, False), (3, True)), eviction_clusters(bounds, bounds.shape), clusters(bounds)
    )


@st.composite
def _either(
    draw: st.DrawFn,
    choose: st.SearchStrategy[bool],
    shaped: st.SearchStrategy[Cluster],
    plain: st.SearchStrategy[Cluster],
) -> Cluster:
    """``shaped`` when ``choose`` draws true, else ``plain``: each strategy built once
    (a flatmap would build the one it picks on every draw, or draw through another layer)."""
    return draw(shaped if draw(choose) else plain)


@dataclass
class GeneratedSpec:
    """A drawn spec: the conf as written, the cluster, the run parameters."""

    scheduler: dict[str, Any]
    cluster: Cluster
    seed: int = 0
    cycles: int = 1
    verbosity: int = 3
    name: str = "generated"
    conf: SchedulerConf = field(init=False)

    def __post_init__(self) -> None:
        self.conf = conf_from_document(self.scheduler)

    def spec(self) -> Spec:
        return Spec(
            self.name,
            Location("<generated>"),
            self.conf,
            self.cluster,
            seed=self.seed,
            cycles=self.cycles,
            verbosity=self.verbosity,
        )

    def document(self, **extra: Any) -> dict[str, Any]:
        """The spec as a YAML-ready mapping in the spec format (compact objects). In
        ``bare`` cluster mode: the generated cluster is what the engine ran, nothing added."""
        doc: dict[str, Any] = {"name": self.name, **extra}
        doc.update(
            clusterMode="bare",
            seed=self.seed,
            cycles=self.cycles,
            verbosity=self.verbosity,
            scheduler=self.scheduler,
            cluster=cluster_document(self.cluster),
        )
        return doc


def specs(
    space: ConfSpace = ConfSpace(),
    bounds: ClusterBounds = ClusterBounds(),
    max_cycles: int = 2,
    verbosities: tuple[int, ...] = (1, 3),
) -> st.SearchStrategy[GeneratedSpec]:
    return _generated_specs(
        scheduler_confs(space),
        cluster_strategy(bounds),
        int_range(1, max_cycles),
        sampled(tuple(verbosities)),
    )


@st.composite
def _generated_specs(
    draw: st.DrawFn,
    confs: st.SearchStrategy[dict[str, Any]],
    clusters_: st.SearchStrategy[Cluster],
    cycles: st.SearchStrategy[int],
    verbosities: st.SearchStrategy[int],
) -> GeneratedSpec:
    """A spec, drawn as ``st.builds(GeneratedSpec, ...)`` would but without its record of
    each call (kept for Hypothesis' explanations, which ``vspec fuzz`` does not print).

    The cluster is drawn before the conf: a drawn conf's length varies with its plugins,
    and when Hypothesis' mutations change it, what is drawn after it falls out of line
    with the choices recorded and is drawn as its simplest (an object's byte string of
    :class:`Dice` then as zeros), so a cluster drawn last would come out empty too often.
    """
    cluster, scheduler = draw(clusters_), draw(confs)
    seed = draw(SEEDS)
    return GeneratedSpec(scheduler, cluster, seed, draw(cycles), draw(verbosities))
