#!/usr/bin/env bash
# Fails when <ferry/ferry.hpp> pulls in internals it should not: the ring
# handles, the ring's layout, the slot format or the services' cores (the
# inline hot path needs only their fast path, ring_fast_path.hpp), or more
# than MAX_LINES lines of internals (detail/ and transport/ headers) in all.
# docs/design/hot-path.md says what it includes and why.
# Usage: check_header_closure.sh CXX SOURCE_DIR MAX_LINES
set -euo pipefail
cxx="$1"
src="$2"
max_lines="$3"
probe=$(mktemp --suffix=.cpp)
trap 'rm -f "$probe"' EXIT
echo '#include <ferry/ferry.hpp>' >"$probe"
headers=$("$cxx" -std=c++23 -I"$src/core/include" -I"$src/transport/include" -M "$probe" |
  tr ' \\' '\n\n' | grep -F "$src/" | sort -u)
[ -n "$headers" ] || { echo "FAIL: no project header found in the closure" >&2; exit 1; }

for forbidden in transport/ring_handles.hpp transport/ring_layout.hpp transport/ring.hpp \
  transport/slot_format.hpp detail/service_core.hpp; do
  if grep -qF "/ferry/$forbidden" <<<"$headers"; then
    echo "FAIL: <ferry/ferry.hpp> includes ferry/$forbidden" >&2
    exit 1
  fi
done

internals=$(grep -E '/ferry/(detail|transport)/' <<<"$headers")
lines=$(xargs cat <<<"$internals" | wc -l)
if [ "$lines" -gt "$max_lines" ]; then
  echo "FAIL: <ferry/ferry.hpp> pulls in $lines lines of internals (at most $max_lines):" >&2
  xargs wc -l <<<"$internals" >&2
  exit 1
fi
echo "<ferry/ferry.hpp>: $lines lines of internals in $(wc -l <<<"$internals") headers (at most $max_lines)"
