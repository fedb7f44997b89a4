#!/usr/bin/env bash
# ferry's main job in one command: builds only ferryd, ferry and the hello
# programs, starts ferryd for the hello example, runs a subscriber and a
# publisher in two processes, shows them with `ferry topic list`, then stops
# everything and checks nothing is left behind.
#
# Usage: scripts/demo.sh [--no-build]
#   --no-build  runs the programs build/bin already holds (a full build's
#               will do; CI runs the demo with its own build)
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  "") build=yes ;;
  --no-build) build=no ;;
  *) echo "demo.sh: unknown option '$1' (the only one is --no-build)" >&2; exit 2 ;;
esac
if [ "$build" = yes ]; then
  # Only what the demo runs: the daemon, the CLI (without `ferry bench`,
  # `ferry foxglove` and `ferry bridge`, half of its compile) and the two
  # hello programs.
  scripts/build.sh --no-tests --no-bench --no-foxglove --no-bridge --target ferryd --target ferry_cli \
    --target hello_publisher --target hello_subscriber
fi
bin=build/bin
export FERRY_RUNTIME_DIR
FERRY_RUNTIME_DIR=$(mktemp -d /tmp/ferry-demo.XXXXXX)
export FERRY_DOMAIN="demo$$"
daemon_pid=""
cleanup() {
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  rm -rf "$FERRY_RUNTIME_DIR"
}
trap cleanup EXIT

echo "== ferry config check examples/hello/hello.yaml"
"$bin/ferry" config check examples/hello/hello.yaml

echo "== ferryd --config examples/hello/hello.yaml --domain $FERRY_DOMAIN --foreground"
"$bin/ferryd" --config examples/hello/hello.yaml --domain "$FERRY_DOMAIN" --foreground \
  --log-level warn &
daemon_pid=$!
for _ in $(seq 100); do
  [ -S "$FERRY_RUNTIME_DIR/$FERRY_DOMAIN.sock" ] && break
  sleep 0.05
done

echo "== a subscriber and a publisher, in two processes"
"$bin/hello_subscriber" 20 &
sub_pid=$!
sleep 0.2
"$bin/hello_publisher" 20 10 &
pub_pid=$!
sleep 1

echo "== ferry topic list (while they run)"
"$bin/ferry" topic list
echo "== ferry node list"
"$bin/ferry" node list
echo "== ferry pool"
"$bin/ferry" pool

wait "$pub_pid"
wait "$sub_pid"

echo "== stopping ferryd"
kill "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=""
left=$(ls /dev/shm | grep -c "^ferry\.$FERRY_DOMAIN\." || true)
echo "shared-memory objects left behind: $left"
[ "$left" -eq 0 ]
echo "== demo finished: publisher and subscriber exchanged samples through ferryd"
