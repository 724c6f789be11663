#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   1. a release build of the binary
#   2. unit tests (GoogleTest) under AddressSanitizer + UndefinedBehaviorSanitizer
#   3. integration tests (the real binary driven by the official MCP TypeScript SDK client),
#      the fault campaign and the official MCP conformance suites, on the release build with
#      one event loop
#   4. the same suites on the sanitizer build with HTTP I/O threads
#   5. a short libFuzzer run of every fuzz target
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# Each stage prints when it starts (seconds since the script began), so a slow stage shows.
step() { printf '\n=== %s (at %d s) ===\n' "$*" "$SECONDS"; }

step "dependencies"
scripts/install-deps.sh --test

# The release build is the binary the suites run (as scripts/serve.sh builds it: no unit
# tests, no debug info); the unit tests run on the sanitizer build, which checks more. Two
# full builds of everything took half of CI's 30 minutes on 2 cores.
step "build (release)"
scripts/build.sh build -DCMAKE_BUILD_TYPE=Release -DTOOLPORT_BUILD_TESTS=OFF

step "build (ASan+UBSan) and unit tests"
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DTOOLPORT_SANITIZE=ON
# In two shards side by side, one process each: ctest would start the sanitizer binary once
# per test (~950 starts at ~0.25 s each). Each shard's log is kept in build-asan/tests.
shard_pids=()
for shard in 0 1; do
  (cd build-asan/tests && GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$shard ASAN_OPTIONS=detect_leaks=1 \
     UBSAN_OPTIONS=print_stacktrace=1 ./toolport_unit_tests --gtest_brief=1 > "unit-shard-$shard.log" 2>&1) &
  shard_pids+=($!)
done
unit_failed=0
for shard in 0 1; do
  if wait "${shard_pids[$shard]}"; then
    tail -n 1 "build-asan/tests/unit-shard-$shard.log"
  else
    unit_failed=1
    echo "--- unit test shard $shard failed:"
    tail -n 300 "build-asan/tests/unit-shard-$shard.log"
  fi
done
((unit_failed == 0))

step "integration tests and conformance suites: release build, one event loop"
tests/run_suites.sh "$root/build/toolport"

step "integration tests and conformance suites: ASan+UBSan build, 2 HTTP I/O threads"
# Meanwhile the fuzz targets are built (build-fuzz) at idle CPU priority: these suites
# mostly wait on the server and leave most of a core unused, and a SCHED_IDLE process only
# gets what no other process wants, so the suites keep their CPU. (Built in the foreground
# after them, it was ~4 of CI's 30 minutes.) Its own process group, so a failed suite can
# stop it.
idle=(nice -n 19)
chrt --idle 0 true 2>/dev/null && idle=(chrt --idle 0)
set -m
"${idle[@]}" tests/fuzz/run.sh --build-only >"$root/build/fuzz-build.log" 2>&1 &
fuzz_build=$!
set +m
trap 'kill -- -$fuzz_build 2>/dev/null || true' EXIT
# Requests are handed between threads; any memory error or leak in the server fails the
# test that stopped it. 200 upstream restarts rather than 1000 here: the release pass runs
# the 1000, and the leak and descriptor checks are the same after 200.
GATEWAY_RESTARTS=200 SUITES_SKIP_CLIENT_CONFORMANCE=1 tests/run_suites.sh "$root/build-asan/toolport" 2

step "fuzzing (short run)"
wait $fuzz_build || { tail -n 40 "$root/build/fuzz-build.log"; echo "building the fuzz targets failed"; exit 1; }
trap - EXIT
tests/fuzz/run.sh "${FUZZ_SECONDS:-10}"

step "all tests passed"
# One plain closing line for CI: every stage above ran and none failed (set -e stops at
# the first failure, so reaching here means all of them passed).
echo "stages: 6 passed, 0 failed"
