"""sensor_msgs/msg/Image between C++ (the `ferry gen cpp` header, by loan) and Python:
strings as str, sequences as zero-copy numpy views of the used length, images of two sizes,
and assignments past a bound raising with the field's name (docs/messages.md)."""

from pathlib import Path

import numpy as np
import pytest

import ferry
from conftest import finish, read_line, wait_until, TEST_BIN_DIR

# Shared with tests/tools/test_images.cpp.
IMAGE_YAML = (Path(__file__).parents[1] / "support" / "images.yaml").read_text()


def peer(*args):
    return [str(TEST_BIN_DIR / "image_peer"), *args]


def expected_pixels(i, n):
    return ((np.arange(n, dtype=np.uint64) * 31 + i) & 0xFF).astype(np.uint8)


def size_of(i):
    return (640, 480) if i % 2 == 0 else (1920, 1080)


@pytest.fixture
def image_domain(bare_domain):
    bare_domain.start(IMAGE_YAML)
    return bare_domain


def test_cpp_images_to_python(image_domain):
    sub = ferry.Node("py-image-sub").subscriber("camera/image")
    p = image_domain.spawn(peer("pub", "camera/image", "4"))
    try:
        for i in range(4):
            s = sub.take(timeout=10.0)
            assert s is not None, f"image {i}"
            width, height = size_of(i)
            assert s["width"] == width and s["height"] == height
            assert s["encoding"] == "rgb8"
            assert s["header"]["frame_id"] == f"camera_{i}"
            data = s["data"]
            assert isinstance(data, np.ndarray) and data.dtype == np.uint8
            assert data.size == width * height * 3  # the used length only
            assert not data.flags.owndata  # a view of the sample, not a copy
            assert np.array_equal(data, expected_pixels(i, data.size))
            s.release()
        assert read_line(p) == "published"
    finally:
        finish(p)


def test_python_images_to_cpp_by_loan(image_domain):
    pub = ferry.Node("py-image-pub").publisher("camera/image")
    p = image_domain.spawn(peer("sub", "camera/image", "4"))
    try:
        assert read_line(p) == "ready"
        assert wait_until(lambda: pub.subscriber_count == 1)
        for i in range(4):
            width, height = size_of(i)
            with pub.loan() as loan:
                loan["header"] = {"stamp": {"sec": 100 + i, "nanosec": 500 + i},
                                  "frame_id": f"camera_{i}"}
                loan["width"] = width
                loan["height"] = height
                loan["encoding"] = "rgb8"
                loan["is_bigendian"] = 0
                loan["step"] = width * 3
                loan["data"] = expected_pixels(i, width * height * 3)
                assert loan["encoding"] == "rgb8" and loan["data"].size == width * height * 3
                assert loan.publish().delivered == 1
            assert read_line(p) == "ok"
    finally:
        finish(p)


def test_bounds_raise_naming_the_field(image_domain):
    pub = ferry.Node("py-bounds").publisher("camera/image")
    with pytest.raises(ferry.Error, match=r"field 'encoding': a string of 33 bytes does not fit "
                                          r"string<=32 \(at most 32 bytes\)"):
        pub.publish({"encoding": "x" * 33})
    with pytest.raises(ferry.Error, match=r"field 'header.frame_id': a string of 65 bytes"):
        pub.publish({"header": {"frame_id": "f" * 65}})
    with pub.loan() as loan:
        with pytest.raises(ferry.Error, match=r"field 'data': 24883201 elements do not fit "
                                              r"u8\[<=24883200\] \(at most 24883200\)"):
            loan["data"] = np.zeros(24883201, dtype=np.uint8)
        loan["data"] = [1, 2, 3]
        assert list(loan["data"]) == [1, 2, 3]
        loan.discard()
    # A sequence past its bound in a dict, with a list.
    with pytest.raises(ferry.Error, match=r"field 'data'"):
        pub.publish({"data": np.zeros(24883201, dtype=np.uint8)})
