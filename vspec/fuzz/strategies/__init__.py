"""Hypothesis strategies for clusters, scheduler configurations and whole specs, for
property tests of plugins and actions (``@given(strategies.specs())``) and for ``vspec
fuzz``. One module per thing drawn:

- :mod:`~vspec.fuzz.strategies.cluster`: random clusters and their bounds;
- :mod:`~vspec.fuzz.strategies.eviction` and :mod:`~vspec.fuzz.strategies.allocation`:
  clusters shaped so that preempt and reclaim evict, or allocate's order shows;
- :mod:`~vspec.fuzz.strategies.features`: what the plugins beyond the core read, drawn
  onto a cluster, and their structured arguments (the ``plugins`` space);
- :mod:`~vspec.fuzz.strategies.generator`: large clusters from the ``generate`` key;
- :mod:`~vspec.fuzz.strategies.conf`: scheduler configurations;
- :mod:`~vspec.fuzz.strategies.spec`: whole specs, and
  :mod:`~vspec.fuzz.strategies.document` to write one back as a spec file;
- :mod:`~vspec.fuzz.strategies.profiles`: the Hypothesis profiles;
- :mod:`~vspec.fuzz.strategies.dice`: the drawing primitives the others share.

The names below are the ones tests and the fuzzer use.
"""

from vspec.fuzz.strategies.allocation import allocate_clusters
from vspec.fuzz.strategies.cluster import HOSTNAME, ClusterBounds, clusters
from vspec.fuzz.strategies.conf import ConfSpace, conf_from_document, scheduler_confs
from vspec.fuzz.strategies.document import cluster_document
from vspec.fuzz.strategies.eviction import eviction_clusters
from vspec.fuzz.strategies.generator import generate_params, generated_clusters
from vspec.fuzz.strategies.profiles import register_profiles
from vspec.fuzz.strategies.spec import GeneratedSpec, cluster_strategy, specs

__all__ = [
    "HOSTNAME",
    "ClusterBounds",
    "ConfSpace",
    "GeneratedSpec",
    "allocate_clusters",
    "cluster_document",
    "cluster_strategy",
    "clusters",
    "conf_from_document",
    "eviction_clusters",
    "generate_params",
    "generated_clusters",
    "register_profiles",
    "scheduler_confs",
    "specs",
]
