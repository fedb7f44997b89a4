#!/usr/bin/env bash
# Installs the test-only npm packages of tests/tools/mcap_reader (the
# reference MCAP reader that test_bag_interop runs), once: again only when
# package-lock.json changed. Without npm it says so and does nothing (the
# test is then not configured).
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/tests/tools/mcap_reader"
if ! command -v npm >/dev/null; then
  echo "ferry: npm not found; the MCAP interop test (test_bag_interop) will not run"
  exit 0
fi
stamp="$dir/node_modules/.package-lock.json"
if [ -f "$stamp" ] && [ "$stamp" -nt "$dir/package-lock.json" ]; then exit 0; fi
echo "ferry: installing the test-only npm packages of tests/tools/mcap_reader"
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
