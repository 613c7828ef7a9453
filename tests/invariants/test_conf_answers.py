"""A timeline's checks answer the questions of the conf alone once per conf object
(which invariants apply is asked every session): conf after conf, every invariant's
``applies_to`` answers as it does with nothing kept."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import FakeEngine
from vspec.fuzz.strategies.conf import scheduler_confs
from vspec.invariants import Carry, InvariantInputs, catalogue
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster, ObjectMeta, Queue


def _cluster(guaranteed: bool) -> Cluster:
    guarantee = {"cpu": 1.0} if guaranteed else {}
    return Cluster(queues=[Queue(ObjectMeta(name="q"), guarantee=guarantee)])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(scheduler_confs(), min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=8),
)
def test_applies_to_answers_as_asked_afresh(
    drawn: list[dict[str, Any]], steps: list[tuple[int, bool]]
) -> None:
    confs = [load_conf(conf) for conf in drawn]
    carry = Carry()
    for at, guaranteed in steps:
        conf, cluster = confs[at % len(confs)], _cluster(guaranteed)
        kept = InvariantInputs(conf, cluster, engine=FakeEngine(), carry=carry)
        fresh = InvariantInputs(conf, cluster, engine=FakeEngine())
        answers = [inv.applies_to(kept) for inv in catalogue()]
        assert answers == [inv.applies_to(fresh) for inv in catalogue()]
