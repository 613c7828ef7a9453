"""The scheduler configuration (``pkg/scheduler/conf``, ``pkg/scheduler/util.go``).

``load_conf`` turns the content of ``volcano-scheduler.conf`` (already parsed from YAML)
into a :class:`SchedulerConf`, applying Volcano's rules: unset enable flags become true
(``ApplyPluginConfDefaults``) unless the spec asks for Go-unit-test semantics, and the
confs Volcano rejects (unknown action, drf hierarchy with proportion in one tier) are
errors here instead of a silent fall-back to the default conf.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from vspec.errors import ConfError, Location

# yaml key -> PluginOption attribute, spelled exactly as Volcano's struct tags.
FLAG_KEYS: dict[str, str] = {
    "enableJobOrder": "job_order",
    "enableHierarchy": "hierarchy",
    "enableJobReady": "job_ready",
    "enableJobPipelined": "job_pipelined",
    "enableTaskOrder": "task_order",
    "enablePreemptable": "preemptable",
    "enableReclaimable": "reclaimable",
    "enablePreemptive": "preemptive",
    "enableQueueOrder": "queue_order",
    "EnabledClusterOrder": "cluster_order",
    "enablePredicate": "predicate",
    "enableBestNode": "best_node",
    "enableNodeOrder": "node_order",
    "enableTargetJob": "target_job",
    "enableReservedNodes": "reserved_nodes",
    "enableJobEnqueued": "job_enqueued",
    "enabledVictim": "victim",
    "enableJobStarving": "job_starving",
    "enabledOverused": "overused",
    "enabledAllocatable": "allocatable",
}
# ApplyPluginConfDefaults leaves these two unset (nil = disabled).
NOT_DEFAULTED = frozenset({"hierarchy", "cluster_order"})
# A plugin entry's flags before its own are applied, with and without those defaults.
_UNSET_FLAGS: dict[str, bool | None] = dict.fromkeys(FLAG_KEYS.values())
_DEFAULTED_FLAGS: dict[str, bool | None] = {
    attr: None if attr in NOT_DEFAULTED else True for attr in FLAG_KEYS.values()
}

DEFAULT_SCHEDULER_CONF: dict[str, Any] = {
    "actions": "enqueue, allocate, backfill",
    "tiers": [
        {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
        {
            "plugins": [
                {"name": "overcommit"},
                {"name": "drf"},
                {"name": "predicates"},
                {"name": "proportion"},
                {"name": "nodeorder"},
            ]
        },
    ],
}


@dataclass
class PluginOption:
    """One plugin entry of a tier; a flag is None when the conf leaves it unset."""

    name: str
    flags: dict[str, bool | None] = field(default_factory=dict)
    arguments: dict[str, Any] = field(default_factory=dict)
    location: Location | None = field(default=None, compare=False)

    def enabled(self, flag: str) -> bool:
        """``isEnabled``: only an explicit true enables."""
        return self.flags.get(flag) is True


@dataclass
class Tier:
    """One ``tiers`` entry of the scheduler conf: a session asks its plugins, in order,
    before those of the next tier."""

    plugins: list[PluginOption] = field(default_factory=list)


@dataclass
class Configuration:
    """One ``configurations`` entry of the scheduler conf: the arguments of the action ``name``."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class SchedulerOptions:
    """vc-scheduler command-line options that change scheduling."""

    min_nodes_to_find: int = 100
    min_percentage_of_nodes_to_find: int = 5
    percentage_of_nodes_to_find: int = 0
    scheduler_names: tuple[str, ...] = ("volcano",)
    default_queue: str = "default"


@dataclass
class SchedulerConf:
    """The scheduler's configuration: its conf file (actions, tiers, configurations) and
    the command-line options that change scheduling."""

    actions: list[str]
    tiers: list[Tier]
    configurations: list[Configuration] = field(default_factory=list)
    options: SchedulerOptions = field(default_factory=SchedulerOptions)

    def action_arguments(self, action: str) -> dict[str, Any]:
        """``GetArgOfActionFromConf``: the first configuration with the action's name."""
        for c in self.configurations:
            if c.name == action:
                return c.arguments
        return {}

    def plugin_names(self) -> list[str]:
        return [p.name for t in self.tiers for p in t.plugins]


def _flag(value: Any, key: str, where: Callable[[], Location | None]) -> bool | None:
    """``where`` is called only for a bad value: locating a key walks the YAML marks, and
    a conf has a dozen flags per plugin entry."""
    if value is None:
        return None
    if isinstance(value, str):
        # the schema lets y, Y, n, N through: here they are quoted, so strings to yaml.v2
        raise ConfError(
            f"{key} must be true or false, got the quoted string {value!r} "
            "(Volcano reads y, Y, n, N as booleans only when they are plain)",
            where(),
        )
    if not isinstance(value, bool):
        raise ConfError(f"{key} must be true or false, got {value!r}", where())
    return value


def load_conf(
    raw: Mapping[str, Any],
    *,
    default_plugin_flags: bool = True,
    options: SchedulerOptions | None = None,
    known_actions: set[str] | None = None,
    locate: Any = None,
) -> SchedulerConf:
    """Build a conf from the parsed YAML mapping of ``volcano-scheduler.conf``.

    ``locate(path)`` maps a key path (tuple) to a Location for error messages.
    """

    def where(*path: Any) -> Location | None:
        return locate(path) if locate is not None else None

    if "actions" not in raw:
        # Volcano splits a missing actions string into [""] and rejects the whole conf;
        # a spec that silently ran nothing would pass while testing nothing.
        raise ConfError(
            'actions is required (write actions: "" to run none, e.g. for probes)', where()
        )
    actions_raw = raw["actions"]
    if not isinstance(actions_raw, str):
        raise ConfError("actions must be a comma-separated string", where("actions"))
    actions: list[str] = []
    # vspec extension: an empty actions string runs no action (for probe-only specs);
    # Volcano would reject it as "failed to find Action".
    if actions_raw.strip():
        for part in actions_raw.split(","):
            name = part.strip()
            if known_actions is not None and name not in known_actions:
                raise ConfError(
                    f"failed to find Action {part!r}: Volcano rejects the whole conf "
                    f"(known actions: {', '.join(sorted(known_actions))})",
                    where("actions"),
                )
            actions.append(name)

    tiers: list[Tier] = []
    for ti, tier_raw in enumerate(raw.get("tiers") or []):
        tier = Tier()
        hdrf = proportion = False
        for pi, entry in enumerate((tier_raw or {}).get("plugins") or []):
            at = ("tiers", ti, "plugins", pi)
            loc = where(*at)
            name = entry.get("name")
            if not isinstance(name, str) or not name:
                raise ConfError("a plugin entry needs a name", loc)
            flags = dict(_DEFAULTED_FLAGS if default_plugin_flags else _UNSET_FLAGS)
            for key, value in entry.items():  # the entry's few keys, not the 20 flags
                attr = FLAG_KEYS.get(key)
                if attr is not None and value is not None:
                    flags[attr] = _flag(value, key, partial(where, *at, key))
            arguments = entry.get("arguments") or {}
            if not isinstance(arguments, Mapping):
                raise ConfError("arguments must be a mapping", loc)
            tier.plugins.append(PluginOption(name, flags, dict(arguments), loc))
            hdrf |= name == "drf" and flags["hierarchy"] is True
            proportion |= name == "proportion"
        if hdrf and proportion:
            raise ConfError(
                "proportion and drf with hierarchy enabled conflicts", where("tiers", ti)
            )
        tiers.append(tier)

    configurations = [
        Configuration(str(c.get("name", "")), dict(c.get("arguments") or {}))
        for c in raw.get("configurations") or []
    ]
    return SchedulerConf(actions, tiers, configurations, options or SchedulerOptions())
