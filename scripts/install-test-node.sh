#!/usr/bin/env bash
# Installs the test-only npm packages of tests/tools/mcap_reader (the
# reference MCAP reader that test_bag_interop runs) and
# tests/tools/foxglove_client (the Foxglove WebSocket client that
# test_foxglove runs), each once: again only when its package-lock.json
# changed. Without npm it says so and does nothing (the tests are then not
# configured).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)/tests/tools"
if ! command -v npm >/dev/null; then
  echo "ferry: npm not found; the MCAP interop test (test_bag_interop) and the Foxglove test (test_foxglove) will not run"
  exit 0
fi
for name in mcap_reader foxglove_client; do
  dir="$root/$name"
  stamp="$dir/node_modules/.package-lock.json"
  if [ -f "$stamp" ] && [ "$stamp" -nt "$dir/package-lock.json" ]; then continue; fi
  echo "ferry: installing the test-only npm packages of tests/tools/$name"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
done
