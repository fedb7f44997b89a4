"""Bad input: a clear ferry.Error naming the field, and nothing sent."""

import os
import signal
import time

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
    assert pub.wait_for_subscribers(1, timeout=10)
    for value, message in BAD:
        with pytest.raises(ferry.Error, match=message):
            pub.publish(value)
        assert sub.take() is None, f"{value!r} was sent"


def test_good_edges_and_numpy_arrays(domain):
    node = ferry.Node("py-edges")
    pub = node.publisher("all")
    sub = node.subscriber("all")
    assert pub.wait_for_subscribers(1, timeout=10)
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
        assert pub.wait_for_subscribers(1, timeout=10)
        pub.publish({"x": 1.0})
        sub.take(timeout=1.0)["nope"]
    with pytest.raises(ferry.Error, match="cannot reach ferryd for domain 'nosuchdomain'"):
        ferry.Node("py-errors", domain="nosuchdomain")
    with pytest.raises(ferry.Error, match="domain"):
        ferry.Node("py-errors", domain="bad domain!")


def test_take_raises_at_max_held(domain):
    node = ferry.Node("py-held")
    pub = node.publisher("pose")
    sub = node.subscriber("pose")
    assert pub.wait_for_subscribers(1, timeout=10)
    for i in range(6):
        pub.publish({"x": float(i)})
    held = [sub.take(timeout=1.0) for _ in range(4)]  # max_held is 4
    assert all(s is not None for s in held)
    for timeout in (None, 0.2):
        start = time.monotonic()
        with pytest.raises(ferry.Error, match="max_held"):
            sub.take(timeout=timeout)
        assert time.monotonic() - start < 1.0
    held.pop().release()
    assert sub.take(timeout=1.0)["x"] == 4.0


# take() and take_many() alike: an error, never an empty answer at once.
TAKES = {
    "take": lambda sub: sub.take(timeout=0.2),
    "take_many": lambda sub: sub.take_many(8, timeout=0.2),
}


def exit_with_check(body, expected):
    """Ends a forked child: status 0 when body() raised a ferry.Error saying `expected`, 2 for
    another ferry.Error, 3 for any other exception, 1 when it raised nothing."""
    code = 1
    try:
        body()
    except ferry.Error as e:
        code = 0 if expected in str(e) else 2
    except BaseException:
        code = 3
    os._exit(code)


@pytest.mark.parametrize("take", sorted(TAKES))
def test_take_raises_in_a_forked_child(domain, take):
    node = ferry.Node("py-parent")
    pub = node.publisher("pose")
    sub = node.subscriber("pose")
    assert pub.wait_for_subscribers(1, timeout=10)
    pid = os.fork()
    if pid == 0:
        exit_with_check(lambda: TAKES[take](sub), "forked")
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("take", sorted(TAKES))
def test_take_raises_once_the_node_is_declared_dead(domain, take):
    ready_r, ready_w = os.pipe()

    def doomed():
        node = ferry.Node("py-doomed")
        sub = node.subscriber("pose")
        os.write(ready_w, b"x")
        time.sleep(1.5)  # stopped meanwhile for longer than timeout_ms (400 ms)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            TAKES[take](sub)

    pid = os.fork()
    if pid == 0:
        exit_with_check(doomed, "declared this node dead")
    try:
        assert os.read(ready_r, 1) == b"x"
        os.kill(pid, signal.SIGSTOP)
        time.sleep(1.2)
        os.kill(pid, signal.SIGCONT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                assert os.waitstatus_to_exitcode(status) == 0
                return
            time.sleep(0.05)
        pytest.fail("the child did not end")
    finally:
        os.close(ready_r)
        os.close(ready_w)
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def test_import_without_numpy_names_the_interpreter():
    """An interpreter that cannot import numpy is told so when it imports ferry."""
    import subprocess
    import sys

    code = "import sys; sys.modules['numpy'] = None; import ferry"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "ImportError: the ferry module needs numpy" in r.stderr, r.stderr
    assert sys.executable in r.stderr
