#!/usr/bin/env bash
# Runs the fault campaign: the real toolport binary driven through faults (cancel storms,
# disconnects, slow and non-reading clients, descriptor exhaustion, huge batches, ...), each
# followed by checks that it leaked no descriptor, kept its memory, idles without CPU and
# still serves. Same conventions as tests/integration/run.sh (pinned Node 22 from
# tests/integration/node_modules, TOOLPORT_BIN, one process per file, a test timeout).
#   tests/faults/run.sh                          # all *.test.mjs
#   tests/faults/run.sh slowloris.test.mjs       # selected files (relative to this folder)
#   tests/faults/run.sh --test-reporter=spec     # options starting with - go to node
# TOOLPORT_TEST_IO_THREADS=N serves with N HTTP I/O threads (as tests/run_suites.sh does).
# Bounds: see lib.mjs (TOOLPORT_FAULTS_SLOW, TOOLPORT_FAULTS_RSS_SLACK_MB, TOOLPORT_FAULTS_IDLE_CPU).
set -euo pipefail
# One file at a time (the checks measure CPU and memory; a neighbour's load would blur
# them), each in its own process; a test that hangs is stopped by the timeout (the later
# --test-timeout wins over the integration tests' own).
cd "$(dirname "${BASH_SOURCE[0]}")"
TOOLPORT_TESTS_DIR=../faults exec ../integration/run.sh --test-concurrency=1 --test-timeout=90000 "$@"
