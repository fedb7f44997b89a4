#!/usr/bin/env bash
# Last ctest step: removes shared-memory objects and runtime directories that
# a crashed test left behind, and fails when there were any, so that a test
# that leaks is noticed. The same for the bridge tests' network namespaces. Test domains are named "ft<pid>-...": only objects of
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
# Network namespaces of the bridge tests ("fbr<pid>-<n>a|b", with their
# veth pair) whose test process is gone.
if command -v ip >/dev/null && [ "$(id -u)" -eq 0 ]; then
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^fbr'); do
    pid=${ns#fbr}
    pid=${pid%%-*}
    case "$pid" in ''|*[!0-9]*) continue ;; esac
    [ -d "/proc/$pid" ] && continue
    ip netns del "$ns" 2>/dev/null
    left="$left netns:$ns"
  done
fi
if [ -n "$left" ]; then
  echo "tests left these shared-memory objects behind:$left" >&2
  exit 1
fi
exit 0
