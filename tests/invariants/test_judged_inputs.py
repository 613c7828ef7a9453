"""A timeline's checks look the user's code of the conf up once per conf object (the
sessions share one conf): what they judge under is what a fresh look-up finds, conf
after conf."""

from __future__ import annotations

from tests.conftest import FakeEngine
from vspec.invariants import Carry, judged_inputs
from vspec.model.conf import load_conf
from vspec.model.objects import Cluster


def test_the_users_code_is_looked_up_once_per_conf_object() -> None:
    plain = load_conf({"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}]}]})
    mine = load_conf(
        {"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}, {"name": "m"}]}]}
    )
    carry = Carry()
    for conf in (plain, mine, mine, plain, mine):
        kept = judged_inputs(conf, Cluster(), 0, None, 1, 3, engine=FakeEngine(), carry=carry)
        fresh = judged_inputs(conf, Cluster(), 0, None, 1, 3, engine=FakeEngine())
        assert kept.conf == fresh.conf
        assert kept.run_conf == fresh.run_conf
    assert fresh.run_conf is mine
    assert [p.name for p in fresh.conf.tiers[0].plugins] == ["gang", "m (yours)"]
