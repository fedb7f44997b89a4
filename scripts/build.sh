#!/usr/bin/env bash
# Configures and builds ferry.
# Usage: scripts/build.sh [--sanitize address|thread] [--dir DIR] [--target T]...
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
dir=""
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --target) targets+=(--target "$2"); shift 2 ;;
    *) echo "build.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$dir" ] || dir="build${sanitize:+-$sanitize}"

scripts/install-deps.sh
cmake -S . -B "$dir" -DFERRY_SANITIZE="$sanitize" >/dev/null
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
