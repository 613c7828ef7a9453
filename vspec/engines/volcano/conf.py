"""The model's scheduler conf written back as the YAML text vc-scheduler reads.

Every enable flag the model resolved is written out, true or false, so that Volcano's
``ApplyPluginConfDefaults`` defaults none: a spec with ``defaultPluginFlags: false`` (Go
unit-test semantics) means the same on both engines. Flags Volcano itself leaves unset
(``enableHierarchy``, ``EnabledClusterOrder``) are written only when the spec set them.
"""

from __future__ import annotations

from typing import Any

from vspec.harness.yamlwrite import dump
from vspec.model.conf import (
    FLAG_KEYS,
    NOT_DEFAULTED,
    PluginOption,
    SchedulerConf,
    SchedulerOptions,
)

_FLAG_NAMES = {attr: key for key, attr in FLAG_KEYS.items()}


def _plugin(option: PluginOption) -> dict[str, Any]:
    """A flag the model left unset is off (Go unit-test semantics): written false, or,
    for the two Volcano never defaults, left out (nil, which Volcano reads as off)."""
    entry: dict[str, Any] = {"name": option.name}
    for attr, key in _FLAG_NAMES.items():
        value = option.flags.get(attr)
        if value is not None:
            entry[key] = value
        elif attr not in NOT_DEFAULTED:
            entry[key] = False
    if option.arguments:
        entry["arguments"] = option.arguments
    return entry


def conf_text(conf: SchedulerConf) -> str:
    """``volcano-scheduler.conf`` for ``conf``; an empty ``actions`` runs none."""
    raw: dict[str, Any] = {
        "actions": ", ".join(conf.actions),
        "tiers": [{"plugins": [_plugin(p) for p in tier.plugins]} for tier in conf.tiers],
    }
    if conf.configurations:
        raw["configurations"] = [
            {"name": c.name, "arguments": c.arguments} for c in conf.configurations
        ]
    return dump(raw)


def options(opts: SchedulerOptions) -> dict[str, Any]:
    """vc-scheduler's command-line options, as the program's request carries them."""
    return {
        "minNodesToFind": opts.min_nodes_to_find,
        "minPercentageOfNodesToFind": opts.min_percentage_of_nodes_to_find,
        "percentageOfNodesToFind": opts.percentage_of_nodes_to_find,
        "schedulerNames": list(opts.scheduler_names),
        "defaultQueue": opts.default_queue,
    }
