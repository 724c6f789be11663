#!/usr/bin/env bash
# Configures and builds one build tree with clang.
# Usage: scripts/build.sh DIR [extra cmake args...]
# Configures when DIR has no build yet, and again whenever cmake arguments are given, so a
# changed -D option takes effect (re-running cmake on an unchanged tree takes a second or two).
set -euo pipefail
dir=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ ! -f "$root/$dir/build.ninja" || $# -gt 0 ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$root/$dir" -G Ninja "$@" >/dev/null
fi
cmake --build "$root/$dir" -j "$(nproc)"
