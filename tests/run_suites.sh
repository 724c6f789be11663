#!/usr/bin/env bash
# Runs the suites that drive a real toolport binary: the integration tests (official
# TypeScript SDK client) and the official conformance suites (server scenarios, and the
# client scenarios against its CLI client), against one build.
# Usage: tests/run_suites.sh BINARY [IO_THREADS]
#   IO_THREADS: serve with that many HTTP I/O threads (requests handed between threads).
# Both fail a test on any sanitizer report in the server's log, so a sanitizer build of
# BINARY checks the server under the suites' traffic.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: tests/run_suites.sh BINARY [IO_THREADS]" >&2; exit 2; }
export TOOLPORT_BIN=$1
if [[ -n "${2:-}" ]]; then export TOOLPORT_TEST_IO_THREADS=$2; else unset TOOLPORT_TEST_IO_THREADS; fi

(cd "$root/tests/integration" && { [[ -d node_modules ]] || npm ci --no-audit --no-fund; })
# Two test files at a time (Node's default on 2 cores is one): they mostly wait on the
# server, every file has its own servers, ports and directories, and CI's 30 minutes are
# tight (measured: release 142 s -> 80 s, sanitizer 225 s -> 127 s, all passing). The fault
# campaign stays one at a time: it measures CPU and memory.
"$root/tests/integration/run.sh" --test-concurrency=2
"$root/tests/faults/run.sh"
"$root/tests/conformance/run.sh"
# The client scenarios drive the CLI client, not the server: once, on the release build
# (SUITES_SKIP_CLIENT_CONFORMANCE=1 in the sanitizer pass keeps CI within its time).
[[ "${SUITES_SKIP_CLIENT_CONFORMANCE:-0}" == 1 ]] || "$root/tests/conformance/client_run.sh"
