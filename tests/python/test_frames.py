"""1080p frames loaned in C++ and read in Python without a copy; a killed Python
subscriber's held frames go back to the pool."""

import signal
import sys
import textwrap

import numpy as np

import ferry
from conftest import finish, peer_path, pool_in_use, read_line, wait_until

PIXELS = 1920 * 1080 * 3 // 2


def mapping_of(address):
    """The /proc/self/maps line whose range holds `address`."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            if start <= address < end:
                return start, end, line.split()[-1]
    return None


def test_frames_are_views_into_the_pool(domain):
    sub = ferry.Node("py-viewer").subscriber("frames")
    peer = domain.spawn([peer_path(), "pub-frames", "frames", "3"])
    try:
        assert read_line(peer) == "published"
        ramp = np.arange(PIXELS, dtype=np.uint32).astype(np.uint8)
        for seq in range(3):
            with sub.take(timeout=2.0) as s:
                pixels = s["pixels"]
                assert s["seq"] == seq and s["width"] == 1920 and pixels.shape == (PIXELS,)
                assert np.array_equal(pixels, ramp + np.uint8(seq))  # uint8: wraps like C++
                # No copy: the array's bytes lie inside the domain's shared-memory pool.
                address = s.array.__array_interface__["data"][0]
                start, end, path = mapping_of(address)
                assert path.startswith(f"/dev/shm/ferry.{domain.name}.")
                assert start <= address and address + s.array.nbytes <= end
                assert pixels.__array_interface__["data"][0] == address + 24
                del pixels
    finally:
        finish(peer)


HOLDER = textwrap.dedent("""
    import sys, time, ferry
    sub = ferry.Node("py-holder").subscriber("frames")
    held = [sub.take(timeout=5.0) for _ in range(int(sys.argv[1]))]
    assert all(s is not None for s in held)
    views = [s.array for s in held]
    print("held", flush=True)
    time.sleep(30)
""")


def test_killed_python_subscriber_gives_its_frames_back(domain):
    holder = domain.spawn([sys.executable, "-c", HOLDER, "3"])
    peer = domain.spawn([peer_path(), "pub-frames", "frames", "3"])
    try:
        assert read_line(peer) == "published"
        assert read_line(holder) == "held"
        assert pool_in_use(domain) >= 3
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=5)
        finish(peer)
        assert wait_until(lambda: pool_in_use(domain) == 0, timeout=5.0), domain.ferry_json("pool")
    finally:
        holder.kill()
        holder.wait()
        peer.kill()
        peer.wait()


def test_a_view_holds_a_released_frame_until_it_goes(domain):
    node = ferry.Node("py-frames")
    pub = node.publisher("frames")
    sub = node.subscriber("frames")
    assert pub.wait_for_subscribers(1, timeout=10)
    with pub.loan() as loan:
        loan.array["seq"] = 5
        loan.array["pixels"][:4] = [1, 2, 3, 4]
        loan.publish()
    s = sub.take(timeout=1.0)
    pixels = s["pixels"]
    s.release()
    assert pool_in_use(domain) == 1  # the view holds the chunk
    assert list(pixels[:4]) == [1, 2, 3, 4]
    del pixels
    assert pool_in_use(domain) == 0
