#!/usr/bin/env python3
"""Prints the poses of robot/pose (examples/hello) until `count` arrived or none came for two
seconds. Runs next to hello_publisher or talker.py:

    export FERRY_DOMAIN=hello PYTHONPATH=build/python
    build/bin/ferryd --config examples/hello/hello.yaml
    /usr/bin/python3 examples/python/listener.py 20 & build/bin/hello_publisher 20 10
"""

import argparse
import sys

import ferry


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, nargs="?", default=20, help="poses to wait for")
    args = parser.parse_args()

    sub = ferry.Node("py_listener").subscriber("robot/pose")
    received = 0
    while received < args.count:
        s = sub.take(timeout=2.0)
        if s is None:
            print("listener: nothing for 2 s, stopping")
            break
        with s:  # released at the end of the block
            received += 1
            print(f"listener: x={s['x']:+.3f} y={s['y']:+.3f} frame={s['frame']}")
    print(f"listener: received {received} sample(s)")
    return 0 if received == args.count else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ferry.Error as e:
        print(f"listener: {e}", file=sys.stderr)
        sys.exit(1)
