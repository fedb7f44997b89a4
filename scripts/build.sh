#!/usr/bin/env bash
# Configures and builds ferry.
# Usage: scripts/build.sh [--sanitize address|thread] [--dir DIR] [--no-tests]
#                         [--with-bench | --no-bench] [--no-foxglove] [--no-bridge]
#                         [--target T]...
#   --no-tests    configure without the test suite (and install only what the
#                 programs need): what the demo uses
#   --with-bench  a sanitizer build with the benchmarks too (FERRY_BUILD_BENCH);
#                 without it a sanitizer build leaves them out (`ferry bench`
#                 says so): their figures mean nothing under a sanitizer, and
#                 they are a third of its compile time. Normal builds have them.
#   --no-bench    leave the benchmarks out of a normal build (the demo: it
#                 does not run them, and they are half of the ferry CLI's build)
#   --no-foxglove leave `ferry foxglove` out (FERRY_BUILD_FOXGLOVE): Boost.Beast
#                 is a minute of one core's compile
#   --no-bridge   leave `ferry bridge` out (FERRY_BUILD_BRIDGE): no Cyclone DDS
#                 is installed or compiled against
#   Without them, every build has both (a build directory configured without
#   them gets them back).
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
dir=""
tests=ON
bench=""
foxglove=ON
bridge=ON
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --no-tests) tests=OFF; shift ;;
    --with-bench) bench=ON; shift ;;
    --no-bench) bench=OFF; shift ;;
    --no-foxglove) foxglove=OFF; shift ;;
    --no-bridge) bridge=OFF; shift ;;
    --target) targets+=(--target "$2"); shift 2 ;;
    *) echo "build.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$dir" ] || dir="build${sanitize:+-$sanitize}"
if [ -z "$bench" ]; then if [ -n "$sanitize" ]; then bench=OFF; else bench=ON; fi; fi

if [ "$tests" = ON ]; then
  scripts/install-deps.sh --for test
elif [ "$bridge" = OFF ]; then
  scripts/install-deps.sh --for demo
else
  scripts/install-deps.sh --for run
fi
# ccache, when a developer has it, makes rebuilds and other worktrees cheap.
launcher=()
# The test programs' precompiled header (tests/CMakeLists.txt) is cacheable
# only with this sloppiness (ccache's manual, "Precompiled headers").
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:+$CCACHE_SLOPPINESS,}pch_defines,time_macros"
fi
# Ninja schedules the whole build as one graph (make recurses per target);
# a build directory made earlier keeps the generator it was made with.
generator=()
if command -v ninja >/dev/null && ! grep -qs '^CMAKE_GENERATOR:INTERNAL=' "$dir/CMakeCache.txt"; then
  generator=(-G Ninja)
fi
cmake -S . -B "$dir" "${generator[@]}" -DFERRY_SANITIZE="$sanitize" -DFERRY_BUILD_TESTS="$tests" -DFERRY_BUILD_BENCH="$bench" \
  -DFERRY_BUILD_FOXGLOVE="$foxglove" -DFERRY_BUILD_BRIDGE="$bridge" "${launcher[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
