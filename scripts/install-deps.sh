#!/usr/bin/env bash
# Installs the Debian packages ferry builds with, only those that are missing.
# Called by both quick-start commands and by CI, so each works on a fresh machine.
set -euo pipefail

# libsystemd-dev: ferryd's sd_notify (Type=notify readiness and watchdog).
# iceoryx (RouDi and the posh/hoofs libraries): the optional comparator of
# `ferry bench`, built when CMake finds it; installed so that CI measures it.
packages=(build-essential cmake libboost-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
          doctest-dev libcli11-dev nlohmann-json3-dev pkg-config libsystemd-dev
          iceoryx libiceoryx-posh-dev libiceoryx-hoofs-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "ferry: installing missing packages: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
