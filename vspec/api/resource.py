"""Volcano's ``Resource``: milli-CPU, memory bytes and scalar resources as floats.

The arithmetic mirrors ``pkg/scheduler/api/resource_info.go`` exactly, tolerance
(``MIN_RESOURCE``) and the ``Zero``/``Infinity`` treatment of missing scalars included,
because plugin verdicts hinge on those edge cases. Methods that mutate return ``self``
like their Go counterparts so call chains read the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import NamedTuple

from vspec.errors import EngineError
from vspec.model.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    GPU_RESOURCE_NAME,
    IGNORED_DEVICES,
    MEMORY,
    MIN_RESOURCE,
    PODS,
    ResourceVector,
    is_scalar_resource_name,
)

__all__ = [
    "CPU",
    "EPHEMERAL_STORAGE",
    "GPU_RESOURCE_NAME",
    "IGNORED_DEVICES",
    "INFINITY",
    "MEMORY",
    "MIN_RESOURCE",
    "PODS",
    "ZERO",
    "Dimension",
    "Resource",
    "ResourceValues",
    "exceeded_part",
    "helpers_max",
    "is_scalar_resource_name",
    "resource_text",
]


_USER_UNITS = frozenset({MEMORY, PODS})  # kept as they are; the others are milli-units
UNLIMITED = 1e300  # at or above it, a quantity is Volcano's "no limit" (MaxFloat64)


def amount(name: str, quantity: float) -> float:
    """A Resource quantity in the unit a user writes (cores, bytes, cards)."""
    if name in _USER_UNITS:
        return quantity
    return quantity / 1000


def amounts(res: Resource, *, keep_zero: bool = False) -> dict[str, float]:
    """``res`` by resource name in the units a user writes (pods left out); the zero
    dimensions only with ``keep_zero``, the unlimited ones never."""
    out: dict[str, float] = {}
    for name in (CPU, MEMORY, *res.scalars):
        if name == PODS:
            continue
        quantity = res.get(name)
        if (quantity or keep_zero) and quantity < UNLIMITED:
            out[name] = amount(name, quantity)
    return out


class Dimension(Enum):
    """``DimensionDefaultValue``: what a scalar missing on one side counts as."""

    ZERO = 0
    INFINITY = -1


ZERO = Dimension.ZERO
INFINITY = Dimension.INFINITY


def _le(left: float, right: float) -> bool:
    return left < right or abs(left - right) < MIN_RESOURCE


def resource_text(milli_cpu: float, memory: float, scalars: Iterable[tuple[str, float]]) -> str:
    """``Resource.String()``: every quantity with two decimals, scalars in their order."""
    text = f"cpu {milli_cpu:0.2f}, memory {memory:0.2f}"
    for name, q in scalars:
        text += f", {name} {q:0.2f}"
    return text


class ResourceValues(NamedTuple):
    """A resource's quantities at one moment (:meth:`Resource.values`)."""

    milli_cpu: float
    memory: float
    scalars: tuple[tuple[str, float], ...]

    def __str__(self) -> str:
        return resource_text(self.milli_cpu, self.memory, self.scalars)


class Resource(ResourceVector):
    """Volcano's ``Resource``: the plain vector of :mod:`vspec.model.resources` with Volcano's
    comparisons, tolerance and quirks (the asserting ``Sub``, ``LessEqual`` with dimension
    defaults, ``Diff``)."""

    __slots__ = ()

    def sub(self, rr: Resource) -> Resource:
        """The asserting ``Sub``: Volcano panics (PANIC_ON_ERROR defaults on) when short."""
        if not rr.less_equal(self, ZERO):
            raise EngineError(
                f"resource is not sufficient to do operation: <{self}> sub <{rr}> "
                "(an asserting Sub: Volcano v1.11 panics here)"
            )
        return self.sub_without_assert(rr)

    def multi(self, ratio: float) -> Resource:
        self.milli_cpu *= ratio
        self.memory *= ratio
        for name in self.scalars:
            self.scalars[name] *= ratio
        return self

    def min_dimension_resource(self, rr: Resource, dflt: Dimension) -> Resource:
        self.milli_cpu = min(self.milli_cpu, rr.milli_cpu)
        self.memory = min(self.memory, rr.memory)
        for name, q in self.scalars.items():
            if name in rr.scalars:
                self.scalars[name] = min(q, rr.scalars[name])
            elif dflt is ZERO:
                self.scalars[name] = 0.0
        return self

    # -- comparison ---------------------------------------------------------------------
    def less(self, rr: Resource, dflt: Dimension) -> bool:
        if not (self.milli_cpu < rr.milli_cpu and self.memory < rr.memory):
            return False
        if dflt is INFINITY and any(n not in self.scalars for n in rr.scalars):
            return False
        for name, left in self.scalars.items():
            if name not in rr.scalars:
                if dflt is INFINITY:
                    continue
                right = 0.0
            else:
                right = rr.scalars[name]
            if not left < right:
                return False
        return True

    def less_equal(self, rr: Resource, dflt: Dimension) -> bool:
        left, right = self.milli_cpu, rr.milli_cpu
        if not (left < right or abs(left - right) < MIN_RESOURCE):
            return False
        left, right = self.memory, rr.memory
        if not (left < right or abs(left - right) < MIN_RESOURCE):
            return False
        rs = rr.scalars
        if dflt is INFINITY:
            if any(n not in self.scalars for n in rs):
                return False
            for name, left in self.scalars.items():
                if name in rs and not _le(left, rs[name]):
                    return False
            return True
        for name, left in self.scalars.items():  # a loop: faster than all() here
            right = rs.get(name, 0.0)
            if not (left < right or abs(left - right) < MIN_RESOURCE):
                return False
        return True

    def less_equal_with_resources_name(self, rr: Resource, dflt: Dimension) -> list[str]:
        """The names of the dimensions that do not fit (empty when ``self <= rr``)."""
        short = []
        if not _le(self.milli_cpu, rr.milli_cpu):
            short.append(CPU)
        if not _le(self.memory, rr.memory):
            short.append(MEMORY)
        for name, left in self.scalars.items():
            if name not in rr.scalars and dflt is INFINITY:
                continue
            if not _le(left, rr.scalars.get(name, 0.0)):
                short.append(name)
        return short

    def less_equal_with_dimension(self, rr: Resource, req: Resource | None) -> bool:
        if req is None:
            return self.less_equal(rr, ZERO)
        if req.milli_cpu > 0 and self.milli_cpu > rr.milli_cpu:
            return False
        if req.memory > 0 and self.memory > rr.memory:
            return False
        if not self.scalars:
            return True
        for name, q in req.scalars.items():
            if name == PODS:
                continue
            if q > 0 and self.scalars.get(name, 0.0) > rr.scalars.get(name, 0.0):
                return False
        return True

    def less_partly(self, rr: Resource, dflt: Dimension) -> bool:
        if self.milli_cpu < rr.milli_cpu or self.memory < rr.memory:
            return True
        if dflt is ZERO and any(n not in self.scalars for n in rr.scalars):
            return True
        for name, left in self.scalars.items():
            if name not in rr.scalars:
                if dflt is INFINITY:
                    return True
                right = 0.0
            else:
                right = rr.scalars[name]
            if left < right:
                return True
        return False

    def less_equal_partly(self, rr: Resource, dflt: Dimension) -> bool:
        """``LessEqualPartly``: some dimension is at most ``rr``'s (v1.10.0's elastic
        resources read it)."""
        if _le(self.milli_cpu, rr.milli_cpu) or _le(self.memory, rr.memory):
            return True
        if dflt is ZERO and any(n not in self.scalars for n in rr.scalars):
            return True
        for name, left in self.scalars.items():
            if name not in rr.scalars and dflt is INFINITY:
                return True
            if _le(left, rr.scalars.get(name, 0.0)):
                return True
        return False

    def equal(self, rr: Resource) -> bool:
        def eq(a: float, b: float) -> bool:
            return a == b or abs(a - b) < MIN_RESOURCE

        if not eq(self.milli_cpu, rr.milli_cpu) or not eq(self.memory, rr.memory):
            return False
        return all(eq(q, rr.scalars.get(n, 0.0)) for n, q in self.scalars.items())

    def diff(self, rr: Resource, dflt: Dimension) -> tuple[Resource, Resource]:
        """(increased, decreased) per dimension, missing scalars filled with ``dflt``."""
        left, right = self.clone(), rr.clone()
        fill = float(dflt.value)
        for name in list(left.scalars):
            right.scalars.setdefault(name, fill)
        for name in list(right.scalars):
            left.scalars.setdefault(name, fill)
        inc, dec = Resource(), Resource()
        if left.milli_cpu > right.milli_cpu:
            inc.milli_cpu = left.milli_cpu - right.milli_cpu
        else:
            dec.milli_cpu = right.milli_cpu - left.milli_cpu
        if left.memory > right.memory:
            inc.memory = left.memory - right.memory
        else:
            dec.memory = right.memory - left.memory
        for name, lq in left.scalars.items():
            rq = right.scalars.get(name, 0.0)
            if lq == -1.0:
                inc.scalars[name] = lq
            elif rq == -1.0:
                dec.scalars[name] = rq
            elif lq > rq:
                inc.scalars[name] = lq - rq
            else:
                dec.scalars[name] = rq - lq
        return inc, dec

    # -- presentation -------------------------------------------------------------------
    def __str__(self) -> str:
        return resource_text(self.milli_cpu, self.memory, self.scalars.items())

    def values(self) -> ResourceValues:
        """The quantities as they are now, printing as the resource does: what a log
        line formatted only when read keeps of a resource that changes afterwards."""
        return ResourceValues(self.milli_cpu, self.memory, tuple(self.scalars.items()))

    def __repr__(self) -> str:
        return f"Resource({self})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.scalars == other.scalars
        )

    __hash__ = None  # type: ignore[assignment]


def exceeded_part(left: Resource | None, right: Resource | None) -> Resource:
    """``ExceededPart``: per dimension max(left - right, 0)."""
    if right is None:
        return left if left is not None else Resource()
    if left is None:
        return Resource()
    return left.diff(right, ZERO)[0]


def unguaranteed(total: Resource, guarantee: Resource, *, exceeded: bool) -> Resource:
    """What the queues' guarantees leave of the total, for a queue's realCapability:
    per dimension never below zero (``ExceededPart``, v1.11.0), or v1.10.0's asserting
    ``Sub``, a panic when the guarantees exceed the total (gate
    real_capability_exceeded_part, upstream 1cba5c359 "fix panic when sub total guarantee")."""
    return exceeded_part(total, guarantee) if exceeded else total.clone().sub(guarantee)


def helpers_max(left: Resource, right: Resource) -> Resource:
    """``helpers.Max``: per-dimension max, keeping only positive scalars."""
    result = Resource(max(left.milli_cpu, right.milli_cpu), max(left.memory, right.memory))
    for name, q in left.scalars.items():
        if q > 0:
            result.scalars[name] = q
    for name, q in right.scalars.items():
        if q > 0:
            result.scalars[name] = max(result.scalars.get(name, 0.0), q)
    return result
