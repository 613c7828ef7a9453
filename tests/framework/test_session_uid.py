"""Session uids: version-4 UUIDs of the bits the scheduler's generator draws."""

from __future__ import annotations

import random
import uuid

from vspec.framework.scheduler import _session_uid


def test_session_uid_is_uuid4_of_the_generators_bits() -> None:
    for seed in range(200):
        bits = random.Random(seed).getrandbits(128)
        assert _session_uid(random.Random(seed)) == str(uuid.UUID(int=bits, version=4))
    edges = random.Random(0)
    edges.getrandbits = lambda k: (1 << k) - 1  # type: ignore[method-assign]
    assert _session_uid(edges) == str(uuid.UUID(int=(1 << 128) - 1, version=4))
    edges.getrandbits = lambda k: 0  # type: ignore[method-assign]
    assert _session_uid(edges) == str(uuid.UUID(int=0, version=4))
