"""examples/python/ with the C++ examples' programs and their own YAML files."""

import sys
from pathlib import Path

from conftest import BIN_DIR

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_pair(domain, first, second, timeout=20):
    """Starts `first` (the subscriber), then runs `second`; both must exit 0."""
    a = domain.spawn(first)
    b = domain.spawn(second)
    out_b, err_b = b.communicate(timeout=timeout)
    out_a, err_a = a.communicate(timeout=timeout)
    assert b.returncode == 0, err_b
    assert a.returncode == 0, err_a
    return out_a, out_b


def python(script, *args):
    return [sys.executable, str(EXAMPLES / "python" / script), *map(str, args)]


def test_listener_hears_hello_publisher(bare_domain):
    bare_domain.start(config_file=EXAMPLES / "hello" / "hello.yaml")
    out, _ = run_pair(bare_domain, python("listener.py", 5), [str(BIN_DIR / "hello_publisher"), "5", "50"])
    assert "listener: received 5 sample(s)" in out and "frame=map" in out


def test_hello_subscriber_hears_talker(bare_domain):
    bare_domain.start(config_file=EXAMPLES / "hello" / "hello.yaml")
    out, _ = run_pair(bare_domain, [str(BIN_DIR / "hello_subscriber"), "5"], python("talker.py", 5, 50))
    assert "subscriber: received 5 sample(s)" in out and "frame=map" in out


def test_frame_viewer_reads_camera_frames(bare_domain):
    bare_domain.start(config_file=EXAMPLES / "camera" / "camera.yaml")
    out, _ = run_pair(bare_domain, python("frame_viewer.py", 3), [str(BIN_DIR / "camera_publisher"), "3"])
    assert "frame_viewer: received 3 frame(s)" in out and "1920x1080 luma mean" in out
