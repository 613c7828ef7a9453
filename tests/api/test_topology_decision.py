"""A pod's ``volcano.sh/topology-decision`` as Volcano's ``%v`` prints it in a task's
``numaInfo``. The expected lines are what Go printed for the same annotations (a
``json.Unmarshal`` into Volcano's ``PodResourceDecision`` with k8s.io/api v0.31.3, then
``%v``), with the address of an ``inf.Dec`` replaced by the stand-in vspec prints.
"""

# ruff: noqa: E501 (Go's lines, whole, are easier to check against its output)
from __future__ import annotations

import pytest

from vspec.api.topology_decision import numa_resources

GO_PRINTED = [
    (
        '{"numa":{"0":{"cpu":"1","memory":"1Gi","h":"8Ki","a":"7Ki","b":"100Mi"}}}',
        "map[0:map[a:{{7168 0} {<nil>} 7Ki BinarySI} b:{{104857600 0} {<nil>} 100Mi BinarySI} cpu:{{1 0} {<nil>} 1 DecimalSI} h:{{8192 0} {<nil>}  BinarySI} memory:{{1073741824 0} {<nil>} 1Gi BinarySI}]]",
    ),
    (
        '{"numa":{"1":{"cpu":"1.5","memory":"1000","x":2,"y":"1e3","z":"500m","w":"0","v":"00","u":"-0","t":"2k","s":"+1","r":" 3 "}}}',
        "map[1:map[cpu:{{15 -1} {<nil>}  DecimalSI} memory:{{1000 0} {<nil>}  DecimalSI} r:{{3 0} {<nil>} 3 DecimalSI} s:{{1 0} {<nil>} +1 DecimalSI} t:{{2 3} {<nil>} 2k DecimalSI} u:{{0 0} {<nil>}  DecimalSI} v:{{0 0} {<nil>}  DecimalSI} w:{{0 0} {<nil>} 0 DecimalSI} x:{{2 0} {<nil>} 2 DecimalSI} y:{{1 3} {<nil>} 1e3 DecimalExponent} z:{{500 -3} {<nil>} 500m DecimalSI}]]",
    ),
    (
        '{"numa":{"1":{"m":"0.0000000001","n":"123456789012345678901","o":"0.5Ki","p":"1.5Gi","q":"1e-3","r":"1.000"}}}',
        "map[1:map[m:{{0 0} {0xc000000000}  DecimalSI} n:{{0 0} {0xc000000000}  DecimalSI} o:{{0 0} {0xc000000000}  BinarySI} p:{{0 0} {0xc000000000}  BinarySI} q:{{1 -3} {<nil>} 1e-3 DecimalExponent} r:{{1000 -3} {<nil>}  DecimalSI}]]",
    ),
    (
        '{"NUMA":{"1":{"memory":"1Gi"}},"numa":{"2":{"cpu":"1"}}}',
        "map[1:map[memory:{{1073741824 0} {<nil>} 1Gi BinarySI}] 2:map[cpu:{{1 0} {<nil>} 1 DecimalSI}]]",
    ),
    (
        '{"numa":{"1":{"memory":"1Gi"}},"numa":null,"numa":{"3":{"cpu":"2"}}}',
        "map[3:map[cpu:{{2 0} {<nil>} 2 DecimalSI}]]",
    ),
    ('{"numa":{"x":{"cpu":"1"}}}', "map[]"),
    ('{"numa":{"1":{"cpu":"\\u0031"}}}', "map[]"),
    ('{"numa":{"1":{"cpu":null}}}', "map[1:map[cpu:{{0 0} {<nil>}  }]]"),
    ('{"numa":{"1":null}}', "map[1:map[]]"),
    ('{"numa":{"+1":{"cpu":"1"},"01":{"cpu":"2"}}}', "map[1:map[cpu:{{2 0} {<nil>} 2 DecimalSI}]]"),
    ('{"numa":{"1":{"cpu":"1e40"}}}', "map[1:map[cpu:{{1 40} {<nil>}  DecimalExponent}]]"),
    (
        '{"numa":{"1":{"cpu":"0.1m", "m":"1Ei", "n":"9Ei","o":"1.5e3","p":"12E2","q":"1.E2"}}}',
        "map[1:map[cpu:{{1 -4} {<nil>}  DecimalSI} m:{{0 0} {0xc000000000}  BinarySI} n:{{0 0} {0xc000000000}  BinarySI} o:{{15 2} {<nil>}  DecimalExponent} p:{{12 2} {<nil>}  DecimalExponent} q:{{1 2} {<nil>}  DecimalExponent}]]",
    ),
    ("x", "map[]"),
    ("[]", "map[]"),
    ('{"numa":{"1":{"cpu":true}}}', "map[]"),
    ('{"numa":{"1":{"c\\u0070u":"1"}},"other":5}', "map[1:map[cpu:{{1 0} {<nil>} 1 DecimalSI}]]"),
    ('{"numa":{"1":{"cpu":"1"}}} trailing', "map[]"),
    (
        '{"numa":{"1":{"cpu":"-1.5Mi","m":"1.5k","n":"1.0m","o":"5e-10"}}}',
        "map[1:map[cpu:{{0 0} {0xc000000000}  BinarySI} m:{{15 2} {<nil>}  DecimalSI} n:{{10 -4} {<nil>}  DecimalSI} o:{{0 0} {0xc000000000}  DecimalExponent}]]",
    ),
]


@pytest.mark.parametrize(("annotation", "printed"), GO_PRINTED)
def test_a_decision_prints_as_go_prints_it(annotation: str, printed: str) -> None:
    assert numa_resources(annotation) == printed
