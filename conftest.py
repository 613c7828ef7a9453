"""Makes ``pytest`` collect spec files from a source checkout in which vspec is not installed,
and gives tests that import plugins dirs a registry of their own.

An installed vspec registers its pytest plugin through the ``pytest11`` entry point; the
same module must not be registered twice, so this only steps in when that did not happen.
"""

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

pytest_plugins = ["pytester"]  # tests/test_pytest_plugin.py runs pytest on scratch suites


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("vspec"):
        from vspec import pytest_plugin

        config.pluginmanager.register(pytest_plugin, "vspec")


# YAML under tests/ is test data (e.g. the bad-input corpus), not specs to run.
collect_ignore_glob = ["tests/*.yaml", "tests/*.yml"]


@contextmanager
def _isolated_registry() -> Iterator[None]:
    """Plugins and actions registered inside are gone afterwards, so a test's plugins
    never reach the confs that other tests draw from the registry."""
    from vspec.framework import registry

    registry.load_builtins()
    plugins, actions = dict(registry._PLUGINS), dict(registry._ACTIONS)
    loaded_dirs, modules = set(registry._loaded_dirs), set(sys.modules)
    try:
        yield
    finally:
        registry._PLUGINS.clear()
        registry._PLUGINS.update(plugins)
        registry._ACTIONS.clear()
        registry._ACTIONS.update(actions)
        registry._loaded_dirs.clear()
        registry._loaded_dirs.update(loaded_dirs)
        for name in set(sys.modules) - modules:
            if name.startswith("vspec_user_plugins."):
                del sys.modules[name]


@pytest.fixture
def isolated_registry() -> Iterator[None]:
    with _isolated_registry():
        yield


@pytest.fixture(scope="module")
def module_registry() -> Iterator[None]:
    with _isolated_registry():
        yield
