#!/usr/bin/env bash
# Builds ferry and runs its whole test suite (unit and multi-process tests).
# Usage: scripts/test.sh [--sanitize address|thread]
#   --sanitize address  the whole suite under ASan+UBSan (build-address/)
#   --sanitize thread   the threaded tests (label tsan: ring, pool, history, port lanes) under TSan (build-thread/)
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
if [ "${1:-}" = "--sanitize" ]; then sanitize="${2:?--sanitize needs address or thread}"; fi

dir="build${sanitize:+-$sanitize}"
label_args=()
if [ "$sanitize" = "thread" ]; then
  # TSan runs the threaded tests only: build just those (each test is the
  # target of the same name).
  label_args=(-L tsan)
  scripts/build.sh --sanitize thread --target ferry_test_support
  target_args=()
  for t in $(ctest --test-dir "$dir" -N -L tsan | sed -n 's/^ *Test *#[0-9]*: *//p'); do
    # Fixture steps are tests without a target of their name.
    case "$t" in cleanup_test_domains | node_test_packages) ;; *) target_args+=(--target "$t") ;; esac
  done
  scripts/build.sh --sanitize thread "${target_args[@]}"
else
  scripts/build.sh ${sanitize:+--sanitize "$sanitize"}
fi
# The settings that make a report fail the test come last, so that an
# inherited value can add options but never turn them off.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}halt_on_error=1:second_deadlock_stack=1"
# Twice as many tests as cores at once: most tests wait (on processes,
# timeouts, a rate), and those that spin say so (CORES 2, tests/CMakeLists.txt),
# so ctest never runs more spinners than there are cores.
jobs="${FERRY_TEST_JOBS:-$((2 * $(nproc)))}"
# --no-tests=error: a label or filter that selects nothing is a failure.
ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$jobs" --timeout 120 \
  "${label_args[@]}"
