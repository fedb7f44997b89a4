"""Python publisher to Python subscriber: dicts, records, loans, bytes, history."""

import numpy as np
import pytest

import ferry
from conftest import ports, wait_until


def test_dict_round_trip(domain):
    _, pub, sub = ports()
    assert sub.take() is None
    r = pub.publish({"stamp_ns": 7, "x": 1.5, "frame": "map"})
    assert (r.delivered, r.dropped, r.overwritten, r.timed_out) == (1, 0, 0, 0)
    with sub.take(timeout=1.0) as s:
        assert s["x"] == 1.5 and s["y"] == 0.0 and s["frame"] == "map" and s["stamp_ns"] == 7
        assert s.to_dict() == {"stamp_ns": 7, "x": 1.5, "y": 0.0, "frame": "map"}
        assert s.array.dtype == sub.dtype and sub.dtype.itemsize == 40 and sub.dtype.isalignedstruct
        assert s.array["x"] == 1.5 and not s.array.flags.writeable
        with pytest.raises(ValueError):
            s.array["x"] = 2.0
    assert s.released
    assert sub.take() is None


def test_released_sample_raises_and_views_keep_it(domain):
    _, pub, sub = ports()
    pub.publish({"x": 3.0})
    s = sub.take(timeout=1.0)
    view = s.array
    data = s.data
    s.release()
    for use in (lambda: s.array, lambda: s.data, lambda: s["x"], lambda: s.to_dict()):
        with pytest.raises(ferry.Error, match="was released"):
            use()
    # Views taken before release() hold the sample: still the published values.
    assert view["x"] == 3.0 and bytes(data[8:16]) == np.float64(3.0).tobytes()
    del view, data


def test_numpy_record_publish(domain):
    _, pub, sub = ports()
    record = np.zeros((), dtype=pub.dtype)
    record["x"], record["frame"] = -4.25, b"odom"
    pub.publish(record)
    pub.publish(record[()])  # a numpy.void scalar too
    for _ in range(2):
        assert sub.take(timeout=1.0).to_dict()["frame"] == "odom"
    with pytest.raises(ferry.Error, match="numpy record of dtype"):
        pub.publish(np.zeros((), dtype=[("x", "f8")]))


def test_loan_publishes_in_place(domain):
    _, pub, sub = ports()
    with pub.loan() as loan:
        loan.array["x"] = 9.5
        loan.array["frame"] = b"loaned"
        r = loan.publish()
    assert r.delivered == 1
    s = sub.take(timeout=1.0)
    assert s["x"] == 9.5 and s["frame"] == "loaned"
    with pytest.raises(ferry.Error, match="published or discarded"):
        loan.array


def test_loan_refuses_publish_while_a_view_lives(domain):
    _, pub, sub = ports()
    loan = pub.loan()
    view = loan.array
    with pytest.raises(ferry.Error, match="numpy view"):
        loan.publish()
    assert sub.take() is None
    del view
    assert loan.publish().delivered == 1
    assert sub.take(timeout=1.0) is not None


def test_bytes_topic(domain):
    _, pub, sub = ports("text")
    assert pub.publish(b"hello ferry").delivered == 1
    pub.publish(bytearray(b"\x00\x01"))
    s = sub.take(timeout=1.0)
    assert bytes(s.data) == b"hello ferry" and s.data.readonly and s.size == 11
    assert bytes(sub.take(timeout=1.0).data) == b"\x00\x01"
    with pytest.raises(ferry.Error, match="max_size"):
        pub.publish(bytes(5000))
    with pytest.raises(ferry.Error, match="carries bytes"):
        pub.publish({"x": 1})


def test_history_for_a_late_subscriber(domain):
    node = ferry.Node("py-history")
    pub = node.publisher("pose/history")
    for i in range(5):
        pub.publish({"x": float(i)})
    late = node.subscriber("pose/history")
    got = [s["x"] for s in iter(lambda: late.take(timeout=0.5), None)]
    assert got == [2.0, 3.0, 4.0]


def test_bytes_loan(domain):
    _, pub, sub = ports("text")
    with pub.loan(5) as loan:
        loan.data[:] = b"abcde"
        assert loan.publish().delivered == 1
    assert bytes(sub.take(timeout=1.0).data) == b"abcde"
    with pytest.raises(ferry.Error, match="loan\\(size\\) needs"):
        pub.loan()
    with pub.loan(3):
        pass  # not published: the chunk goes back
    assert sub.take() is None


def test_wait_for_subscribers_times_out_without_one(domain):
    pub = ferry.Node("lonely").publisher("pose")
    assert not pub.wait_for_subscribers(1, timeout=0.05)
    assert pub.wait_for_subscribers(0, timeout=0)


def test_sample_info_sequence_publisher_and_time(domain):
    import time

    node, pub, sub = ports()
    other = node.publisher("pose")  # a second publisher on the same topic
    assert other.wait_for_subscribers(1, timeout=10)
    before = time.time_ns()
    for x in range(3):
        pub.publish({"x": float(x)})
    other.publish({"x": 9.0})
    after = time.time_ns()
    infos = {}
    for _ in range(4):
        s = sub.take(timeout=1.0)
        infos.setdefault(s.info.publisher_id, []).append((s.info.sequence, s["x"]))
        assert before <= s.info.publish_time_ns <= after
        s.release()
        with pytest.raises(ferry.Error, match="was released"):
            s.info
    assert len(infos) == 2  # two publishers, two ids
    assert sorted(infos.values()) == [[(0, 0.0), (1, 1.0), (2, 2.0)], [(0, 9.0)]]
