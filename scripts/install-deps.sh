#!/usr/bin/env bash
# Installs the Debian packages ferry builds with, only those that are missing.
# Usage: scripts/install-deps.sh [--for demo|run|test|docs]
#   demo  what the demo's programs need: compiler, cmake and the libraries
#   run   what every program needs: also Cyclone DDS (`ferry bridge`)
#   test  (default) also the test framework and the optional comparators
#   docs  what the programs need, and what scripts/docs.sh builds the docs with
# Called by both quick-start commands, scripts/docs.sh and CI, so each works on
# a fresh machine.
set -euo pipefail

purpose=test
if [ "${1:-}" = "--for" ]; then purpose="${2:?--for needs demo, run, test or docs}"; fi

# libsystemd-dev: ferryd's sd_notify (Type=notify readiness and watchdog).
# ninja-build: the build's generator (scripts/build.sh).
# liblz4-dev, libzstd-dev, zlib1g-dev, libdeflate-dev: MCAP chunk compression and CRC-32
# (tools/bag/).
packages=(build-essential cmake ninja-build pkg-config libboost-dev libyaml-cpp-dev libspdlog-dev
          libfmt-dev libcli11-dev nlohmann-json3-dev libsystemd-dev liblz4-dev libzstd-dev zlib1g-dev
          libdeflate-dev)
# cyclonedds-dev: Eclipse Cyclone DDS, the network side of `ferry bridge`
# (tools/bridge/), which the demo's build leaves out (scripts/build.sh --no-bridge).
[ "$purpose" = demo ] || packages+=(cyclonedds-dev)
case "$purpose" in
  demo | run) ;;
  # doctest: the test suite. iceoryx (RouDi and the posh/hoofs libraries): the
  # optional comparator of `ferry bench`, built when CMake finds it; installed
  # so that CI measures it.
  # nodejs (and npm unless the Node.js install brings its own): the reference
  # MCAP reader of test_bag_interop and the Foxglove client of test_foxglove,
  # their npm packages installed by install-test-node.sh.
  # cyclonedds-tools: idlc, which builds the plain Cyclone programs of the
  # bridge's interop test; iproute2: its network namespaces.
  # python3-dev, python3-pybind11, python3-numpy: the Python module `import
  # ferry` (core/python/, built when they are present); python3-pytest: its
  # tests (tests/python/).
  # libfastrtps-dev: Fast DDS, the optional `ferry bench --transports fastdds`
  # comparator (cyclonedds-tools' idlc builds the cyclonedds one);
  # python3-matplotlib: scripts/plot-bench.py and its test.
  test)
    packages+=(doctest-dev iceoryx libiceoryx-posh-dev libiceoryx-hoofs-dev nodejs cyclonedds-tools
               iproute2 python3-dev python3-pybind11 python3-numpy python3-pytest libfastrtps-dev
               python3-matplotlib)
    command -v npm >/dev/null || packages+=(npm)
    ;;
  # mkdocs, mkdocs-material: the site (docs/, mkdocs.yml); doxygen: the API
  # reference of the public headers; python3-matplotlib: plots of `ferry bench
  # --json` results.
  docs) packages+=(mkdocs mkdocs-material doxygen python3-matplotlib) ;;
  *) echo "install-deps.sh: --for takes demo, run, test or docs, not '$purpose'" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -ne 0 ]; then
  echo "ferry: installing missing packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "$purpose" = test ]; then "$(dirname "$0")/install-test-node.sh"; fi
