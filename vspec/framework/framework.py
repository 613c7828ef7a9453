"""OpenSession and CloseSession (``framework/framework.go``)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import datetime

from vspec.framework.arguments import Arguments
from vspec.framework.cache import SchedulerCache
from vspec.framework.interface import Plugin
from vspec.framework.job_updater import update_all
from vspec.framework.log import Klog
from vspec.framework.recorder import NO_RECORDER, Recorder
from vspec.framework.registry import get_plugin
from vspec.framework.session import SchedulerState, Session
from vspec.model.conf import SchedulerConf
from vspec.model.versions import V1_11_0, Gates


def plugin_classes(conf: SchedulerConf) -> dict[str, type[Plugin]]:
    """The registered class of each plugin the conf names (those not registered left
    out): a scheduler looks them up once, not once per session, as the registry does
    not change while it runs."""
    found = {}
    for tier in conf.tiers:
        for option in tier.plugins:
            cls = get_plugin(option.name)
            if cls is not None:
                found[option.name] = cls
    return found


def open_session(
    cache: SchedulerCache,
    conf: SchedulerConf,
    *,
    log: Klog,
    rng: random.Random,
    now: datetime,
    uid: str,
    state: SchedulerState | None = None,
    recorder: Recorder = NO_RECORDER,
    classes: Mapping[str, type[Plugin]] | None = None,
    gates: Gates = V1_11_0,
) -> Session:
    """Snapshot the cache, then build and open every configured plugin in tier order;
    ``classes`` are the plugins' (:func:`plugin_classes`), looked up if not given."""
    ssn = Session(
        uid,
        cache,
        conf.tiers,
        conf.configurations,
        log=log,
        rng=rng,
        now=now,
        state=state,
        recorder=recorder,
        gates=gates,
    )
    ssn.enabled_actions = frozenset(conf.actions)
    # JobValid runs here in Volcano before any plugin registered, so it never filters
    # (quirk kept by omission).
    log.v(3, f"Open Session {ssn.uid} with <{len(ssn.jobs)}> Job and <{len(ssn.queues)}> Queues")
    try:
        _open_plugins(ssn, conf, log, plugin_classes(conf) if classes is None else classes)
    except BaseException:
        ssn.release()  # what the plugins registered holds the session: no cycle is left
        raise
    recorder.session_opened(ssn)
    return ssn


def _open_plugins(
    ssn: Session, conf: SchedulerConf, log: Klog, classes: Mapping[str, type[Plugin]]
) -> None:
    for tier in conf.tiers:
        for option in tier.plugins:
            builder = classes.get(option.name)
            if builder is None:
                log.error(f"Failed to get plugin {option.name}.")
                continue
            plugin = builder(Arguments(option.arguments, log))
            ssn.plugins[plugin.name] = plugin
            plugin.on_session_open(ssn)


def close_session(ssn: Session) -> dict[str, bool]:
    """Plugins close in tier order (Go iterates a map: random), then the job updater."""
    for plugin in ssn.plugins.values():
        plugin.on_session_close(ssn)
    written = update_all(ssn)
    ssn.log.v(3, f"Close Session {ssn.uid}")
    return written
