#!/usr/bin/env bash
# Installs the Debian packages Toolport needs to build, run and test, when missing.
# Usage: scripts/install-deps.sh [--test]   (--test adds what the tests and benchmarks use)
set -euo pipefail
packages=(cmake ninja-build clang libclang-rt-14-dev libboost1.81-dev libssl-dev zlib1g-dev nlohmann-json3-dev
          libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev libhiredis-dev libsqlite3-dev
          libmimalloc-dev
          bubblewrap)  # a runtime need: the context pack's executeSkill runs skills under bwrap
# Node and npm build the console's page (web/console: npm ci, esbuild) and fetch the pinned
# test packages (the tests' Node 22 itself comes from npm). A machine that already has them
# from elsewhere (e.g. NodeSource's nodejs, which conflicts with Debian's npm package) keeps
# what it has.
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
if [[ "${1:-}" == "--test" ]]; then
  packages+=(googletest libgtest-dev libgmock-dev libbenchmark-dev lld wrk nginx curl openssl redis-server
             jq clang-format  # clang-format 14: scripts/format.sh --check in the test command
             chromium)  # the console's browser tests (tests/integration/console_*.test.mjs)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends "${missing[@]}"
fi
