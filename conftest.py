"""Makes ``pytest`` collect spec files from a source checkout in which vspec is not installed,
and gives tests that import plugins dirs a registry of their own.

An installed vspec registers its pytest plugin through the ``pytest11`` entry point; the
same module must not be registered twice, so this only steps in when that did not happen.
"""

from collections.abc import Iterator

import pytest

pytest_plugins = ["pytester"]  # tests/test_pytest_plugin.py runs pytest on scratch suites

# Imported here, once for the whole run: importlib_metadata (pygal's dependency) takes
# the stdlib's distribution finder away when first imported and puts its own in
# sys.meta_path. First imported inside a pytester in-process run (a scratch suite whose
# specs draw charts), it leaves with that run's sys.meta_path, and every later run on the
# worker finds no pytest11 entry points (no xdist, no vspec): "unrecognized arguments".
import importlib_metadata  # noqa: E402, F401


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("vspec"):
        from vspec.cli import pytest_plugin

        config.pluginmanager.register(pytest_plugin, "vspec")


# YAML under tests/ is test data (e.g. the bad-input corpus), not specs to run.
collect_ignore_glob = ["tests/*.yaml", "tests/*.yml"]


@pytest.fixture
def isolated_registry() -> Iterator[None]:
    """Plugins and actions registered by the test are gone afterwards."""
    from vspec.framework import registry

    with registry.isolated():
        yield


@pytest.fixture(scope="module")
def module_registry() -> Iterator[None]:
    from vspec.framework import registry

    with registry.isolated():
        yield
