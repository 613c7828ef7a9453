"""Volcano's Resource arithmetic (``pkg/scheduler/api/resource_info.go``), which every
fit, share and victim verdict rests on: units, the MIN_RESOURCE tolerance, and what a
scalar missing on one side counts as (``Zero`` or ``Infinity``)."""

from __future__ import annotations

import pytest

from vspec.api.resource import (
    INFINITY,
    MIN_RESOURCE,
    ZERO,
    Resource,
    exceeded_part,
    helpers_max,
    is_scalar_resource_name,
)
from vspec.errors import EngineError

GPU = "nvidia.com/gpu"


def res(cpu: float = 0, mem: float = 0, **scalars: float) -> Resource:
    """milli-CPU, bytes, and scalars in milli units (``gpu=1000`` is one card)."""
    return Resource(cpu, mem, {GPU if k == "gpu" else k: v for k, v in scalars.items()})


class TestFromList:
    def test_units_round_up_as_quantities_do(self) -> None:
        r = Resource.from_list({"cpu": "0.5m", "memory": "1Ki", GPU: "1"})
        assert (r.milli_cpu, r.memory, r.scalars) == (1, 1024, {GPU: 1000})

    def test_pods_set_the_task_limit_and_a_scalar(self) -> None:
        r = Resource.from_list({"pods": 110})
        assert r.max_task_num == 110 and r.scalars == {"pods": 110}

    def test_quota_counts_and_vgpu_resources_are_not_scalars(self) -> None:
        r = Resource.from_list({"count/pods": 5, "volcano.sh/vgpu-memory": 100, "foo": 1})
        assert r.scalars == {}

    @pytest.mark.parametrize(
        ("name", "scalar"),
        [
            ("hugepages-2Mi", True),
            ("example.com/dongle", True),
            ("kubernetes.io/batch-cpu", True),
            ("requests.nvidia.com/gpu", False),
            ("cpu", False),
        ],
    )
    def test_scalar_names_follow_kubernetes(self, name: str, scalar: bool) -> None:
        assert is_scalar_resource_name(name) is scalar


class TestLessEqual:
    def test_within_min_resource_counts_as_equal(self) -> None:
        assert res(1000 + MIN_RESOURCE / 2).less_equal(res(1000), ZERO)
        assert not res(1000 + MIN_RESOURCE).less_equal(res(1000), ZERO)

    def test_a_scalar_missing_on_the_right_is_zero_or_infinity(self) -> None:
        assert not res(1, gpu=1000).less_equal(res(2), ZERO)
        assert res(1, gpu=1000).less_equal(res(2), INFINITY)

    def test_under_infinity_a_scalar_only_the_right_has_fails(self) -> None:
        assert res(1).less_equal(res(2, gpu=1000), ZERO)
        assert not res(1).less_equal(res(2, gpu=1000), INFINITY)

    def test_names_the_dimensions_that_do_not_fit(self) -> None:
        short = res(3, 1, gpu=2000).less_equal_with_resources_name(res(2, 5, gpu=1000), ZERO)
        assert short == ["cpu", GPU]


class TestOrder:
    def test_less_is_strict_in_cpu_and_memory_alike(self) -> None:
        assert res(1, 1).less(res(2, 2), ZERO)
        assert not res(1, 2).less(res(2, 2), ZERO)

    def test_less_partly_needs_one_smaller_dimension(self) -> None:
        assert res(3, 1).less_partly(res(2, 2), ZERO)
        assert not res(3, 3).less_partly(res(2, 2), ZERO)

    def test_equal_has_the_same_tolerance(self) -> None:
        assert res(1000, gpu=1000).equal(res(1000 + MIN_RESOURCE / 2, gpu=1000))
        assert not res(1000, gpu=1000).equal(res(1000, gpu=2000))


class TestArithmetic:
    def test_sub_asserts_as_volcano_panics(self) -> None:
        with pytest.raises(EngineError, match="asserting Sub"):
            res(1).sub(res(2))
        assert res(3, 3).sub(res(1, 2)) == res(2, 1)

    def test_a_receiver_without_scalars_ignores_the_others_scalars(self) -> None:
        # Quirk kept from Go's SubWithoutAssert.
        assert res(3).sub_without_assert(res(1, gpu=1000)) == res(2)
        assert res(3, gpu=2000).sub_without_assert(res(1, gpu=1000)) == res(2, gpu=1000)

    def test_add_and_multi(self) -> None:
        assert res(1, 2, gpu=1000).add(res(1, 1, gpu=1000)).multi(0.5) == res(1, 1.5, gpu=1000)

    def test_is_empty_passes_over_pods(self) -> None:
        assert res(0, 0, pods=10).is_empty()
        assert not res(0, 0, gpu=1000).is_empty()

    def test_min_dimension_zeroes_missing_scalars_only_under_zero(self) -> None:
        assert res(5, 5, gpu=1000).min_dimension_resource(res(2, 9), ZERO) == res(2, 5, gpu=0)
        assert res(5, 5, gpu=1000).min_dimension_resource(res(2, 9), INFINITY) == res(
            2, 5, gpu=1000
        )

    def test_set_max_takes_the_larger_of_each(self) -> None:
        r = res(1, 5, gpu=1000)
        r.set_max_resource(res(2, 1, gpu=500, foo=3))
        assert r == res(2, 5, gpu=1000, foo=3)

    def test_diff_splits_increase_and_decrease(self) -> None:
        inc, dec = res(3, 1, gpu=1000).diff(res(1, 4), ZERO)
        assert (inc, dec) == (res(2, 0, gpu=1000), res(0, 3))

    def test_exceeded_part_and_max(self) -> None:
        assert exceeded_part(res(3, 1), res(1, 4)) == res(2, 0)
        assert exceeded_part(None, res(1)) == Resource()
        assert helpers_max(res(1, 5, gpu=0), res(2, 1, foo=3)) == res(2, 5, foo=3)
