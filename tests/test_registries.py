"""The one generic registry: order, replacement, unknown names, and isolated scopes."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from vspec.framework import registry
from vspec.registries import Registry


def test_entries_keep_registration_order_and_a_new_entry_replaces_in_place() -> None:
    reg: Registry[int] = Registry("number")
    reg.register("one", 1)
    reg.register("two", 2)
    reg.register("one", 11)
    assert reg.items() == [("one", 11), ("two", 2)]
    assert reg.get("three") is None and "two" in reg and len(reg) == 2
    assert reg.unknown(["two", "six", "one", "nine"]) == ["six", "nine"]


def test_isolated_undoes_registrations_and_replacements() -> None:
    reg: Registry[int] = Registry("number")
    reg.register("one", 1)
    with reg.isolated():
        reg.register("one", 0)
        reg.register("two", 2)
        assert reg.names() == ["one", "two"]
    assert reg.items() == [("one", 1)]


def test_the_engine_registry_forgets_a_plugins_dir_loaded_in_isolation(tmp_path: Path) -> None:
    (tmp_path / "lonely.py").write_text(
        textwrap.dedent(
            """
            from typing import ClassVar

            from vspec.extension import Plugin, register_plugin


            @register_plugin
            class Lonely(Plugin):
                name: ClassVar[str] = "lonely"
            """
        )
    )
    before = registry.plugin_names()
    with registry.isolated():
        registry.load_plugins_dir(tmp_path)
        assert registry.plugin_names() == before | {"lonely"}
    assert registry.plugin_names() == before
    assert not [m for m in sys.modules if m.startswith("vspec_user_plugins.lonely")]
    with registry.isolated():  # forgotten, so loading it again imports it afresh
        registry.load_plugins_dir(tmp_path)
        assert "lonely" in registry.plugin_names()
