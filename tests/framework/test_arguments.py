"""Plugin arguments declared once: one default for ``vspec plugins`` and for reading,
read with Go's type rules (``framework/arguments.go``)."""

from __future__ import annotations

from vspec.framework.arguments import Arguments
from vspec.framework.interface import (
    ArgumentSpec,
    BoolArgument,
    FloatArgument,
    IntArgument,
    StrArgument,
)
from vspec.framework.log import Klog
from vspec.framework.registry import registered_plugins
from vspec.plugins.usage import USAGE_WEIGHT

WEIGHT = IntArgument("x.weight", 5, "weight")


def test_the_declared_default_is_what_is_listed_and_what_is_read() -> None:
    assert (WEIGHT.name, WEIGHT.type, WEIGHT.default, WEIGHT.help) == (
        "x.weight",
        "int",
        "5",
        "weight",
    )
    assert WEIGHT.read(Arguments({}, Klog())) == 5
    assert WEIGHT.read(Arguments({"x.weight": 7}, Klog())) == 7
    assert WEIGHT.read(Arguments({}, Klog()), default=3) == 3  # a value kept across sessions


def test_go_type_rules_keep_the_default_with_a_warning() -> None:
    log = Klog()
    assert WEIGHT.read(Arguments({"x.weight": 1.0}, log)) == 5
    assert log.texts() == ["Could not parse argument: 1.0 for key x.weight to int"]
    assert FloatArgument("f", 1.5).read(Arguments({"f": 2}, Klog())) == 2.0
    assert BoolArgument("b", True).read(Arguments({"b": "false"}, Klog())) is True
    assert StrArgument("s", "x").read(Arguments({"s": 3}, Klog())) == "x"


def test_defaults_are_shown_as_the_conf_writes_them() -> None:
    shown = [
        a.default for a in (BoolArgument("b", False), FloatArgument("f", 1.2), StrArgument("s", ""))
    ]
    assert shown == ["false", "1.2", ""]


def test_vspec_plugins_lists_the_declared_argument() -> None:
    [usage] = [r for r in registered_plugins() if r.name == "usage"]
    assert USAGE_WEIGHT in usage.arguments
    assert isinstance(USAGE_WEIGHT, ArgumentSpec) and USAGE_WEIGHT.default == "5"
