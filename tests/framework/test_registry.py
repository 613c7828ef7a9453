"""The registries: plugins dirs import each file once, under a name of its own."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vspec.errors import SpecError
from vspec.framework.registry import get_plugin, load_plugins_dir

PLUGIN = """
from vspec.extension import Plugin, Session, register_plugin


@register_plugin
class P(Plugin):
    name = "{name}"

    def on_session_open(self, ssn: Session) -> None:
        pass
"""


@pytest.mark.usefixtures("isolated_registry")
def test_same_file_name_in_two_dirs_registers_both(tmp_path: Path) -> None:
    for team in ("a", "b"):
        (tmp_path / team).mkdir()
        (tmp_path / team / "plugin.py").write_text(PLUGIN.format(name=f"team-{team}"))
        load_plugins_dir(tmp_path / team)
    assert get_plugin("team-a") is not None
    assert get_plugin("team-b") is not None
    # Each file keeps a module of its own (errors are attributed through module names).
    files = {
        getattr(m, "__file__", None)
        for name, m in list(sys.modules.items())
        if name.startswith("vspec_user_plugins.plugin")
    }
    assert {str(tmp_path / "a" / "plugin.py"), str(tmp_path / "b" / "plugin.py")} <= files


@pytest.mark.usefixtures("isolated_registry")
def test_a_module_that_failed_to_import_is_not_kept(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n")
    with pytest.raises(SpecError, match=r"broken\.py failed to import: boom"):
        load_plugins_dir(tmp_path)
    assert not any(
        getattr(m, "__file__", None) == str(tmp_path / "broken.py")
        for m in list(sys.modules.values())
    )


@pytest.mark.usefixtures("isolated_registry")
def test_a_checked_conf_sees_what_registers_after_it(tmp_path: Path) -> None:
    """The check of a conf is kept only while the registries stay the same: a plugin
    registered later is found, and a conf naming a missing one fails every time."""
    from vspec.errors import ConfError
    from vspec.framework.scheduler import check_conf
    from vspec.model.conf import PluginOption, SchedulerConf, Tier

    conf = SchedulerConf(["allocate"], [Tier([PluginOption("late")])])
    for _ in range(2):
        with pytest.raises(ConfError, match="late"):
            check_conf(conf)
    (tmp_path / "late.py").write_text(PLUGIN.format(name="late"))
    load_plugins_dir(tmp_path)
    assert check_conf(conf).plugins["late"] is get_plugin("late")
    assert check_conf(conf) is check_conf(conf)
