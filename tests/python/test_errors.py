"""Bad input: a clear ferry.Error naming the field, and nothing sent."""

import numpy as np
import pytest

import ferry
from conftest import wait_until

BAD = [
    ({"nope": 1}, "field 'nope': type All has no such field"),
    ({"inner": {"colour": 1}}, "field 'inner.colour': type Inner has no such field"),
    ({"i32": "7"}, "field 'i32': expected an integer \\(i32\\), got str"),
    ({"i8": 1.5}, "field 'i8': expected an integer"),
    ({"b": 1}, "field 'b': expected a bool, got int"),
    ({"f64": "x"}, "field 'f64': expected a number"),
    ({"u8": 256}, "field 'u8': 256 is out of range for u8 \\(0 to 255\\)"),
    ({"u64": -1}, "field 'u64': -1 is out of range for u64"),
    ({"i64": 2**63}, "field 'i64': 9223372036854775808 is out of range for i64"),
    ({"f32": 1e39}, "field 'f32': .* is out of range for f32"),
    ({"name": "x" * 16}, "field 'name': a string of 16 bytes does not fit char\\[16\\]"),
    ({"arr": [1, 2, 3, 4]}, "field 'arr': a list of 4 elements does not fit i32\\[3\\]"),
    ({"arr": np.array([1, 2**40])}, "field 'arr': an array of int64 cannot be stored as i32"),
    ({"inners": [{}, {"label": 5}]}, "field 'inners\\[1\\].label': expected a str"),
    ({"inner": [1]}, "field 'inner': expected a dict for type Inner, got list"),
    ([1, 2], "publish\\(\\) on topic 'all' takes a dict or a numpy record of type All, not list"),
]


def test_bad_dict_raises_before_sending(domain):
    node = ferry.Node("py-errors")
    pub = node.publisher("all")
    sub = node.subscriber("all")
    assert wait_until(lambda: pub.subscriber_count == 1)
    for value, message in BAD:
        with pytest.raises(ferry.Error, match=message):
            pub.publish(value)
        assert sub.take() is None, f"{value!r} was sent"


def test_good_edges_and_numpy_arrays(domain):
    node = ferry.Node("py-edges")
    pub = node.publisher("all")
    sub = node.subscriber("all")
    assert wait_until(lambda: pub.subscriber_count == 1)
    pub.publish({"name": "x" * 15, "arr": np.array([7, -8], dtype=np.int64), "u8": np.uint8(9),
                 "f32": 3, "b": np.bool_(True)})
    d = sub.take(timeout=1.0).to_dict()
    assert d["name"] == "x" * 15 and d["arr"] == [7, -8, 0] and d["u8"] == 9 and d["f32"] == 3.0
    assert d["b"] is True


def test_errors_name_the_problem(domain):
    node = ferry.Node("py-errors")
    with pytest.raises(ferry.Error, match="has no field 'nope'"):
        pub = node.publisher("pose")
        sub = node.subscriber("pose")
        assert wait_until(lambda: pub.subscriber_count == 1)
        pub.publish({"x": 1.0})
        sub.take(timeout=1.0)["nope"]
    with pytest.raises(ferry.Error, match="cannot reach ferryd for domain 'nosuchdomain'"):
        ferry.Node("py-errors", domain="nosuchdomain")
    with pytest.raises(ferry.Error, match="domain"):
        ferry.Node("py-errors", domain="bad domain!")


def test_import_without_numpy_names_the_interpreter():
    """An interpreter that cannot import numpy is told so when it imports ferry."""
    import subprocess
    import sys

    code = "import sys; sys.modules['numpy'] = None; import ferry"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "ImportError: the ferry module needs numpy" in r.stderr, r.stderr
    assert sys.executable in r.stderr
