#!/usr/bin/env bash
# Last ctest step: removes shared-memory objects and runtime directories that
# a crashed test left behind (test domains all start with "ft"). Fails when it
# had to remove any, so that a test that leaks is noticed.
left=$(ls /dev/shm 2>/dev/null | grep '^ferry\.ft' || true)
rm -rf /tmp/ferry-test-ft* 2>/dev/null || true
if [ -n "$left" ]; then
  echo "$left" | while read -r name; do rm -f "/dev/shm/$name"; done
  echo "tests left these shared-memory objects behind:" >&2
  echo "$left" >&2
  exit 1
fi
exit 0
