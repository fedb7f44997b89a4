#!/usr/bin/env bash
# The README's "main job": builds ferry, then runs it. Until the pub/sub demo
# exists, that is the ring benchmark with short settings: the shared-memory
# ring against a Unix socket and a pipe, measured in the same run.
# Usage: scripts/demo.sh [ferry-bench-ring options, e.g. --repeat 5 or --json]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
exec build/bin/ferry-bench-ring --quick "$@"
