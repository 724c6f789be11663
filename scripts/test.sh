#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   0. the layer check (scripts/check_layers.py)
#   1. a release build of the binary
#   2. integration tests (the real binary driven by the official MCP TypeScript SDK client),
#      the fault campaign and the official MCP conformance suites, on the release build with
#      one event loop (while the sanitizer build is built)
#   3. unit tests (GoogleTest) under AddressSanitizer + UndefinedBehaviorSanitizer
#   4. the suites of 2 on the sanitizer build with HTTP I/O threads
#   5. a short libFuzzer run of every fuzz target
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# Each stage prints when it starts (seconds since the script began), so a slow stage shows.
step() { printf '\n=== %s (at %d s) ===\n' "$*" "$SECONDS"; }

step "dependencies"
scripts/install-deps.sh --test

# Seconds, so before the builds: no source includes a header of a layer above its own
# (the order is the root CMakeLists.txt's), and the checker's own tests; and the C++ sources
# are as scripts/format.sh (clang-format 14, .clang-format) leaves them.
step "layers and formatting"
python3 tests/scripts/check_layers_test.py
scripts/check_layers.py
scripts/format.sh --check

# Both builds make warnings errors (TOOLPORT_WERROR): a warning fails CI.
# The release build is the binary the suites run (as scripts/serve.sh builds it: no unit
# tests, no debug info); the unit tests run on the sanitizer build, which checks more. Two
# full builds of everything took half of CI's 30 minutes on 2 cores.
step "build (release)"
scripts/build.sh build -DCMAKE_BUILD_TYPE=Release -DTOOLPORT_BUILD_TESTS=OFF -DTOOLPORT_WERROR=ON

# Builds that run beside test suites run at idle CPU priority: the suites mostly wait on the
# server and leave most of a core unused, and a SCHED_IDLE process only gets what no other
# process wants, so the suites keep their CPU. Each build is its own process group, so a
# failed stage can stop it.
idle=(nice -n 19)
chrt --idle 0 true 2>/dev/null && idle=(chrt --idle 0)
background_builds=()
trap 'for pid in "${background_builds[@]}"; do kill -- -"$pid" 2>/dev/null || true; done' EXIT
start_idle_build() {  # LOG COMMAND...: sets $build_pid
  set -m
  "${idle[@]}" "${@:2}" >"$1" 2>&1 &
  build_pid=$!
  set +m
  background_builds+=("$build_pid")
}
wait_idle_build() {  # PID LOG WHAT
  wait "$1" || { tail -n 40 "$2"; echo "$3 failed"; exit 1; }
}

step "integration tests and conformance suites: release build, one event loop"
# Meanwhile the sanitizer build (build-asan) is built. (Built in the foreground first, the
# two builds were two fifths of CI's 30 minutes.)
mkdir -p build-asan
# With TOOLPORT_BUILD_FUZZ its core also records edge coverage: the fuzz targets link it (step 5).
start_idle_build "$root/build-asan/build.log" scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DTOOLPORT_SANITIZE=ON \
  -DTOOLPORT_BUILD_FUZZ=ON -DTOOLPORT_WERROR=ON
asan_build=$build_pid
tests/run_suites.sh "$root/build/toolport"

step "build (ASan+UBSan, the rest) and unit tests"
wait_idle_build "$asan_build" "$root/build-asan/build.log" "the sanitizer build"
tail -n 1 "$root/build-asan/build.log"
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

step "integration tests and conformance suites: ASan+UBSan build, 2 HTTP I/O threads"
# Meanwhile the fuzz targets are linked against the sanitizer build's core (build-asan: only
# their own sources are compiled). A third compilation of the core for them (build-fuzz, -O1)
# kept the last CI waiting ~100 s after these suites.
export FUZZ_BUILD_DIR=build-asan
start_idle_build "$root/build/fuzz-build.log" tests/fuzz/run.sh --build-only
fuzz_build=$build_pid
# Requests are handed between threads; any memory error or leak in the server fails the
# test that stopped it. 200 upstream restarts rather than 1000 here: the release pass runs
# the 1000, and the leak and descriptor checks are the same after 200.
GATEWAY_RESTARTS=200 SUITES_SKIP_CLIENT_CONFORMANCE=1 tests/run_suites.sh "$root/build-asan/toolport" 2

step "fuzzing (short run)"
wait_idle_build "$fuzz_build" "$root/build/fuzz-build.log" "building the fuzz targets"
trap - EXIT
tests/fuzz/run.sh "${FUZZ_SECONDS:-10}"

step "all tests passed"
# One plain closing line for CI: every stage above ran and none failed (set -e stops at
# the first failure, so reaching here means all of them passed).
echo "stages: 7 passed, 0 failed"
