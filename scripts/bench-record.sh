#!/usr/bin/env bash
# ferry record's bandwidth (docs/record-replay.md): 64 B samples as fast
# as a `block` topic lets the publisher go (so none is missed), 1080p frames
# as fast as possible on `block` next to `dd` writing as many bytes to the
# same directory in the same run (both into the page cache, no fsync), and
# frames at 30 Hz and 120 Hz on `drop_oldest` (recorded == published: no
# gap). Besides wall-clock MB/s, MB per CPU-second of the writing process
# (user + sys, from /usr/bin/time): on a loaded machine the wall clock
# mostly measures the scheduler.
# Usage: scripts/bench-record.sh [DIR]   (DIR: where the files go; default /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
out_dir=${1:-/tmp}
work=$(mktemp -d "$out_dir/ferry-bench-record.XXXXXX")
export FERRY_RUNTIME_DIR="$work/run"
export FERRY_DOMAIN="benchrec$$"
mkdir -p "$FERRY_RUNTIME_DIR"
daemon_pid=""
cleanup() {
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# Frame: the tests' 1080p frame (tests/support/pose_frame.yaml).
cat >"$work/bench.yaml" <<EOF
include: [$PWD/tests/support/pose_frame.yaml]
types:
  Small:
    fields:
      - { name: n, type: u64 }
      - { name: pad, type: "u8[56]" }
topics:
  - { name: small, type: Small, capacity: 1024, policy: block, block_timeout_ms: 5000 }
  # 8 queued + 24 held by the recorder: a write stall of up to 266 ms at
  # 120 Hz loses nothing; the pool has 8 + 24 + max_loans chunks for it.
  - { name: frames, type: Frame, capacity: 8, policy: drop_oldest, max_held: 24 }
  - { name: frames_block, type: Frame, capacity: 8, policy: block, block_timeout_ms: 5000 }
pool:
  - { chunk_size: 4MiB, count: 40 }
EOF
"$bin/ferryd" --config "$work/bench.yaml" --foreground --log-level warn &
daemon_pid=$!
for _ in $(seq 100); do
  [ -S "$FERRY_RUNTIME_DIR/$FERRY_DOMAIN.sock" ] && break
  sleep 0.05
done

# One line for a recording: messages, seconds from the first to the last
# log time, msg/s, MB/s, and MB per CPU-second of the recorder.
measure() {
  "$bin/ferry" bag info "$1" --json | /usr/bin/python3 -c '
import json, os, sys
j = json.load(sys.stdin)
s = j["duration_ns"] / 1e9
mb = os.path.getsize(sys.argv[1]) / 1e6
user, system = map(float, open(sys.argv[2]).read().split()[-2:])
n = j["messages"]
print(f"ferry record: {n} msgs in {s:.2f} s, {n / s:,.0f} msg/s, {mb / s:.1f} MB/s, "
      f"{mb / (user + system):.0f} MB per CPU-second")
' "$1" "$2"
}

# record TOPIC COUNT -- publisher options: records exactly COUNT messages.
record() {
  local topic=$1 count=$2 file="$work/$1.mcap"
  shift 2
  /usr/bin/time -f "%U %S" -o "$work/time" "$bin/ferry" record "$topic" -o "$file" \
    --count "$count" >/dev/null &
  local rec=$!
  sleep 0.3
  "$bin/ferry" topic pub "$topic" '{}' --count "$count" "$@" >/dev/null
  wait "$rec"
  measure "$file" "$work/time"
  rm -f "$file"
}

# The recorder stops at --duration: recorded vs published shows any gap.
record_rate() {
  local hz=$1 count=$2 file="$work/frames-$1.mcap"
  "$bin/ferry" record frames -o "$file" --duration $((count / hz + 2)) >/dev/null &
  local rec=$!
  sleep 0.3
  "$bin/ferry" topic pub frames '{}' --count "$count" --rate "$hz" >/dev/null
  wait "$rec"
  local got
  got=$("$bin/ferry" bag info "$file" --json |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["messages"])')
  echo "frames at $hz Hz: published $count, recorded $got, missed $((count - got))"
  rm -f "$file"
}

echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
echo "== 64 B samples, block topic (the publisher goes as fast as the recorder takes)"
record small 1000000 --rate 1e9
echo "== 1080p frames as fast as possible, block topic"
record frames_block 300 --rate 1e9
echo "== dd: as many bytes (300 x 3110428 B) to the same directory"
/usr/bin/time -f "%U %S" -o "$work/time" \
  dd if=/dev/zero of="$work/dd.bin" bs=3110428 count=300 2>"$work/dd.out"
/usr/bin/python3 -c '
import re, sys
text = open(sys.argv[1]).read()
seconds = float(re.search(r"copied, ([0-9.]+) s", text).group(1))
user, system = map(float, open(sys.argv[2]).read().split()[-2:])
mb = 300 * 3110428 / 1e6
print(f"dd: {mb:.0f} MB in {seconds:.2f} s, {mb / seconds:.1f} MB/s, "
      f"{mb / (user + system):.0f} MB per CPU-second")
' "$work/dd.out" "$work/time"
rm -f "$work/dd.bin"
echo "== 1080p frames at a fixed rate, drop_oldest topic"
record_rate 30 90
record_rate 120 360
