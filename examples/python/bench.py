#!/usr/bin/env python3
"""Python take of a 64 B sample and of a 1080p frame (3,110,424 B), next to what a Python user
would pick instead: a multiprocessing Pipe and a Unix stream socket carrying the same bytes.

Starts its own ferryd (examples/python/bench.yaml, a private domain and runtime directory).
Per message, timed: ferry: take() + .array (a numpy view of the sample) + release(), the
sample published beforehand; pipe: Connection.recv_bytes(); socket: recv_into() a preallocated
buffer and a numpy view of it; the baselines' sender is a second process writing ahead.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/bench.py [--rounds N]
"""

import argparse
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SMALL, FRAME = 64, 3110424


def percentile(samples, p):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def bench_ferry(topic, rounds):
    import ferry
    node = ferry.Node("py_bench")
    pub = node.publisher(topic)
    sub = node.subscriber(topic)
    pub.wait_for_subscribers(1, timeout=10)
    big = pub.dtype.itemsize > 4096
    times = []
    clock = time.perf_counter_ns
    for _ in range(rounds):
        if big:
            with pub.loan() as loan:  # zero copy: the frame is written in place (not timed)
                loan.publish()
        else:
            pub.publish({"stamp_ns": 1})
        t0 = clock()
        s = sub.take()
        view = s.array
        s.release()
        t1 = clock()
        assert view.nbytes == pub.dtype.itemsize
        del view
        times.append(t1 - t0)
    return times


def pipe_sender(conn, size, rounds):
    payload = bytes(size)
    for _ in range(rounds):
        conn.send_bytes(payload)
    conn.close()


def bench_pipe(size, rounds):
    reader, writer = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.Process(target=pipe_sender, args=(writer, size, rounds))
    child.start()
    writer.close()
    times = []
    clock = time.perf_counter_ns
    time.sleep(0.05)  # let the sender fill the pipe
    for _ in range(rounds):
        t0 = clock()
        data = reader.recv_bytes()
        t1 = clock()
        assert len(data) == size
        times.append(t1 - t0)
    child.join()
    return times


def socket_sender(sock, size, rounds):
    payload = bytes(size)
    for _ in range(rounds):
        sock.sendall(payload)
    sock.close()


def bench_socket(size, rounds):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    child = multiprocessing.Process(target=socket_sender, args=(theirs, size, rounds))
    child.start()
    theirs.close()
    buffer = bytearray(size)
    view = memoryview(buffer)
    times = []
    clock = time.perf_counter_ns
    time.sleep(0.05)
    for _ in range(rounds):
        t0 = clock()
        got = 0
        while got < size:
            got += ours.recv_into(view[got:], size - got)
        array = np.frombuffer(buffer, dtype=np.uint8)
        t1 = clock()
        assert array.nbytes == size
        times.append(t1 - t0)
    child.join()
    ours.close()
    return times


def start_ferryd(ferryd, runtime_dir, domain):
    env = dict(os.environ, FERRY_RUNTIME_DIR=runtime_dir, FERRY_DOMAIN=domain)
    daemon = subprocess.Popen([ferryd, "--config", str(HERE / "bench.yaml"), "--domain", domain,
                               "--foreground", "--log-level", "warn"], env=env)
    sock = os.path.join(runtime_dir, f"{domain}.sock")
    for _ in range(1000):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    os.environ.update(FERRY_RUNTIME_DIR=runtime_dir, FERRY_DOMAIN=domain)
    return daemon


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20000, help="64 B messages per transport")
    parser.add_argument("--frames", type=int, default=300, help="frames per transport")
    parser.add_argument("--ferryd", default=str(HERE.parents[1] / "build" / "bin" / "ferryd"))
    args = parser.parse_args()

    runtime_dir = tempfile.mkdtemp(prefix="ferry-pybench-")
    domain = f"pybench{os.getpid()}"
    daemon = start_ferryd(args.ferryd, runtime_dir, domain)
    try:
        rows = []
        for label, size, rounds, topic in (("64 B", SMALL, args.rounds, "bench/small"),
                                           ("3 MB frame", FRAME, args.frames, "bench/frame")):
            for transport, run in (("ferry", lambda: bench_ferry(topic, rounds)),
                                   ("multiprocessing pipe", lambda: bench_pipe(size, rounds)),
                                   ("unix socket", lambda: bench_socket(size, rounds))):
                times = run()
                rows.append((label, transport, percentile(times, 0.5), percentile(times, 0.9),
                             percentile(times, 0.99)))
        print(f"{'message':<11} {'transport':<21} {'p50':>11} {'p90':>11} {'p99':>11}")
        for label, transport, p50, p90, p99 in rows:
            print(f"{label:<11} {transport:<21} {p50 / 1e3:>8.2f} us {p90 / 1e3:>8.2f} us "
                  f"{p99 / 1e3:>8.2f} us")
        ferry_small = next(r[2] for r in rows if r[:2] == ("64 B", "ferry"))
        ferry_frame = next(r[2] for r in rows if r[:2] == ("3 MB frame", "ferry"))
        print(f"ferry: a 3 MB frame costs {ferry_frame / ferry_small:.2f}x a 64 B sample (p50)")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
        shutil.rmtree(runtime_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
