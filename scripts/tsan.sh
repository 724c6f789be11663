#!/usr/bin/env bash
# On demand (not in CI: the extra build would push CI past its time budget on 2 cores):
# builds Toolport with ThreadSanitizer in build-tsan and runs the unit tests, then the
# integration tests and the conformance suites against a server with HTTP I/O threads,
# where requests and replies cross threads. Any data race the server reports fails the
# test that stopped it (tests/integration/lib/harness.mjs, tests/conformance/run.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
step() { printf '\n=== %s ===\n' "$*"; }

step "dependencies"
scripts/install-deps.sh --test

step "build (ThreadSanitizer) and unit tests"
scripts/build.sh build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOOLPORT_SANITIZE_THREAD=ON
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
ctest --test-dir build-tsan --output-on-failure -j 2

step "integration tests and conformance suites: ThreadSanitizer build, 2 HTTP I/O threads"
# The server's reports must reach its log, not stop it: the suites read them there.
TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1" tests/run_suites.sh "$root/build-tsan/toolport" 2

step "no data race reported"
