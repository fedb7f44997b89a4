#!/usr/bin/env python3
"""Publishes poses on robot/pose (examples/hello): waits for a subscriber, then sends `count`
poses at `rate` Hz. Runs next to hello_subscriber or listener.py:

    export FERRY_DOMAIN=hello PYTHONPATH=build/python
    build/bin/ferryd --config examples/hello/hello.yaml
    build/bin/hello_subscriber 20 & /usr/bin/python3 examples/python/talker.py 20 10
"""

import argparse
import math
import sys
import time

import ferry


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, nargs="?", default=20, help="poses to send")
    parser.add_argument("rate", type=float, nargs="?", default=10.0, help="poses per second")
    args = parser.parse_args()
    if args.count < 0 or not args.rate > 0:
        parser.error("count must be >= 0 and rate > 0")

    pub = ferry.Node("py_talker").publisher("robot/pose")
    pub.wait_for_subscribers(1, timeout=10)
    print(f"talker: {pub.subscriber_count} subscriber(s) matched")
    for i in range(args.count):
        r = pub.publish({"stamp_ns": time.monotonic_ns(), "x": math.cos(i * 0.1),
                         "y": math.sin(i * 0.1), "frame": "map"})
        print(f"talker: sample {i} delivered to {r.delivered} queue(s)")
        time.sleep(1.0 / args.rate)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ferry.Error as e:
        print(f"talker: {e}", file=sys.stderr)
        sys.exit(1)
