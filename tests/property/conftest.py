"""Hypothesis profiles for the property tests: ``dev`` locally, Hypothesis' ``ci`` when
``CI`` is set, ``fuzz`` on request (``--hypothesis-profile=fuzz``, as ``tox -e fuzz``)."""

import pytest

from vspec.fuzz.strategies import register_profiles


def pytest_configure(config: pytest.Config) -> None:
    # An explicit --hypothesis-profile was registered by vspec's pytest plugin and loaded
    # by Hypothesis' before this conftest was read: registering again would load "dev".
    if not config.getoption("--hypothesis-profile", None):
        register_profiles()
