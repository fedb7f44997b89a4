"""Fixtures for the Python module's tests: a real ferryd in a fresh domain per test.

Mirrors tests/support/daemon_fixture.hpp: the domain is named ft<pid>-<n>-<random> (so the
suite's clean-up step recognises it), ferryd runs in the foreground with FERRY_RUNTIME_DIR
pointing at a private directory, and everything (daemon, shared memory, directory) is removed
when the test ends, also when it fails. ctest sets FERRY_BIN_DIR, FERRY_TEST_BIN_DIR and
PYTHONPATH (build/python).
"""

import itertools
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

import ferry

BIN_DIR = Path(os.environ.get("FERRY_BIN_DIR", Path(__file__).parents[2] / "build" / "bin"))
TEST_BIN_DIR = Path(os.environ.get("FERRY_TEST_BIN_DIR", BIN_DIR.parent / "tests"))
_counter = itertools.count()

# A config's line that includes the Pose and 1080p Frame the C++ tests share
# (tests/support/pose_frame.yaml).
SHARED_TYPES = f"include: [{Path(__file__).parents[1] / 'support' / 'pose_frame.yaml'}]\n"

TOPICS = """topics:
  - { name: all, type: All, capacity: 8 }
  - { name: pose, type: Pose, capacity: 16 }
  - { name: pose/other, type: Pose, capacity: 16 }
  - { name: pose/history, type: Pose, capacity: 8, history: 3 }
  - { name: frames, type: Frame, capacity: 4, max_subscribers: 2, max_publishers: 1 }
  - { name: text, type: bytes, max_size: 4KiB, policy: drop_new }
pool:
  - { chunk_size: 4KiB, count: 64 }
  - { chunk_size: 4MiB, count: 16 }
"""


def peer_path():
    return str(TEST_BIN_DIR / "interop_peer")


def all_types_yaml():
    """The Inner and All types of tests/tools/all_types_yaml.hpp, printed by interop_peer."""
    return subprocess.run([peer_path(), "yaml"], check=True, capture_output=True, text=True,
                          timeout=10).stdout


SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer",
                   "ERROR: UndefinedBehaviorSanitizer")


def sanitizer_report(text):
    """The first sanitizer report in a program's output and what follows it, or None."""
    found = [text.find(mark) for mark in SANITIZER_MARKS if mark in text]
    if not found:
        return None
    start = text.rfind("\n", 0, min(found)) + 1
    return text[start:start + 4000]


class Domain:
    def __init__(self, tmp_root):
        self.name = f"ft{os.getpid()}-{next(_counter)}-{random.randrange(100000)}"
        self.runtime_dir = Path(tmp_root) / f"ferry-test-{self.name}"
        self.runtime_dir.mkdir(mode=0o700)
        self.env = dict(os.environ, FERRY_DOMAIN=self.name, FERRY_RUNTIME_DIR=str(self.runtime_dir))
        self.daemon = None
        self.logs = []

    def start(self, yaml=None, config_file=None):
        """ferryd with `yaml` (after this domain's name and a short liveness timeout), or with
        `config_file` as it is (--domain: this one)."""
        if config_file is None:
            config_file = self.runtime_dir / "ferry.yaml"
            config_file.write_text(
                f"domain: {self.name}\nliveness: {{ heartbeat_ms: 50, timeout_ms: 400 }}\n" + yaml)
        # Its log in a file (a pipe nobody reads would stall it once full),
        # read when it stops: a sanitizer report there fails the test.
        self.log_path = self.runtime_dir / f"ferryd-{next(_counter)}.log"
        with open(self.log_path, "ab") as log:
            self.daemon = subprocess.Popen(
                [str(BIN_DIR / "ferryd"), "--config", str(config_file), "--domain", self.name,
                 "--foreground", "--log-level", "warn"],
                env=self.env, stdout=subprocess.DEVNULL, stderr=log)
        self.logs.append(self.log_path)
        sock_path = str(self.runtime_dir / f"{self.name}.sock")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                raise RuntimeError(f"ferryd exited: {self.log_path.read_text(errors='replace')}")
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
                    s.connect(sock_path)
                return
            except OSError:
                time.sleep(0.01)
        raise RuntimeError("ferryd did not open its socket within 10 s")

    def spawn(self, argv, **kwargs):
        """A child process in this domain, with pipes for stdin and stdout."""
        return subprocess.Popen(argv, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **kwargs)

    def ferry_json(self, *args):
        out = subprocess.run([str(BIN_DIR / "ferry"), *args, "--json"], env=self.env, check=True,
                             capture_output=True, text=True, timeout=10).stdout
        return json.loads(out)

    def stop(self):
        """Stops ferryd; returns what went wrong with it (its exit code on SIGTERM was not 0,
        or a sanitizer reported something in its log), or None."""
        problem = None
        if self.daemon is not None:
            if self.daemon.poll() is None:
                self.daemon.send_signal(signal.SIGTERM)
                try:
                    self.daemon.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.daemon.kill()
                    self.daemon.wait()
                    problem = "ferryd did not stop within 5 s of SIGTERM"
            if problem is None and self.daemon.returncode != 0:
                problem = f"ferryd exited with code {self.daemon.returncode} (0 expected)"
        for log in self.logs:
            text = log.read_text(errors="replace") if log.exists() else ""
            report = sanitizer_report(text)
            if report:
                problem = f"ferryd printed a sanitizer report:\n{report}"
        for path in Path("/dev/shm").glob(f"ferry.{self.name}.*"):
            path.unlink(missing_ok=True)
        shutil.rmtree(self.runtime_dir, ignore_errors=True)
        return problem


def _served(monkeypatch, config=None):
    """A fresh domain (its ferryd started with `config`, unless None), this
    process's FERRY_DOMAIN and FERRY_RUNTIME_DIR pointing at it; stopped after
    the test, which fails if ferryd did not stop cleanly."""
    d = Domain("/tmp")
    try:
        if config is not None:
            d.start(config)
        monkeypatch.setenv("FERRY_DOMAIN", d.name)
        monkeypatch.setenv("FERRY_RUNTIME_DIR", str(d.runtime_dir))
        yield d
    finally:
        problem = d.stop()
    assert problem is None, problem


@pytest.fixture
def bare_domain(monkeypatch):
    """A fresh domain whose ferryd the test starts (Domain.start)."""
    yield from _served(monkeypatch)


@pytest.fixture
def domain(monkeypatch):
    """A running ferryd with the test topics; FERRY_DOMAIN and FERRY_RUNTIME_DIR point at it."""
    yield from _served(monkeypatch, SHARED_TYPES + "types:\n" + all_types_yaml() + TOPICS)


def wait_until(predicate, timeout=5.0):
    """Polls `predicate` every 5 ms for up to `timeout` seconds; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(0.005)


def read_line(process, timeout=10.0):
    """One line of a child's stdout, or a failure naming what it said on stderr."""
    import selectors
    with selectors.DefaultSelector() as sel:
        sel.register(process.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            process.kill()
            raise AssertionError(f"no output within {timeout} s: {process.stderr.read()}")
    line = process.stdout.readline()
    if not line:
        process.wait(timeout=5)
        raise AssertionError(f"child ended ({process.returncode}): {process.stderr.read()}")
    return line.strip()


def finish(process, timeout=10.0):
    """Tells a lingering peer to leave and checks that it succeeded."""
    try:
        process.stdin.close()
    except BrokenPipeError:
        pass
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    assert process.returncode == 0, process.stderr.read()


def pool_in_use(domain):
    """Chunks of the domain's pool that are not free, as `ferry pool --json` counts them."""
    classes = domain.ferry_json("pool")["classes"]
    return sum(c["total"] - c["free"] for c in classes)


def ports(topic="pose"):
    """A node with a publisher and a subscriber of `topic`, matched."""
    node = ferry.Node("py-test")
    pub = node.publisher(topic)
    sub = node.subscriber(topic)
    assert pub.wait_for_subscribers(1, timeout=10)
    return node, pub, sub
