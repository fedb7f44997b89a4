#!/usr/bin/env bash
# Last ctest step: removes shared-memory objects and runtime directories that
# a crashed test left behind, and fails when there were any, so that a test
# that leaks is noticed. Test domains are named "ft<pid>-...": only objects of
# test processes that no longer exist are touched, so concurrent test runs on
# the same machine do not disturb each other.
left=""
for path in /dev/shm/ferry.ft*; do
  [ -e "$path" ] || continue
  name=${path#/dev/shm/}
  pid=${name#ferry.ft}
  pid=${pid%%-*}
  case "$pid" in ''|*[!0-9]*) continue ;; esac
  [ -d "/proc/$pid" ] && continue
  rm -f "$path"
  left="$left $name"
done
for dir in /tmp/ferry-test-ft*; do
  [ -d "$dir" ] || continue
  pid=${dir#/tmp/ferry-test-ft}
  pid=${pid%%-*}
  case "$pid" in ''|*[!0-9]*) continue ;; esac
  [ -d "/proc/$pid" ] || rm -rf "$dir"
done
if [ -n "$left" ]; then
  echo "tests left these shared-memory objects behind:$left" >&2
  exit 1
fi
exit 0
