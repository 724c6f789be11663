#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   1. unit tests (GoogleTest) on a release build
#   2. the same unit tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   3. integration tests: the real binary driven by the official MCP TypeScript SDK client
#      (release build on one event loop; sanitizer build with HTTP I/O threads)
#   4. the official MCP conformance suites (both ways too)
#   5. a short libFuzzer run of every fuzz target
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
step() { printf '\n=== %s ===\n' "$*"; }

step "dependencies"
scripts/install-deps.sh --test

step "build (release) and unit tests"
scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
ctest --test-dir build --output-on-failure -j 2

step "build (ASan+UBSan) and unit tests"
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DTOOLPORT_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j 2

step "npm packages for the integration and conformance tests"
(cd tests/integration && { [[ -d node_modules ]] || npm ci --no-audit --no-fund; })

step "integration tests (TypeScript SDK client against the real binary)"
TOOLPORT_BIN="$root/build/toolport" tests/integration/run.sh
# Again with the sanitizer build of the server and HTTP I/O threads (requests handed between
# threads; any memory error or leak in the server fails the test that stopped it).
TOOLPORT_BIN="$root/build-asan/toolport" TOOLPORT_TEST_IO_THREADS=2 tests/integration/run.sh

step "official conformance suites"
TOOLPORT_BIN="$root/build/toolport" tests/conformance/run.sh
TOOLPORT_BIN="$root/build-asan/toolport" TOOLPORT_TEST_IO_THREADS=2 tests/conformance/run.sh

step "fuzzing (short run)"
tests/fuzz/run.sh "${FUZZ_SECONDS:-20}"

step "all tests passed"
# One plain closing line for CI: every stage above ran and none failed (set -e stops at
# the first failure, so reaching here means all of them passed).
echo "stages: 6 passed, 0 failed"
