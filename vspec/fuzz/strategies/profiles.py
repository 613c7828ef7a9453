"""The Hypothesis profiles vspec's property tests and ``vspec fuzz`` run under
(:func:`register_profiles`). Imports Hypothesis only; the pytest plugin calls it when a
property test runs.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings


def register_profiles() -> None:
    """``dev`` (quick, the local default), ``ci`` (Hypothesis' own CI profile with few
    examples, loaded by Hypothesis itself when ``CI`` is set) and ``fuzz`` (long runs).

    Loads ``dev`` unless a profile was chosen explicitly (``HYPOTHESIS_PROFILE`` or
    ``--hypothesis-profile``, which the pytest plugin applies after this) or ``CI`` is set.
    """
    slow = [HealthCheck.too_slow, HealthCheck.data_too_large]
    settings.register_profile("dev", max_examples=15, deadline=None, suppress_health_check=slow)
    settings.register_profile(
        "ci", settings.get_profile("ci"), max_examples=25, suppress_health_check=slow
    )
    settings.register_profile(
        "fuzz", max_examples=2000, deadline=None, suppress_health_check=slow, print_blob=True
    )
    explicit = os.environ.get("HYPOTHESIS_PROFILE")
    if explicit:
        settings.load_profile(explicit)
    elif settings.get_current_profile_name() == "ci":
        settings.load_profile("ci")  # Hypothesis chose it (CI is set): re-load ours
    else:
        settings.load_profile("dev")
