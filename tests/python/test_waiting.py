"""Waiting: WaitSet, the GIL released while waiting, one thread per port."""

import threading
import time

import pytest

import ferry
from conftest import ports, wait_until


def test_wait_set_returns_ready_subscribers(domain):
    node = ferry.Node("py-waitset")
    subs = [node.subscriber("pose"), node.subscriber("pose/other")]
    pub = node.publisher("pose/other")
    ws = ferry.WaitSet()
    assert [ws.attach(s) for s in subs] == [0, 1]
    assert wait_until(lambda: pub.subscriber_count == 1 and subs[1].publisher_count == 1)
    # The new publisher is news the WaitSet may report once (nothing to take): let it pass.
    assert wait_until(lambda: ws.wait(timeout=0) == [], timeout=1.0)
    start = time.monotonic()
    assert ws.wait(timeout=0.05) == []
    assert time.monotonic() - start >= 0.04
    pub.publish({"x": 1.0})
    ready = ws.wait(timeout=1.0)
    assert ready == [subs[1]] and ready[0].take()["x"] == 1.0


def test_waiting_releases_the_gil(domain):
    _, pub, sub = ports()
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set() and len(ticks) < 100_000:
            ticks.append(1)
            time.sleep(0.001)

    thread = threading.Thread(target=tick)
    thread.start()
    before = len(ticks)
    assert sub.take(timeout=0.3) is None
    during = len(ticks) - before
    stop.set()
    thread.join()
    assert during >= 10, f"the other thread ran {during} times while take() waited"


def test_bad_timeout(domain):
    _, _, sub = ports()
    with pytest.raises(ferry.Error, match="timeout"):
        sub.take(timeout=-1)


def test_a_port_waiting_in_one_thread_refuses_another(domain):
    _, pub, sub = ports()
    got = []
    waiting = threading.Thread(target=lambda: got.append(sub.take(timeout=5.0)))
    waiting.start()

    def refused():
        """True once the other thread waits in take(): then this one is refused."""
        try:
            sub.take()
        except ferry.Error as e:
            assert "in use by another thread" in str(e)
            return True
        return False

    assert wait_until(refused, timeout=4.0)
    pub.publish({"x": 2.0})  # ends the other thread's wait
    waiting.join()
    assert got[0]["x"] == 2.0
    pub.publish({"x": 3.0})  # and the port is free again
    assert sub.take(timeout=1.0)["x"] == 3.0
