"""Hypothesis profiles for the property tests: ``dev`` locally, Hypothesis' ``ci`` when
``CI`` is set, ``fuzz`` on request (``--hypothesis-profile=fuzz``, as ``tox -e fuzz``)."""

from vspec.strategies import register_profiles

register_profiles()
