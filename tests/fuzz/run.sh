#!/usr/bin/env bash
# Builds the libFuzzer targets (in build-fuzz, with clang) and runs each one for SECONDS.
# Usage: tests/fuzz/run.sh [SECONDS]        (default 20; FUZZ_TARGETS="a b" picks targets)
# Exits non-zero when a target crashes, leaks, hits UB or times out on an input; the
# reproducer is left in build-fuzz/fuzz-artifacts/<target>/ and its path printed.
# New corpus entries go to build-fuzz/fuzz-corpus/<target>/ (the committed seeds in
# tests/fuzz/corpus/ are only read).
set -euo pipefail
seconds=${1:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/tests/fuzz"
build="$root/build-fuzz"
targets=(${FUZZ_TARGETS:-fuzz_jsonrpc fuzz_http_request fuzz_client_parsers fuzz_catalog})

# -O1 rather than -O2: the sanitizers and coverage stay, and this third build of the core
# in CI compiles faster; a short smoke run loses little by it.
if [[ ! -f "$build/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" -DTOOLPORT_BUILD_FUZZ=ON -DTOOLPORT_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

declare -A dict=([fuzz_jsonrpc]=jsonrpc.dict [fuzz_http_request]=http.dict)
# fuzz_http_request keeps state across inputs by design (one server; sessions that inputs
# open live until the sweeper expires them), so libFuzzer's per-input leak check would
# only rescan a large live heap after every new input; leaks are still reported at exit.
declare -A extra=([fuzz_http_request]=-detect_leaks=0)
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

failed=()
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536
        -print_final_stats=1 -artifact_prefix="$artifacts/")
  [[ -n "${dict[$t]:-}" ]] && args+=(-dict="$here/${dict[$t]}")
  [[ -n "${extra[$t]:-}" ]] && args+=(${extra[$t]})
  printf '\n--- %s for %s s ---\n' "$t" "$seconds"
  log="$build/fuzz-$t.log"
  if "$build/tests/fuzz/$t" "${args[@]}" "$corpus" "$here/corpus/$t" >"$log" 2>&1; then
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs)' "$log" || tail -n 3 "$log"
    echo "$t: ok ($(ls "$corpus" | wc -l) corpus entries)"
  else
    rc=$?
    tail -n 60 "$log"
    echo "$t: FAILED (exit $rc); reproducer(s):"
    ls -1 "$artifacts"/* 2>/dev/null || true
    failed+=("$t")
  fi
done

if ((${#failed[@]})); then
  echo "fuzzing: ${#failed[@]} target(s) failed: ${failed[*]}"
  exit 1
fi
echo "fuzzing: ${#targets[@]} target(s) ran ${seconds} s each without a finding"
