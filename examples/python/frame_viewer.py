#!/usr/bin/env python3
"""Takes 1080p NV12 frames from camera/frames (examples/camera) and prints statistics of each
one computed with numpy straight on the shared-memory pool (no copy):

    export FERRY_DOMAIN=camera PYTHONPATH=build/python
    build/bin/ferryd --config examples/camera/camera.yaml
    /usr/bin/python3 examples/python/frame_viewer.py 30 & build/bin/camera_publisher
"""

import argparse
import sys
import time

import ferry


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("frames", type=int, nargs="?", default=30, help="frames to wait for")
    args = parser.parse_args()

    sub = ferry.Node("py_frame_viewer").subscriber("camera/frames")
    received = 0
    while received < args.frames:
        s = sub.take(timeout=2.0)
        if s is None:
            print("frame_viewer: nothing for 2 s, stopping")
            break
        with s:
            width, height = s["width"], s["height"]
            # The luma plane: a 2-D view of the first width x height bytes, read in place.
            luma = s["pixels"][: width * height].reshape(height, width)
            latency_us = (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - s["stamp_ns"]) / 1e3
            print(f"frame_viewer: frame {s['seq']} {width}x{height} luma mean {luma.mean():.1f} "
                  f"min {luma.min()} max {luma.max()} latency {latency_us:.0f} us")
            del luma
        received += 1
    print(f"frame_viewer: received {received} frame(s)")
    return 0 if received > 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ferry.Error as e:
        print(f"frame_viewer: {e}", file=sys.stderr)
        sys.exit(1)
