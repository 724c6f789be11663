#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each one for SECONDS.
# Usage: tests/fuzz/run.sh [SECONDS]        (default 20; FUZZ_TARGETS="a b" picks targets)
#        tests/fuzz/run.sh --build-only     (builds the targets and stops; CI builds them early)
# FUZZ_BUILD_DIR picks the build tree (default build-fuzz; a relative path is taken from the
# repository root); a tree that does not exist yet is configured with clang.
# Exits non-zero when a target crashes, leaks, hits UB or times out on an input; the
# reproducer is left in <build>/fuzz-artifacts/<target>/ and its path printed.
# New corpus entries go to <build>/fuzz-corpus/<target>/ (the committed seeds in
# tests/fuzz/corpus/ are only read).
set -euo pipefail
build_only=0
[[ ${1:-} == --build-only ]] && { build_only=1; shift; }
seconds=${1:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/tests/fuzz"
build=${FUZZ_BUILD_DIR:-build-fuzz}
[[ $build == /* ]] || build="$root/$build"
targets=(${FUZZ_TARGETS:-fuzz_jsonrpc fuzz_http_request fuzz_client_parsers fuzz_catalog fuzz_uri_template fuzz_auth fuzz_redaction})

if [[ ! -f "$build/build.ninja" ]]; then
  # -O1 rather than -O2: the sanitizers and coverage stay, and it compiles faster; a short
  # smoke run loses little by it. (Not the -O0 of the unit tests' sanitizer tree: the
  # protocol targets run 15-27x fewer inputs a second there.)
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" -DTOOLPORT_BUILD_FUZZ=ON -DTOOLPORT_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
((build_only)) && exit 0

declare -A dict=([fuzz_jsonrpc]=jsonrpc.dict [fuzz_http_request]=http.dict [fuzz_auth]=auth.dict)
# fuzz_http_request keeps state across inputs by design (one server; sessions that inputs
# open live until the sweeper expires them), so libFuzzer's per-input leak check would
# only rescan a large live heap after every new input; leaks are still reported at exit.
declare -A extra=([fuzz_http_request]=-detect_leaks=0)
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# The targets run side by side, FUZZ_JOBS at a time (default: one per core); each is one
# single-threaded libFuzzer process with its own log, corpus and artifacts, so running them
# together changes neither how long nor how each one fuzzes, only CI's wait.
run_one() {
  local t=$1 corpus="$build/fuzz-corpus/$1" artifacts="$build/fuzz-artifacts/$1"
  mkdir -p "$corpus" "$artifacts"
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536
              -print_final_stats=1 -artifact_prefix="$artifacts/")
  [[ -n "${dict[$t]:-}" ]] && args+=(-dict="$here/${dict[$t]}")
  [[ -n "${extra[$t]:-}" ]] && args+=(${extra[$t]})
  if "$build/tests/fuzz/$t" "${args[@]}" "$corpus" "$here/corpus/$t" >"$build/fuzz-$t.log" 2>&1; then
    echo 0 >"$build/fuzz-$t.rc"
  else
    echo $? >"$build/fuzz-$t.rc"
  fi
}
jobs=${FUZZ_JOBS:-$(nproc)}
printf '\n--- %s: %s s each, %s at a time ---\n' "${targets[*]}" "$seconds" "$jobs"
running=0
for t in "${targets[@]}"; do
  rm -f "$build/fuzz-$t.rc"
  if ((running >= jobs)); then wait -n || true; running=$((running - 1)); fi
  run_one "$t" &
  running=$((running + 1))
done
wait

failed=()
for t in "${targets[@]}"; do
  log="$build/fuzz-$t.log"
  rc=$(cat "$build/fuzz-$t.rc" 2>/dev/null || echo "no status")
  printf '\n--- %s ---\n' "$t"
  if [[ $rc == 0 ]]; then
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs)' "$log" || tail -n 3 "$log"
    echo "$t: ok ($(ls "$build/fuzz-corpus/$t" | wc -l) corpus entries)"
  else
    tail -n 60 "$log"
    echo "$t: FAILED (exit $rc); reproducer(s):"
    ls -1 "$build/fuzz-artifacts/$t"/* 2>/dev/null || true
    failed+=("$t")
  fi
done

if ((${#failed[@]})); then
  echo "fuzzing: ${#failed[@]} target(s) failed: ${failed[*]}"
  exit 1
fi
echo "fuzzing: ${#targets[@]} target(s) ran ${seconds} s each without a finding"
