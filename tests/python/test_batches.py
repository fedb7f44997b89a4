"""publish_many(numpy records) and take_many(n): batches from Python (docs/batches.md)."""

import sys
import textwrap

import numpy as np
import pytest

import ferry
from conftest import SHARED_TYPES, finish, pool_in_use, ports, read_line, wait_until

BLOCK_TOPICS = """topics:
  - { name: stream, type: Pose, capacity: 16, policy: block, block_timeout_ms: 5000 }
  - { name: text, type: bytes, max_size: 4KiB }
"""


def poses(dtype, first, n):
    records = np.zeros(n, dtype=dtype)
    records["stamp_ns"] = np.arange(first, first + n)
    records["x"] = records["stamp_ns"] * 0.5
    records["frame"] = b"batch"
    return records


def test_publish_many_then_take_many_round_trip(domain):
    _, pub, sub = ports()
    assert len(sub.take_many(8)) == 0 and sub.take_many(8).dtype == sub.dtype
    r = pub.publish_many(poses(pub.dtype, 0, 10))
    assert (r.delivered, r.dropped, r.overwritten, r.timed_out) == (10, 0, 0, 0)
    got = sub.take_many(4, timeout=1.0)  # our node may learn of the queue after the publisher
    assert got.dtype == sub.dtype and list(got["stamp_ns"]) == [0, 1, 2, 3]
    rest = sub.take_many(100, timeout=1.0)
    assert list(rest["stamp_ns"]) == list(range(4, 10))
    assert list(rest["x"]) == [i * 0.5 for i in range(4, 10)] and rest["frame"][0] == b"batch"
    assert len(sub.take_many(100)) == 0


def test_drop_oldest_batch_larger_than_the_queue_keeps_the_newest(domain):
    _, pub, sub = ports()  # pose: capacity 16, drop_oldest
    r = pub.publish_many(poses(pub.dtype, 0, 40))
    assert (r.delivered, r.overwritten) == (40, 24)
    assert list(sub.take_many(64, timeout=1.0)["stamp_ns"]) == list(range(24, 40))


def test_empty_array_is_a_no_op_and_bad_input_raises(domain):
    _, pub, sub = ports()
    r = pub.publish_many(np.zeros(0, dtype=pub.dtype))
    assert (r.delivered, r.dropped) == (0, 0)
    with pytest.raises(ferry.Error, match="records of dtype"):
        pub.publish_many(np.zeros(3, dtype=[("x", "f8")]))
    with pytest.raises(ferry.Error, match="numpy array of records"):
        pub.publish_many([{"x": 1.0}])
    text_pub = ferry.Node("py-text").publisher("text")
    with pytest.raises(ferry.Error, match="bytes topic"):
        text_pub.publish_many(np.zeros(2, dtype="u1"))
    assert sub.take() is None


def test_batches_from_another_process_arrive_in_order(bare_domain):
    bare_domain.start(SHARED_TYPES + BLOCK_TOPICS)
    node = ferry.Node("py-reader")
    sub = node.subscriber("stream")
    child = bare_domain.spawn([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        import numpy as np
        import ferry
        pub = ferry.Node("py-writer").publisher("stream")
        assert pub.wait_for_subscribers(1, timeout=10)
        sent = 0
        for n in [1, 7, 100, 16, 3, 250, 123]:
            records = np.zeros(n, dtype=pub.dtype)
            records["stamp_ns"] = np.arange(sent, sent + n)
            r = pub.publish_many(records)
            assert (r.delivered, r.timed_out) == (n, 0), r
            sent += n
        print(sent, flush=True)
        sys.stdin.read()
    """)])
    total = 500
    got = []
    while len(got) < total:
        batch = sub.take_many(37, timeout=5.0)
        assert len(batch) > 0, "nothing within 5 s"
        got.extend(int(s) for s in batch["stamp_ns"])
    assert got == list(range(total))
    assert read_line(child) == str(total)
    finish(child)
    assert wait_until(lambda: len(sub.take_many(8)) == 0)


def test_loan_many_writes_records_in_place_and_publishes_them_as_one_batch(domain):
    _, pub, sub = ports()  # pose: capacity 16, drop_oldest
    with pub.loan_many(10) as batch:
        assert len(batch) == 10 and batch.array.dtype == pub.dtype
        batch.array["stamp_ns"] = np.arange(10)
        batch.record(9)["x"] = 4.5
        batch.shrink(8)  # the last two go back unsent
        assert len(batch) == 8 and len(batch.array) == 8
        r = batch.publish()
    assert (r.delivered, r.dropped, r.overwritten, r.timed_out) == (8, 0, 0, 0)
    got = sub.take_many(64, timeout=1.0)
    assert list(got["stamp_ns"]) == list(range(8))
    with pub.loan_many(3) as batch:  # a with block that does not publish gives it back
        batch.array["stamp_ns"] = 99
    r = pub.publish_many(poses(pub.dtype, 100, 1))
    assert r.delivered == 1
    assert list(sub.take_many(8, timeout=1.0)["stamp_ns"]) == [100]


def test_loan_many_refusals_are_errors_that_name_the_reason(domain):
    _, pub, sub = ports()
    with pytest.raises(ferry.Error, match="at most 16 samples"):
        pub.loan_many(17)
    batch = pub.loan_many(4)
    with pytest.raises(ferry.Error, match="a loaned batch is out already"):
        pub.loan_many(1)
    view = batch.array
    with pytest.raises(ferry.Error, match="numpy view"):
        batch.publish()
    with pytest.raises(ferry.Error, match="numpy view"):
        batch.shrink(2)
    view["stamp_ns"] = np.arange(4)
    del view
    assert batch.publish().delivered == 4
    with pytest.raises(ferry.Error, match="published or discarded"):
        batch.publish()
    with pytest.raises(ferry.Error, match="record 4"):
        pub.loan_many(4).record(4)
    text_pub = ferry.Node("py-text").publisher("text")
    with pytest.raises(ferry.Error, match="bytes"):
        text_pub.loan_many(2)
    assert list(sub.take_many(8, timeout=1.0)["stamp_ns"]) == [0, 1, 2, 3]


def test_loan_many_of_frames_gives_a_pool_chunk_per_record(domain):
    node = ferry.Node("py-frames")
    pub = node.publisher("frames")
    sub = node.subscriber("frames")
    assert pub.wait_for_subscribers(1, timeout=10)
    with pub.loan_many(2) as batch:
        with pytest.raises(ferry.Error, match="record\\(i\\)"):
            batch.array
        for i in range(2):
            record = batch.record(i)
            record["seq"] = 10 + i
            record["pixels"][:3] = [i, i, i]
            del record
        assert pool_in_use(domain) == 2
        r = batch.publish()
    assert r.delivered == 2
    for i in range(2):
        s = sub.take(timeout=1.0)
        assert s["seq"] == 10 + i and list(s["pixels"][:3]) == [i, i, i]
        s.release()
    assert wait_until(lambda: pool_in_use(domain) == 0)


def test_loaned_batches_from_another_process_arrive_in_order(bare_domain):
    bare_domain.start(SHARED_TYPES + BLOCK_TOPICS)
    node = ferry.Node("py-reader")
    sub = node.subscriber("stream")
    child = bare_domain.spawn([sys.executable, "-c", textwrap.dedent("""
        import sys
        import numpy as np
        import ferry
        pub = ferry.Node("py-writer").publisher("stream")
        assert pub.wait_for_subscribers(1, timeout=10)
        sent = 0
        for n in [1, 7, 16, 3, 16, 9]:
            with pub.loan_many(16) as batch:
                batch.array["stamp_ns"] = np.arange(sent, sent + 16)
                batch.shrink(n)
                r = batch.publish()
            assert (r.delivered, r.timed_out) == (n, 0), r
            sent += n
        print(sent, flush=True)
        sys.stdin.read()
    """)])
    total = 52
    got = []
    while len(got) < total:
        batch = sub.take_many(37, timeout=5.0)
        assert len(batch) > 0, "nothing within 5 s"
        got.extend(int(s) for s in batch["stamp_ns"])
    assert got == list(range(total))
    assert read_line(child) == str(total)
    finish(child)
