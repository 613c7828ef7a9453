"""vspec.gofmt against Go's fmt: every expected string is what Go prints, derived by hand
from the Go sources cited (go1.22 ``src/fmt``) and checked against ``fmt.Printf``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vspec.gofmt import (
    POINTER_ADDRESS,
    Pointer,
    Stringer,
    Struct,
    Typed,
    _Spec,
    _value,
    go_time,
    sprintf,
)


@pytest.mark.parametrize(
    ("fmt", "args", "want"),
    [
        # fmt/doc.go "Format errors": Printf("hi%d") -> hi%!d(MISSING).
        ("hi%d", (), "hi%!d(MISSING)"),
        # The seed's logprint: three verbs, two arguments.
        (
            "Job %s/%s is pending, try to schedule it on node %s",
            ("ns", "job"),
            "Job ns/job is pending, try to schedule it on node %!s(MISSING)",
        ),
        # doc.go: Printf("hi", "guys") -> hi%!(EXTRA string=guys); print.go doPrintf
        # lists every extra as type=value, a nil one as <nil>, after the whole format.
        ("hi", ("guys",), "hi%!(EXTRA string=guys)"),
        ("%s %d\n", (1, 2, 3, "x", None), "%!s(int=1) 2\n%!(EXTRA int=3, string=x, <nil>)"),
        # doc.go: Printf("%d", "hi") -> %!d(string=hi); badVerb prints type=value with %v.
        ("%d", ("hi",), "%!d(string=hi)"),
        ("%s", (Typed("int32", 7),), "%!s(int32=7)"),
        # A named string type takes %v and %s whatever its text: one that reads like
        # fmt's own error is printed as it is; %d refuses it under its type's name.
        (
            "%v %+v %s %d",
            (Typed("main.N", "%!v(int=1)"),) * 2
            + (Typed("main.N", "%!s(x)"), Typed("main.N", "x")),
            "%!v(int=1) %!v(int=1) %!s(x) %!d(main.N=x)",
        ),
        # printArg: a nil argument is <nil> for %v and %!verb(<nil>) otherwise.
        ("%v %s", (None, None), "<nil> %!s(<nil>)"),
        # doc.go: Printf("%") -> %!(NOVERB); "%!" is a verb '!' that takes an argument.
        ("%", (), "%!(NOVERB)"),
        ("%!", (3,), "%!!(int=3)"),
        ("100%%", (), "100%"),
        ("%t %v %+v", (True, False, True), "true false true"),
        (
            "%d|%5d|%-5d|%05d|%+d|%x|%X|%#x",
            (7, 7, 7, 7, 7, 255, 255, 255),
            "7|    7|7    |00007|+7|ff|FF|0xff",
        ),
        ("%5s|%-5s|%.2s|%q", ("ab", "ab", "abc", 'a"b\n'), '   ab|ab   |ab|"a\\"b\\n"'),
        ("%q %c", (65, 66), "'A' B"),
        # Volcano's Resource.String(): %0.2f is flag 0, no width, precision 2.
        ("cpu %0.2f, memory %0.2f", (1000.0, 2147483648.0), "cpu 1000.00, memory 2147483648.00"),
        # %v of a float64 is %g with the shortest digits; strconv's ftoa uses %e when
        # the exponent is < -4 or >= 6 (eprec = 6 for the shortest form).
        (
            "%v %v %v %v %v",
            (100000.0, 1e6, 0.0001, 0.00001, 1234567.5),
            "100000 1e+06 0.0001 1e-05 1.2345675e+06",
        ),
        ("%v %v %v", (1.5, -0.0, float("inf")), "1.5 -0 +Inf"),
        ("%s", (1e20,), "%!s(float64=1e+20)"),
    ],
)
def test_verbs(fmt: str, args: tuple[object, ...], want: str) -> None:
    assert sprintf(fmt, *args) == want


def test_maps_print_in_sorted_key_order() -> None:
    # print.go printValue, case reflect.Map: keys sorted by internal/fmtsort; each key and
    # value printed with the same verb at depth+1, so %s of an int value is a bad verb and
    # a nil interface value is <nil> (case reflect.Interface).
    args = {"x": 1, "a": "s", "b": True, "n": None, "l": [1, "a"], "f": 1.5}
    assert sprintf("%s", args) == (
        "map[a:s b:%!s(bool=true) f:%!s(float64=1.5) l:[%!s(int=1) a] n:<nil> x:%!s(int=1)]"
    )
    assert sprintf("%v", {2: "b", 10: "c", 1: "a"}) == "map[1:a 2:b 10:c]"
    assert sprintf("%s", {}) == "map[]"


def test_structs_name_fields_only_with_plus() -> None:
    value = Struct("main.T", (("A", 1), ("B", "x"), ("C", [])))
    assert sprintf("%v", value) == "{1 x []}"
    assert sprintf("%+v", value) == "{A:1 B:x C:[]}"  # plusV: names, no + sign on ints
    assert sprintf("%d", value) == "{1 %!d(string=x) []}"


def test_pointers() -> None:
    inner = Struct("main.T", (("P", Pointer("*int", 5)), ("N", Pointer("*int"))))
    # case reflect.Pointer: at depth 0 a pointer to a struct prints &{...}; deeper, fmtPointer
    # prints the address (vspec's fixed one) or <nil>.
    assert sprintf("%+v", Pointer("*main.T", inner)) == f"&{{P:{POINTER_ADDRESS} N:<nil>}}"
    assert sprintf("%v", Pointer("*int", 5)) == POINTER_ADDRESS
    assert sprintf("%s", Pointer("*int")) == "%!s(*int=<nil>)"


def test_stringer_is_called_for_v_and_s_only() -> None:
    # handleMethods: Stringer for verbs v s x X q, also inside structs (depth > 0).
    task = Stringer("*api.TaskInfo", "Task (u:ns/n)")
    assert sprintf("%v|%s|%+v", task, task, Struct("S", (("T", task),))) == (
        "Task (u:ns/n)|Task (u:ns/n)|{T:Task (u:ns/n)}"
    )
    assert sprintf("%q", task) == '"Task (u:ns/n)"'


def test_go_time() -> None:
    # time.Time.String(): "2006-01-02 15:04:05.999999999 -0700 MST", fraction trimmed.
    assert go_time(datetime(2026, 12, 1, 8, 0, tzinfo=UTC)) == "2026-12-01 08:00:00 +0000 UTC"
    assert go_time(datetime(2026, 12, 1, 8, 0, 0, 5, tzinfo=UTC)) == (
        "2026-12-01 08:00:00.000005 +0000 UTC"
    )
    assert go_time(datetime(1, 1, 1, tzinfo=UTC)) == "0001-01-01 00:00:00 +0000 UTC"


_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats()
    | st.sampled_from(["", "x", "%!v(int=1)", "a b"])
    | st.builds(Stringer, st.just("T"), st.text(max_size=3))
)
_NAMES = st.sampled_from(["A", "B"])
_GO_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.sampled_from(["k", "a", 3, 1, True]), inner, max_size=3)
        | st.builds(
            Struct, st.just("main.T"), st.lists(st.tuples(_NAMES, inner), max_size=3).map(tuple)
        )
        | st.builds(Pointer, st.just("*main.T"), inner)
        | st.builds(Typed, st.just("main.N"), inner)
    ),
    max_leaves=12,
)


@given(_GO_VALUES, st.booleans())
def test_bare_v_prints_as_every_other_directive_does(value: object, plus: bool) -> None:
    # sprintf takes a shortcut for a bare %v and %+v; it must print what the general
    # printValue path prints (a Typed text that looks like fmt's error included).
    verb = "%+v" if plus else "%v"
    want = "<nil>" if value is None else _value(value, _Spec("v", plus=plus), 0)
    assert sprintf(verb, value) == want
