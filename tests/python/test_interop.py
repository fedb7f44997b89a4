"""C++ (typed structs) and Python on the same topics: every field type of a nested type."""

import json

import numpy as np

import ferry
from conftest import finish, peer_path, read_line, wait_until

INNER = {"flag": True, "label": "in", "value": 1.5}
ALL = {
    "b": True, "i8": -128, "i16": -32768, "i32": 2147483647, "i64": -2**63, "u8": 255,
    "u16": 65535, "u32": 4294967295, "u64": 2**64 - 1, "f32": float(np.float32(0.1)),
    "f64": -2.25, "name": "hello ferry", "arr": [1, -2, 3], "inner": INNER,
    "inners": [{"flag": False, "label": "a", "value": 2.5},
               {"flag": True, "label": "bcdefgh", "value": -3.5}],
}


def test_cpp_publisher_python_subscriber(domain):
    sub = ferry.Node("py-sub").subscriber("all")
    peer = domain.spawn([peer_path(), "pub-all", "all"])
    try:
        assert read_line(peer) == "published"
        s = sub.take(timeout=2.0)
        assert s is not None
        assert s.to_dict() == ALL
        assert s["inners"][1]["label"] == b"bcdefgh" and s["inner"] == INNER
        assert list(s["arr"]) == [1, -2, 3] and s["u64"] == 2**64 - 1
        assert s.array["f32"].dtype == np.float32 and s.array["f32"] == np.float32(0.1)
        offsets = {name: sub.dtype.fields[name][1] for name in sub.dtype.names}
        assert offsets["i64"] == 8 and offsets["u64"] == 24 and offsets["inner"] == 80
        assert sub.dtype.itemsize == 152
    finally:
        finish(peer)


def test_python_publisher_cpp_subscriber(domain):
    pub = ferry.Node("py-pub").publisher("all")
    peer = domain.spawn([peer_path(), "sub-all", "all"])
    try:
        assert read_line(peer) == "ready"
        assert pub.wait_for_subscribers(1, timeout=10)
        assert pub.publish(ALL).delivered == 1
        got = json.loads(read_line(peer))
        assert got == ALL
    finally:
        finish(peer)
